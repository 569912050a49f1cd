"""Writers on several "hosts" (data directories) sharing one PostgreSQL database.

Each writer process mixes ``log`` (two shared sessions, with event ids) and
``remember`` (its own subject's versions, and one statement every writer makes) and
prints one acknowledgement line per write, after the library returned it. Whatever
was acknowledged must be in the database: turn indexes gap-free per session, the
session counters matching, the shared statement confirmed into one memory, and no
writer failing (no unhandled serialization error or deadlock).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

_WRITER = """
import json, sys
from soloqueue_mem import Store
root, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Store(root) as store:
    for n in range(count):
        if n % 3 == 2:
            if n % 9 == 8:
                made = store.remember("the team deploys on Fridays")
            else:
                made = store.remember(
                    f"{name} prefers option {n}", subject=name, predicate="option"
                )
            ack = {"op": "remember", "id": made.memory.id}
        else:
            (turn,) = store.log(
                [{"role": "user", "content": f"{name} says {n}", "event_id": f"{name}-{n}"}],
                session=f"s{n % 2}",
            )
            ack = {"op": "log", "event_id": f"{name}-{n}", "session": turn.session,
                   "turn_index": turn.turn_index}
        print(json.dumps(ack), flush=True)
"""


def _start(root: Path, name: str, count: int, env: dict[str, str] | None = None) -> Any:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(root), name, str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )


def _acks(out: bytes) -> list[dict[str, Any]]:
    """The complete lines a writer printed (a killed one's last line may be cut)."""
    return [json.loads(line) for line in out.split(b"\n") if line.endswith(b"}")]


def _check(url: str, acks: list[dict[str, Any]]) -> None:
    import psycopg

    with psycopg.connect(url) as conn:
        turns = conn.execute(
            "SELECT event_id, session_id, turn_index FROM quarantine_logs"
        ).fetchall()
        sessions = {
            row[0]: row[1:]
            for row in conn.execute(
                "SELECT session_id, turn_count, next_turn_index FROM sessions"
            ).fetchall()
        }
        memories = {row[0] for row in conn.execute("SELECT id FROM memories").fetchall()}
        shared = conn.execute(
            "SELECT count(*) FROM memories WHERE content = 'the team deploys on Fridays'"
        ).fetchone()
    stored = {event: (session, index) for event, session, index in turns}
    for ack in acks:  # nothing acknowledged is lost
        if ack["op"] == "log":
            assert stored[ack["event_id"]] == (ack["session"], ack["turn_index"])
        else:
            assert ack["id"] in memories
    for session, (count, following) in sessions.items():  # gap-free, counters right
        indexes = sorted(index for s, index in stored.values() if s == session)
        assert indexes == list(range(count)) and following == count
    assert shared == (1,)  # stated by every writer, confirmed into one memory


def _writers_on_two_hosts(tmp_path: Path, url: str, writers: int, ops: int) -> None:
    procs = [_start(tmp_path / f"host-{n % 2}", f"w{n}", ops) for n in range(writers)]
    acks = []
    for proc in procs:
        out, err = proc.communicate(timeout=1800)
        assert proc.returncode == 0 and err == b"", err.decode()
        acks += _acks(out)
    assert len(acks) == writers * ops
    _check(url, acks)


def test_writers_on_two_hosts_lose_nothing(tmp_path: Path, on_postgres: str) -> None:
    _writers_on_two_hosts(tmp_path, on_postgres, writers=6, ops=50)


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("SOLOQUEUE_SLOW") != "1",
    reason="16 writers x 200 operations take minutes; set SOLOQUEUE_SLOW=1",
)
def test_sixteen_writers_on_two_hosts_times_two_hundred(tmp_path: Path, on_postgres: str) -> None:
    _writers_on_two_hosts(tmp_path, on_postgres, writers=16, ops=200)


def test_writers_killed_mid_transaction_lose_no_acknowledged_write(
    tmp_path: Path, on_postgres: str
) -> None:
    # a writer stops itself inside its first log transaction, holding session s0's row
    stuck = _start(
        tmp_path / "host-0",
        "stuck",
        5,
        {"SOLOQUEUE_TESTING": "1", "SOLOQUEUE_FAULT": "log.before_commit:stop"},
    )
    _, status = os.waitpid(stuck.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status)
    others = [_start(tmp_path / f"host-{n % 2}", f"w{n}", 30) for n in range(4)]
    stuck.kill()  # SIGKILL mid-transaction: the server rolls it back, the lock goes
    stuck.communicate()
    victim = others[0]
    assert victim.stdout is not None
    seen = [victim.stdout.readline() for _ in range(10)]  # ten writes acknowledged
    victim.send_signal(signal.SIGKILL)
    out, _ = victim.communicate()
    acks = _acks(b"".join(seen) + out)
    assert victim.returncode == -signal.SIGKILL and len(acks) >= 10
    for proc in others[1:]:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0 and err == b"", err.decode()
        acks += _acks(out)
    _check(on_postgres, acks)
    assert not any(ack.get("event_id", "").startswith("stuck") for ack in acks)
