"""Scoring a finalized list: its grades for each relevance source, through the metric core.

* ``implicit``: each shown doc's grade is its best interaction grade; the ideal ordering is the
  list's own docs.
* ``judged``: each shown doc's grade is its judged grade at finalization (0 when unjudged, or
  dropped with ``unjudged = "condensed"``); the ideal is every judged doc of the query
  (``ideal = "pool"``) or the list's own docs (``"list"``); judged coverage@k is reported.

A list whose ideal DCG is 0 has no NDCG (``no_relevance = "skip"``) or counts 0 (``"zero"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import accumulate, repeat

from streameval.config import EvaluationSettings
from streameval.join.judgments import JudgmentStore
from streameval.join.open_lists import OpenList
from streameval.score import (
    CutoffScores,
    MetricSpec,
    Scorer,
    all_distinct,
    condensed,
    grades_in_rank_order,
)
from streameval.score.credit import TeamCap, list_outcomes
from streameval.values import (
    IMPLICIT,
    JUDGED,
    NO_RELEVANCE,
    SCORED,
    Interleaved,
    ScoredList,
    SourceScore,
)

_EMPTY: dict[str, float] = {}
_new_scored = tuple.__new__


def _grades(doc_ids: Sequence[str], grade_of: Mapping[str, float], unique: bool) -> list[float]:
    """:func:`~streameval.score.grades_in_rank_order` (0 for unknown docs), with its duplicate
    check already answered by the caller (``unique``: no doc repeats)."""
    if unique:
        return list(map(grade_of.get, doc_ids, repeat(0.0, len(doc_ids))))
    return grades_in_rank_order(doc_ids, grade_of)


def _scored(
    lst: OpenList, sources: tuple[SourceScore, ...], interleaved: Interleaved | None = None
) -> ScoredList:
    # tuple.__new__ straight away: the named tuple's own __new__ is one more Python call, and
    # this runs once per finalized list (twice with the detectors)
    return _new_scored(
        ScoredList,
        (
            lst.request_id,
            lst.query_id,
            lst.timestamp,
            lst.labels,
            lst.segment,
            sources,
            lst.clicked,
            lst.first_click_rank,
            lst.interaction_keys is not None,  # OpenList.interacted
            interleaved,
            lst.source,
        ),
    )


def judged_only(scored: ScoredList) -> ScoredList:
    """A list scored (implicit, judged) as :meth:`ListScorer.score_judged` gives it: its
    judged source only, no interleaving (the native engine, whose core scored both)."""
    return scored._replace(sources=scored.sources[1:2], interleaved=None)


def _interleaved(
    lst: OpenList, teams: tuple[str | None, ...], credit: str, cap: TeamCap
) -> Interleaved:
    """What interleaving needs of a list whose results name teams, with its outcomes per pair
    (:mod:`streameval.score.credit`)."""
    interleaved = Interleaved(
        lst.doc_ids, teams, frozenset(lst.clicked_docs or ()), lst.grades or _EMPTY
    )
    outcomes = cap.outcomes(list_outcomes(interleaved, credit))
    return interleaved._replace(counted_before=lst.counted_before, outcomes=outcomes)


class ListScorer:
    """Turns finalized open lists into :class:`ScoredList` values (both relevance sources)."""

    __slots__ = (
        "_condensed",
        "_coverage_plan",
        "_credit",
        "_ideal_pool",
        "_ks",
        "_no_interaction",
        "_scorer",
        "_teams",
        "_unjudged",
        "_zero",
    )

    def __init__(self, settings: EvaluationSettings) -> None:
        spec = MetricSpec(
            ks=tuple(sorted(settings.ks)),
            gain=settings.gain,
            discount=settings.discount,
            discount_base=settings.discount_base,
        )
        self._scorer = Scorer(spec)
        self._ks = spec.ks
        self._ideal_pool = settings.ideal == "pool"
        self._condensed = settings.unjudged == "condensed"
        self._zero = settings.no_relevance == "zero"
        self._credit = settings.interleaving.credit
        self._teams = TeamCap(settings.interleaving.max_teams)
        self._coverage_plan: dict[int, tuple[tuple[int, int], ...]] = {}
        # A list without interactions has every implicit grade 0, whatever its length: one
        # result for all of them (immutable, so it can be shared), scored once here.
        self._no_interaction = self._source(IMPLICIT, self._scorer.score([0.0], [0.0]), None)
        # Likewise a list of a query without judgments (whatever ``unjudged`` and ``ideal``
        # say: no grade, no judged doc, an empty ideal): one result for all of them.
        self._unjudged = self._source(JUDGED, self._scorer.score([], []), (0.0,) * len(self._ks))

    def score(self, lst: OpenList, judgments: JudgmentStore) -> ScoredList:
        # ``unique``: no doc repeats (else a doc gains only at its first position), asked once
        # per list: by score_judged when the judged score came early
        early = lst.early
        if early is None:
            unique = all_distinct(lst.doc_ids)
            judged = self._judged(lst, judgments, unique)
        else:
            version, judged, unique = early  # scored when the watermark passed it
            if version != judgments.version(lst.query_id):  # a judgment of it changed since
                judged = self._judged(lst, judgments, unique)
        grades = lst.grades
        if grades is None:  # no interaction: every grade 0 (most lists)
            implicit = self._no_interaction
        else:
            implicit = self._implicit(lst.doc_ids, grades, unique)
        interleaved = (
            None if lst.teams is None else _interleaved(lst, lst.teams, self._credit, self._teams)
        )
        return _scored(lst, (implicit, judged), interleaved)

    def interleaved(self, lst: OpenList) -> Interleaved | None:
        """What :meth:`score` sets as the list's ``interleaved`` (its outcomes through this
        scorer's :class:`TeamCap`): for a list scored elsewhere (the native engine's core)."""
        teams = lst.teams
        return None if teams is None else _interleaved(lst, teams, self._credit, self._teams)

    @property
    def shared_sources(self) -> tuple[SourceScore, SourceScore]:
        """The implicit source of a list without interaction and the judged source of a list
        whose query nobody judged: one value each, shared by every such list."""
        return self._no_interaction, self._unjudged

    def score_judged(self, lst: OpenList, judgments: JudgmentStore) -> ScoredList:
        """The judged source only, before clicks are final (DESIGN §9: judged NDCG does not wait
        for clicks). Remembered on the list, with the judgment table's version of its query, so
        that :meth:`score` reuses it when no judgment of that query changed meanwhile (the
        windows still see the judgments known at finalization)."""
        unique = all_distinct(lst.doc_ids)
        judged = self._judged(lst, judgments, unique)
        lst.early = (judgments.version(lst.query_id), judged, unique)
        return _scored(lst, (judged,))

    def _implicit(
        self, doc_ids: Sequence[str], interacted: Mapping[str, float], unique: bool
    ) -> SourceScore:
        """The implicit source of a list with interactions (:meth:`score` answers the others)."""
        grades = _grades(doc_ids, interacted, unique)
        return self._source(IMPLICIT, self._scorer.score(grades, grades), None)

    def _judged(self, lst: OpenList, judgments: JudgmentStore, unique: bool) -> SourceScore:
        query_id = lst.query_id
        judged = judgments.grades(query_id) if query_id else _EMPTY
        if not judged:  # a query nobody judged: every grade 0, nothing judged, no ideal
            return self._unjudged
        pool = judgments.pool(query_id) if self._ideal_pool else None
        return self.judged_source(JUDGED, lst.doc_ids, judged, pool, unique)

    def judged_source(
        self,
        relevance: str,
        doc_ids: Sequence[str],
        judged: Mapping[str, float],
        pool: list[float] | None,
        unique: bool,
    ) -> SourceScore:
        """A judged source named ``relevance`` from the grade of each judged doc (``judged``,
        not empty) and the query's pool of grades best first (used with ``ideal = "pool"``):
        the judged source, or one judge family's (:mod:`streameval.judges`)."""
        grades = _grades(doc_ids, judged, unique)
        flags = list(map(judged.__contains__, doc_ids))
        judged_at = list(accumulate(flags))  # judged docs in the top 1, 2, … positions
        plan = self._coverage_plan.get(len(doc_ids))
        if plan is None:
            plan = self._plan_coverage(len(doc_ids))
        coverage = tuple([judged_at[i] / shown for i, shown in plan])
        if self._condensed:
            grades = condensed(grades, flags)
        if pool is not None:
            scores = self._scorer.score(grades, pool, best_first=True)
        else:
            scores = self._scorer.score(grades, grades)
        return self._source(relevance, scores, coverage)

    @property
    def ideal_pool(self) -> bool:
        """``ideal = "pool"``: a judged source's ideal is its query's pool of grades."""
        return self._ideal_pool

    def unjudged_source(self, relevance: str) -> SourceScore:
        """The judged source named ``relevance`` of a list whose query has no judgment."""
        return self._unjudged._replace(relevance=relevance)

    def _plan_coverage(self, length: int) -> tuple[tuple[int, int], ...]:
        """Judged coverage@k = judged docs in the top k / min(k, length) (the positions shown;
        see :func:`~streameval.score.judged_coverage`): per k, where to read the prefix count
        and what to divide it by. Lengths are 1..1000 (an impression's bound), so the cache of
        plans stays small."""
        plan = tuple((min(k, length) - 1, min(k, length)) for k in self._ks)
        self._coverage_plan[length] = plan
        return plan

    def _source(
        self, relevance: str, scores: CutoffScores, coverage: tuple[float, ...] | None
    ) -> SourceScore:
        ndcg = scores.ndcg
        outcome = SCORED
        if ndcg[0] is None:  # not scores.has_relevance, without a property's call (~0.7 k instr.)
            outcome = NO_RELEVANCE
            if self._zero:
                ndcg = (0.0,) * len(ndcg)
        return _new_scored(
            SourceScore, (relevance, outcome, scores.ks, ndcg, scores.dcg, scores.idcg, coverage)
        )
