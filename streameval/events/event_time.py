"""Event time: epoch milliseconds from an integer, a string of digits, a finite float or RFC 3339
text (:func:`to_epoch_ms`), and the pydantic type :data:`EventTime` that reads it."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler, WithJsonSchema
from pydantic_core import CoreSchema, core_schema

from streameval.events.bounds import MAX_EPOCH_MS

_MAX_TIME_TEXT = 64  # longest timestamp string we bother to parse

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)
_fromisoformat = datetime.fromisoformat


def _rfc3339_to_ms(text: str) -> int:
    # RFC 3339 allows a lower-case "t"/"z" and (§5.6 note) a space between date and time.
    try:
        parsed = _fromisoformat(text)
    except ValueError:
        try:
            parsed = _fromisoformat(text.upper())
        except ValueError:
            raise ValueError("timestamp string is not RFC 3339") from None
    if parsed.tzinfo is None:  # no zone: UTC (DESIGN §2, UBI)
        parsed = parsed.replace(tzinfo=UTC)
    return (parsed - _EPOCH) // _ONE_MS


def to_epoch_ms(value: object) -> int:
    """Event time of a raw JSON value as epoch milliseconds; ``ValueError`` when it is not one.

    The validator of :data:`EventTime` for everything but in-range integers (which
    pydantic-core accepts without calling Python); public for the UBI mapping and for tests.
    """
    kind = type(value)
    if kind is int:
        ms: int = value  # type: ignore[assignment]
    elif kind is str:
        text: str = value  # type: ignore[assignment]
        size = len(text)
        if 16 <= size <= _MAX_TIME_TEXT and text[10] in "Tt " and text.isascii():
            ms = _rfc3339_to_ms(text)
        elif 0 < size <= 16 and text.isascii() and text.isdigit():
            ms = int(text)
        else:
            raise ValueError("timestamp string must be RFC 3339 (date and time) or epoch ms")
    elif kind is float:
        number: float = value  # type: ignore[assignment]
        if not math.isfinite(number):
            raise ValueError("timestamp must be finite")
        ms = math.floor(number)
    else:  # bool, null, list, object
        raise ValueError("timestamp must be an RFC 3339 string or integer epoch milliseconds")
    if not 0 <= ms <= MAX_EPOCH_MS:
        raise ValueError("timestamp out of range (1970-01-01 .. 9999-12-31)")
    return ms


class _EventTimeSchema:
    """In-range integers are checked by pydantic-core alone; anything else by
    :func:`to_epoch_ms` (strings, floats, and the error message for the rest)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.union_schema(
            [
                core_schema.int_schema(strict=True, ge=0, le=MAX_EPOCH_MS),
                core_schema.no_info_plain_validator_function(to_epoch_ms),
            ],
            mode="left_to_right",
            custom_error_type="timestamp",
            custom_error_message=(
                "timestamp must be an RFC 3339 string (no zone = UTC) or integer epoch "
                "milliseconds, within 1970-01-01 .. 9999-12-31"
            ),
        )


EventTime = Annotated[
    int,
    _EventTimeSchema,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "format": "date-time"},
                {"type": "integer", "minimum": 0, "maximum": MAX_EPOCH_MS},
            ],
            "description": "RFC 3339 (no zone = UTC) or integer epoch milliseconds",
        }
    ),
]
"""Event time: epoch milliseconds after validation (see :func:`to_epoch_ms`)."""
