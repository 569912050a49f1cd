"""A reader that goes away early (``... | head -c 10``): every command that streams to
stdout exits 141 and prints nothing on stderr (the README's exit-code table).

The reader takes a few bytes, then closes the pipe while the command is still writing
far more than a pipe holds. That is the case a single large write to a closing pipe
used to hide: the kernel takes part of it, Python's text layer drops the rest without
an error (CPython gh-85393), and the command exited 0 as if the reader had everything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import run_process

FORMATS = ("json", "jsonl", "table", "text")


def ok(*args: str, input: bytes | None = None) -> bytes:
    done = run_process(*args, input=input)
    assert done.returncode == 0, (args, done.returncode, done.stderr.decode())
    return done.stdout


def read_a_little_then_close(*args: str) -> tuple[int, bytes]:
    """Run the program, read ten bytes of its stdout, close the pipe: (exit, stderr)."""
    reader = subprocess.Popen(
        [sys.executable, "-m", "soloqueue_mem", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert reader.stdout is not None and reader.stderr is not None
    first = os.read(reader.stdout.fileno(), 10)
    reader.stdout.close()
    stderr = reader.stderr.read()
    reader.stderr.close()
    assert first, (reader.wait(timeout=60), stderr.decode())  # it had started writing
    return reader.wait(timeout=60), stderr


def log_a_long_session(session: str, turns: int = 1000) -> None:
    """``turns`` turns of ~600 characters that all match "pipe"."""
    body = "".join(
        json.dumps({"role": "user", "content": f"pipe turn {n} " + "words to stream " * 36}) + "\n"
        for n in range(turns)
    )
    ok("log", "-s", session, "--batch", input=body.encode())


def test_artifact_read_of_2_mib_into_a_reader_that_closes_early_exits_141(store):
    saved = json.loads(ok("--format", "json", "artifact", "save", "-", input=os.urandom(2 << 20)))
    assert read_a_little_then_close("artifact", "read", saved["id"]) == (141, b"")


@pytest.mark.parametrize("fmt", FORMATS)
def test_trace_into_a_reader_that_closes_early_exits_141(store, fmt):
    log_a_long_session("s1")
    exit_code = read_a_little_then_close("--format", fmt, "trace", "pipe", "--limit", "1000")
    assert exit_code == (141, b"")


@pytest.mark.parametrize("as_format", ["jsonl", "md", "openai"])
def test_session_export_into_a_reader_that_closes_early_exits_141(store, as_format):
    log_a_long_session("s1")
    assert read_a_little_then_close("session", "export", "s1", "--as", as_format) == (141, b"")


@pytest.mark.parametrize("fmt", FORMATS)
def test_memory_list_into_a_reader_that_closes_early_exits_141(store, fmt):
    paragraphs = (f"memory {n} " + "a fact worth keeping for later " * 15 for n in range(400))
    ok("promote", "-", input="\n\n".join(paragraphs).encode())
    exit_code = read_a_little_then_close("--format", fmt, "memory", "list", "--limit", "1000")
    assert exit_code == (141, b"")
