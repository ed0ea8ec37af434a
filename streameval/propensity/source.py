"""``implicit_debiased``: the third relevance source, scored once per finalized list.

The pipeline hands every finalized list, in input order, to :meth:`DebiasedSource.score`: the
list is scored with the state as it is (the estimate of the last refresh, the pool of its query
as of the lists before it), then added to the state. So a score depends only on the events
before it, in input order (DESIGN §4). The estimate is refreshed after every
``refresh_lists`` lists. Until every rank up to ``max_rank`` is estimated (``min_clicks``
harvested at each), every list counts as ``no_relevance`` for this source; so does a list
without a query id, or of a query whose pool has no interaction yet.

The state lives in memory only: after a restart or a rebalance the pipeline starts a new one
(:meth:`reset`) and the re-read rebuilds it from what is re-read, so figures after a restart
rest on less history than an uninterrupted run's (docs/propensity.md, "Limits").
"""

from __future__ import annotations

from dataclasses import replace

from streameval.config import EvaluationSettings, PropensitySettings
from streameval.join.open_lists import OpenList
from streameval.propensity.estimate import Estimate, empty, estimate
from streameval.propensity.scoring import clipped, ips_gains
from streameval.propensity.table import PositionTable
from streameval.score import MetricSpec, Scorer, gain_function
from streameval.snapshot import PropensityRow, Snapshot
from streameval.values import IMPLICIT_DEBIASED, NO_RELEVANCE, SCORED, SourceScore

_EMPTY: dict[str, float] = {}


class DebiasedSource:
    """The propensity estimator's state and the scoring of ``implicit_debiased``."""

    __slots__ = (
        "_depth",
        "_gain",
        "_lists",
        "_scorer",
        "_settings",
        "_version",
        "_weights",
        "_zero",
        "estimate",
        "table",
    )

    def __init__(self, evaluation: EvaluationSettings, settings: PropensitySettings) -> None:
        spec = MetricSpec(
            ks=tuple(sorted(evaluation.ks)),
            gain=evaluation.gain,
            discount=evaluation.discount,
            discount_base=evaluation.discount_base,
        )
        self._gain = gain_function(spec.gain)
        # the gains are weighted before scoring: the scorer takes them as they are
        self._scorer = Scorer(replace(spec, gain="linear"))
        self._depth = spec.max_k
        self._zero = evaluation.no_relevance == "zero"
        self._settings = settings
        self.reset()

    def reset(self) -> None:
        """Forget everything (the stream is re-read: it rebuilds the state)."""
        settings = self._settings
        self.table = PositionTable(settings.max_rank, settings.max_entries)
        self.estimate: Estimate = empty(settings.max_rank)
        self._weights: tuple[float, ...] | None = None
        self._version = 0
        self._lists = 0

    def score(self, lst: OpenList) -> SourceScore:
        """The list's ``implicit_debiased`` score; then the list joins the state."""
        grades = lst.grades or _EMPTY
        gain = self._gain
        gain_of = {doc: gain(g) for doc, g in grades.items()} if grades else _EMPTY
        source = self._score(lst.query_id, lst.doc_ids, gain_of)
        if lst.query_id:
            self.table.add(lst.query_id, lst.doc_ids, [gain_of.get(d, 0.0) for d in lst.doc_ids])
        self._lists += 1
        if self._lists % self._settings.refresh_lists == 0:
            self.refresh()
        return source

    def refresh(self) -> None:
        """A new estimate from the pair sums harvested so far."""
        table = self.table
        self.estimate = estimate(table.harvest(), self._settings.min_clicks, table.groups)
        self._version += 1
        if self.estimate.complete:
            p = [v for v in self.estimate.propensity if v is not None]
            self._weights = clipped(p, self._settings.clip)
            self.table.set_weights(self._weights, self._version)

    def _score(
        self, query_id: str, doc_ids: tuple[str, ...], gain_of: dict[str, float]
    ) -> SourceScore:
        weights = self._weights
        if weights is None or not query_id:
            scores = self._scorer.score((), ())
        else:
            gains = ips_gains(doc_ids, gain_of, weights, self._depth)
            scores = self._scorer.score(gains, self._pool(query_id))
        ndcg = scores.ndcg
        outcome = SCORED
        if ndcg[0] is None:
            outcome = NO_RELEVANCE
            if self._zero:
                ndcg = (0.0,) * len(ndcg)
        return SourceScore(IMPLICIT_DEBIASED, outcome, scores.ks, ndcg, scores.dcg, scores.idcg)

    def _pool(self, query_id: str) -> list[float]:
        """The debiased relevance of every doc of the query in the table (the ideal's pool)."""
        return self.table.relevance(query_id)


def with_propensity(snapshot: Snapshot, source: DebiasedSource) -> Snapshot:
    """``snapshot`` with the propensity rows of the last estimate and the table's size."""
    est = source.estimate
    rows = tuple(
        PropensityRow(k + 1, p, s, h)
        for k, (p, s, h) in enumerate(zip(est.propensity, est.stderr, est.harvested, strict=True))
    )
    table = source.table
    return replace(
        snapshot,
        propensity=rows,
        propensity_entries=table.entries,
        propensity_dropped=table.dropped,
    )
