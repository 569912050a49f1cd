"""One `language` setting for every fixed string a model or a person reads: `auto`
(the default) follows the locale, `zh` and `en` pin it."""

from __future__ import annotations

import json

import pytest

BIG = "\n".join(f"line {n:05d}: value={n * 7 % 5000}" for n in range(3000))
SESSION = [
    {"role": "user", "content": "Deploy the shop to staging."},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "sh", "input": {}}]},
    {"role": "tool", "tool_results": [{"tool_use_id": "c1", "content": BIG}]},
    {"role": "assistant", "content": "Deployed."},
]


def fixed_strings(cli) -> dict[str, str]:
    """What a session, its end, a recall, context build and the hooks' brief show in the
    store's language."""
    cli.ok("log", "-s", "s1", input=json.dumps(SESSION))
    cli.ok("session", "set", "s1", "current_task", "Ship the shop")
    cli.ok("remember", "The staging host is stage-2.")
    offloaded = json.loads(cli.ok("session", "export", "s1", "--as", "openai").stdout)[2]
    cli.ok("session", "end", "s1")
    (episode,) = cli.json("episode", "list")
    built = cli.json("context", "build", "-s", "s1", "--with-memory", "--max-context", "8000")
    start = {"session_id": "s2", "hook_event_name": "SessionStart", "cwd": "."}
    hook = json.loads(cli.ok("hook", "claude", input=json.dumps(start)).stdout)
    graph = [{"role": "user", "content": "The staging host is stage-2."}]
    cli.ok("graph", "remember", "--sync", input=json.dumps(graph))
    return {
        "recall": cli.json("recall", "staging host")[0]["text"],
        "offload": offloaded["content"],
        "scratchpad": cli.json("scratchpad", "show")["content"],
        "episode": episode["summary"],
        "system": built[0]["content"],
        "brief": hook["hookSpecificOutput"]["additionalContext"],
        "graph": cli.ok("graph", "recall", "--keywords", "stage-2", "--format", "text").stdout,
    }


FORMS = {
    "en": {
        "recall": "[memory] ",
        "offload": "[Output too large",
        "scratchpad": "## Current projects\n- Ship the shop\n\n## Recent progress\n- ",
        "episode": "Goal: Deploy",
        "system": "## Memory tools\nYou have a long-term memory",
        "brief": "## Memory group\n",
        "graph": "[memory] The staging host",
    },
    "zh": {
        "recall": "[记忆] ",
        "offload": "[输出过大",
        "scratchpad": "## 当前项目\n- Ship the shop\n\n## 近期进展\n- ",
        "episode": "目标：Deploy",
        "system": "## 记忆工具\n你有一个在这段提示之外的长期记忆",
        "brief": "## 记忆分组\n",
        "graph": "[记忆] The staging host",
    },
}
# the headings context build and the brief add around the scratchpad and the session
HEADINGS = {
    "en": ("## Scratchpad\n## Current projects", "## Session state (session s1)\n"),
    "zh": ("## 草稿本\n## 当前项目", "## 会话状态 (session s1)\n"),
}


@pytest.mark.parametrize(
    ("locale", "config", "expected"),
    [
        ("en_US.UTF-8", "", "en"),  # auto, from LANG
        ("zh_CN.UTF-8", "", "zh"),
        ("zh_CN.UTF-8", 'language = "en"\nhook_group = "default"\n', "en"),  # the setting wins
    ],
)
def test_the_language_setting_governs_the_fixed_strings(
    cli, home, monkeypatch, locale, config, expected
):
    monkeypatch.setenv("LANG", locale)
    home.mkdir(parents=True)
    (home / "config.toml").write_text(config or 'hook_group = "default"\n')
    seen = fixed_strings(cli)
    for name, form in FORMS[expected].items():
        assert form in seen[name], (name, seen[name])
    assert seen["recall"].startswith(FORMS[expected]["recall"])
    assert seen["graph"].startswith(FORMS[expected]["graph"])
    pad, session = HEADINGS[expected]
    assert pad in seen["system"] and session in seen["system"]
    assert pad.split("\n")[0] in seen["brief"]
    other = FORMS["zh" if expected == "en" else "en"]
    assert not any(form in seen[name] for name, form in other.items())


@pytest.mark.parametrize(("language", "opening"), [("en", "Split this chat log"), ("zh", "把下面")])
def test_the_graph_models_prompts_follow_the_language(cli, home, monkeypatch, language, opening):
    from tests.e2e.test_consolidate_llm import ChatServer

    home.mkdir(parents=True)
    (home / "config.toml").write_text(f'language = "{language}"\n')
    said = "The cat is called Mimi."
    processed = {"content": said, "phrase": "cat Mimi", "keywords": ["cat", "Mimi"]}
    with ChatServer([(200, json.dumps([said])), (200, json.dumps(processed))]) as server:
        monkeypatch.setenv("SOLOQUEUE_LLM_URL", server.url)
        monkeypatch.setenv("SOLOQUEUE_LLM_MODEL", "m")
        cli.ok("graph", "remember", "--sync", input=json.dumps([{"role": "user", "content": said}]))
    segment, content = (r["messages"][-1]["content"] for r in server.requests)
    assert segment.startswith(opening)
    assert content.startswith(
        "Process this text. Keep" if language == "en" else "处理下面的文本。内容保持原文。"
    )
