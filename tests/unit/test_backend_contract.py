"""The storage back-end interface and the library's Store are documented: the back
end's contract in its class docstring, each public method's part in its own."""

from __future__ import annotations

import inspect

from soloqueue_mem import Store
from soloqueue_mem.storage.base import Backend


def test_every_backend_method_has_a_docstring():
    methods = [
        (name, method)
        for name, method in inspect.getmembers(Backend, inspect.isfunction)
        if not name.startswith("_")
    ]
    assert len(methods) > 40
    assert [name for name, method in methods if not method.__doc__] == []


def test_the_contract_names_what_every_back_end_guarantees():
    contract = inspect.getdoc(Backend) or ""
    for guarantee in ("One transaction per write method", "event_id", "soloqueue_mem.errors",
                      "Reads never create"):  # fmt: skip
        assert guarantee in contract


def test_every_public_store_member_has_a_docstring():
    members = [
        (name, member.fget if isinstance(member, property) else member)
        for name, member in inspect.getmembers(Store)
        if not name.startswith("_") and (callable(member) or isinstance(member, property))
    ]
    assert len(members) > 60
    assert [name for name, member in members if not member.__doc__] == []
