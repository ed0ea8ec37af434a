"""Mapped formats (DESIGN §11): a team's own records read as the events of DESIGN §2.

A :class:`~streameval.config.MappingSettings` says, per event type, where each event field sits
in the record (a JSON Pointer, compiled once by :mod:`streameval.events.pointer`), how to tell
the types apart (a field equal to a value, or one type for the whole topic or file), the unit of
the timestamps, where the doc id sits in each item of a results array, which fields (or
constants) become labels, and how the team's action names translate to ours.

:class:`Mapper` turns one decoded record (a ``dict`` from JSON or Avro) into an event, or an
:class:`~streameval.events.decode.Invalid`: ``unknown_type`` for a type value the mapping does not
read (other events of the same topic: page views, ...), ``mapping`` for a record that does not
map, with ``field`` naming the record's field (the pointer) that is missing or ill-typed. The
mapped values are validated by the native models themselves (from Python objects, in
pydantic-core), so a mapped event obeys exactly the bounds of a native one.

Beyond the native rules: integer ids (``request_id``, ``doc_id``, ``event_id``, ``query_id``) are
read as their decimal text, as UBI's ``object_id`` is; scalar label values become text (``true``
/ ``false``, numbers as Python writes them); a ``null`` is absent, as in native events.

:class:`MappedJsonDecoder` is the decoder of a mapped JSON topic or file: the size cap, then
pydantic-core's JSON parser (depth-limited, NaN and Infinity refused), then the mapper.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, cast

from pydantic import ValidationError
from pydantic_core import SchemaValidator, from_json

from streameval.config import (
    ClickMapping,
    ImpressionMapping,
    JudgmentMapping,
    MappingSettings,
)
from streameval.events.decode import (
    DEFAULT_MAX_BYTES,
    Invalid,
    safe_detail,
)
from streameval.events.models import (
    MAX_RESULTS,
    Click,
    Event,
    Impression,
    Judgment,
    to_epoch_ms,
)
from streameval.events.pointer import Accessor, compile_pointer, lookup_code

__all__ = ["MappedJsonDecoder", "Mapper"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)
_fromisoformat = datetime.fromisoformat
_UTF8_BOM = b"\xef\xbb\xbf"
_ID_FIELDS: Final = frozenset({"request_id", "doc_id", "event_id", "query_id"})


class _NoMap(Exception):
    """One field did not map: ``pointer`` (the record's field) and why."""

    def __init__(self, pointer: str, why: str) -> None:
        super().__init__(why)
        self.pointer = pointer
        self.why = why


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
    # converted here, so the model takes an integer (its fast path)
    if isinstance(value, datetime):
        return _datetime_ms(value)
    if type(value) is not str or len(value) < 16 or value[10] not in "Tt ":
        raise ValueError("expected an RFC 3339 date and time")
    try:  # the common form, fast; the range is the model's to check
        parsed = _fromisoformat(value)
    except ValueError:  # lower-case "t"/"z", ...: the native reader's rules and messages
        return to_epoch_ms(value)
    return _datetime_ms(parsed)


_TIME_UNITS: dict[str, Callable[[object], object]] = {
    "ms": _as_ms,
    "s": _scaled(1000, "seconds"),
    "us": _scaled(0.001, "microseconds"),
    "rfc3339": _rfc3339,
}


# --- one event type ----------------------------------------------------------------------------


def _label_text(value: object, pointer: str) -> str:
    kind = type(value)
    if kind is str:
        return value  # type: ignore[return-value]
    if kind is bool:
        return "true" if value else "false"
    if kind is int or kind is float:
        return str(value)
    raise _NoMap(pointer, "a label must be a string, number or boolean")


@dataclass(frozen=True, slots=True)
class _Field:
    name: str  # the native event field
    pointer: str  # where it sits in the record
    get: Accessor
    required: bool


class _EventMapper:
    """One event type of a mapping: record -> validated native event."""

    def __init__(
        self,
        kind: str,
        model: type[Impression | Click | Judgment],
        spec: ImpressionMapping | ClickMapping | JudgmentMapping,
        required: tuple[str, ...],
        unit: str,
    ) -> None:
        self.kind = kind
        self._validate = cast(SchemaValidator, model.__pydantic_validator__).validate_python
        skip = {"when", "results", "result_doc_id", "labels", "constant_labels", "actions"}
        skip |= {"default_action", "position_base"}
        fields = []
        for name, pointer in spec:
            if name in skip or pointer is None:
                continue
            fields.append(_Field(name, pointer, compile_pointer(pointer), name in required))
        self._fields = tuple(fields)
        self._extract = _compile_fields(kind, self._fields, _TIME_UNITS[unit])
        #: native field -> the record's pointer (for the message of a model's refusal)
        self.pointers: dict[str, str] = {f.name: f.pointer for f in fields}
        self._results: tuple[str, Accessor, Accessor] | None = None
        self._labels: tuple[tuple[str, str, Accessor], ...] = ()
        self._constant_labels: dict[str, str] = {}
        self._actions: dict[str, str] = {}
        self._default_action = "click"
        self._position_shift = 0
        if isinstance(spec, ImpressionMapping):
            self._results = (
                spec.results,
                compile_pointer(spec.results),
                compile_pointer(spec.result_doc_id),
            )
            self.pointers["results"] = spec.results
            self._labels = tuple(
                (name, pointer, compile_pointer(pointer)) for name, pointer in spec.labels.items()
            )
            self._constant_labels = dict(spec.constant_labels)
        elif isinstance(spec, ClickMapping):
            self._actions = dict(spec.actions)
            self._default_action = spec.default_action
            self._position_shift = 1 - spec.position_base

    def all_pointers(self) -> list[str]:
        """Every field of the record this type reads (for ``streameval inspect``)."""
        out = [f.pointer for f in self._fields]
        if self._results is not None:
            out.append(self._results[0])
        out += [pointer for _, pointer, _ in self._labels]
        return out

    def __call__(self, record: object) -> Event | Invalid:
        try:
            values = self._values(record)
        except _NoMap as exc:
            return Invalid(
                "mapping", safe_detail(f"{exc.pointer or '(record)'}: {exc.why}"), exc.pointer
            )
        try:
            return cast(Event, self._validate(values))
        except ValidationError as err:
            return self._refused(err)

    def _values(self, record: object) -> dict[str, Any]:
        values = self._extract(record)
        if self._results is not None:
            values["results"] = self._doc_ids(record, *self._results)
            labels = dict(self._constant_labels)
            for label, pointer, get in self._labels:
                value = get(record)
                if value is not None:
                    labels[label] = _label_text(value, pointer)
            values["labels"] = labels
        elif self.kind == "click":
            action = values.get("action")
            if action is None:
                values["action"] = self._default_action
            elif type(action) is str:
                values["action"] = self._actions.get(action, action)
            position = values.get("position")
            if self._position_shift and type(position) is int:
                values["position"] = position + self._position_shift
        return values

    @staticmethod
    def _doc_ids(record: object, pointer: str, get: Accessor, doc_id: Accessor) -> list[object]:
        items = get(record)
        if type(items) is not list:
            why = "missing" if items is None else "not an array"
            raise _NoMap(pointer, f"{why} (the impression's results)")
        if not 1 <= len(items) <= MAX_RESULTS:
            raise _NoMap(pointer, f"results must have 1..{MAX_RESULTS} items, not {len(items)}")
        ids = []
        for i, item in enumerate(items):
            value = doc_id(item)
            kind = type(value)
            if kind is str:
                ids.append(value)
            elif kind is int:
                ids.append(str(value))
            else:
                raise _NoMap(f"{pointer}/{i}", "no doc id (a string or integer) in this result")
        return ids

    def _refused(self, err: ValidationError) -> Invalid:
        first = err.errors(include_url=False, include_context=False, include_input=False)[0]
        loc = first["loc"]
        name = str(loc[0]) if loc else ""
        pointer = self.pointers.get(name, "")
        if name == "labels" and self._labels:
            pointer = next((p for label, p, _ in self._labels if label in loc[1:]), "")
        where = f"{pointer} (the {self.kind}'s {name})" if pointer else name or "(record)"
        return Invalid("mapping", safe_detail(f"{where}: {first['msg']}"), pointer)


def _compile_fields(
    kind: str, fields: tuple[_Field, ...], time: Callable[[object], object]
) -> Callable[[object], dict[str, Any]]:
    """One generated function per event type: every mapped field read by straight-line
    subscripts (:func:`~streameval.events.pointer.lookup_code`), a missing required one raised
    as :class:`_NoMap`, an integer id turned into its text, the timestamp converted by ``time``
    (a ``ValueError`` raised as :class:`_NoMap`). Names and pointers enter the code only
    through :func:`repr`."""
    code = ["def values(r):\n", f"    d = {{'type': {kind!r}}}\n"]
    for f in fields:
        code += ["    v = r\n", lookup_code(f.pointer, "v", "    ")]
        value = "str(v) if type(v) is int else v" if f.name in _ID_FIELDS else "v"
        if f.name == "timestamp":
            code += [
                "    if v is None:\n",
                f"        raise NoMap({f.pointer!r}, 'missing (the {kind}\\'s timestamp)')\n",
                "    try:\n",
                "        d['timestamp'] = time(v)\n",
                "    except ValueError as e:\n",
                f"        raise NoMap({f.pointer!r}, str(e)) from None\n",
            ]
        elif f.required:
            why = f"missing (the {kind}'s {f.name})"
            code += [
                "    if v is None:\n",
                f"        raise NoMap({f.pointer!r}, {why!r})\n",
                f"    d[{f.name!r}] = {value}\n",
            ]
        else:
            code += ["    if v is not None:\n", f"        d[{f.name!r}] = {value}\n"]
    code.append("    return d\n")
    namespace: dict[str, Any] = {"NoMap": _NoMap, "time": time}
    exec(compile("".join(code), f"<mapping of {kind}>", "exec"), namespace)
    extract: Callable[[object], dict[str, Any]] = namespace["values"]
    return extract


_TYPES: Final = (
    ("impression", Impression, ("request_id", "timestamp")),
    ("click", Click, ("request_id", "doc_id", "timestamp")),
    ("judgment", Judgment, ("doc_id", "grade", "timestamp")),
)


class Mapper:
    """A compiled mapping: ``mapper(record)`` -> event or Invalid. Never raises."""

    def __init__(self, settings: MappingSettings) -> None:
        self.settings = settings
        self._types: dict[str, _EventMapper] = {}
        self._only: _EventMapper | None = None
        mappers: list[_EventMapper] = []
        for kind, model, required in _TYPES:
            spec = getattr(settings, kind)
            if spec is None:
                continue
            mapper = _EventMapper(kind, model, spec, required, settings.timestamp_unit)
            mappers.append(mapper)
            for value in spec.when:
                self._types[value] = mapper
        self.type_field = settings.type_field
        if self.type_field is None:
            self._only = mappers[0]
            self._type_of: Accessor = compile_pointer("")
        else:
            self._type_of = compile_pointer(self.type_field)
        self._mappers = tuple(mappers)

    def pointers(self) -> list[str]:
        """Every field of the record the mapping reads, in a stable order, once each."""
        out = [] if self.type_field is None else [self.type_field]
        for mapper in self._mappers:
            out += mapper.all_pointers()
        return list(dict.fromkeys(out))

    def __call__(self, record: object) -> Event | Invalid:
        try:
            if type(record) is not dict:
                return Invalid("mapping", "record is not an object", "")
            mapper = self._only
            if mapper is None:
                value = self._type_of(record)
                if type(value) is not str:
                    why = "missing" if value is None else "not a string"
                    field = self.type_field or ""
                    return Invalid("mapping", f"{field}: {why} (the type field)", field)
                mapper = self._types.get(value)
                if mapper is None:
                    return Invalid("unknown_type", f"unknown type {safe_detail(value, 40)!r}")
            return mapper(record)
        except Exception as exc:  # "never raises": a bug here must not stop the intake
            return Invalid("mapping", safe_detail(f"unexpected {type(exc).__name__} while mapping"))


class MappedJsonDecoder:
    """A mapped JSON topic or file: bytes -> event or Invalid. Never raises."""

    def __init__(self, mapper: Mapper, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.mapper = mapper
        self.max_bytes = max_bytes

    def parse(self, raw: bytes) -> object | Invalid:
        """The record as Python objects, or why it is not JSON."""
        if len(raw) > self.max_bytes:
            return Invalid(
                "too_large", f"record of {len(raw)} bytes, over the cap of {self.max_bytes}"
            )
        try:
            # keys are few and repeat; values mostly do not
            record: object = from_json(raw, allow_inf_nan=False, cache_strings="keys")
            return record
        except ValueError as exc:
            if isinstance(raw, bytes):
                if raw.startswith(_UTF8_BOM):
                    return self.parse(raw[len(_UTF8_BOM) :])
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as bad:
                    return Invalid("bad_encoding", f"not UTF-8 at byte {bad.start}")
            return Invalid("bad_json", safe_detail(str(exc)))
        except Exception as exc:  # e.g. ``raw`` of a wrong type
            return Invalid("bad_json", safe_detail(f"unexpected {type(exc).__name__}"))

    def __call__(self, raw: bytes) -> Event | Invalid:
        record = self.parse(raw)
        if isinstance(record, Invalid):
            return record
        return self.mapper(record)
