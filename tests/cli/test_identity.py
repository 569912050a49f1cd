"""Identity compile (seed 003 §6): SOUL.md, AGENT.md, USER.md and MEMORY.md compiled
by rules, cached by the sources' mtimes, used by `context build` within its budget."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from soloqueue_mem.context.identity import compile_text
from tests.conftest import missing_store_is_sqlite

SOUL = """# Soul
<!-- an editor's note
   over two lines -->
-->
I am Ada, a careful assistant.


## Values
- Be honest.
- Prefer short answers.

## Unknown yet
- 称呼: [待学习]
- Timezone: [TODO]
"""


def write(home: Path, name: str, text: str, bump: int = 0) -> Path:
    folder = home / "identity"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    if bump:  # a later edit: the file system's clock may not have moved yet
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + bump * 1_000_000_000))
    return path


def statuses(cli) -> dict[str, str]:
    return {item["name"]: item["status"] for item in cli.json("identity", "compile")}


def test_rules_drop_comments_placeholders_and_empty_headings():
    assert compile_text(SOUL, 150) == (
        "# Soul\n\nI am Ada, a careful assistant.\n\n"
        "## Values\n- Be honest.\n- Prefer short answers."
    )
    long = compile_text("# T\n" + "word " * 1000, 50)
    assert long.endswith("…") and len(long) < 400


def test_a_source_is_compiled_again_only_when_it_changes(cli, home):
    home.mkdir(parents=True, mode=0o700)
    write(home, "SOUL.md", SOUL)
    write(home, "AGENT.md", "# Agent\n- Run the tests before saying done.\n")
    assert statuses(cli) == {
        "SOUL.md": "compiled", "AGENT.md": "compiled", "USER.md": "missing",
        "MEMORY.md": "missing",
    }  # fmt: skip
    compiled = home / "identity" / "compiled" / "SOUL.md"
    first = compiled.stat().st_mtime_ns
    assert statuses(cli) == {
        "SOUL.md": "cached", "AGENT.md": "cached", "USER.md": "missing", "MEMORY.md": "missing"
    }  # fmt: skip
    assert compiled.stat().st_mtime_ns == first  # not rewritten
    write(home, "SOUL.md", SOUL.replace("Ada", "Grace"), bump=5)
    assert statuses(cli)["SOUL.md"] == "compiled"
    assert statuses(cli)["AGENT.md"] == "cached"
    assert "Grace" in compiled.read_text()
    forced = {item["status"] for item in cli.json("identity", "compile", "--force")}
    assert forced == {"compiled", "missing"}


def test_consolidate_refreshing_user_md_recompiles_it(cli, home):
    cli.ok("remember", "I prefer dark themes", "--subject", "user", "--predicate", "theme",
           "--type", "PREFERENCE")  # fmt: skip
    cli.ok("consolidate")  # writes identity/USER.md and MEMORY.md
    assert statuses(cli)["USER.md"] == "compiled"
    assert statuses(cli)["USER.md"] == "cached"
    cli.ok("remember", "I use zsh", "--subject", "user", "--predicate", "shell",
           "--type", "PREFERENCE")  # fmt: skip
    dark = next(m for m in cli.json("memory", "list") if "dark" in m["content"])
    cli.ok("memory", "forget", dark["id"])  # rewrites USER.md without it
    shown = {item["name"]: item for item in cli.json("identity", "show")}
    assert shown["USER.md"]["status"] == "compiled"


def test_context_build_uses_the_compiled_identity_within_its_budget(cli, home):
    home.mkdir(parents=True, mode=0o700)
    write(home, "SOUL.md", SOUL)
    write(
        home, "AGENT.md", "# Agent\n" + "".join(f"- rule {n}: always do {n}\n" for n in range(300))
    )
    history = json.dumps([{"role": "user", "content": "hi"}])
    out = cli.json("context", "build", "--with-memory", "--max-context", "8000", "--manifest",
                   input=history)  # fmt: skip
    layer = {item["name"]: item for item in out["layers"]}["identity"]
    assert layer["status"] == "shortened" and layer["tokens"] <= layer["budget"] == 350
    system = out["messages"][0]["content"]
    assert system.startswith("## 身份\n# Soul\n\nI am Ada")
    assert "editor's note" not in system and "[待学习]" not in system
    assert (home / "identity" / "compiled" / "manifest.json").exists()


@missing_store_is_sqlite
def test_show_on_a_fresh_machine_is_refused_and_creates_nothing(cli, home):
    result = cli("identity", "show")
    assert (result.exit_code, result.stdout) == (66, "")
    assert not home.exists()
    cli.ok("init")
    items = cli.json("identity", "show")
    assert {item["status"] for item in items} == {"missing"}


@pytest.mark.usefixtures("store")
def test_edit_needs_a_terminal_and_a_known_name(cli, home):
    result = cli("identity", "edit", "soul")
    assert result.exit_code == 2 and "edit needs a terminal" in result.stderr
    result = cli("identity", "edit", "persona")
    assert result.exit_code == 65 and "unknown identity file 'persona'" in result.stderr
