"""A graph as data (JSON) or as a picture (Graphviz DOT, Mermaid).

Node labels are the phrase; stored text is data, so labels are quoted and escaped for
each format (never markup). Links into deleted nodes point at a ``forgotten`` node.
"""

from __future__ import annotations

import json
from typing import Any

from soloqueue_mem.graph.store import Link, Node

FORMATS = ("json", "dot", "mermaid")


def as_json(nodes: list[Node], links: list[Link], focus: list[int]) -> dict[str, Any]:
    known, known_focus = {n.id for n in nodes}, set(focus)
    return {
        "nodes": [
            {
                "node_id": str(n.id),
                "content": n.content,
                "phrase": n.phrase,
                "keywords": n.keywords,
                "created_at": n.created_at,
                "scan_count": n.scan_count,
                "focus": n.id in known_focus,
            }
            for n in nodes
        ],
        "links": [
            {
                "from_id": str(link.from_id),
                "to_id": str(link.to_id),
                "strength": round(link.strength, 6),
                "relation": link.relation,
                "dangling": link.to_id not in known,
            }
            for link in links
        ],
        "focus": [str(i) for i in focus],
    }


def as_dot(nodes: list[Node], links: list[Link], focus: list[int]) -> str:
    known = {n.id for n in nodes}
    lines = ["digraph graph_memory {", "  node [shape=box];"]
    for n in nodes:
        style = ", style=bold" if n.id in focus else ""
        lines.append(f"  n{n.id} [label={_dot_string(n.phrase or n.content[:20])}{style}];")
    if any(link.to_id not in known for link in links):
        lines.append('  forgotten [label="?", shape=circle, style=dashed];')
    for link in links:
        target = f"n{link.to_id}" if link.to_id in known else "forgotten"
        label = f"{link.relation or ''} {link.strength:.2f}".strip()
        lines.append(f"  n{link.from_id} -> {target} [label={_dot_string(label)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a DOT string is a JSON-escaped one


def as_mermaid(nodes: list[Node], links: list[Link], focus: list[int]) -> str:
    known = {n.id for n in nodes}
    lines = ["graph LR"]
    for n in nodes:
        label = _mermaid_text(n.phrase or n.content[:20])
        lines.append(f'  n{n.id}(["{label}"])' if n.id in focus else f'  n{n.id}["{label}"]')
    if any(link.to_id not in known for link in links):
        lines.append('  forgotten(("?"))')
    for link in links:
        target = f"n{link.to_id}" if link.to_id in known else "forgotten"
        label = _mermaid_text(f"{link.relation or ''} {link.strength:.2f}".strip())
        lines.append(f'  n{link.from_id} -->|"{label}"| {target}')
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    """Mermaid has no escape inside quotes but entity codes: quote, pipe, brackets."""
    for char, code in (("&", "#amp;"), ('"', "#quot;"), ("|", "#124;"), ("\n", " ")):
        text = text.replace(char, code)
    return text
