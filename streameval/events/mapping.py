"""Mapped formats (DESIGN §11): a team's own records read as the events of DESIGN §2.

A :class:`~streameval.config.MappingSettings` says, per event type, where each event field sits
in the record (a JSON Pointer), how to tell the types apart (a field equal to a value, or one
type for the whole topic or file), the unit of the timestamps, where the doc id sits in each
item of a results array, which fields (or constants) become labels, and how the team's action
names translate to ours.

The mapping is compiled once, at start, into one pydantic-core validator: a union tagged by the
type field, and per event type the native model's own core schema whose fields are read at the
team's paths (each pointer becomes a pydantic-core alias path). A JSON record is parsed,
dispatched, read and validated against the native bounds in one pass in pydantic-core, with no
Python per field, and the result is the native event itself; an Avro record (already decoded)
goes through the same validator from Python objects. Python runs only where the mapping asks
for it: a timestamp unit other than epoch ms, action translation, 0-based positions, labels.

:class:`Mapper` answers an event or an :class:`~streameval.events.decode.Invalid`:
``unknown_type`` for a type value the mapping does not read (other events of the same topic:
page views, ...), ``mapping`` for a record that does not map, with ``field`` naming the record's
field (the pointer) that is missing or ill-typed.

Beyond the native rules: integer ids (``request_id``, ``doc_id``, ``event_id``, ``query_id``, the
results' ids) are read as their decimal text, as UBI's ``object_id`` is; scalar label values
become text (``true``/``false``, numbers as Python writes them); ``null`` is absent, as in native
events (also for ``action`` and ``judge``); a digit token of a pointer indexes an array.
"""

from __future__ import annotations

from typing import Final, cast

from pydantic import ValidationError
from pydantic_core import SchemaValidator, core_schema, from_json

from streameval.config import MappingSettings
from streameval.events.decode import DEFAULT_MAX_BYTES, Invalid, safe_detail, too_large
from streameval.events.mapped_schema import EventSchema, alias_path
from streameval.events.models import Click, Event, Impression, Judgment

__all__ = ["MappedJsonDecoder", "Mapper"]

_UTF8_BOM = b"\xef\xbb\xbf"
_TYPES: Final = (("impression", Impression), ("click", Click), ("judgment", Judgment))


class Mapper:
    """A compiled mapping: ``mapper(record)`` (a decoded record: Avro) or ``mapper.json(raw)``
    (JSON bytes, parsed and mapped in one pass) -> event or Invalid. Never raises.

    The whole mapping is one pydantic-core validator: a union tagged by the type field (an
    alias path), and per event type the native model's own core schema with each field read
    from the team's field (its alias path): the team's record is parsed, dispatched, read and
    validated against the native bounds in pydantic-core, and the result is the native event.
    """

    def __init__(self, settings: MappingSettings) -> None:
        self.settings = settings
        self.type_field = settings.type_field
        self._events: dict[str, EventSchema] = {}
        self._by_value: dict[str, EventSchema] = {}
        for kind, model in _TYPES:
            spec = getattr(settings, kind)
            if spec is None:
                continue
            event = self._events[kind] = EventSchema(kind, model, spec, settings.timestamp_unit)
            for value in spec.when:
                self._by_value[value] = event
        self._only: EventSchema | None = None
        if self.type_field is None:
            self._only = next(iter(self._events.values()))
            schema = self._only.schema
        else:
            schema = core_schema.tagged_union_schema(
                {value: event.schema for value, event in self._by_value.items()},
                discriminator=[alias_path(self.type_field)],
            )
        validator = SchemaValidator(schema, {"validate_by_alias": True, "validate_by_name": False})
        self._python = validator.validate_python
        self._json = self.validate_json = validator.validate_json

    def pointers(self) -> list[str]:
        """Every field of the record the mapping reads, in a stable order, once each."""
        out = [] if self.type_field is None else [self.type_field]
        for event in self._events.values():
            out += event.all_pointers()
        return list(dict.fromkeys(out))

    def __call__(self, record: object) -> Event | Invalid:
        try:
            return cast(Event, self._python(record))
        except ValidationError as err:
            return self._refused(err)
        except Exception as exc:  # "never raises": a bug here must not stop the intake
            return Invalid("mapping", safe_detail(f"unexpected {type(exc).__name__} while mapping"))

    def json(self, raw: bytes) -> Event | Invalid:
        """JSON bytes, parsed and mapped in one pass."""
        try:
            return cast(Event, self._json(raw))
        except ValidationError as err:
            return self.refused_json(raw, err)
        except Exception as exc:
            return Invalid("mapping", safe_detail(f"unexpected {type(exc).__name__} while mapping"))

    def refused_json(self, raw: bytes, err: ValidationError) -> Invalid:
        """Why JSON bytes were refused: not JSON, or not mapping."""
        try:
            first = err.errors(include_url=False, include_context=False, include_input=False)[0]
            if first["type"] == "json_invalid":
                return _not_json(raw, first["msg"])
            return self._refused(err)
        except Exception as exc:
            return Invalid("mapping", safe_detail(f"unexpected {type(exc).__name__} while mapping"))

    def _refused(self, err: ValidationError) -> Invalid:
        first = err.errors(include_url=False, include_input=False)[0]
        kind, loc, msg = first["type"], tuple(first["loc"]), first["msg"]
        if kind == "union_tag_not_found":
            field = self.type_field or ""
            return Invalid("mapping", f"{field}: missing (the type field)", field)
        if kind == "union_tag_invalid":
            tag = safe_detail(str((first.get("ctx") or {}).get("tag", "?")), 40)
            return Invalid("unknown_type", f"unknown type {tag!r}")
        event = self._only
        if event is None and loc:
            event = self._by_value.get(str(loc[0]))
            loc = loc[1:]
        if event is None or (not loc and kind in _NOT_AN_OBJECT):
            return Invalid("mapping", "record is not an object")
        name, pointer = event.field_of(loc)
        if kind == "missing":
            msg = "missing"
        where = f"{pointer} (the {event.kind}'s {name})" if pointer else name or "(record)"
        return Invalid("mapping", safe_detail(f"{where}: {msg}"), pointer)


_NOT_AN_OBJECT: Final = frozenset(
    {"dict_type", "model_type", "model_attributes_type", "tagged_union_invalid_discriminator"}
)


def _not_json(raw: bytes, message: str) -> Invalid:
    if isinstance(raw, bytes):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            return Invalid("bad_encoding", f"not UTF-8 at byte {bad.start}")
    return Invalid("bad_json", safe_detail(message))


class MappedJsonDecoder:
    """A mapped JSON topic or file: bytes -> event or Invalid. Never raises."""

    def __init__(self, mapper: Mapper, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.mapper = mapper
        self.max_bytes = max_bytes
        self._validate_json = mapper.validate_json

    def parse(self, raw: bytes) -> object | Invalid:
        """The record as Python objects, or why it is not JSON (for ``streameval inspect``)."""
        if len(raw) > self.max_bytes:
            return too_large(len(raw), self.max_bytes)
        if raw.startswith(_UTF8_BOM):
            raw = raw[len(_UTF8_BOM) :]
        try:
            record: object = from_json(raw)
            return record
        except ValueError as exc:
            return _not_json(raw, str(exc))
        except Exception as exc:
            return Invalid("bad_json", safe_detail(f"unexpected {type(exc).__name__}"))

    def __call__(self, raw: bytes) -> Event | Invalid:
        try:
            if len(raw) > self.max_bytes:
                return too_large(len(raw), self.max_bytes)
            if raw[:3] == _UTF8_BOM:
                raw = raw[3:]
            event: Event = self._validate_json(raw)  # one call into pydantic-core
            return event
        except ValidationError as err:
            return self.mapper.refused_json(raw, err)
        except Exception as exc:  # e.g. ``raw`` of a wrong type
            return Invalid("bad_json", safe_detail(f"unexpected {type(exc).__name__}"))
