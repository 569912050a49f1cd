"""Two "hosts" (data directories) writing the scratchpad, kv and session variables of
one database at once: no write is lost, no key is stored twice, nobody fails."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

from soloqueue_mem import Store

WRITERS = 5  # the scratchpad keeps 5 items a section: every writer's task must be there
ROUNDS = 3


def _start(root: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "soloqueue_mem", "--root", str(root), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
    )


def test_session_variables_set_at_once_on_two_hosts_all_reach_the_scratchpad(
    tmp_path: Path, on_postgres: str
) -> None:
    hosts = [tmp_path / "host-a", tmp_path / "host-b"]
    procs = [
        _start(hosts[n % 2], "session", "set", f"s{n}", "current_task", f"task of writer {n}")
        for n in range(WRITERS)
    ] + [_start(hosts[n % 2], "kv", "set", "editor", f'"editor {n}"') for n in range(WRITERS)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    with Store(hosts[0]) as store:
        assert store.kv_get("editor").value in {f"editor {n}" for n in range(WRITERS)}
    import psycopg

    with psycopg.connect(on_postgres, autocommit=True) as conn:
        (content,) = conn.execute("SELECT content FROM scratchpad").fetchone()  # type: ignore[misc]
        keys = conn.execute("SELECT count(*) FROM kv_store").fetchone()
        variables = conn.execute("SELECT count(*) FROM session_state").fetchone()
    assert sorted(line for line in content.splitlines() if line.startswith("- ")) == [
        f"- task of writer {n}" for n in range(WRITERS)
    ]  # no read-modify-write of the scratchpad lost another's
    assert keys == (1,) and variables == (WRITERS,)
    assert not any((host / "state.db").exists() or (host / "memory.db").exists() for host in hosts)


def test_the_library_store_runs_them_on_postgres(home: Path, on_postgres: str) -> None:
    with Store() as store:
        store.log("Please build the parser in Rust", session="s1")
        store.log("I will write it in Rust", role="assistant", session="s1")
        store.log("My editor is helix.", session="s1")
        assert store.kv_set("theme", "dark").value == "dark"
        assert store.kv_get("theme").updated_at
        compressed = store.context_compress("s1", keep=1)
        assert compressed.compressed_turns == 2 and compressed.episode is not None
        again = store.context_compress("s1", keep=1)
        assert again.episode == compressed.episode and again.remembered == []
        built = store.context_build(session="s1", max_context=8000, with_memory=True)
        assert [m["role"] for m in built.built.messages] == ["system", "user", "assistant", "user"]
        saved = store.artifact_save(b"bytes on this host", title="notes")
        assert store.artifact_read(str(saved.artifact.id)).data == b"bytes on this host"
    assert not (home / "memory.db").exists() and not (home / "state.db").exists()


def test_writers_released_at_once_lose_no_scratchpad_update(
    tmp_path: Path, on_postgres: str
) -> None:
    """The same as threads let go by a barrier, each with a connection of its own, so
    their read-modify-writes of one scratchpad really overlap."""
    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.sessions.events import SessionKey
    from soloqueue_mem.storage import open_backend

    backends = [open_backend(Home(tmp_path / f"host-{n % 2}"), Config()) for n in range(WRITERS)]
    now = datetime(2026, 11, 26, 8, 0, tzinfo=UTC)
    for round_ in range(ROUNDS):
        barrier = threading.Barrier(WRITERS)

        def write(n: int, group: str = f"r{round_}", barrier: threading.Barrier = barrier) -> None:
            backend = backends[n]
            assert backend is not None
            barrier.wait()
            backend.session_set(SessionKey(group, "a", f"s{n}"), "current_task", f"task {n}", now)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        pad = backends[0].scratchpad(f"r{round_}", "a", "")  # type: ignore[union-attr]
        assert sorted(pad.active_projects) == [f"task {n}" for n in range(WRITERS)]
    for backend in backends:
        backend.close()  # type: ignore[union-attr]
