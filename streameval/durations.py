"""Durations as operators write them ("10s", "5m", "1h", "1h30m", "250ms"), as integer milliseconds.

One parser and one canonical formatter, so a window configured as ``"60s"`` is labelled
``window="1m"`` everywhere; and the one way an event time is written for an operator to read
(:func:`format_instant`).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

_UNITS_MS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_PART = re.compile(r"(\d+)(ms|s|m|h|d)")


def parse_duration(text: str | int) -> int:
    """Milliseconds in ``text`` (a bare integer is milliseconds); ValueError if malformed."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 0:
            raise ValueError("a duration cannot be negative")
        return text
    if not isinstance(text, str):
        raise ValueError(f"expected a duration such as '10s', '5m' or '1h', got {text!r}")
    s = text.strip().lower()
    if s.isdigit():
        return int(s)
    pos, total = 0, 0
    for match in _PART.finditer(s):
        if match.start() != pos:
            break
        total += int(match.group(1)) * _UNITS_MS[match.group(2)]
        pos = match.end()
    if pos != len(s) or not s:
        raise ValueError(f"expected a duration such as '10s', '5m' or '1h', got {text!r}")
    return total


def format_duration(ms: int) -> str:
    """The shortest canonical spelling of ``ms``: 60000 -> "1m", 5400000 -> "1h30m", 0 -> "0s"."""
    if ms == 0:
        return "0s"
    parts = []
    rest = ms
    for unit in ("d", "h", "m", "s", "ms"):
        size = _UNITS_MS[unit]
        if rest >= size:
            parts.append(f"{rest // size}{unit}")
            rest %= size
    return "".join(parts)


def format_instant(ms: int | float) -> str:
    """An event time (epoch milliseconds) as ISO 8601 UTC: ``2023-11-14T22:13:20Z``, with
    ``.250`` milliseconds only when there are some."""
    at = datetime.fromtimestamp(int(ms) // 1000, UTC)
    text = at.strftime("%Y-%m-%dT%H:%M:%S")
    millis = int(ms) % 1000
    return f"{text}.{millis:03d}Z" if millis else f"{text}Z"
