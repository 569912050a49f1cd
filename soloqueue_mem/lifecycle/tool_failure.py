"""Whether a tool result reports a failure: the one test extraction and episodes share.

An explicit ``is_error`` decides when it is true. An OpenAI ``role: tool`` message has
no such flag, so the content is read, conservatively: its first line opening with an
error word (``Error:``, ``ValueError: …``, ``failed``, ``permission denied``,
``错误``, ``失败`` …), or a traceback or a non-zero exit status anywhere. Output that
merely mentions errors ("0 errors", "no failures") is a success.

What failed is told by :func:`message`: the last line that opens with an error word
(a traceback ends with its exception, pytest marks its with ``E``), not the first; in
an output where none does, the first line naming an error further in.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

MAX_MESSAGE = 200


@cache
def _opening() -> re.Pattern[str]:
    return re.compile(
        r"^\W{0,3}(?:error\b|fatal\b|failed\b|failure\b|exception\b|refused\b"
        r"|permission denied|access denied|command not found|not found\b|no such file"
        r"|traceback\b|[\w.]*(?:error|exception):"  # requests.exceptions.ConnectionError:
        r"|[\w.\-]+: (?:fatal )?error:"  # "psql: error: …", argparse's "prog: error: …"
        r"|错误|失败|异常|报错|出错|拒绝访问|权限不足|找不到|未找到)",
        re.IGNORECASE,
    )


@cache
def _anywhere() -> re.Pattern[str]:
    return re.compile(
        r"Traceback \(most recent call last\)"
        r"|\bexit(?:ed with)? (?:code|status)[:= ]+[1-9]\d*"
        r"|returned non-zero exit status|退出码[:：\s]*[1-9]",
        re.IGNORECASE,
    )


def failed(result: dict[str, Any]) -> bool:
    """Whether the tool result ``{tool_use_id, content, is_error}`` failed."""
    if result.get("is_error"):
        return True
    content = str(result.get("content") or "")
    first = next((line for line in content.splitlines() if line.strip()), "")
    return bool(_opening().match(first.strip()) or _anywhere().search(content))


def message(content: str) -> str:
    """The line of a failed tool's output that says what went wrong: the last
    "SomethingError: why" line (pytest's ``E`` marker dropped), else the last line
    opening with another error word than "Traceback", else the first line naming an
    error further in ("A fatal error occurred: Failed to connect …" after esptool's
    "Serial port /dev/ttyUSB0": the tool's own words come before a wrapper's "CMake
    Error at …"), else the first non-empty line."""
    lines = [re.sub(r"^E\s+", "", line.strip()) for line in content.splitlines() if line.strip()]
    said = [line for line in lines if _opening().match(line) and not line.startswith("Traceback")]
    why = [line for line in said if re.match(r"\W{0,3}[\w.]*(?:error|exception):", line, re.I)]
    named = [line for line in lines if _naming().search(line)]
    return (why or said or named[:1] or lines[:1] or [""])[-1]


@cache
def _naming() -> re.Pattern[str]:
    return re.compile(r"\b(?:error|fatal|failed|failure|exception)\b", re.IGNORECASE)


def summary(tool: str, content: str) -> str:
    """What an ERROR memory says of a failed result: "shell failed: <message line>"."""
    return f"{tool} failed: {message(content)[:MAX_MESSAGE]}"
