"""The data directory: where it is, what is inside it, and whether it is safe to use.

Root resolution (SPEC §2), first match wins: an explicit ``--root``; ``SOLOQUEUE_HOME``;
the nearest ``.soloqueue/`` in the working directory or its parents; the platform's user
data directory. Group, agent and session ids become path components, so they are
validated here before any path is built. Everything we create is 0700 (folders) or
0600 (files); a root that is a symlink, owned by someone else or writable by others is
refused, like git's ``safe.directory``.
"""

from __future__ import annotations

import os
import stat

from soloqueue_mem.errors import InvalidId, StorageError

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from pathlib import Path

    StrPath = str | os.PathLike[str]

DIR_NAME = ".soloqueue"
SERVE_SOCKET = "serve.sock"  # where a warm `serve` answers `recall` (api/local_socket.py)
# An id is 1-128 of these, starting with a letter or digit and not ending in ".": checked
# without a regular expression, whose compilation is a measurable part of ``log``'s start-up.
_ID_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_ID_CHARS = _ID_FIRST | frozenset("._-")


def validate_id(kind: str, value: str) -> str:
    """Return ``value`` if it is a safe group/agent/session id, else raise InvalidId."""
    if not (
        isinstance(value, str)
        and 0 < len(value) <= 128
        and value[0] in _ID_FIRST
        and _ID_CHARS.issuperset(value)
        and not value.endswith(".")
    ):
        shown = repr(value)[:80]
        raise InvalidId(
            f"invalid {kind} id {shown}: use 1-128 of A-Z a-z 0-9 . _ - "
            "starting with a letter or digit and not ending in '.'"
        )
    return value


def find_root(explicit: str | None, env_home: str | None, cwd: str) -> str:
    """Resolve the data directory (an absolute path) without touching the file system
    beyond ``stat``."""
    for given in (explicit, env_home):
        if given:
            return os.path.abspath(os.path.expanduser(given))
    folder = os.path.abspath(cwd)
    while True:
        candidate = os.path.join(folder, DIR_NAME)
        if os.path.isdir(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    import platformdirs  # only needed when nothing nearer names a store

    return os.path.join(platformdirs.user_data_dir("soloqueue-mem"), DIR_NAME)


class _Entry:
    """A path of the layout, read as an attribute of a :class:`Home`."""

    def __init__(self, *parts: str) -> None:
        self.parts = parts

    def __get__(self, home: Home, owner: type[Home]) -> str:
        return home.path(*self.parts)


class Home:
    """A data directory and the layout of SPEC §2 inside it.

    Paths are plain strings (``dir`` and the layout below), which every ``os`` and
    ``sqlite3`` call takes: ``pathlib`` costs a seventh of a ``log`` call to import, so
    only :attr:`root`, for the code off that path, builds a :class:`~pathlib.Path`.
    """

    __slots__ = ("dir",)

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.dir: str = os.path.normpath(os.fspath(root))

    def __repr__(self) -> str:
        return f"Home({self.dir!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Home) and other.dir == self.dir

    def __hash__(self) -> int:
        return hash(self.dir)

    @property
    def root(self) -> Path:
        from pathlib import Path

        return Path(self.dir)

    def path(self, *parts: str) -> str:
        """``parts`` joined below the root."""
        return os.path.join(self.dir, *parts)

    memory_db = _Entry("memory.db")
    artifacts_db = _Entry("artifacts.db")
    blobs_dir = _Entry("artifacts", "blobs")
    gc_lock = _Entry(".gc.lock")
    gc_state = _Entry(".gc_state")
    state_db = _Entry("state.db")
    graph_db = _Entry("graph.db")
    config_file = _Entry("config.toml")
    cache_dir = _Entry("cache")  # derived files, deletable at any time (the lexicon)
    serve_socket = _Entry(SERVE_SOCKET)

    def sessions_dir(self, group: str, agent: str) -> str:
        validate_id("group", group)
        validate_id("agent", agent)
        return self.path("groups", group, "sessions", agent)

    def session_log(self, group: str, agent: str, session: str) -> str:
        """Path of the session's JSONL log; the Markdown log sits beside it as ``.md``."""
        validate_id("session", session)
        return os.path.join(self.sessions_dir(group, agent), f"{session}.jsonl")

    def exists(self) -> bool:
        return os.path.isdir(self.dir)

    def check_safe(self) -> None:
        """Refuse a root that is a system folder or the home directory itself, a
        symlink, not ours, or writable by group/others."""
        root = self.dir
        refuse_system_root(root)
        try:
            info = os.lstat(root)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StorageError(f"cannot inspect data directory {root}: {exc}") from None
        if stat.S_ISLNK(info.st_mode):
            target = os.path.realpath(root)
            raise StorageError(
                f"data directory {root} is a symlink; refusing to use it "
                f"(use the real directory instead: --root {target})"
            )
        if not stat.S_ISDIR(info.st_mode):
            raise StorageError(f"data directory {root} is not a directory")
        if info.st_uid != os.geteuid():
            raise StorageError(
                f"data directory {root} is owned by uid {info.st_uid}, not you; refusing to use it"
            )
        if info.st_mode & 0o022:
            raise StorageError(
                f"data directory {root} is writable by group or others "
                f"(mode {stat.S_IMODE(info.st_mode):o}); fix it with: chmod 700 {root}"
            )

    def ensure(self) -> None:
        """Create the root (0700, with a ``.gitignore`` of ``*``) if missing; check it."""
        self.check_safe()
        if not os.path.exists(self.dir):
            make_private_dirs(self.dir)
            write_private_file(self.path(".gitignore"), b"*\n")
        self.check_safe()


# Folders whose files belong to the system or to many programs: never a data directory.
_SYSTEM_ROOTS = frozenset(
    "/ /bin /boot /dev /etc /home /lib /lib32 /lib64 /libx32 /media /mnt /opt /proc /root "
    "/run /sbin /srv /sys /tmp /usr /var /var/lib /var/tmp /Users /Library /System".split()
)
_SYSTEM_TREES = ("/bin/", "/boot/", "/dev/", "/etc/", "/lib/", "/proc/", "/sbin/", "/sys/", "/usr/")


def refuse_system_root(root: StrPath) -> None:
    """Raise StorageError for ``/``, a system folder (or a folder inside /etc, /usr...),
    or the home directory itself: a store there would scatter ``memory.db``,
    ``groups/``... among files that are not ours."""
    real = os.path.realpath(root)
    home = os.path.realpath(os.path.expanduser("~"))
    if real in _SYSTEM_ROOTS or real.startswith(_SYSTEM_TREES) or real == home:
        what = "your home directory" if real == home else "a system folder"
        raise StorageError(
            f"data directory {root} is {what}; refusing to use it "
            f"(use a folder of its own, e.g. --root {os.path.join(home, DIR_NAME)})"
        )


def _parents(path: str) -> list[str]:
    """``path`` and the folders above it, nearest first (like ``Path.parents``)."""
    chain = [path]
    while (parent := os.path.dirname(chain[-1])) not in ("", chain[-1]):
        chain.append(parent)
    return chain


def make_private_dirs(path: StrPath) -> None:
    """``mkdir -p`` where every folder created is 0700 and no symlink is followed.

    Trigger: an existing component is a symlink. Why: a planted link would send our
    writes outside the data directory. Outcome: StorageError, nothing created below it.
    """
    missing: list[str] = []
    for current in _parents(os.path.normpath(path)):
        if os.path.exists(current):
            break
        if os.path.islink(current):
            raise StorageError(f"{current} is a dangling symlink; refusing to create it")
        missing.append(current)
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass  # another process created it first
        except OSError as exc:
            raise StorageError(f"cannot create {folder}: {exc.strerror}") from None
        if os.path.islink(folder):
            raise StorageError(f"{folder} is a symlink; refusing to use it")


def ensure_private_dir(root: StrPath, folder: StrPath) -> None:
    """Create ``folder`` inside ``root`` refusing symlinked components below the root,
    checked before anything is created (a planted link gets no folder in its target)
    and again after (a link planted meanwhile)."""
    refuse_symlinks(root, folder)
    make_private_dirs(folder)
    refuse_symlinks(root, folder)


def refuse_symlinks(root: StrPath, path: StrPath) -> None:
    """Raise StorageError if ``path`` or a folder between it and ``root`` is a symlink
    (those that do not exist yet are fine). ``root`` itself is checked by
    :meth:`Home.check_safe`."""
    top = os.path.normpath(root)
    for part in _parents(os.path.normpath(path)):
        if part == top:
            return
        if os.path.islink(part):
            raise StorageError(f"{part} is a symlink; refusing to use it")
    raise StorageError(f"{path} is outside the data directory {root}")


def write_private_file(path: StrPath, data: bytes) -> None:
    """Create a 0600 file that must not exist yet (never through a symlink)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        return
    except OSError as exc:
        raise StorageError(f"cannot create {path}: {exc.strerror}") from None
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def replace_private_file(path: StrPath, data: bytes) -> None:
    """Write ``path`` (0600) whole or not at all: a temporary file renamed over it, so
    a reader never sees half a file and a symlink at ``path`` is replaced, not followed."""
    from soloqueue_mem.fsio import write_all

    folder, name = os.path.split(path)
    temporary = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(temporary, flags, 0o600)
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except OSError as exc:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise StorageError(f"cannot write {path}: {exc.strerror}") from None
