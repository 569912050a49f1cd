"""Whether a tool result reports a failure: the one test extraction and episodes share.

An explicit ``is_error`` decides when it is true. An OpenAI ``role: tool`` message has
no such flag, so the content is read, conservatively: its first line opening with an
error word (``Error:``, ``ValueError: …``, ``failed``, ``permission denied``,
``错误``, ``失败`` …), or a traceback or a non-zero exit status anywhere. Output that
merely mentions errors ("0 errors", "no failures") is a success.

A result that is one JSON object (an API's answer) is also read by its fields, in it
and in the objects it nests (not in lists: one item's status is not the call's): a
failure when an error field holds something (``error``, ``errors``, ``errcode``,
``errmsg`` …, but not ``null``, ``0``, ``"ok"``), a code or status says so (a word
such as invalid, illegal, denied, failure, not found, exceeded in ``"Code":
"isv.SMS_SIGNATURE_ILLEGAL"``, or a number from 400 up or below 0), ``success`` or
``ok`` is false, or a message opens with an error word. ``{"Code": "OK"}`` and
``{"status": "CONFIRMED"}`` stay successes.

What failed is told by :func:`message`: the last line that opens with an error word
(a traceback ends with its exception, pytest marks its with ``E``), not the first; in
an output where none does, the first line naming an error further in; of a JSON object,
the object itself on one line: its code and message in their own words.
"""

from __future__ import annotations

import json
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


ERROR_FIELDS = frozenset({"error", "errors", "errcode", "errorcode", "errmsg", "errormessage"})
STATUS_FIELDS = frozenset({"code", "status", "statuscode", "state"})
SUCCESS_FLAGS = frozenset({"success", "ok"})
MESSAGE_FIELDS = frozenset({"message", "msg", "detail"})
NO_ERROR = frozenset({"", "0", "ok", "none", "null", "success"})
MAX_DEPTH = 3  # JSON objects nested this deep are read: {"Response": {"Error": {…}}}


@cache
def _error_word() -> re.Pattern[str]:
    """An error word inside a code, where words run together ("InvalidParameter",
    "SMS_SIGNATURE_ILLEGAL", "AuthFailure", "LimitExceeded")."""
    return re.compile(
        r"error|fail|illegal|invalid|denied|forbidden|unauthori[sz]ed|not_?found|missing"
        r"|exceed|timeout|timed_?out|refused|reject|abort|throttl|unavailable|insufficient"
        r"|expired|conflict",
        re.IGNORECASE,
    )


def _json_object(content: str) -> dict[str, Any] | None:
    """``content`` as a JSON object, or None when it is not one."""
    text = content.strip()
    if not text.startswith("{"):
        return None
    try:
        found = json.loads(text)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _says_failed(field: str, value: Any) -> bool:
    """Whether one field of a JSON answer says the call failed (see the module doc)."""
    name = re.sub(r"[_-]", "", field.casefold())
    if name in SUCCESS_FLAGS:
        return value is False
    if isinstance(value, dict | list | bool) or value is None:
        return name in ERROR_FIELDS and bool(value)
    if name in ERROR_FIELDS:
        return str(value).strip().casefold() not in NO_ERROR
    if name in STATUS_FIELDS:
        if isinstance(value, int | float):
            return value >= 400 or value < 0
        return _error_word().search(str(value)) is not None
    return name in MESSAGE_FIELDS and _opening().match(str(value).strip()) is not None


def _json_failed(answer: dict[str, Any], depth: int = 0) -> bool:
    """Whether the JSON object ``answer``, or one it nests, says the call failed."""
    return any(
        _says_failed(field, value)
        or (isinstance(value, dict) and depth < MAX_DEPTH and _json_failed(value, depth + 1))
        for field, value in answer.items()
    )


def failed(result: dict[str, Any]) -> bool:
    """Whether the tool result ``{tool_use_id, content, is_error}`` failed."""
    if result.get("is_error"):
        return True
    content = str(result.get("content") or "")
    answer = _json_object(content)
    if answer is not None and _json_failed(answer):
        return True
    first = next((line for line in content.splitlines() if line.strip()), "")
    return bool(_opening().match(first.strip()) or _anywhere().search(content))


def message(content: str) -> str:
    """The line of a failed tool's output that says what went wrong: the last
    "SomethingError: why" line (pytest's ``E`` marker dropped), else the last line
    opening with another error word than "Traceback", else the first line naming an
    error further in ("A fatal error occurred: Failed to connect …" after esptool's
    "Serial port /dev/ttyUSB0": the tool's own words come before a wrapper's "CMake
    Error at …"), else the first non-empty line. A JSON object is its own message:
    the whole of it, on one line."""
    if _json_object(content) is not None:
        return " ".join(content.split())
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
