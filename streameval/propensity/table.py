"""The estimator's state: per (query, doc), impressions and interactions per rank, capped.

An entry is a list ``[n_1 … n_R, c_1 … c_R, g, e, v, s]``: impressions and interacted
impressions at ranks 1..R (``max_rank``; deeper ranks are not recorded), the sum ``g`` of the
interaction gains at those ranks (for the pooled relevance of
:mod:`~streameval.propensity.scoring`), its expected examinations ``e = Σ n_k·w_k`` under the
weights of version ``v`` (:meth:`PositionTable.set_weights`; -1: not computed), and the bit set
``s`` of the ranks it was shown at. With R = 10 that is 24 numbers in a list: 375 bytes per
entry with its keys, dicts and its share of the pooled relevance kept per query (measured by
``benchmarks/propensity.py``), so the default cap of 1,000,000 entries bounds the table near
375 MB; the heavy query head fills it first and
is kept: once it is full, pairs not yet in it are not added (counted in
:attr:`PositionTable.dropped`).

Beside it, the harvested pair sums ``T[k][k'] = Σ_(q,d) min(n_k, n_k') · c_k / n_k``, brought up
to date by :meth:`PositionTable.harvest` from the entries changed since its last call (their
counts before are kept meanwhile: a head doc shown a hundred times between two estimates is
harvested once), so that an estimate (:func:`~streameval.propensity.estimate.estimate`) never
passes over the whole table.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

_BITS_CACHE = 65_536
#: groups of queries (by CRC-32 of the query id: the same in every process) whose pair sums are
#: also kept apart, for the jackknife's standard error (:func:`~.estimate.estimate`)
GROUPS = 20


class PositionTable:
    """Impressions and interactions per (query, doc, rank) and the pair sums harvested."""

    __slots__ = (
        "_bits",
        "_cap",
        "_dirty",
        "_entries",
        "_rank",
        "_relevance",
        "_version",
        "_weights",
        "dropped",
        "entries",
        "groups",
        "pairs",
    )

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
        #: the same, per group of queries (they add up to ``pairs``)
        self.groups = [[[0.0] * max_rank for _ in range(max_rank)] for _ in range(GROUPS)]
        self._weights: Sequence[float] | None = None
        self._version = -1.0
        self._bits: dict[int, tuple[int, ...]] = {}
        #: per query, the debiased relevance of its docs with gains, and the weights' version
        #: it was computed under (kept up to date by :meth:`add` while that version holds)
        self._relevance: dict[str, tuple[float, dict[str, float]]] = {}
        #: entries changed since the last :meth:`harvest`, with their counts before
        self._dirty: dict[int, tuple[int, list[float], list[float]]] = {}

    def docs(self, query_id: str) -> dict[str, list[float]]:
        """The entries of ``query_id``'s docs (read only, but for the cached expectation)."""
        return self._entries.get(query_id) or {}

    def set_weights(self, weights: Sequence[float], version: int) -> None:
        """The weights (clipped propensities) of estimate ``version``: entries keep their
        expected examinations under them up to date from now on."""
        self._weights = weights
        self._version = float(version)

    def expected(self, entry: list[float]) -> float:
        """``Σ n_k·w_k`` of an entry under the current weights (cached in the entry)."""
        R = self._rank
        weights = self._weights
        if weights is None:
            return 0.0
        if entry[2 * R + 2] != self._version:
            entry[2 * R + 1] = sum([n * w for n, w in zip(entry[:R], weights, strict=True)])
            entry[2 * R + 2] = self._version
        return entry[2 * R + 1]

    def relevance(self, query_id: str) -> list[float]:
        """The debiased relevance of every doc of ``query_id`` with interaction gains: its gains
        over its expected examinations under the current weights
        (:func:`~streameval.propensity.scoring.pooled_relevance`; empty without weights)."""
        if self._weights is None:
            return []
        known = self._relevance.get(query_id)
        if known is None or known[0] != self._version:
            R = self._rank
            values = {}
            for doc, entry in self.docs(query_id).items():
                gains = entry[2 * R]
                if gains:
                    expected = self.expected(entry)
                    if expected > 0:
                        values[doc] = gains / expected
            known = self._relevance[query_id] = (self._version, values)
        return list(known[1].values())

    def _ranks(self, mask: int) -> tuple[int, ...]:
        bits = self._bits.get(mask)
        if bits is None:
            bits = tuple(j for j in range(self._rank) if mask >> j & 1)
            if len(self._bits) < _BITS_CACHE:
                self._bits[mask] = bits
        return bits

    def add(self, query_id: str, doc_ids: Sequence[str], gains: Sequence[float]) -> None:
        """One list: ``doc_ids`` in rank order, ``gains`` the interaction gain of each (0: no
        interaction). A doc repeated in the list counts at its first position only. The pair
        sums take the change at the next :meth:`harvest`."""
        R = self._rank
        docs = self._entries.get(query_id)
        if docs is None:
            docs = self._entries[query_id] = {}
        group = -1
        seen: set[str] = set()
        weights, version, dirty = self._weights, self._version, self._dirty
        known = self._relevance.get(query_id)
        relevance = known[1] if known is not None and known[0] == version else None
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
                entry = docs[doc] = [0.0] * (2 * R + 4)
                entry[2 * R + 2] = -1.0  # no cached expectation
                self.entries += 1
            key = id(entry)  # (identity of a live entry: only looked up, never ordered by)
            if key not in dirty:
                if group < 0:
                    group = zlib.crc32(query_id.encode()) % GROUPS
                dirty[key] = (group, entry, entry[: 2 * R + 4])
            entry[k] += 1.0
            gain = gains[k]
            if gain > 0:
                entry[R + k] += 1.0
                entry[2 * R] += gain
            entry[2 * R + 3] = float(int(entry[2 * R + 3]) | 1 << k)
            if weights is not None and entry[2 * R + 2] == version:
                entry[2 * R + 1] += weights[k]
            if relevance is not None and entry[2 * R]:
                expected = self.expected(entry)
                if expected > 0:
                    relevance[doc] = entry[2 * R] / expected
        if not docs:
            del self._entries[query_id]

    def harvest(self) -> list[list[float]]:
        """The pair sums, brought up to date with the entries changed since the last call
        (each one's old contribution taken out, its new one put in, in the order they were
        first changed)."""
        for group, entry, old in self._dirty.values():
            self._contribute(old, -1.0, self.groups[group])
            self._contribute(entry, 1.0, self.groups[group])
        self._dirty.clear()
        return self.pairs

    def _contribute(self, entry: Sequence[float], sign: float, group: list[list[float]]) -> None:
        """Add ``sign`` × one entry's terms ``min(n_k, n_j) · c_k / n_k`` to the pair sums (and
        to its group's)."""
        R = self._rank
        ranks = self._ranks(int(entry[2 * R + 3]))
        if len(ranks) < 2:
            return
        pairs = self.pairs
        for k in ranks:
            n_k = entry[k]
            c_k = entry[R + k]
            if not c_k:
                continue
            row, group_row = pairs[k], group[k]
            rate = sign * c_k / n_k
            for j in ranks:
                if j != k:
                    n_j = entry[j]
                    term = (n_k if n_k < n_j else n_j) * rate
                    row[j] += term
                    group_row[j] += term
