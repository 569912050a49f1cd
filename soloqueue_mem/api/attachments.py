"""The attachment part of :class:`soloqueue_mem.Store` (``attach``, ``attachment``):
files and media, their bytes in this host's CAS, their rows in the store."""

from __future__ import annotations

from soloqueue_mem.api.base import StoreBase, check_ids, serialised

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import BinaryIO

    from soloqueue_mem.memory.attach import NewAttachment
    from soloqueue_mem.memory.attachments import Attachment


class AttachmentMethods(StoreBase):
    """Attach, list, show and remove; :class:`soloqueue_mem.Store` inherits these."""

    @serialised
    def attach(self, content: BinaryIO, new: NewAttachment) -> Attachment:
        """Store ``content`` as a persistent artifact and record it as an attachment
        (``attach``); its texts and its content are redacted (text content is read
        whole, at most max_input_bytes; other content is stored as given). ``BadInput``
        for a direction, file name or tag that cannot be stored, before anything is
        written."""
        from soloqueue_mem.memory.attach import attach, check
        from soloqueue_mem.redact import redacted_stream

        check_ids(group=new.group, agent=new.agent, session=new.session or None)
        check(new)
        redact = self._redactor()
        stream = redacted_stream(content, redact, self.config.max_input_bytes)
        catalog = self._artifacts(create=True)
        assert catalog is not None
        rows = self._storage().attachments(True)
        text = str if redact is None else redact.text
        return attach(self.home, rows, catalog, stream, new, self.now(), text)

    @serialised
    def attachments(
        self,
        *,
        group: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        direction: str | None = None,
        tag: str | None = None,
        limit: int = 100,
    ) -> list[Attachment]:
        """Attachments that have not expired, newest first (``attachment list``)."""
        from soloqueue_mem.clock import iso
        from soloqueue_mem.errors import NotFound
        from soloqueue_mem.memory.attachments import Filters

        check_ids(group=group, agent=agent, session=session)
        filters = Filters(group, agent, session, direction, tag)
        try:
            rows = self._storage().attachments(False)
        except NotFound:  # nothing stored yet
            return []
        return rows.listed(filters, iso(self.now()), limit)

    @serialised
    def attachment(self, ref: str) -> Attachment:
        """One attachment by id or unique prefix (``attachment show``)."""
        return self._storage().attachments(False).get(ref)

    @serialised
    def attachment_remove(self, ref: str) -> Attachment:
        """Remove an attachment and its artifact row (``attachment rm``; ``gc --deep``
        frees the blob): the attachment it was."""
        from soloqueue_mem.memory.attach import remove

        rows = self._storage().attachments(False)
        return remove(rows, self._artifacts(create=False), ref)
