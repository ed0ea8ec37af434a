"""The bounded field types of the events: ids, texts, labels, the ranked results (stored as ids,
with the interleaving teams they name) and JSON ``null`` read as absent."""

from __future__ import annotations

import threading
from typing import Annotated, Any, NotRequired

import annotated_types
from pydantic import Field, GetCoreSchemaHandler, StringConstraints
from pydantic_core import CoreSchema, core_schema
from typing_extensions import TypedDict  # pydantic needs it (not typing's) before 3.12

from streameval.events.bounds import (
    MAX_ID_CHARS,
    MAX_LABEL_KEY_CHARS,
    MAX_LABEL_VALUE_CHARS,
    MAX_LABELS,
    MAX_QUERY_CHARS,
    MAX_RESULTS,
)

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
    impression's own validator collects it: see :data:`TEAMS_SEEN`)."""

    team: str


#: Set (per thread) when an object item with a team was read: the impression being validated
#: then collects its teams. Plain-id lists, the common case, never call into Python for their
#: items, so reading teams costs them one flag test. A flag left set by a record that failed
#: validation later only costs the next impression a scan.
class _Flag(threading.local):
    flag = False  # a class default: a thread that never set it reads it without an exception


TEAMS_SEEN = _Flag()


def _with_team(doc_id: str, team: str | None) -> str:
    if team is None:
        return doc_id
    doc = _TeamDoc(doc_id)
    doc.team = team
    TEAMS_SEEN.flag = True
    return doc


def _doc_id_of(item: ResultItem) -> str:
    return _with_team(item["doc_id"], item.get("team"))


def _solr_id_of(item: SolrDoc) -> str:
    return _with_team(item["id"], item.get("[interleaving]"))


def collect_teams(
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


class NullIs:
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
