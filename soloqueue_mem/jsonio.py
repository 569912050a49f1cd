"""JSON in and out: strict parsing of untrusted input, stable output.

Input is bytes, decoded strictly as UTF-8 (never the locale's ``surrogateescape``),
parsed with NaN/Infinity and duplicate keys rejected, and capped in size and depth.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from soloqueue_mem.errors import BadInput

MAX_DEPTH = 64

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:
    from typing import Any, BinaryIO, TypeVar

    T = TypeVar("T")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def decode_utf8(data: bytes, line: int | None = None) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"invalid UTF-8 at byte {exc.start}", line) from None


_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_finite_float, object_pairs_hook=_no_duplicates
)


def loads(data: bytes | str, line: int | None = None) -> Any:
    """Parse one JSON document from untrusted input; every failure is BadInput."""
    text = decode_utf8(data, line) if isinstance(data, bytes) else data
    try:
        if text.startswith("\ufeff"):  # as json.loads says it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = _decode(text)
    except RecursionError:
        raise BadInput("JSON nested too deeply", line) from None
    except ValueError as exc:  # JSONDecodeError, our hooks, int digit limits
        raise BadInput(f"malformed JSON: {exc}", line) from None
    if _checks_needed(text if isinstance(data, bytes) else None):
        check_value(value, line)
    return value


_JSON_SPACE = " \t\n\r"


def _decode(text: str) -> Any:
    """``_DECODER.decode(text)``, with the same value and the same errors.

    Trigger: a JSONL line, which has no space before its value. Why: ``decode`` matches
    a whitespace pattern before and after the value, half its time on such a line.
    Outcome: parse from the first character and check the rest is JSON whitespace;
    anything else (leading space, trailing data, an empty text) goes through ``decode``,
    whose error is the one reported.
    """
    if text[:1] not in _JSON_SPACE:
        value, end = _DECODER.raw_decode(text)
        if end == len(text) or not text[end:].strip(_JSON_SPACE):
            return value
    return _DECODER.decode(text)


def _checks_needed(decoded: str | None) -> bool:
    """Whether :func:`check_value` could reject the value parsed from ``decoded``, text
    strictly decoded from UTF-8 bytes (None: text of unknown origin, always check).

    Such text holds no surrogate unless it writes one as a ``\\u`` escape, and nests
    no deeper than it has brackets (a value inside ``MAX_DEPTH`` containers is too
    deep): the common JSONL line needs no walk at all.
    """
    if decoded is None or "\\u" in decoded:
        return True
    return decoded.count("{") + decoded.count("[") >= MAX_DEPTH


def check_value(value: Any, line: int | None = None) -> None:
    """Reject deep nesting and lone surrogates (``"\\ud800"`` escapes, or bytes that
    were not UTF-8 in a command-line argument, which Python decodes as surrogates)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BadInput(f"JSON nested deeper than {MAX_DEPTH} levels", line)
        if isinstance(item, str):
            _check_text(item, line)
        elif isinstance(item, dict):
            for key, child in item.items():
                _check_text(key, line)
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)


def _check_text(text: str, line: int | None) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise BadInput("text is not valid UTF-8 (a lone surrogate)", line) from None


# What json.dumps builds on every call given these options (~2 us each, per turn).
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
_COMPACT_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
# DEL and the C1 controls as escapes (the encoders escape only C0): U+009B is a CSI on
# many terminals, and only a string can hold one, so the escape keeps the JSON as it is.
_C1_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}
_C1 = re.compile("[\x7f-\x9f]")


def _c1_escaped(text: str) -> str:
    """``text`` with DEL and C1 escaped; searched first (a translate costs ~30 us a
    turn, and almost no text holds one)."""
    return text.translate(_C1_ESCAPES) if _C1.search(text) else text


def dumps(value: Any) -> str:
    """Output JSON: readable CJK, controls escaped, no NaN."""
    return _c1_escaped(_ENCODER.encode(value))


def dumps_compact(value: Any) -> str:
    """One-line JSON for logs and database columns (controls escaped, as :func:`dumps`)."""
    return _c1_escaped(_COMPACT_ENCODER.encode(value))


def read_document(
    stream: BinaryIO, max_bytes: int, parse: Callable[..., T], expected: str
) -> list[T]:
    """One JSON value from ``stream``, at most ``max_bytes``: an object (``parse(value,
    line=1)``) or an array of them (:func:`parse_items`). ``expected`` names the object
    in the error for an empty input."""
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise BadInput(f"input is larger than {max_bytes} bytes (use --batch for streams)")
    if not data.strip():
        raise BadInput(f"no input: expected {expected} on stdin")
    value = loads(data, line=1)
    if isinstance(value, list):
        return parse_items(value, parse)
    return [parse(value, line=1)]


def parse_items(values: list[Any], parse: Callable[..., T]) -> list[T]:
    """Every item through ``parse``; the first bad one rejects them all, naming its
    number."""
    parsed = []
    for number, value in enumerate(values, start=1):
        try:
            parsed.append(parse(value))
        except BadInput as exc:
            raise BadInput(f"item {number}: {exc.reason}") from None
    return parsed
