"""Settings from ``config.toml`` in the data directory; every key has a default.

Read once by the composition root. Unknown keys are an error rather than silently
ignored, so a typo never turns a safety setting off.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, NamedTuple

from soloqueue_mem.errors import BadInput

Durability = Literal["normal", "full"]


class Config(NamedTuple):
    # normal: synchronous=NORMAL and JSONL appends not fsynced (a power loss may roll
    # back the last commits, never corrupt); full: fsync every commit and append.
    durability: Durability = "normal"
    # How long a writer waits for another one before giving up with exit 75.
    busy_timeout_ms: int = 10_000
    # Cap on one JSON document read from stdin (a single event or message array).
    max_input_bytes: int = 64 * 1024 * 1024
    # Cap on one line of a --batch stream.
    max_line_bytes: int = 16 * 1024 * 1024


def load_config(path: Path) -> Config:
    """Read ``config.toml`` if it exists; raise BadInput on syntax errors or bad keys."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror}") from None
    import tomllib  # only when a config file exists

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BadInput(f"{path}: {exc}") from None
    known = Config._fields
    values: dict[str, object] = {}
    for key, value in data.items():
        if key not in known:
            raise BadInput(f"{path}: unknown setting {key!r} (known: {', '.join(known)})")
        default = getattr(Config(), key)
        if type(value) is not type(default):
            raise BadInput(f"{path}: {key} must be a {type(default).__name__}")
        values[key] = value
    if values.get("durability", "normal") not in ("normal", "full"):
        raise BadInput(f"{path}: durability must be 'normal' or 'full'")
    return Config(**values)  # type: ignore[arg-type]
