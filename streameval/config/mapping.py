"""``[input.mappings]``: declarative mappings of a team's own records to events, and the JSON
Pointers they are written in."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, model_validator

from streameval.config.base import FROZEN

_POINTER_HELP = "a JSON Pointer (RFC 6901): '' (the whole record) or '/a/b/0'"


def _pointer(value: str) -> str:
    """A JSON Pointer's syntax (RFC 6901 §3): empty, or '/'-separated tokens where '~' is only
    followed by '0' or '1'."""
    if value and not value.startswith("/"):
        raise ValueError(f"{value!r} is not {_POINTER_HELP}")
    for token in value.split("/")[1:]:
        rest = token.replace("~0", "").replace("~1", "")
        if "~" in rest:
            raise ValueError(f"{value!r}: '~' must be followed by 0 or 1 (RFC 6901)")
    return value


Pointer = Annotated[str, AfterValidator(_pointer)]


class _EventMapping(BaseModel):
    model_config = FROZEN

    #: values of the mapping's ``type_field`` that make a record this event type
    when: tuple[str, ...] = ()
    #: the event time (in the mapping's ``timestamp_unit``)
    timestamp: Pointer
    #: the event's id, for duplicates
    event_id: Pointer | None = None


class ImpressionMapping(_EventMapping):
    #: the join key of the impression and its clicks
    request_id: Pointer
    #: the array of results, in rank order
    results: Pointer
    #: where the doc id sits in each item of ``results`` ("" = the item itself)
    result_doc_id: Pointer = ""
    #: the query text
    query: Pointer | None = None
    #: the stable query id used to look up judgments (default: the normalized query text)
    query_id: Pointer | None = None
    #: label name -> pointer to its value
    labels: dict[str, Pointer] = Field(default_factory=dict)
    #: label name -> the same value on every impression of this mapping
    constant_labels: dict[str, str] = Field(default_factory=dict)


class ClickMapping(_EventMapping):
    #: the request (impression) the click belongs to
    request_id: Pointer
    #: the doc interacted with
    doc_id: Pointer
    #: the interaction's name (translated through ``actions``)
    action: Pointer | None = None
    #: the team's action name -> ours (click, dwell, add_to_cart, purchase, ...); others as-is
    actions: dict[str, str] = Field(default_factory=dict)
    #: the action of a click whose ``action`` is absent (or not mapped)
    default_action: str = "click"
    #: the dwell time in milliseconds
    dwell_ms: Pointer | None = None
    #: the doc's position on the page
    position: Pointer | None = None
    #: 0 when the team counts positions from 0 (stored 1-based)
    position_base: Literal[0, 1] = 1


class JudgmentMapping(_EventMapping):
    #: the doc judged
    doc_id: Pointer
    #: the grade (a finite number)
    grade: Pointer
    #: the query id judged (``query_id`` or ``query`` is needed)
    query_id: Pointer | None = None
    #: the query text judged (normalized into the query id)
    query: Pointer | None = None
    #: who judged: a rater id, ``llm:<model>``
    judge: Pointer | None = None

    @model_validator(mode="after")
    def _query(self) -> JudgmentMapping:
        if self.query_id is None and self.query is None:
            raise ValueError("a judgment mapping needs query_id or query")
        return self


class MappingSettings(BaseModel):
    """A declarative mapping from a team's own records to the events of DESIGN §2."""

    model_config = FROZEN

    #: the field that tells the event type (compared with each event's ``when``); absent: the
    #: mapping has one event type and every record of its topics or files is of that type
    type_field: Pointer | None = None
    #: unit of every mapped timestamp: "ms" (epoch ms, or RFC 3339 strings, as native events),
    #: "s", "us" (epoch seconds or microseconds, numbers), "rfc3339" (strings only)
    timestamp_unit: Literal["ms", "s", "us", "rfc3339"] = "ms"
    #: where each field of an impression is
    impression: ImpressionMapping | None = None
    #: where each field of a click is
    click: ClickMapping | None = None
    #: where each field of a judgment is
    judgment: JudgmentMapping | None = None

    @model_validator(mode="after")
    def _types(self) -> MappingSettings:
        events = {
            name: m
            for name, m in (
                ("impression", self.impression),
                ("click", self.click),
                ("judgment", self.judgment),
            )
            if m is not None
        }
        if not events:
            raise ValueError("a mapping needs at least one of impression, click, judgment")
        if self.type_field is None:
            if len(events) > 1:
                raise ValueError("type_field is needed to tell " + " from ".join(events) + " apart")
            return self
        seen: dict[str, str] = {}
        for name, m in events.items():
            if not m.when:
                raise ValueError(f"{name}.when: the {self.type_field!r} values of a {name}")
            for value in m.when:
                if value in seen:
                    raise ValueError(f"{name}.when: {value!r} is also {seen[value]}.when")
                seen[value] = name
        return self
