"""Bytes of one record -> an :data:`~streameval.events.models.Event` or an :class:`Invalid`.

:func:`decode` never raises: whatever the bytes, the answer is a value, and an invalid record is
counted by its ``reason`` (a closed set, :data:`INVALID_REASONS`) without stopping the daemon.

The fast path is one call into pydantic-core, which parses and validates the JSON in a single
pass (no intermediate Python objects) against the discriminated union on ``type``. A record
without ``type`` fails that union with ``union_tag_not_found`` and is then read as OpenSearch UBI
(:mod:`streameval.events.ubi`). pydantic-core's JSON parser refuses nesting deeper than a fixed
limit (about 200 levels), so deeply nested input is ``bad_json`` and never reaches Python's stack.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, final

from pydantic import TypeAdapter, ValidationError

from streameval.events.models import Event, TaggedEvent
from streameval.events.ubi import NotAnInteraction, parse_ubi, to_event

__all__ = [
    "DEFAULT_MAX_BYTES",
    "EVENT_ADAPTER",
    "INVALID_REASONS",
    "MAX_DETAIL_CHARS",
    "Invalid",
    "InvalidReason",
    "decode",
    "decode_native",
    "decode_ubi",
    "decoder",
    "dedup_key",
    "safe_detail",
    "too_large",
]

InvalidReason = Literal[
    "too_large", "bad_encoding", "bad_json", "schema", "unknown_type", "future_timestamp", "mapping"
]

INVALID_REASONS: Final[tuple[InvalidReason, ...]] = (
    "too_large",  # the record is over the size cap
    "bad_encoding",  # not UTF-8
    "bad_json",  # UTF-8, but not JSON (or nested too deep)
    "schema",  # JSON, but wrong fields, types or bounds
    "unknown_type",  # a "type" (or UBI action) we do not read
    # dated after its Kafka record by more than max_future_skew (a wrong clock; the pipeline's
    # check, not the decoder's: it needs the record's timestamp)
    "future_timestamp",
    # a record of a mapped format (DESIGN §11) whose field is missing or ill-typed; the
    # ``Invalid.field`` names it
    "mapping",
)
"""Every ``Invalid.reason``, in a stable order (metric label values of
``streameval_invalid_events_total{reason}``)."""

DEFAULT_MAX_BYTES: Final = 1_048_576
MAX_DETAIL_CHARS: Final = 300
_MAX_TAG_CHARS = 40
_UTF8_BOM = b"\xef\xbb\xbf"
_TYPE_KEY = b'"type"'
_ESCAPE = b"\\u"

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(TaggedEvent)
"""The native events' discriminated union on ``type``, built once."""
#: skips TypeAdapter's Python wrapper; typed here once, not by a ``cast`` call per record
_validate_json: Callable[[bytes | str], Event] = EVENT_ADAPTER.validator.validate_json


@final  # never subclassed: the intake dispatches on the exact class
@dataclass(frozen=True, slots=True)
class Invalid:
    """Why one record was refused: ``reason`` (one of :data:`INVALID_REASONS`) and a short,
    log-safe ``detail`` (at most :data:`MAX_DETAIL_CHARS` printable characters, never the
    record itself). ``field``: for ``mapping``, the record's field (a JSON Pointer) that did not
    map; ``""`` otherwise."""

    reason: InvalidReason
    detail: str
    field: str = ""


def too_large(size: int, max_bytes: int) -> Invalid:
    """The ``too_large`` refusal of a record of ``size`` bytes over the cap (every decoder's)."""
    return Invalid("too_large", f"record of {size} bytes, over the cap of {max_bytes}")


def safe_detail(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    """``text`` cut to ``limit`` characters, control characters escaped (no log injection)."""
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    if text.isprintable():
        return text
    escaped = "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode() for ch in text
    )
    return escaped if len(escaped) <= limit else escaped[: limit - 3] + "..."


def _describe(err: ValidationError) -> str:
    """The first error as ``location: message (+n more)``, without the offending input."""
    errors = err.errors(include_url=False, include_context=False, include_input=False)
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"])
    text = f"{where}: {first['msg']}" if where else first["msg"]
    if len(errors) > 1:
        text += f" (+{len(errors) - 1} more)"
    return safe_detail(text)


_NOT_AN_OBJECT = ("dict_type", "model_type", "model_attributes_type")


def _first_error(err: ValidationError) -> tuple[str, tuple[int | str, ...]]:
    first = err.errors(include_url=False, include_context=False, include_input=False)[0]
    return first["type"], first["loc"]


def _json_error(raw: bytes | str, err: ValidationError) -> Event | Invalid:
    if isinstance(raw, bytes):
        if raw.startswith(_UTF8_BOM):  # rare: checked only once the JSON parser refused it
            return decode(raw[len(_UTF8_BOM) :], sys.maxsize)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return Invalid("bad_encoding", f"not UTF-8 at byte {exc.start}")
    return Invalid("bad_json", _describe(err))


def _unknown_type(err: ValidationError) -> Invalid:
    ctx = err.errors(include_url=False, include_input=False)[0].get("ctx") or {}
    tag = safe_detail(str(ctx.get("tag", "?")), _MAX_TAG_CHARS)
    return Invalid("unknown_type", f"unknown type {tag!r}")


def _decode_ubi(raw: bytes | str) -> Event | Invalid:
    """Read a record without ``type`` as UBI, and classify it when it is not."""
    try:
        return to_event(parse_ubi(raw))
    except NotAnInteraction as exc:
        return Invalid("unknown_type", safe_detail(str(exc)))
    except ValidationError as err:
        kind, _ = _first_error(err)
        if kind == "json_invalid":
            return _json_error(raw, err)
        return Invalid("schema", "ubi " + _describe(err))
    except ValueError as exc:
        return Invalid("schema", safe_detail(f"ubi: {exc}"))


def _refused(raw: bytes | str, err: ValidationError) -> Event | Invalid:
    """Classify a record the native union refused (or read it as UBI when it has no type)."""
    kind, where = _first_error(err)
    if kind == "union_tag_not_found":
        return _decode_ubi(raw)
    if kind == "json_invalid":
        return _json_error(raw, err)
    if kind == "union_tag_invalid":
        return _unknown_type(err)
    if kind in _NOT_AN_OBJECT and not where:
        return Invalid("schema", "record is not a JSON object")
    return Invalid("schema", _describe(err))


def decode(raw: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> Event | Invalid:
    """Decode one record (UTF-8 JSON: a native event or a UBI record). Never raises.

    ``raw`` is normally ``bytes`` (a Kafka value or a line of a log); a ``str`` is measured in
    characters and read the same way. Records longer than ``max_bytes`` are ``too_large``
    before any parsing. A leading UTF-8 byte order mark is ignored.

    Bytes that do not contain ``"type"`` at all (and no ``\\u`` escape that could spell it)
    cannot be native events, so they go straight to the UBI reader; the answer is the same as
    through the native union's ``union_tag_not_found``, only without a wasted parse.
    """
    try:
        if len(raw) > max_bytes:
            return too_large(len(raw), max_bytes)
        if type(raw) is bytes and _TYPE_KEY not in raw and _ESCAPE not in raw:
            return _decode_ubi(raw)
        return _validate_json(raw)
    except ValidationError as err:
        try:
            return _refused(raw, err)
        except Exception as exc:  # "never raises": a bug here must not stop the intake
            return _unexpected(exc)
    except Exception as exc:  # e.g. ``raw`` of a wrong type
        return _unexpected(exc)


def decode_native(raw: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> Event | Invalid:
    """Like :func:`decode`, for a source declared native (``format = "native"``): a record
    without ``type`` is ``schema`` invalid instead of being read as UBI. Never raises."""
    try:
        if len(raw) > max_bytes:
            return too_large(len(raw), max_bytes)
        return _validate_json(raw)
    except ValidationError as err:
        try:
            kind = _first_error(err)[0]
            if kind == "union_tag_not_found":
                return Invalid("schema", 'no "type": a native event needs one')
            if kind == "json_invalid" and type(raw) is bytes and raw.startswith(_UTF8_BOM):
                # read again as native (``_refused`` would read it again with ``decode``, which
                # falls back to UBI: a native source's record without type would become one)
                return decode_native(raw[len(_UTF8_BOM) :], sys.maxsize)
            return _refused(raw, err)
        except Exception as exc:
            return _unexpected(exc)
    except Exception as exc:
        return _unexpected(exc)


def decode_ubi(raw: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> Event | Invalid:
    """Like :func:`decode`, for a source declared UBI (``format = "ubi"``): every record is read
    as a UBI query or event, whatever its fields. Never raises."""
    try:
        if len(raw) > max_bytes:
            return too_large(len(raw), max_bytes)
        return _decode_ubi(raw)
    except Exception as exc:
        return _unexpected(exc)


def _unexpected(exc: Exception) -> Invalid:
    return Invalid("schema", safe_detail(f"unexpected {type(exc).__name__} while decoding"))


def decoder(
    max_bytes: int = DEFAULT_MAX_BYTES,
    read: Callable[[bytes, int], Event | Invalid] = decode,
) -> Callable[[bytes], Event | Invalid]:
    """``read`` (:func:`decode`, :func:`decode_native` or :func:`decode_ubi`) configured once
    (the size cap), as a callable for the intake loop.

    A closure: the intake calls it once per record, and calling an object with ``__call__``
    (through its type's call slot) costs ~0.6 k instructions more, a ``functools.partial`` with
    a keyword ~1.1 k more."""

    def decode_capped(raw: bytes) -> Event | Invalid:
        return read(raw, max_bytes)

    return decode_capped


def dedup_key(event: Event, raw: bytes) -> bytes | str:
    """What makes two records the same event: its ``event_id`` when it has one, else a 16-byte
    BLAKE2b digest of the record (surrounding white space ignored, so a log line with or without
    its ``\\r\\n`` matches the same Kafka value). A ``str`` key and a ``bytes`` key never collide.
    """
    # read once: an event's field is looked up through the slot of its pydantic class's
    # __getattr__, ~0.35 k instructions more than a local
    event_id = event.event_id
    if event_id is not None:
        return event_id
    return hashlib.blake2b(raw.strip(), digest_size=16).digest()
