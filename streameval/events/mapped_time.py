"""The timestamp units of a mapping (``ms``, ``s``, ``us``, ``rfc3339``), each read as an integer
of epoch milliseconds before the native model's checks."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from streameval.events.event_time import to_epoch_ms

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)
_fromisoformat = datetime.fromisoformat


def _is_number(value: object) -> bool:
    kind = type(value)
    return kind is int or (kind is float and math.isfinite(value))  # type: ignore[arg-type]


def _datetime_ms(value: datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return (value - _EPOCH) // _ONE_MS


def _scaled(factor: float, unit: str) -> Callable[[object], object]:
    def convert(value: object) -> object:
        if isinstance(value, datetime):
            return _datetime_ms(value)
        if not _is_number(value):
            raise ValueError(f"expected a number of epoch {unit}")
        if factor >= 1:
            return math.floor(value * factor)  # type: ignore[operator]
        return math.floor(value / round(1 / factor))  # type: ignore[operator]

    return convert


def _as_ms(value: object) -> object:
    # epoch milliseconds (range checked by the model) or RFC 3339, as native events
    if type(value) is int:
        return value
    return _datetime_ms(value) if isinstance(value, datetime) else to_epoch_ms(value)


def _rfc3339(value: object) -> object:
    # converted here, so the model takes an integer (its fast path); once per record: inlined
    if type(value) is str and len(value) >= 16 and value[10] in "Tt ":
        try:  # the common form, fast; the range is the model's to check
            parsed = _fromisoformat(value)
        except ValueError:  # lower-case "t"/"z", ...: the native reader's rules and messages
            return to_epoch_ms(value)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return (parsed - _EPOCH) // _ONE_MS
    if isinstance(value, datetime):
        return _datetime_ms(value)
    raise ValueError("expected an RFC 3339 date and time")


TIME_UNITS: dict[str, Callable[[object], object]] = {
    "ms": _as_ms,
    "s": _scaled(1000, "seconds"),
    "us": _scaled(0.001, "microseconds"),
    "rfc3339": _rfc3339,
}
