"""Since-start totals: finalized lists by outcome, and cumulative NDCG sums for ``rate()``.

Kept apart from the window buckets because they outlive a rebuild: after a rebalance or restart
the windows are re-read from Kafka, but what was already counted is not counted again.
"""

from __future__ import annotations

from collections import defaultdict

from streameval.snapshot import CumulativeRow
from streameval.values import ScoredList, Segment

_Key = tuple[str, Segment, int]  # (relevance, segment, k)
#: (relevance, segment, ks): one flat ``[sum, count]`` per k in turn (one look-up per source)
_SourceKey = tuple[str, Segment, tuple[int, ...]]


class Totals:
    __slots__ = ("_cumulative", "_lists_total")

    def __init__(self) -> None:
        self._cumulative: dict[_SourceKey, list[float]] = {}
        self._lists_total: defaultdict[tuple[str, str], int] = defaultdict(int)

    def count_list(self, scored: ScoredList) -> None:
        segment = scored.segment
        lists_total = self._lists_total
        cumulative = self._cumulative
        for source in scored.sources:
            rel = source.relevance
            lists_total[rel, source.outcome] += 1
            ndcg = source.ndcg
            if ndcg[0] is None:  # no NDCG at one cutoff means none at any (no relevance)
                continue
            key = (rel, segment, source.ks)
            acc = cumulative.get(key)
            if acc is None:
                acc = cumulative[key] = [0.0, 0] * len(ndcg)
            i = 0
            for value in ndcg:
                if value is not None:
                    acc[i] += value
                    acc[i + 1] += 1
                i += 2

    def count_outcome(self, relevance: str, outcome: str) -> None:
        """A finalized list that was not scored (e.g. evicted)."""
        self._lists_total[(relevance, outcome)] += 1

    def cumulative(self) -> tuple[CumulativeRow, ...]:
        rows: dict[_Key, list[float]] = {}
        for (rel, seg, ks), acc in self._cumulative.items():
            for i, k in enumerate(ks):
                total = rows.setdefault((rel, seg, k), [0.0, 0])
                total[0] += acc[2 * i]
                total[1] += acc[2 * i + 1]
        return tuple(
            CumulativeRow(rel, seg, k, acc[0], int(acc[1]))
            for (rel, seg, k), acc in sorted(rows.items())
            if acc[1]
        )

    def lists_total(self) -> dict[tuple[str, str], int]:
        return dict(self._lists_total)
