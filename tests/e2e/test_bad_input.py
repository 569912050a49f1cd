"""RELIABILITY C1-C5, C7, C10 and E1 for `log`: hostile input is rejected cleanly.

Every rejection: exit 65 (2 for usage errors), exactly one `error:` line on stderr, no
traceback, nothing on stdout, and the store exactly as it was (a store that did not
exist yet is not created). E1 runs the CLI under an audit hook and checks that every
path it writes, creates, renames, removes or chmods lies inside the data directory.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_process, tree_snapshot

EX_USAGE, EX_DATAERR = 2, 65


# -- helpers ---------------------------------------------------------------------------


def everything(top: Path) -> dict[str, bytes | None]:
    """Every path under ``top`` (directories as None), so "nothing created" is exact."""
    return {
        str(p.relative_to(top)): (None if p.is_dir() else p.read_bytes())
        for p in sorted(top.rglob("*"))
        if not p.name.endswith("-shm")
    }


def assert_rejected(done: subprocess.CompletedProcess[bytes], code: int = EX_DATAERR) -> str:
    stderr = done.stderr.decode("utf-8", errors="replace")
    assert done.returncode == code, (done.returncode, stderr)
    assert done.stdout == b"", done.stdout
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert "unexpected" not in lines[0], lines
    return lines[0]


def assert_rejected_in_process(result, code: int = EX_DATAERR) -> str:
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


@pytest.fixture(params=["fresh", "existing"])
def store(request, cli, home: Path, tmp_path: Path):
    """A store that does not exist yet, or one holding a turn; returns a checker."""
    if request.param == "existing":
        cli.ok("log", "-s", "s", "seed")
    before = everything(tmp_path)

    def unchanged() -> None:
        assert everything(tmp_path) == before
        if request.param == "fresh":
            assert not home.exists() and not home.parent.exists()

    return unchanged


def _log(*args: str | bytes, input: bytes | None = None, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "soloqueue_mem", "log", *args],
        input=input,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=False,
    )


# -- C1 malformed JSON -------------------------------------------------------------------

C1_DOCUMENTS = {
    "truncated": b'{"role": "user", "content": "hi"',
    "trailing-garbage": b'{"role": "user", "content": "hi"} trailing',
    "two-documents": b'{"role": "user", "content": "a"}\n{"role": "user", "content": "b"}\n',
    "top-level-string": b'"just text"',
    "top-level-number": b"42",
    "top-level-null": b"null",
    "array-of-non-objects": b"[1, 2]",
    "role-not-string": b'{"role": 1, "content": "x"}',
    "missing-role": b'{"content": "x"}',
    "unknown-role": b'{"role": "wizard", "content": "x"}',
    "content-number": b'{"role": "user", "content": 5}',
    "tool-calls-not-list": b'{"role": "user", "content": "x", "tool_calls": "nope"}',
    "metadata-not-object": b'{"role": "user", "content": "x", "metadata": [1]}',
    "event-id-number": b'{"role": "user", "content": "x", "event_id": 7}',
    "timestamp-bool": b'{"role": "user", "content": "x", "timestamp": true}',
    "timestamp-garbage": b'{"role": "user", "content": "x", "timestamp": "yesterday"}',
    "session-number": b'{"role": "user", "content": "x", "session": 5}',
    "empty-stdin": b"",
    "blank-stdin": b"  \n\t\n",
}


@pytest.mark.parametrize("name", list(C1_DOCUMENTS))
def test_c1_malformed_json_is_rejected(name: str, store) -> None:
    assert_rejected(_log("-s", "s", input=C1_DOCUMENTS[name]))
    store()


# -- C2 invalid UTF-8 under every locale -------------------------------------------------


def _locales() -> list[str]:
    names = ["C", "C.UTF-8"]
    try:
        available = subprocess.run(
            ["locale", "-a"], capture_output=True, text=True, check=False
        ).stdout
    except FileNotFoundError:
        available = ""
    if any(line.lower().replace("-", "") == "en_us.utf8" for line in available.splitlines()):
        names.append("en_US.UTF-8")
    return names


LOCALES = _locales()
BAD_BYTES = {"xff": b"a\xffb", "overlong": b"\xc0\xaf", "cesu-surrogate": b"\xed\xa0\x80"}
C2_DOCUMENTS = {
    **{f"raw-{k}": b'{"role": "user", "content": "' + v + b'"}' for k, v in BAD_BYTES.items()},
    "raw-xff-in-key": b'{"role": "user", "content": "x", "metadata": {"k\xff": 1}}',
    "escape-ud800": b'{"role": "user", "content": "a\\ud800b"}',
    "escape-udc80-in-key": b'{"role": "user", "content": "x", "metadata": {"\\udc80": 1}}',
    "escape-in-tool-input": b'{"role": "assistant", "content": "", "tool_calls": '
    b'[{"name": "t", "input": {"q": "\\udfff"}}]}',
}


def _c2_cases() -> list[tuple[str, tuple[bytes, ...], bytes | None]]:
    cases = [(f"stdin-json-{k}", (b"-s", b"s"), v) for k, v in C2_DOCUMENTS.items()]
    cases += [(f"stdin-text-{k}", (b"-s", b"s", b"-"), v) for k, v in BAD_BYTES.items()]
    cases += [(f"argv-text-{k}", (b"-s", b"s", v), None) for k, v in BAD_BYTES.items()]
    return cases


@pytest.mark.parametrize(("name", "args", "data"), _c2_cases(), ids=[c[0] for c in _c2_cases()])
def test_c2_invalid_utf8_is_rejected_identically_under_every_locale(
    name: str, args: tuple[bytes, ...], data: bytes | None, cli, home: Path
) -> None:
    cli.ok("log", "-s", "s", "seed")
    before = tree_snapshot(home)
    seen = set()
    for locale in LOCALES:
        env = {"LC_ALL": locale, "LANG": locale}
        done = _log(*args, input=data if data is not None else b"", env=env)
        message = assert_rejected(done)
        assert tree_snapshot(home) == before, locale
        seen.add((done.returncode, message))
    assert len(seen) == 1, f"different rejections per locale: {seen}"


# -- C3 input larger than the configured cap ---------------------------------------------

TEN_MB = 10 * 1024 * 1024


@pytest.fixture
def capped(cli, home: Path) -> Path:
    cli.ok("log", "-s", "s", "seed")
    config = home / "config.toml"
    config.write_text("max_input_bytes = 1000\nmax_line_bytes = 1000\n")
    config.chmod(0o600)
    return home


def test_c3_document_over_the_cap_is_rejected_fast(capped: Path) -> None:
    before = tree_snapshot(capped)
    document = b'{"role": "user", "content": "' + b"a" * TEN_MB + b'"}'
    done = _log("-s", "s", input=document)
    line = assert_rejected(done)
    assert "larger than 1000 bytes" in line
    assert tree_snapshot(capped) == before


def test_c3_text_from_stdin_over_the_cap_is_rejected(capped: Path) -> None:
    before = tree_snapshot(capped)
    done = _log("-s", "s", "-", input=b"a" * TEN_MB)
    line = assert_rejected(done)
    assert "1000" in line, line
    assert tree_snapshot(capped) == before


def test_c3_endless_stdin_stops_after_the_cap(capped: Path) -> None:
    """A producer that never closes stdin: read at most cap+1 bytes, then fail."""
    before = tree_snapshot(capped)
    proc = subprocess.Popen(
        [sys.executable, "-m", "soloqueue_mem", "log", "-s", "s"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
    )
    assert proc.stdin is not None
    try:
        proc.stdin.write(b'{"role": "user", "content": "' + b"a" * 4000)
        proc.stdin.flush()
        out, err = proc.stdout.read(), proc.stderr.read()  # EOF only once the process has exited
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()
    assert_rejected(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    assert tree_snapshot(capped) == before


def test_c3_batch_rejects_the_long_line_and_logs_the_others(capped: Path) -> None:
    stream = (
        b"\n".join(
            [
                json.dumps({"role": "user", "content": "before"}).encode(),
                b'{"role": "user", "content": "' + b"b" * TEN_MB + b'"}',
                json.dumps({"role": "user", "content": "after"}).encode(),
            ]
        )
        + b"\n"
    )
    done = _log("--batch", "-s", "s", "--format", "jsonl", input=stream)
    assert done.returncode == EX_DATAERR, done.stderr
    acks = [json.loads(x) for x in done.stdout.splitlines()]
    assert [(a["content"], a["line"], a["turn_index"]) for a in acks] == [
        ("before", 1, 1),
        ("after", 3, 2),
    ]
    errors = [json.loads(x)["error"] for x in done.stderr.splitlines()]
    assert errors[0]["line"] == 2 and "longer than 1000 bytes" in errors[0]["message"]
    assert [e["code"] for e in errors] == ["bad_input", "partial"]
    path = capped / "groups/default/sessions/default/s.jsonl"
    assert [json.loads(x)["content"] for x in path.read_bytes().splitlines()] == [
        "seed",
        "before",
        "after",
    ]


# -- C4 JSON bombs -------------------------------------------------------------------------

DEEP = 10_000
C4_DOCUMENTS = {
    "deep-array": b"[" * DEEP + b"]" * DEEP,
    "deep-in-metadata": b'{"role": "user", "content": "x", "metadata": {"a": '
    + b"[" * DEEP
    + b"]" * DEEP
    + b"}}",
    "deep-objects": b'{"role": "user", "content": "x", "metadata": '
    + b'{"a": ' * DEEP
    + b"1"
    + b"}" * DEEP
    + b"}",
    "deeper-than-64": b'{"role": "user", "content": "x", "metadata": {"a": '
    + b"[" * 100
    + b"]" * 100
    + b"}}",
    "5000-digit-int-metadata": b'{"role": "user", "content": "x", "metadata": {"n": '
    + b"9" * 5000
    + b"}}",
    "5000-digit-int-content": b'{"role": "user", "content": ' + b"7" * 5000 + b"}",
    "5000-digit-timestamp": b'{"role": "user", "content": "x", "timestamp": ' + b"1" * 5000 + b"}",
    "nan": b'{"role": "user", "content": "x", "metadata": {"v": NaN}}',
    "infinity": b'{"role": "user", "content": "x", "metadata": {"v": Infinity}}',
    "minus-infinity": b'{"role": "user", "content": "x", "metadata": {"v": -Infinity}}',
    "overflow-to-infinity-metadata": b'{"role": "user", "content": "x", "metadata": {"v": 1e999}}',
    "overflow-to-infinity-tool-input": b'{"role": "assistant", "content": "", "tool_calls": '
    b'[{"name": "t", "input": {"v": -1e999}}]}',
    "overflow-timestamp": b'{"role": "user", "content": "x", "timestamp": 1e999}',
    "duplicate-keys": b'{"role": "user", "role": "assistant", "content": "x"}',
    "duplicate-nested-keys": b'{"role": "user", "content": "x", "metadata": {"k": 1, "k": 2}}',
}


@pytest.mark.parametrize("name", list(C4_DOCUMENTS))
def test_c4_json_bombs_are_rejected(name: str, store) -> None:
    assert_rejected(_log("-s", "s", input=C4_DOCUMENTS[name]))
    store()


def test_c4_a_bomb_in_a_batch_rejects_only_its_line(cli, home: Path) -> None:
    stream = (
        "\n".join(
            [
                json.dumps({"role": "user", "content": "good 1"}),
                '{"role": "user", "content": "x", "metadata": {"v": 1e999}}',
                '{"role": "user", "content": "x", "metadata": {"v": NaN}}',
                json.dumps({"role": "user", "content": "good 2"}),
            ]
        )
        + "\n"
    )
    done = _log("--batch", "-s", "s", "--format", "jsonl", input=stream.encode())
    assert done.returncode == EX_DATAERR, done.stderr
    assert "Traceback" not in done.stderr.decode()
    assert [json.loads(x)["content"] for x in done.stdout.splitlines()] == ["good 1", "good 2"]
    errors = [json.loads(x)["error"] for x in done.stderr.splitlines()]
    assert [(e.get("line"), e["code"]) for e in errors] == [
        (2, "bad_input"),
        (3, "bad_input"),
        (None, "partial"),
    ]
    path = home / "groups/default/sessions/default/s.jsonl"
    assert [json.loads(x)["content"] for x in path.read_bytes().splitlines()] == [
        "good 1",
        "good 2",
    ]


# -- C5 NUL bytes --------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["session", "group", "agent"])
def test_c5_nul_in_an_id_is_rejected(key: str, cli, store) -> None:
    hostile = "a\x00b"
    event = {"role": "user", "content": "x", key: hostile}
    assert_rejected(_log("-s", "s", input=json.dumps(event).encode()))
    # argv cannot carry a NUL to a real process; in-process it can.
    assert_rejected_in_process(cli("log", "-s", "s", f"--{key}", hostile, "x"))
    store()


def test_c5_nul_in_content_round_trips_byte_exact(home: Path) -> None:
    texts = ["\x00", "before\x00after", "\x00\x00 中文 \x00 end\x00"]
    for text in texts:
        done = _log(
            "-s",
            "n",
            "--format",
            "json",
            input=json.dumps({"role": "user", "content": text}).encode(),
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["content"] == text
    raw = b"raw\x00stdin\x00"
    done = _log("-s", "n", "--format", "json", "-", input=raw)
    assert done.returncode == 0, done.stderr
    texts.append(raw.decode())

    exported = run_process("session", "export", "n", "--as", "jsonl")
    assert exported.returncode == 0 and exported.stderr == b""
    records = [json.loads(x) for x in exported.stdout.splitlines()]
    assert [r["content"].encode() for r in records] == [t.encode() for t in texts]
    conn = sqlite3.connect(home / "memory.db")
    try:
        rows = [
            r[0]
            for r in conn.execute(
                "SELECT content FROM conversation_turns WHERE session_id = 'n' ORDER BY turn_index"
            )
        ]
    finally:
        conn.close()
    assert rows == texts


# -- C7 hostile ids ------------------------------------------------------------------------

HOSTILE_IDS = {
    "dotdot-path": "../../etc/passwd",
    "absolute": "/etc/passwd",
    "dotdot": "..",
    "dot": ".",
    "slash": "a/b",
    "backslash": "a\\b",
    "tilde": "~",
    "dollar-home": "$HOME",
    "empty": "",
    "300-chars": "a" * 300,
    "newline": "a\nb",
    "trailing-newline": "ab\n",
    "fullwidth-dots": "．．",
    "leading-dash": "-rf",
    "trailing-dot": "name.",
    "trailing-space": "name ",
}
ID_KEYS = ["session", "group", "agent"]


@pytest.mark.parametrize("key", ID_KEYS)
@pytest.mark.parametrize("name", list(HOSTILE_IDS))
def test_c7_hostile_id_options_are_rejected_before_any_file_is_touched(
    name: str, key: str, cli, tmp_path: Path
) -> None:
    before = everything(tmp_path)
    hostile = HOSTILE_IDS[name]
    args = ["log", f"--{key}={hostile}", "text"]
    if key != "session":
        args[1:1] = ["--session", "s"]
    assert_rejected_in_process(cli(*args))
    assert everything(tmp_path) == before


@pytest.mark.parametrize("key", ID_KEYS)
@pytest.mark.parametrize("name", list(HOSTILE_IDS))
def test_c7_hostile_ids_inside_a_json_event_are_rejected(
    name: str, key: str, cli, tmp_path: Path
) -> None:
    before = everything(tmp_path)
    event = json.dumps({"role": "user", "content": "x", key: HOSTILE_IDS[name]})
    assert_rejected_in_process(cli("log", "-s", "s", input=event))
    assert everything(tmp_path) == before


def test_c7_hostile_ids_as_real_processes(cli, home: Path, tmp_path: Path) -> None:
    """A sample through real argv (no shell), so nothing is lost to the test runner."""
    cli.ok("log", "-s", "s", "seed")
    before = everything(tmp_path)
    for hostile in ["../../etc/passwd", "/etc/passwd", "..", "-rf", "．．", "a\nb", ""]:
        for option in ("--session", "--group", "--agent"):
            assert_rejected(_log("-s", "s", option, hostile, "text"))
    assert everything(tmp_path) == before


# -- E1 audit-hook containment -------------------------------------------------------------

AUDIT_WRAPPER = textwrap.dedent(
    r"""
    import io, json, os, sys

    out_fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(sys.argv[2], encoding="utf-8") as handle:
        plan = json.load(handle)
    WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    events = []
    step = [-1]

    def record(event, path, writes):
        if isinstance(path, int) or path is None:
            return  # an already open descriptor: its path was recorded when opened
        path = os.fsdecode(os.fspath(path))
        events.append([step[0], event, os.path.join(os.getcwd(), path), writes])

    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            if isinstance(flags, int) and flags:
                writes = bool(flags & WRITE_FLAGS)
            else:
                writes = any(c in (mode or "") for c in "wax+")
            record(event, path, writes)
        elif event in ("os.mkdir", "os.remove", "os.rmdir", "os.chmod", "os.truncate",
                       "os.chown", "os.link", "os.utime"):
            record(event, args[0], True)
        elif event == "os.rename":
            record(event, args[0], True)
            record(event, args[1], True)
        elif event == "os.symlink":
            record(event, args[0], True)
            record(event, args[1], True)
        elif event == "sqlite3.connect" and args[0] != ":memory:":  # memory writes no file
            record(event, args[0], True)

    from soloqueue_mem.cli import main

    sys.addaudithook(hook)
    results = []
    real = sys.stdin, sys.stdout, sys.stderr
    for number, item in enumerate(plan):
        step[0] = number
        sys.argv = ["soloqueue-mem", *item["argv"]]
        sys.stdin = io.TextIOWrapper(io.BytesIO(item["stdin"].encode("utf-8")), encoding="utf-8")
        sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
        code = 0
        try:
            main()
        except SystemExit as exc:
            code = exc.code or 0
        results.append({"argv": item["argv"], "code": code, "stderr": sys.stderr.getvalue()})
        sys.stdin, sys.stdout, sys.stderr = real
    step[0] = -1
    os.write(out_fd, json.dumps({"events": events, "results": results}).encode("utf-8"))
    os.close(out_fd)
    """
)


def test_e1_every_write_stays_inside_the_data_directory(home: Path, tmp_path: Path) -> None:
    def event(**fields: str) -> str:
        return json.dumps({"role": "user", "content": "x", **fields})

    normal = [
        {"argv": ["log", "-s", "s1", "first turn"], "stdin": ""},  # creates the store
        {"argv": ["log", "-s", "s1", "--format", "json"], "stdin": event(event_id="e1")},
        {"argv": ["log", "-s", "s1", "--format", "json"], "stdin": event(event_id="e1")},
        {"argv": ["log", "-s", "s2"], "stdin": event(group="g2", agent="bot", session="s9")},
        {
            "argv": ["log", "--batch", "-s", "s3"],
            "stdin": "\n".join([event(), event(session="s4"), "{bad", event(agent="a2")]) + "\n",
        },
        {"argv": ["session", "list"], "stdin": ""},
        {"argv": ["session", "show", "s1"], "stdin": ""},
        {"argv": ["session", "export", "s1", "--as", "md"], "stdin": ""},
        {"argv": ["trace", "turn"], "stdin": ""},
        {"argv": ["session", "end", "s1"], "stdin": ""},
    ]
    hostile = []
    for value in HOSTILE_IDS.values():
        for key in ID_KEYS:
            hostile.append(
                {
                    "argv": ["log", f"--{key}={value}", "-s", "s1", "x"]
                    if key != "session"
                    else ["log", f"--session={value}", "x"],
                    "stdin": "",
                }
            )
            hostile.append({"argv": ["log", "-s", "s1"], "stdin": event(**{key: value})})
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(normal + hostile), encoding="utf-8")
    report_file = tmp_path / "audit.json"
    script = tmp_path / "audited.py"
    script.write_text(AUDIT_WRAPPER, encoding="utf-8")

    done = subprocess.run(
        [sys.executable, str(script), str(report_file), str(plan_file)],
        capture_output=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(report_file.read_text(encoding="utf-8"))
    results = report["results"]
    codes = [r["code"] for r in results]
    assert codes[: len(normal)] == [0, 0, 0, 0, 65, 0, 0, 0, 0, 0], results[: len(normal)]
    assert codes[len(normal) :] == [65] * len(hostile), [
        r for r in results[len(normal) :] if r["code"] != 65
    ]

    root = os.path.realpath(home)
    # Creating the configured root's missing ancestors (mkdir -p) is the one write
    # allowed outside it.
    ancestors = {os.path.realpath(p) for p in home.parents}
    writes = [e for e in report["events"] if e[3]]
    assert any(e[1] == "sqlite3.connect" for e in writes), "the hook saw no database open"
    outside = []
    for step, kind, path, _ in writes:
        real = os.path.realpath(path)
        inside = os.path.commonpath([root, real]) == root
        if not inside and not (kind == "os.mkdir" and real in ancestors):
            outside.append((step, kind, path))
    assert not outside, outside
    hostile_writes = [e for e in writes if e[0] >= len(normal)]
    assert not hostile_writes, hostile_writes
    hostile_paths = [
        e
        for e in report["events"]
        if e[0] >= len(normal) and ("passwd" in e[2] or "．" in e[2] or "$HOME" in e[2])
    ]
    assert not hostile_paths, hostile_paths


# -- C10 closed standard streams and SIGPIPE -------------------------------------------------


def _sh(script: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PY": sys.executable}
    return subprocess.run(
        ["sh", "-c", script], input=input, capture_output=True, env=env, timeout=60, check=False
    )


def _data_files_clean(home: Path) -> None:
    """Every JSONL parses, memory.db is intact, and no command output leaked in."""
    for path in home.rglob("*"):
        if path.is_file() and not path.name.startswith("memory.db") and path.suffix != ".sqlite3":
            data = path.read_bytes()
            assert b'"duplicate"' not in data and b"error:" not in data, path
            if path.suffix == ".jsonl":
                assert data.endswith(b"\n"), path
                for line in data.splitlines():
                    assert isinstance(json.loads(line), dict), path
    conn = sqlite3.connect(home / "memory.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


def _contents(home: Path, session: str) -> list[str]:
    path = home / "groups/default/sessions/default" / f"{session}.jsonl"
    if not path.exists():
        return []
    return [json.loads(x)["content"] for x in path.read_bytes().splitlines()]


def test_c10_stdout_closed(home: Path) -> None:
    done = _sh('"$PY" -m soloqueue_mem log -s out "stdout closed" >&-')
    assert b"Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr.decode()
    assert _contents(home, "out") == ["stdout closed"]
    done = _sh('"$PY" -m soloqueue_mem log -s out --format json "again json" >&-')
    assert done.returncode == 0, done.stderr.decode()
    assert _contents(home, "out") == ["stdout closed", "again json"]
    lines = b"".join(
        json.dumps({"role": "user", "content": f"batch {n}"}).encode() + b"\n" for n in range(3)
    )
    done = _sh('"$PY" -m soloqueue_mem log --batch -s out --format jsonl >&-', input=lines)
    assert done.returncode == 0, done.stderr.decode()
    assert _contents(home, "out") == [
        "stdout closed",
        "again json",
        "batch 0",
        "batch 1",
        "batch 2",
    ]
    _data_files_clean(home)


def test_c10_stderr_closed(home: Path) -> None:
    done = _sh('"$PY" -m soloqueue_mem log -s err "stderr closed" 2>&-')
    assert done.returncode == 0
    assert json.loads(done.stdout)["content"] == "stderr closed"
    done = _sh('"$PY" -m soloqueue_mem log -s err 2>&-', input=b"{not json")
    assert done.returncode == EX_DATAERR and done.stdout == b""
    done = _sh(
        '"$PY" -m soloqueue_mem log --batch -s err --format jsonl 2>&-',
        input=b'{"role": "user", "content": "ok"}\n{bad\n',
    )
    assert done.returncode == EX_DATAERR
    assert [json.loads(x)["content"] for x in done.stdout.splitlines()] == ["ok"]
    assert _contents(home, "err") == ["stderr closed", "ok"]
    _data_files_clean(home)


def test_c10_stdin_closed(home: Path, tmp_path: Path) -> None:
    done = _sh('"$PY" -m soloqueue_mem log -s in "stdin closed" <&-')
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    assert json.loads(done.stdout)["content"] == "stdin closed"
    before = everything(tmp_path)
    for command in ("log -s in", "log -s in -", "log --batch -s in"):
        line = assert_rejected(_sh(f'"$PY" -m soloqueue_mem {command} <&-'), code=EX_USAGE)
        assert "stdin" in line
    assert everything(tmp_path) == before
    assert _contents(home, "in") == ["stdin closed"]
    _data_files_clean(home)


def test_c10_stdin_closed_on_a_fresh_store_creates_nothing(tmp_path: Path) -> None:
    before = everything(tmp_path)
    assert_rejected(_sh('"$PY" -m soloqueue_mem log -s in <&-'), code=EX_USAGE)
    assert everything(tmp_path) == before


def test_c10_sigpipe_is_quiet(cli, home: Path, tmp_path: Path) -> None:
    stream = (
        "\n".join(
            json.dumps({"role": "user", "content": f"turn {i}", "session": f"s{i:04d}"})
            for i in range(600)
        )
        + "\n"
    )
    cli.ok("log", "--batch", input=stream)
    cli.ok("log", "-s", "big", input=json.dumps({"role": "tool", "content": "x" * 300_000}))
    before = tree_snapshot(home)
    for command in (
        "session list --format jsonl -n 1000",
        "session list --format json -n 1000",
        "session export big",
        "session show big --format json",
    ):
        rc_file, err_file = tmp_path / "rc", tmp_path / "err"
        done = _sh(
            f'("$PY" -m soloqueue_mem {command} 2>"{err_file}"; echo $? >"{rc_file}") | head -c 0'
        )
        assert done.returncode == 0, done.stderr
        stderr = err_file.read_bytes()
        assert stderr == b"", (command, stderr.decode())
        assert int(rc_file.read_text()) in (0, 141), command

    # Deterministic variant: the reader is gone before the first write.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "soloqueue_mem", "session", "list", "--format", "jsonl"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.stderr == b"", done.stderr.decode()
    assert done.returncode == 141
    assert tree_snapshot(home) == before
    _data_files_clean(home)
