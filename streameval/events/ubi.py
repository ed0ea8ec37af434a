"""OpenSearch User Behavior Insights (UBI) records, read as native events (DESIGN §2).

A record without ``"type"`` is UBI: with ``query_response_hit_ids`` it is a UBI *query* (one
search served -> :class:`~streameval.events.models.Impression`); with ``action_name`` it is a
UBI *event* (a user action -> :class:`~streameval.events.models.Click`). A record with neither is
``schema`` invalid: it has no ``type`` and none of the fields that would make it UBI, so it is a
record with wrong fields, not a record of a kind we do not know.

Mapping, field by field:

- UBI ``query_id`` identifies one search request: it is our ``request_id`` (both kinds).
- ``user_query`` is the impression's ``query``; our ``query_id`` is its normalized text.
- ``query_response_hit_ids`` (rank order) are the impression's ``doc_ids`` (1..1000, like native).
- Labels come from ``query_attributes`` (scalar values as strings: ``true``/``false`` for
  booleans, JSON numbers as written by Python; nested values, ``null`` and entries over the label
  bounds are skipped; the first 31 kept) and from ``application`` (label ``application``, which
  wins over an attribute of that name). Attributes are free-form in UBI, so they are filtered
  rather than making the whole search invalid.
- ``event_attributes.object.object_id`` (a string or an integer) is the click's ``doc_id``.
- ``event_attributes.position.ordinal`` is read as **0-based** and stored as ``position =
  ordinal + 1``. The UBI schema only says "the nth position"; OpenSearch's own consumer of these
  events (the search-relevance plugin's COEC click model) counts ranks from 0, so we follow it.
  The UBI 1.0 form ``{"ordinal": {"index": n}}`` is read the same way. ``position`` is only
  informational (the join matches clicks by ``doc_id``), so a producer that counts from 1 shifts
  nothing but that field.
- ``action_name`` becomes the click's ``action`` (lower case; ``click_through`` -> ``click``).
  UBI's ``impression`` action records that a result was *shown*, not an interaction; it is
  returned as ``unknown_type`` (the impression is the UBI query) rather than counted as a click.
- ``timestamp``: RFC 3339 (no zone = UTC) or epoch milliseconds, like native events.
- A UBI event without ``event_attributes.object.object_id`` is ``schema`` invalid: it does not
  name a result, so it cannot be joined (searches, page views, ...). ``object.id`` is read when
  ``object_id`` is absent: the OpenSearch Search Relevance Workbench writes its A/B clicks so.

Interleaving, as served by the Search Relevance Workbench (SRW, DESIGN §10): its team-draft A/B
search (``POST _plugins/_search_relevance/ab_tests/{id}/_search``) answers
``{"test_id", "interleaved", "hits": [{"_id", "_score", "_source", "_search_configuration_id"},
...]}``, each hit naming the search configuration (team) it came from. That response, logged
with the UBI request id and time the application gives it (``query_id``, ``timestamp``, and
optionally ``user_query``, ``query_attributes``, ``application``), is a *UBI A/B query*: told
apart by its ``hits`` and ``test_id``, read as an impression whose results are the hits' ``_id``
in order with team ``_search_configuration_id`` and label ``ab_test_id``. Its clicks are UBI
events as above (SRW's own click writer puts the doc in ``object.id``; the application must add
the ``query_id`` of the search, as UBI requires of every event, or the click cannot be joined).
"""

from __future__ import annotations

from typing import Annotated, Any, cast

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    GetCoreSchemaHandler,
    StringConstraints,
    Tag,
    TypeAdapter,
    ValidationError,
)
from pydantic_core import CoreSchema, core_schema

from streameval.events.bounds import (
    MAX_ACTION_CHARS,
    MAX_ID_CHARS,
    MAX_LABEL_KEY_CHARS,
    MAX_LABEL_VALUE_CHARS,
    MAX_LABELS,
    MAX_POSITION,
    MAX_QUERY_CHARS,
    MAX_RESULTS,
)
from streameval.events.event_time import EventTime
from streameval.events.fields import Id
from streameval.events.models import Click, Impression

__all__ = [
    "APPLICATION_LABEL",
    "UBI_ADAPTER",
    "NotAnInteraction",
    "UbiAbQuery",
    "UbiEvent",
    "UbiQuery",
    "UbiRecord",
    "labels_from_attributes",
    "parse_ubi",
    "to_event",
]

APPLICATION_LABEL = "application"
_MAX_OBJECT_ID = 2**64  # integer object ids: anything a 64-bit key can hold

_UBI_CONFIG = ConfigDict(frozen=True, extra="ignore")


def _object_id_text(value: str | int) -> str:
    if type(value) is int:
        if not -_MAX_OBJECT_ID < value < _MAX_OBJECT_ID:
            raise ValueError("integer object id out of range")
        return str(value)
    text: str = value  # type: ignore[assignment]
    if not 1 <= len(text) <= MAX_ID_CHARS:
        raise ValueError(f"object id must have 1..{MAX_ID_CHARS} characters")
    return text


class _ObjectIdSchema:
    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(
            _object_id_text,
            core_schema.union_schema(
                [core_schema.str_schema(strict=True), core_schema.int_schema(strict=True)]
            ),
        )


ObjectId = Annotated[str, _ObjectIdSchema]
"""A UBI object id: a string, or an integer (kept as its decimal text)."""


class UbiQuery(BaseModel):
    """The fields of a UBI query that streameval reads."""

    model_config = _UBI_CONFIG

    query_id: Id
    user_query: Annotated[str, StringConstraints(max_length=MAX_QUERY_CHARS)] | None = None
    query_response_hit_ids: Annotated[
        tuple[ObjectId, ...], Field(min_length=1, max_length=MAX_RESULTS)
    ]
    query_attributes: dict[str, Any] | None = None
    application: Annotated[str, StringConstraints(max_length=MAX_LABEL_VALUE_CHARS)] | None = None
    timestamp: EventTime


class SrwHit(BaseModel):
    """One hit of an SRW A/B search response: the doc and the configuration that supplied it."""

    model_config = _UBI_CONFIG

    id: ObjectId = Field(alias="_id")
    search_configuration_id: Id | None = Field(None, alias="_search_configuration_id")


class UbiAbQuery(BaseModel):
    """An SRW team-draft A/B search response logged with its UBI request id and time."""

    model_config = _UBI_CONFIG

    query_id: Id
    test_id: Annotated[str, StringConstraints(max_length=MAX_LABEL_VALUE_CHARS)]
    hits: Annotated[tuple[SrwHit, ...], Field(min_length=1, max_length=MAX_RESULTS)]
    user_query: Annotated[str, StringConstraints(max_length=MAX_QUERY_CHARS)] | None = None
    query_attributes: dict[str, Any] | None = None
    application: Annotated[str, StringConstraints(max_length=MAX_LABEL_VALUE_CHARS)] | None = None
    timestamp: EventTime


#: the label an SRW A/B query carries its ``test_id`` in
AB_TEST_LABEL = "ab_test_id"


class UbiOrdinal(BaseModel):
    """UBI 1.0 wrote the ordinal as an object ``{"index": n}``."""

    model_config = _UBI_CONFIG

    index: int


class UbiPosition(BaseModel):
    model_config = _UBI_CONFIG

    ordinal: Annotated[int, Field(ge=0, lt=MAX_POSITION)] | UbiOrdinal | None = None


class UbiObject(BaseModel):
    model_config = _UBI_CONFIG

    object_id: ObjectId = Field(validation_alias=AliasChoices("object_id", "id"))


class UbiEventAttributes(BaseModel):
    model_config = _UBI_CONFIG

    object: UbiObject
    position: UbiPosition | None = None


class UbiEvent(BaseModel):
    """The fields of a UBI event that streameval reads."""

    model_config = _UBI_CONFIG

    action_name: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_ACTION_CHARS)
    ]
    query_id: Id
    event_attributes: UbiEventAttributes
    timestamp: EventTime


def _ubi_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        if "query_response_hit_ids" in value:
            return "query"
        if "hits" in value and "test_id" in value:
            return "ab_query"
        if "action_name" in value:
            return "event"
    return None


UbiRecord = Annotated[
    Annotated[UbiQuery, Tag("query")]
    | Annotated[UbiAbQuery, Tag("ab_query")]
    | Annotated[UbiEvent, Tag("event")],
    Discriminator(
        _ubi_kind,
        custom_error_type="ubi_kind",
        custom_error_message=(
            "record has no 'type' and is neither a UBI query (query_response_hit_ids), "
            "an SRW A/B query (hits, test_id) nor a UBI event (action_name)"
        ),
    ),
]

UBI_ADAPTER: TypeAdapter[UbiQuery | UbiAbQuery | UbiEvent] = TypeAdapter(UbiRecord)
"""Validates one UBI record (query or event) by its top-level keys; the exact rule."""

_QUERY_ADAPTER = TypeAdapter(UbiQuery).validator
_EVENT_ADAPTER = TypeAdapter(UbiEvent).validator
_IMPRESSION = TypeAdapter(Impression).validator
_CLICK = TypeAdapter(Click).validator
_QUERY_KEY = b'"query_response_hit_ids"'
_ESCAPE = b"\\u"


def parse_ubi(raw: bytes | str) -> UbiQuery | UbiAbQuery | UbiEvent:
    """Validate one UBI record; raises ``pydantic.ValidationError`` when it is not one.

    Fast path: guess the kind from the bytes (is the key ``query_response_hit_ids`` written
    anywhere?) and let pydantic-core parse and validate straight into that model. A guess that
    fails, or bytes with ``\\u`` escapes (a key could be spelled with them), take the exact path
    (:data:`UBI_ADAPTER`: parse, then decide by the top-level keys), so the answer is always the
    exact rule's; the guess only saves time on valid records.
    """
    data = raw.encode() if isinstance(raw, str) else raw
    if _ESCAPE not in data:
        guess = _QUERY_ADAPTER if _QUERY_KEY in data else _EVENT_ADAPTER
        try:
            return cast(UbiQuery | UbiAbQuery | UbiEvent, guess.validate_json(raw))
        except ValidationError:
            pass
    return UBI_ADAPTER.validate_json(raw)


def _label_text(value: object) -> str | None:
    kind = type(value)
    if kind is str:
        return value  # type: ignore[return-value]
    if kind is bool:
        return "true" if value else "false"
    if kind is int or kind is float:
        return repr(value)
    return None  # null, list, object: not a label


def labels_from_attributes(
    attributes: dict[str, Any] | None, application: str | None
) -> dict[str, str]:
    """Impression labels from UBI ``query_attributes`` and ``application`` (see module doc)."""
    labels: dict[str, str] = {}
    room = MAX_LABELS - 1  # one place kept for ``application``
    for key, value in (attributes or {}).items():
        if len(labels) >= room:
            break
        text = _label_text(value)
        if (
            text is not None
            and 1 <= len(key) <= MAX_LABEL_KEY_CHARS
            and len(text) <= MAX_LABEL_VALUE_CHARS
        ):
            labels[key] = text
    if application is not None:
        labels[APPLICATION_LABEL] = application
    return labels


def _position(position: UbiPosition | None) -> int | None:
    if position is None or position.ordinal is None:
        return None
    ordinal = position.ordinal
    index = ordinal.index if isinstance(ordinal, UbiOrdinal) else ordinal
    if not 0 <= index < MAX_POSITION:
        raise ValueError("position ordinal out of range")
    return index + 1


class NotAnInteraction(ValueError):
    """A UBI event that records no user interaction with a result (``impression``)."""


def _impression(
    record: UbiQuery | UbiAbQuery, results: object, extra_labels: dict[str, str]
) -> Impression:
    """The impression a UBI query (or an SRW A/B query) stands for, with ``results``."""
    labels = labels_from_attributes(record.query_attributes, record.application)
    labels.update(extra_labels)
    return cast(
        Impression,
        _IMPRESSION.validate_python(
            {
                "type": "impression",
                "request_id": record.query_id,
                "timestamp": record.timestamp,
                "results": results,
                "query": record.user_query,
                "labels": labels,
            }
        ),
    )


def to_event(record: UbiQuery | UbiAbQuery | UbiEvent) -> Impression | Click:
    """Map a validated UBI record to the native event it stands for.

    The mapped event is validated by the native model too (from Python objects, in
    pydantic-core), so a UBI record obeys exactly the bounds of a native one. Raises
    ``pydantic.ValidationError`` or ``ValueError`` when it does not, and
    :class:`NotAnInteraction` for UBI ``impression`` events; the decoder turns these into
    ``Invalid`` values.
    """
    if isinstance(record, UbiQuery):
        return _impression(record, record.query_response_hit_ids, {})
    if isinstance(record, UbiAbQuery):
        results = [{"doc_id": hit.id, "team": hit.search_configuration_id} for hit in record.hits]
        return _impression(record, results, {AB_TEST_LABEL: record.test_id})
    action = record.action_name.lower()
    if action == "impression":
        raise NotAnInteraction("UBI 'impression' event: a result shown, not an interaction")
    return cast(
        Click,
        _CLICK.validate_python(
            {
                "type": "click",
                "request_id": record.query_id,
                "doc_id": record.event_attributes.object.object_id,
                "timestamp": record.timestamp,
                "action": "click" if action == "click_through" else action,
                "position": _position(record.event_attributes.position),
            }
        ),
    )
