"""One event type of a mapping compiled: the native model's core schema with each field read at
the team's JSON Pointer (a pydantic-core alias path), and where each native field comes from."""

from __future__ import annotations

import copy
import operator
import re
from collections.abc import Callable
from typing import Any, Final

from pydantic_core import CoreSchema, core_schema

from streameval.config import ClickMapping, ImpressionMapping, JudgmentMapping
from streameval.errors import ConfigError
from streameval.events.bounds import (
    MAX_ID_CHARS,
    MAX_LABEL_KEY_CHARS,
    MAX_LABEL_VALUE_CHARS,
    MAX_LABELS,
)
from streameval.events.mapped_time import TIME_UNITS
from streameval.events.models import Click, Impression, Judgment
from streameval.events.pointer import tokens

_ID_FIELDS: Final = frozenset({"request_id", "doc_id", "event_id", "query_id"})


# --- one event type: the native model's core schema, reading the team's fields -----------------

#: an alias path no record has: the native fields a mapping does not map keep their defaults
#: (and never read a same-named field of the team's record)
_NOWHERE: Final[list[list[str | int]]] = [["\x00streameval:unmapped"]]
_LABEL_FIELD = "\x00label:"
_INDEX = re.compile(r"0|[1-9][0-9]{0,8}")


def alias_path(pointer: str) -> list[str | int]:
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
    return _before(TIME_UNITS[unit], native)


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
        {"d": core_schema.typed_dict_field(doc_id, validation_alias=[alias_path(item_pointer)])}
    )
    return core_schema.no_info_after_validator_function(operator.itemgetter("d"), item)


class EventSchema:
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
            field["validation_alias"] = [alias_path(pointer)]
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
                label, validation_alias=[alias_path(pointer)]
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
        if inner["type"] == "union":  # the native "or null" (fields.NullIs): ours reads null too
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
            path = tuple(alias_path(pointer))
            if loc[: len(path)] == path and len(path) > best_len:
                best, best_len = (name, pointer), len(path)
        name, pointer = best
        if name == "doc_ids" and len(loc) > best_len and type(loc[best_len]) is int:
            pointer = f"{pointer}/{loc[best_len]}"
        if name.startswith(_LABEL_FIELD):
            name = "labels." + name[len(_LABEL_FIELD) :]
        return ("results" if name == "doc_ids" else name), pointer
