"""The three native events of DESIGN §2, as frozen pydantic v2 models.

Everything a record may carry is bounded (ids, strings, lists, label maps, numbers): a hostile or
broken producer can make a record *invalid*, never make the daemon slow or large. The bounds are
module constants so that the docs, the tests and the decoder name the same numbers.

Decisions beyond the table of DESIGN §2 (documented here, the contract for the other modules):

- ``timestamp`` is stored as integer epoch milliseconds (UTC). Input is an integer (or a string
  of ASCII digits) of epoch milliseconds, or an RFC 3339 string; a string without a zone is UTC.
  A finite float is floored to whole milliseconds. Accepted range: 1970-01-01 .. 9999-12-31.
- ``Impression.results`` is exposed as ``doc_ids`` (ids only, in rank order, duplicates kept so
  that positions stay true; the scorer gives a repeated doc gain only at its first position).
  The ``score`` of an object item is validated (finite) but not stored: memory per open list.
- ``Impression.query_id``: the given ``query_id``; else the normalized ``query``; else ``""``,
  which means "no query": judged relevance then finds no judgments (coverage 0).
- ``Judgment.query_id``: the given ``query_id`` (kept verbatim, it is an opaque id); else the
  normalized ``query``; a judgment with neither, or whose query normalizes to ``""``, is invalid.
- ``Click.action`` is stripped and lower-cased (UBI's ``click_through`` becomes ``click`` in the
  UBI mapping; a native producer writes ``click``).
- ``grade`` is a JSON number (not a string), finite, within ``[-1000, 1000]``: exponential gain
  ``2**grade`` stays finite. ``dwell_ms`` is any finite JSON number >= 0 (1500.5 is valid; kept
  as a float); ``position`` is a JSON integer.
- JSON ``null`` is read as "absent" for every optional field (``labels``: ``{}``, ``action``:
  ``"click"``, ``judge``: ``""``).
- Interleaving (DESIGN §10): an object item may name the ranker that contributed it, as
  ``"team"`` (native) or as Solr's ``"[interleaving]"`` field (an item of Solr's
  ``response.docs``: ``{"id", "[interleaving]"}``). ``Impression.teams`` holds them per
  position (``None`` for a result without a team), or is ``None`` when no result names one.
"""

from __future__ import annotations

import math
import threading
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal, NotRequired, Self, TypeAlias, final

import annotated_types
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import CoreSchema, core_schema
from typing_extensions import TypedDict  # pydantic needs it (not typing's) before 3.12

from streameval.events.normalize import normalize_query

__all__ = [
    "MAX_ACTION_CHARS",
    "MAX_DWELL_MS",
    "MAX_EPOCH_MS",
    "MAX_GRADE",
    "MAX_ID_CHARS",
    "MAX_LABELS",
    "MAX_LABEL_KEY_CHARS",
    "MAX_LABEL_VALUE_CHARS",
    "MAX_POSITION",
    "MAX_QUERY_CHARS",
    "MAX_RESULTS",
    "MIN_GRADE",
    "Click",
    "Event",
    "EventTime",
    "Impression",
    "Judgment",
    "query_id_from",
    "to_epoch_ms",
]

MAX_ID_CHARS = 256
MAX_QUERY_CHARS = 1024
MAX_RESULTS = 1000
MAX_LABELS = 32
MAX_LABEL_KEY_CHARS = 64
MAX_LABEL_VALUE_CHARS = 256
MAX_ACTION_CHARS = 100  # UBI's own limit for action_name
MAX_JUDGE_CHARS = 256
MAX_DWELL_MS = 10**12  # about 31 years: any real dwell fits; keeps the number small
MAX_POSITION = 1_000_000
MIN_GRADE = -1000.0
MAX_GRADE = 1000.0
MAX_EPOCH_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
_MAX_TIME_TEXT = 64  # longest timestamp string we bother to parse

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)
_fromisoformat = datetime.fromisoformat

_MODEL_CONFIG = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


# --- event time --------------------------------------------------------------------------------


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


# --- bounded strings ---------------------------------------------------------------------------

Id = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_CHARS)]
QueryText = Annotated[str, StringConstraints(max_length=MAX_QUERY_CHARS)]
LabelKey = Annotated[str, StringConstraints(min_length=1, max_length=MAX_LABEL_KEY_CHARS)]
LabelValue = Annotated[str, StringConstraints(max_length=MAX_LABEL_VALUE_CHARS)]
Labels = Annotated[dict[LabelKey, LabelValue], annotated_types.MaxLen(MAX_LABELS)]
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]


# --- ranked results: validated as strings or objects, stored as ids ----------------------------


class ResultItem(TypedDict):
    """One result given as an object: ``{"doc_id": ..., "score": ..., "team": ...}`` (score and
    team optional; ``team``: the ranker of an interleaved list that contributed it)."""

    doc_id: Id
    score: NotRequired[FiniteFloat | None]
    team: NotRequired[Id | None]


#: One result as Solr writes it in ``response.docs`` with ``fl=id,score,[interleaving]``: the
#: uniqueKey ``id`` and the model that contributed it (Solr LTR ``TeamDraftInterleaving``).
SolrDoc = TypedDict(
    "SolrDoc",
    {"id": Id, "score": NotRequired[FiniteFloat | None], "[interleaving]": NotRequired[Id | None]},
)


class _TeamDoc(str):
    """A doc id read from an object item that named its team (the team rides along until the
    impression's own validator collects it: see :data:`_TEAMS_SEEN`)."""

    team: str


#: Set (per thread) when an object item with a team was read: the impression being validated
#: then collects its teams. Plain-id lists, the common case, never call into Python for their
#: items, so reading teams costs them one flag test. A flag left set by a record that failed
#: validation later only costs the next impression a scan.
class _Flag(threading.local):
    flag = False  # a class default: a thread that never set it reads it without an exception


_TEAMS_SEEN = _Flag()


def _with_team(doc_id: str, team: str | None) -> str:
    if team is None:
        return doc_id
    doc = _TeamDoc(doc_id)
    doc.team = team
    _TEAMS_SEEN.flag = True
    return doc


def _doc_id_of(item: ResultItem) -> str:
    return _with_team(item["doc_id"], item.get("team"))


def _solr_id_of(item: SolrDoc) -> str:
    return _with_team(item["id"], item.get("[interleaving]"))


def _collect_teams(
    doc_ids: tuple[str, ...],
) -> tuple[tuple[str, ...], tuple[str | None, ...] | None]:
    """(the plain doc ids, the team of each or None when none has one)."""
    teams = tuple(getattr(doc, "team", None) for doc in doc_ids)
    if all(team is None for team in teams):
        return doc_ids, None
    return tuple(map(str, doc_ids)), teams


class _DocIdsSchema:
    """Validates 1..MAX_RESULTS items, each an id string or a :class:`ResultItem`, and keeps the
    ids only. String items (the common case) never call into Python."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        item = core_schema.union_schema(
            [
                handler.generate_schema(Id),
                core_schema.no_info_after_validator_function(
                    _doc_id_of, handler.generate_schema(ResultItem)
                ),
                core_schema.no_info_after_validator_function(
                    _solr_id_of, handler.generate_schema(SolrDoc)
                ),
            ],
            mode="left_to_right",
        )
        return core_schema.tuple_variable_schema(item, min_length=1, max_length=MAX_RESULTS)


DocIds = Annotated[tuple[str, ...], _DocIdsSchema]


class _Nullable:
    """The wrapped type, or JSON ``null`` (which the model's own validator then replaces with the
    field's default), so the attribute's static type stays non-optional."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.nullable_schema(handler(source))


QueryId = Annotated[Id, _Nullable]
NullableLabels = Annotated[Labels, _Nullable]


class _NullIs:
    """The wrapped type, or JSON ``null`` read as ``default`` (the field absent). A value that is
    not null is validated by pydantic-core alone: only a null calls into Python. ``expected``
    says what the field takes, for the error of a value that is neither."""

    def __init__(self, default: object, expected: str) -> None:
        self._default = default
        self._expected = expected

    def _absent(self, _: None) -> object:
        return self._default

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.union_schema(
            [
                handler(source),
                core_schema.no_info_after_validator_function(
                    self._absent, core_schema.none_schema()
                ),
            ],
            mode="left_to_right",
            custom_error_type="null_or_value",
            custom_error_message=f"Input should be {self._expected}, or null",
        )


# --- the events --------------------------------------------------------------------------------


def _drop_default(schema: dict[str, Any]) -> None:
    """JSON Schema of a ``query_id``: no ``"default": ""`` (it is derived, and "" is invalid)."""
    schema.pop("default", None)
    schema["description"] = "default: the normalized query text"


def query_id_from(query: str | None) -> str:
    """The ``query_id`` a query text stands for: normalized, ``""`` for no query."""
    if query is None:
        return ""
    normalized = normalize_query(query)
    if len(normalized) > MAX_QUERY_CHARS:  # NFKC can expand a character up to 18 times
        raise ValueError(f"normalized query longer than {MAX_QUERY_CHARS} characters")
    return normalized


@final  # never subclassed: the intake dispatches on the exact class
class Impression(BaseModel):
    """One result page served: the ranked list that clicks and judgments are joined to."""

    model_config = _MODEL_CONFIG

    type: Literal["impression"]
    request_id: Id
    timestamp: EventTime
    doc_ids: DocIds = Field(validation_alias="results", serialization_alias="results")
    query: QueryText | None = None
    query_id: QueryId = Field("", json_schema_extra=_drop_default)  # default: normalized query
    labels: NullableLabels = Field(default_factory=dict)
    event_id: Id | None = None
    #: per position, the ranker that contributed the result (interleaving); None: no team
    #: (filled from the object items of ``results``; an input key cannot set it)
    teams: SkipJsonSchema[tuple[str | None, ...] | None] = Field(
        None, validation_alias="\x00teams", exclude=True
    )

    @model_validator(mode="after")
    def _defaults(self) -> Self:
        if not self.query_id:  # absent or null
            self.__dict__["query_id"] = query_id_from(self.query)
        if self.labels is None:  # null is read as {}
            self.__dict__["labels"] = {}
        if _TEAMS_SEEN.flag:  # an item named its team
            _TEAMS_SEEN.flag = False
            self.__dict__["doc_ids"], self.__dict__["teams"] = _collect_teams(self.doc_ids)
        return self


Action = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True, to_lower=True, min_length=1, max_length=MAX_ACTION_CHARS
    ),
]


@final  # never subclassed: the intake dispatches on the exact class
class Click(BaseModel):
    """A user interaction with one shown result (``action``: click, dwell, purchase, ...)."""

    model_config = _MODEL_CONFIG

    type: Literal["click"]
    request_id: Id
    doc_id: Id
    timestamp: EventTime
    action: Annotated[Action, _NullIs("click", f"a string of 1..{MAX_ACTION_CHARS} characters")] = (
        "click"
    )
    dwell_ms: (
        Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0, le=MAX_DWELL_MS)] | None
    ) = None
    position: Annotated[int, Field(strict=True, ge=1, le=MAX_POSITION)] | None = None
    event_id: Id | None = None


@final  # never subclassed: the intake dispatches on the exact class
class Judgment(BaseModel):
    """An explicit graded label for (``query_id``, ``doc_id``), by a rater or a model."""

    model_config = _MODEL_CONFIG

    type: Literal["judgment"]
    query_id: QueryId = Field("", json_schema_extra=_drop_default)  # or from ``query``
    query: QueryText | None = None
    doc_id: Id
    grade: Annotated[float, Field(strict=True, allow_inf_nan=False, ge=MIN_GRADE, le=MAX_GRADE)]
    timestamp: EventTime
    judge: Annotated[
        str,
        StringConstraints(max_length=MAX_JUDGE_CHARS),
        _NullIs("", f"a string of at most {MAX_JUDGE_CHARS} characters"),
    ] = ""
    event_id: Id | None = None

    @model_validator(mode="after")
    def _query_id_required(self) -> Self:
        if not self.query_id:
            if self.query is None:
                raise ValueError("a judgment needs query_id or query")
            query_id = query_id_from(self.query)
            if not query_id:
                raise ValueError("query is empty after normalization")
            self.__dict__["query_id"] = query_id
        return self


Event: TypeAlias = Impression | Click | Judgment
"""Any decoded event."""

TaggedEvent = Annotated[Impression | Click | Judgment, Field(discriminator="type")]
"""The discriminated union the decoder validates against (and ``streameval schema`` prints)."""
