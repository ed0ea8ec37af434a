"""What a finalized list becomes once scored: the value passed from scoring to the windows.

One :class:`ScoredList` per finalized list, with one :class:`SourceScore` per relevance source
("implicit", "judged"). Plain immutable data, so it can be printed by ``replay --output lists``,
folded into windows, and compared in tests. Named tuples rather than frozen dataclasses: one of
each is made per finalized list, and a frozen dataclass costs three times as much to build.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from streameval.snapshot import Segment

IMPLICIT = "implicit"
JUDGED = "judged"
RELEVANCE_SOURCES = (IMPLICIT, JUDGED)

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
