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

import copy
import math
import operator
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Final, cast

from pydantic import ValidationError
from pydantic_core import CoreSchema, SchemaValidator, core_schema, from_json

from streameval.config import (
    ClickMapping,
    ImpressionMapping,
    JudgmentMapping,
    MappingSettings,
)
from streameval.errors import ConfigError
from streameval.events.decode import (
    DEFAULT_MAX_BYTES,
    Invalid,
    safe_detail,
    too_large,
)
from streameval.events.models import (
    MAX_ID_CHARS,
    MAX_LABEL_KEY_CHARS,
    MAX_LABEL_VALUE_CHARS,
    MAX_LABELS,
    Click,
    Event,
    Impression,
    Judgment,
    to_epoch_ms,
)
from streameval.events.pointer import tokens

__all__ = ["MappedJsonDecoder", "Mapper"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)
_fromisoformat = datetime.fromisoformat
_UTF8_BOM = b"\xef\xbb\xbf"
_ID_FIELDS: Final = frozenset({"request_id", "doc_id", "event_id", "query_id"})


# --- timestamps --------------------------------------------------------------------------------


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


_TIME_UNITS: dict[str, Callable[[object], object]] = {
    "ms": _as_ms,
    "s": _scaled(1000, "seconds"),
    "us": _scaled(0.001, "microseconds"),
    "rfc3339": _rfc3339,
}


# --- one event type: the native model's core schema, reading the team's fields -----------------

#: an alias path no record has: the native fields a mapping does not map keep their defaults
#: (and never read a same-named field of the team's record)
_NOWHERE: Final[list[list[str | int]]] = [["\x00streameval:unmapped"]]
_LABEL_FIELD = "\x00label:"
_INDEX = re.compile(r"0|[1-9][0-9]{0,8}")


def _path(pointer: str) -> list[str | int]:
    """A JSON Pointer as a pydantic-core alias path (a digit token reads an array element)."""
    return [int(t) if _INDEX.fullmatch(t) else t for t in tokens(pointer)]


def _id_or_number(schema: Any) -> Any:
    """``schema`` (an id: a string, maybe in a default or nullable) also taking an integer, read
    as its text: the string stays pydantic-core's alone, no Python call."""
    if schema["type"] in ("default", "nullable"):
        return {**schema, "schema": _id_or_number(schema["schema"])}
    number = core_schema.chain_schema(
        [
            core_schema.int_schema(strict=True),
            core_schema.no_info_plain_validator_function(str),
            schema,
        ]
    )
    return core_schema.union_schema([schema, number], mode="left_to_right")


def _label_text(value: object) -> object:
    kind = type(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int or kind is float:
        text = str(value)
        if len(text) <= MAX_LABEL_VALUE_CHARS:
            return text
    raise ValueError("a label must be a string (of at most 256 characters), number or boolean")


def _timestamp(unit: str, native: CoreSchema) -> CoreSchema:
    """The timestamp field read in ``unit`` (made an integer of epoch ms in Python: measured
    faster than pydantic-core's own datetime parsing chained with a conversion), then the
    native checks."""
    return _before(_TIME_UNITS[unit], native)


def _before(function: Callable[[Any], Any], schema: Any) -> CoreSchema:
    """``function`` before ``schema`` (inside its default, if it has one: a field keeps it)."""
    if schema["type"] == "default":
        return {**schema, "schema": _before(function, schema["schema"])}
    return core_schema.no_info_before_validator_function(function, schema)


def _instance_of(cls: type[Any]) -> Callable[[Any], Any]:
    """The native model's instance from its validated fields (what pydantic-core's model
    validator does), without validating again."""
    new = object.__new__  # a pydantic model has no __new__ of its own
    set_attribute = object.__setattr__

    def make(validated: tuple[dict[str, Any], Any, set[str]]) -> Any:
        values, _extra, fields_set = validated
        event = new(cls)
        set_attribute(event, "__dict__", values)
        set_attribute(event, "__pydantic_fields_set__", fields_set)
        set_attribute(event, "__pydantic_extra__", None)
        set_attribute(event, "__pydantic_private__", None)
        return event

    return make


def _gather_labels(
    constant: dict[str, str], names: tuple[str, ...]
) -> Callable[[Impression], Impression]:
    """After validation: the hidden label fields into ``labels`` (constants first)."""
    hidden = tuple((name, _LABEL_FIELD + name) for name in names)

    def gather(event: Impression) -> Impression:
        labels = dict(constant)
        fields = event.__dict__
        for name, key in hidden:
            value = fields.pop(key, None)
            if value is not None:
                labels[name] = value
        event.__pydantic_fields_set__.difference_update(key for _, key in hidden)
        fields["labels"] = labels
        return event

    return gather


def _id_item(item_pointer: str) -> CoreSchema:
    """One result: an id (a string, or an integer read as its text) at ``item_pointer``."""
    doc_id: CoreSchema = _id_or_number(
        core_schema.str_schema(min_length=1, max_length=MAX_ID_CHARS)
    )
    if not tokens(item_pointer):
        return doc_id
    item = core_schema.typed_dict_schema(
        {"d": core_schema.typed_dict_field(doc_id, validation_alias=[_path(item_pointer)])}
    )
    return core_schema.no_info_after_validator_function(operator.itemgetter("d"), item)


class _EventSchema:
    """The core schema of one event type of a mapping, and where each native field comes from."""

    def __init__(
        self,
        kind: str,
        model: type[Impression | Click | Judgment],
        spec: ImpressionMapping | ClickMapping | JudgmentMapping,
        unit: str,
    ) -> None:
        self.kind = kind
        native: Any = copy.deepcopy(model.__pydantic_core_schema__)
        # the model node becomes its fields' schema and a function that makes the instance:
        # pydantic-core would otherwise reuse the native model's own validator for the class
        model_node = native if native["type"] == "model" else native["schema"]
        model_fields = {**model_node["schema"], "extra_behavior": "ignore"}
        fields: dict[str, Any] = model_fields["fields"]
        made = core_schema.no_info_after_validator_function(_instance_of(model), model_fields)
        if native["type"] == "model":
            schema: Any = made
        else:  # the native model's own after-validator around it
            schema = {**native, "schema": made}
            schema.pop("ref", None)
        given = {name: pointer for name, pointer in spec if isinstance(pointer, str)}
        if "results" in given:
            given["doc_ids"] = given.pop("results")
        #: native field -> the team's field (a JSON Pointer)
        self.pointers: dict[str, str] = {}
        for name, field in fields.items():
            pointer = given.get(name) if name != "type" else None
            if pointer is None:
                field["validation_alias"] = _NOWHERE
                if name == "type":
                    field["schema"] = core_schema.with_default_schema(field["schema"], default=kind)
                continue
            if not tokens(pointer):
                raise ConfigError(f"input.mappings: {kind}.{name} cannot be the whole record")
            field["validation_alias"] = [_path(pointer)]
            self.pointers[name] = pointer
            if name in _ID_FIELDS:
                field["schema"] = _id_or_number(field["schema"])
            elif name == "timestamp":
                field["schema"] = _timestamp(unit, field["schema"])
        self.schema: CoreSchema = schema
        if isinstance(spec, ImpressionMapping):
            self._impression(spec, schema, fields)
        elif isinstance(spec, ClickMapping):
            self._click(spec, fields)

    def _impression(self, spec: ImpressionMapping, schema: Any, fields: dict[str, Any]) -> None:
        results = fields["doc_ids"]["schema"]
        results["items_schema"] = [_id_item(spec.result_doc_id)]
        if len(spec.labels) + len(spec.constant_labels) > MAX_LABELS:
            raise ConfigError(f"input.mappings: {self.kind}.labels: at most {MAX_LABELS} labels")
        value = core_schema.str_schema(max_length=MAX_LABEL_VALUE_CHARS)
        for name, pointer in spec.labels.items():
            if not 1 <= len(name) <= MAX_LABEL_KEY_CHARS:
                raise ConfigError(f"input.mappings: {self.kind}.labels: bad label name {name!r}")
            label = core_schema.with_default_schema(
                core_schema.union_schema(
                    [  # strings stay in pydantic-core; other scalars become text in Python
                        core_schema.nullable_schema(value),
                        core_schema.no_info_plain_validator_function(_label_text),
                    ],
                    mode="left_to_right",
                ),
                default=None,
            )
            fields[_LABEL_FIELD + name] = core_schema.model_field(
                label, validation_alias=[_path(pointer)]
            )
            self.pointers[_LABEL_FIELD + name] = pointer
        gather = _gather_labels(dict(spec.constant_labels), tuple(spec.labels))
        # the native model's own after-validator wraps the model; ours runs after it
        self.schema = core_schema.no_info_after_validator_function(gather, schema)

    def _click(self, spec: ClickMapping, fields: dict[str, Any]) -> None:
        action = fields["action"]  # its schema: a default around the action's string schema
        action["schema"]["default"] = spec.default_action
        default, table = spec.default_action, dict(spec.actions)
        inner = action["schema"]["schema"]
        if inner["type"] == "union":  # the native "or null" (models._NullIs): ours reads null too
            inner = inner["choices"][0]
        action["schema"]["schema"] = _before(
            lambda v: default if v is None else table.get(v, v), inner
        )
        if spec.position_base == 0:
            position = fields["position"]
            position["schema"] = _before(
                lambda v: v + 1 if type(v) is int else v, position["schema"]
            )

    def all_pointers(self) -> list[str]:
        return list(self.pointers.values())

    def field_of(self, loc: tuple[int | str, ...]) -> tuple[str, str]:
        """(native field, the team's field) an error at ``loc`` is about."""
        best, best_len = ("", ""), -1
        for name, pointer in self.pointers.items():
            path = tuple(_path(pointer))
            if loc[: len(path)] == path and len(path) > best_len:
                best, best_len = (name, pointer), len(path)
        name, pointer = best
        if name == "doc_ids" and len(loc) > best_len and type(loc[best_len]) is int:
            pointer = f"{pointer}/{loc[best_len]}"
        if name.startswith(_LABEL_FIELD):
            name = "labels." + name[len(_LABEL_FIELD) :]
        return ("results" if name == "doc_ids" else name), pointer


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
        self._events: dict[str, _EventSchema] = {}
        self._by_value: dict[str, _EventSchema] = {}
        for kind, model in _TYPES:
            spec = getattr(settings, kind)
            if spec is None:
                continue
            event = self._events[kind] = _EventSchema(kind, model, spec, settings.timestamp_unit)
            for value in spec.when:
                self._by_value[value] = event
        self._only: _EventSchema | None = None
        if self.type_field is None:
            self._only = next(iter(self._events.values()))
            schema = self._only.schema
        else:
            schema = core_schema.tagged_union_schema(
                {value: event.schema for value, event in self._by_value.items()},
                discriminator=[_path(self.type_field)],
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
