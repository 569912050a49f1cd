"""The throwaway server of tests and benchmarks: one whose owner was killed before its
``stop()`` does not stay running with its files in /tmp."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

OWNER = """
import sys
from soloqueue_mem.storage.postgres.embedded import EmbeddedServer
server = EmbeddedServer()
server.start()
print(server.dir, flush=True)
sys.stdin.read()  # killed here, before stop()
"""


def test_a_server_left_by_a_killed_owner_is_stopped_and_deleted_by_the_next(
    pg_server: str,
) -> None:
    from soloqueue_mem.storage.postgres.embedded import EmbeddedServer

    with subprocess.Popen(
        [sys.executable, "-c", OWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as owner:
        assert owner.stdout is not None
        left = Path(owner.stdout.readline().strip())
        owner.send_signal(signal.SIGKILL)
    postmaster = int((left / "data" / "postmaster.pid").read_text().split()[0])
    exited = os.pidfd_open(postmaster)  # readable once the process has exited
    try:
        assert select.select([exited], [], [], 0)[0] == []  # nobody stopped it
        server = EmbeddedServer()
        try:
            server.start()
            assert not left.exists()
            assert select.select([exited], [], [], 30)[0] == [exited]
        finally:
            server.stop()
    finally:
        os.close(exited)
