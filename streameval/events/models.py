"""The three native events of DESIGN §2, as frozen pydantic v2 models.

Everything a record may carry is bounded (ids, strings, lists, label maps, numbers): a hostile or
broken producer can make a record *invalid*, never make the daemon slow or large. The bounds are
module constants (:mod:`streameval.events.bounds`) so that the docs, the tests and the decoder name
the same numbers.

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

from typing import Annotated, Any, Literal, Self, TypeAlias, final

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from streameval.events.bounds import (
    MAX_ACTION_CHARS,
    MAX_DWELL_MS,
    MAX_GRADE,
    MAX_JUDGE_CHARS,
    MAX_POSITION,
    MAX_QUERY_CHARS,
    MIN_GRADE,
)
from streameval.events.event_time import EventTime
from streameval.events.fields import (
    TEAMS_SEEN,
    DocIds,
    Id,
    NullableLabels,
    NullIs,
    QueryId,
    QueryText,
    collect_teams,
)
from streameval.events.normalize import normalize_query

__all__ = ["Click", "Event", "Impression", "Judgment", "query_id_from"]


_MODEL_CONFIG = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


# --- the events --------------------------------------------------------------------------------


def _drop_default(schema: dict[str, Any]) -> None:
    """JSON Schema of a ``query_id``: no ``"default": ""`` (it is derived, and "" is invalid)."""
    schema.pop("default", None)
    schema["description"] = "default: the normalized query text"


def _not_an_input(_: object) -> None:
    """A field the decoder fills, whatever the record says about it."""
    return None


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
    #: (filled from the object items of ``results``; an input key cannot set it: a ``teams``
    #: key, which populate_by_name would read, or ``"\u0000teams"``, is read as None and
    #: ignored like any unknown key; the validator runs only when the key is there)
    teams: SkipJsonSchema[
        Annotated[tuple[str | None, ...] | None, BeforeValidator(_not_an_input)]
    ] = Field(None, validation_alias="\x00teams", exclude=True)

    @model_validator(mode="after")
    def _defaults(self) -> Self:
        if not self.query_id:  # absent or null
            self.__dict__["query_id"] = query_id_from(self.query)
        if self.labels is None:  # null is read as {}
            self.__dict__["labels"] = {}
        if TEAMS_SEEN.flag:  # an item named its team
            TEAMS_SEEN.flag = False
            self.__dict__["doc_ids"], self.__dict__["teams"] = collect_teams(self.doc_ids)
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
    action: Annotated[Action, NullIs("click", f"a string of 1..{MAX_ACTION_CHARS} characters")] = (
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
        NullIs("", f"a string of at most {MAX_JUDGE_CHARS} characters"),
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
