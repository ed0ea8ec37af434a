"""Since-start totals: finalized lists by outcome, and cumulative NDCG sums for ``rate()``.

Kept apart from the window buckets because they outlive a rebuild: after a rebalance or restart
the windows are re-read from Kafka, but what was already counted is not counted again.
"""

from __future__ import annotations

from collections import defaultdict

from streameval.scored import ScoredList
from streameval.snapshot import CumulativeRow, Segment

_Key = tuple[str, Segment, int]  # (relevance, segment, k)


class Totals:
    __slots__ = ("_cumulative", "_lists_total")

    def __init__(self) -> None:
        self._cumulative: defaultdict[_Key, list[float]] = defaultdict(lambda: [0.0, 0])
        self._lists_total: defaultdict[tuple[str, str], int] = defaultdict(int)

    def count_list(self, scored: ScoredList) -> None:
        for source in scored.sources:
            rel = source.relevance
            self._lists_total[(rel, source.outcome)] += 1
            for k, value in zip(source.ks, source.ndcg, strict=True):
                if value is not None:
                    acc = self._cumulative[(rel, scored.segment, k)]
                    acc[0] += value
                    acc[1] += 1

    def count_outcome(self, relevance: str, outcome: str) -> None:
        """A finalized list that was not scored (e.g. evicted)."""
        self._lists_total[(relevance, outcome)] += 1

    def cumulative(self) -> tuple[CumulativeRow, ...]:
        return tuple(
            CumulativeRow(rel, seg, k, acc[0], int(acc[1]))
            for (rel, seg, k), acc in sorted(self._cumulative.items())
        )

    def lists_total(self) -> dict[tuple[str, str], int]:
        return dict(self._lists_total)
