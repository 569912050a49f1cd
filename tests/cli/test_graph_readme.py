"""The graph page's worked example (docs/concepts/graph.md), replayed through the CLI: the bilingual
conversation, its Mermaid picture, a recall, the compression of the cat that left the
focus, and the forgotten link that recall reports. Every input and output checked here
is also looked up in that page, so the two cannot drift apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "concepts" / "graph.md").read_text(
    encoding="utf-8"
)
TASKS = [
    [
        {"role": "user", "content": "我的猫叫咪咪，它很喜欢睡觉。"},
        {"role": "assistant", "content": "Mimi sounds lovely! Cats sleep 12 to 16 hours a day."},
    ],
    [
        {"role": "user", "content": "Let us plan the trip to Kyoto in April."},
        {"role": "assistant", "content": "好的，四月的京都樱花很美，建议提前订酒店。"},
    ],
    [{"role": "user", "content": "Book the hotel near Gion, budget 200 USD a night."}],
]
LATER = [
    "The flight leaves Shanghai at 9 am on April 3.",
    "我们买一张 ICOCA 交通卡坐地铁。",
    "Dinner at a kaiseki restaurant on the second night.",
    "记得带日本的电源转换插头。",
    "The weather in April is mild, around 15 degrees.",
]
TRIP = (
    "[记忆] Book the hotel near Gion, budget 200 USD a night.\n---\n"
    "[记忆] 好的，四月的京都樱花很美，建议提前订酒店。\n"
)
FORGOTTEN = "[记忆] Mimi sounds lovely!\n---\n[记忆] 它有个上文，但我想不起来了\n"


def block_after(marker: str, fence: str) -> list[str]:
    """The lines of the first ``fence`` code block after ``marker`` in the page."""
    start = PAGE.index(fence, PAGE.index(marker)) + len(fence)
    return PAGE[start : PAGE.index("```", start)].strip().splitlines()


@pytest.mark.usefixtures("store")
def test_the_readme_worked_example_runs_as_written(cli, home):
    for messages in TASKS:
        for message in messages:
            assert message["content"] in PAGE
        cli.ok("graph", "remember", "--sync", input=json.dumps(messages, ensure_ascii=False))
    picture = cli.ok("graph", "export", "--format", "mermaid").stdout.splitlines()
    shown = block_after("# Graph memory", "```mermaid")
    assert shown[0] == picture[0] == "graph LR"
    assert set(shown) <= set(picture)  # the page leaves some 1.00 links out
    trip = cli.ok("graph", "recall", "--keywords", "京都", "--keywords", "hotel", "-f", "text")
    assert trip.stdout == TRIP and TRIP in PAGE

    for text in LATER:
        assert f'"{text}"' in PAGE
        message = {"role": "user", "content": text}
        cli.ok("graph", "remember", "--sync", input=json.dumps(message, ensure_ascii=False))
    for _ in range(18):
        cli.ok("graph", "compress")
    cat = cli.json("graph", "show", "1")
    assert cat["content"] == TASKS[0][0]["content"] and round(cat["importance"], 2) == 1.01
    contents = []
    for _ in range(3):
        cli.ok("graph", "compress")
        contents.append(cli.json("graph", "show", "1")["content"])
    assert contents == ["我的猫叫咪咪，", "我的猫叫咪咪", "我的猫叫咪"]
    assert all(f'"{content}"' in PAGE for content in contents)
    cli.ok("graph", "compress")
    assert cli("graph", "show", "1").exit_code == 3  # the 22nd slice deleted it
    forgotten = cli.ok("graph", "recall", "--keywords", "mimi", "--format", "text")
    assert forgotten.stdout == FORGOTTEN and FORGOTTEN in PAGE
