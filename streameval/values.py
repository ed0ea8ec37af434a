"""The values passed between the stages of the engine and to its consumers.

Plain immutable data, shared by join/, score/, windows/, detect/, interleave/ and the exporters:
a list's :data:`Segment`, what a finalized list becomes once scored (:class:`ScoredList`, one
:class:`SourceScore` per relevance source, :class:`Interleaved` for a list whose results name
teams), the outcomes of a finalized list per relevance source, and the intake :class:`Outcome` of
one record. Named tuples rather than frozen dataclasses: one of each is made per finalized list,
and a frozen dataclass costs three times as much to build.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Final, NamedTuple

#: Values of the configured ``segment_labels``, in that order (``"__other__"`` when capped,
#: ``""`` when an impression did not carry the label).
Segment = tuple[str, ...]

IMPLICIT = "implicit"
JUDGED = "judged"
RELEVANCE_SOURCES = (IMPLICIT, JUDGED)
#: the third source, scored only with ``[propensity] enabled`` (streameval.propensity); after
#: the two others in ScoredList.sources
IMPLICIT_DEBIASED = "implicit_debiased"

#: Outcomes of a finalized list, per relevance source (label ``outcome`` of streameval_lists_total)
SCORED = "scored"
NO_RELEVANCE = "no_relevance"
EVICTED = "evicted"


class SourceScore(NamedTuple):
    relevance: str
    outcome: str  # SCORED or NO_RELEVANCE
    ks: tuple[int, ...]
    ndcg: tuple[float | None, ...]  # per k; None = no value (ideal DCG 0, `no_relevance = skip`)
    dcg: tuple[float, ...]
    idcg: tuple[float, ...]
    coverage: tuple[float, ...] | None = None  # judged coverage@k (judged source only)


class Interleaved(NamedTuple):
    """What interleaving credit needs of a list whose results name their team (DESIGN §10)."""

    doc_ids: tuple[str, ...]
    teams: tuple[str | None, ...]  # per position; None: a result without a team
    clicked: frozenset[str]  # docs with at least one `click` interaction
    grades: Mapping[str, float]  # implicit grade per interacted doc (DESIGN §3)
    counted_before: bool = False  # re-read while rebuilding state: already counted since start
    #: (ranker, opponent, outcome) of every ordered pair of teams shown (team names capped)
    outcomes: tuple[tuple[str, str, str], ...] = ()


class ScoredList(NamedTuple):
    request_id: str
    query_id: str
    timestamp: int  # the impression's event time, epoch ms
    labels: Mapping[str, str]
    segment: Segment
    sources: tuple[SourceScore, ...]
    clicked: bool  # at least one `click` interaction
    first_click_rank: int | None  # 1-based rank of the top-most clicked result
    interacted: bool  # at least one interaction of any kind
    interleaved: Interleaved | None = None  # set only for a list whose results name teams
    #: the partition (``topic/partition``) or file its impression was read from ("" if none):
    #: what a consumer that keeps state per source partition files the list under
    source: str = ""


class Outcome(Enum):
    """Where one record ended up (DESIGN §5 intake accounting)."""

    ACCEPTED = "accepted"
    INVALID = "invalid"
    DUPLICATE = "duplicate"
    LATE = "late"
    UNMATCHED = "unmatched"
    PENDING = "pending"  # a click waiting for its impression; later ACCEPTED or UNMATCHED

    #: members are singletons compared by identity: hash them by identity too, in C. Enum's own
    #: ``__hash__`` is a Python method (hash of the name), and every record read hashes one
    #: (``Pipeline.offer``'s ``(outcome, kind)`` table): ~0.07 µs a lookup saved
    __hash__ = object.__hash__


# The members as module globals, for the intake to read instead: with CPython 3.11 an attribute of
# an Enum class is looked up through the slot that ``EnumType.__getattr__`` installs (~0.75 k
# instructions, where a plain class attribute costs ~0.2 k), and every record read took three.
ACCEPTED: Final = Outcome.ACCEPTED
INVALID: Final = Outcome.INVALID
DUPLICATE: Final = Outcome.DUPLICATE
LATE: Final = Outcome.LATE
UNMATCHED: Final = Outcome.UNMATCHED
PENDING: Final = Outcome.PENDING


#: where ListScorer puts each source in ``ScoredList.sources``: implicit, judged, then
#: implicit_debiased when it is on, then judged:<family> per judge family (a judged score handed
#: out early has the judged source alone)
SOURCE_INDEX: Final = {IMPLICIT: 0, JUDGED: 1, IMPLICIT_DEBIASED: 2}


def source_named(sources: tuple[SourceScore, ...], relevance: str) -> SourceScore | None:
    """The score of ``relevance`` among ``sources`` (None: not scored): looked for at its usual
    index first (:data:`SOURCE_INDEX`), then by name."""
    at = SOURCE_INDEX.get(relevance, -1)
    if 0 <= at < len(sources) and sources[at].relevance == relevance:
        return sources[at]
    for source in sources:
        if source.relevance == relevance:
            return source
    return None
