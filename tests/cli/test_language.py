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
    """What a session, its end and a recall show in the store's language."""
    cli.ok("log", "-s", "s1", input=json.dumps(SESSION))
    cli.ok("remember", "The staging host is stage-2.")
    offloaded = json.loads(cli.ok("session", "export", "s1", "--as", "openai").stdout)[2]
    cli.ok("session", "end", "s1")
    (episode,) = cli.json("episode", "list")
    return {
        "recall": cli.json("recall", "staging host")[0]["text"],
        "offload": offloaded["content"],
        "scratchpad": cli.json("scratchpad", "show")["content"],
        "episode": episode["summary"],
    }


@pytest.mark.parametrize(
    ("locale", "config", "expected"),
    [
        ("en_US.UTF-8", "", "en"),  # auto, from LANG
        ("zh_CN.UTF-8", "", "zh"),
        ("zh_CN.UTF-8", 'language = "en"\n', "en"),  # the setting wins over the locale
    ],
)
def test_the_language_setting_governs_the_fixed_strings(
    cli, home, monkeypatch, locale, config, expected
):
    monkeypatch.setenv("LANG", locale)
    if config:
        home.mkdir(parents=True)
        (home / "config.toml").write_text(config)
    seen = fixed_strings(cli)
    forms = {
        "en": ("[memory] ", "[Output too large", "## Recent progress\n- ", "Goal: Deploy"),
        "zh": ("[记忆] ", "[输出过大", "## 近期进展\n- ", "目标：Deploy"),
    }[expected]
    recall, offload, pad, goal = forms
    assert seen["recall"].startswith(recall)
    assert seen["offload"].startswith(offload)
    assert pad in seen["scratchpad"]
    assert goal in seen["episode"]
