"""The estimator's state: per (query, doc), impressions and interactions per rank, capped.

An entry is a list ``[n_1 … n_R, c_1 … c_R, g, e, v]``: impressions and interacted impressions at
ranks 1..R (``max_rank``; deeper ranks are not recorded), the sum ``g`` of the interaction gains
at those ranks (for the pooled relevance of :mod:`~streameval.propensity.scoring`), and a cache
of its expected examinations ``e = Σ n_k·p̂_k`` valid for the estimate version ``v``. With
R = 10 that is 23 small numbers in a list, about 600 bytes per entry with its keys and dicts
(measured by ``benchmarks/propensity.py``), so the default cap of 1,000,000 entries is ~0.6 GB
at most; the heavy query head fills the table first and is kept: once it is full, pairs not yet
in it are not added (counted in :attr:`PositionTable.dropped`).

Beside it, the harvested pair sums ``T[k][k'] = Σ_(q,d) min(n_k, n_k') · c_k / n_k`` are kept up
to date at each update (R − 1 pairs touched per result shown), so that an estimate
(:func:`~streameval.propensity.estimate.estimate`) costs O(R³), never a pass over the table.
"""

from __future__ import annotations

from collections.abc import Sequence


class PositionTable:
    """Impressions and interactions per (query, doc, rank) and the pair sums harvested."""

    __slots__ = ("_cap", "_entries", "_rank", "dropped", "entries", "pairs")

    def __init__(self, max_rank: int, max_entries: int) -> None:
        self._rank = max_rank
        self._cap = max_entries
        self._entries: dict[str, dict[str, list[float]]] = {}
        #: entries held
        self.entries = 0
        #: results not recorded because the table was full
        self.dropped = 0
        #: ``pairs[k][k']``: clicks harvested at rank k+1 against rank k'+1
        self.pairs = [[0.0] * max_rank for _ in range(max_rank)]

    def docs(self, query_id: str) -> dict[str, list[float]]:
        """The entries of ``query_id``'s docs (do not modify)."""
        return self._entries.get(query_id) or {}

    def add(self, query_id: str, doc_ids: Sequence[str], gains: Sequence[float]) -> None:
        """One list: ``doc_ids`` in rank order, ``gains`` the interaction gain of each (0: no
        interaction). A doc repeated in the list counts at its first position only."""
        R = self._rank
        docs = self._entries.get(query_id)
        if docs is None:
            docs = self._entries[query_id] = {}
        seen: set[str] = set()
        pairs = self.pairs
        for k in range(min(R, len(doc_ids))):
            doc = doc_ids[k]
            if doc in seen:
                continue
            seen.add(doc)
            entry = docs.get(doc)
            if entry is None:
                if self.entries >= self._cap:
                    self.dropped += 1
                    continue
                entry = docs[doc] = [0.0] * (2 * R + 3)
                entry[2 * R + 2] = -1.0  # no cached expectation
                self.entries += 1
            gain = gains[k]
            n_old, c_old = entry[k], entry[R + k]
            n_new, c_new = n_old + 1.0, c_old + (1.0 if gain > 0 else 0.0)
            for j in range(R):
                n_j = entry[j]
                if j == k or n_j == 0.0:
                    continue
                rate_j = entry[R + j] / n_j
                m_old = min(n_old, n_j)
                m_new = min(n_new, n_j)
                row = pairs[k]
                if n_old:
                    row[j] -= m_old * c_old / n_old
                row[j] += m_new * c_new / n_new
                if m_new != m_old:
                    pairs[j][k] += (m_new - m_old) * rate_j
            entry[k], entry[R + k] = n_new, c_new
            entry[2 * R] += gain
            entry[2 * R + 2] = -1.0  # its expectation is computed again when asked
        if not docs:
            del self._entries[query_id]
