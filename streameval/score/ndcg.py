"""DCG, ideal DCG and NDCG at several cutoffs.

Definitions (DESIGN §3, the seeds):

* DCG@k = Σ_{i=1..k} gain(g_i) · discount(i), where g_i is the grade at rank i; a list
  shorter than k is padded with zero gain.
* The ideal ordering is the ideal pool sorted by grade, descending. Documents whose gain is
  negative are *left out* of the ideal: a list may always stop early (padding is zero gain),
  so showing a negatively graded document is never ideal. Hence IDCG@k ≥ 0 always.
* NDCG@k = DCG@k / IDCG@k, and ``None`` when IDCG@k = 0 (no relevant document: DESIGN's
  ``no_relevance``). IDCG@k > 0 for one k means IDCG@k > 0 for every k, so a list either has
  an NDCG at every cutoff or at none.

Range: when the ideal pool holds (as a multiset) every positively graded document of the list
— true for the pool of judged docs and for the list's own grades — NDCG@k ≤ 1, with equality
for an ideal ordering. With only non-negative grades NDCG@k ∈ [0, 1]. Negative grades make
DCG, and so NDCG, go below 0 (with no lower bound): a "Bad" document costs score, which is the
point of seed 003's Good/Fair/Bad = 1/0/−1 grading ({1, 1, 1, −1} now scores below {1, 1, 1}).
trec_eval instead clips negative grades to 0 in both DCG and ideal; for non-negative grades the
two agree.

Grades are finite numbers (the event decoder guarantees it); NaN would make sorting undefined.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from heapq import nlargest
from operator import truediv
from typing import NamedTuple

from streameval.score.cutoff_sums import CutoffSums, cutoff_sums
from streameval.score.discount import discount_table
from streameval.score.errors import ScoreInputError
from streameval.score.spec import MetricSpec

#: pools longer than this many times max(ks) are cut with a heap instead of a full sort
_HEAP_FACTOR = 8
#: memoized ideal DCGs per Scorer; the dict is emptied when it reaches this size
_IDEAL_CACHE_SIZE = 4096


def ideal_gains(values: Iterable[float]) -> list[float]:
    """The ideal ordering of ``values`` (grades or gains): sorted descending, negatives dropped.

    Works on grades as well as on gains because both gain functions keep order and sign.
    """
    return [v for v in sorted(values, reverse=True) if v >= 0]


def dcg_at_k(gains: Sequence[float], k: int, discounts: Sequence[float]) -> float:
    """Σ_{i=1..min(k, n)} gains[i] · discounts[i] (1-based i); zero-gain padding beyond n."""
    if k < 1:
        raise ScoreInputError(f"k must be >= 1, got {k}")
    depth = min(k, len(gains))
    if len(discounts) < depth:
        raise ScoreInputError(f"need {depth} discounts, got {len(discounts)}")
    return sum(g * d for g, d in zip(gains[:depth], discounts, strict=False))


class CutoffScores(NamedTuple):
    """DCG, IDCG and NDCG of one list, one entry per cutoff in ``ks`` (ascending).

    A named tuple: one is made per list scored, the cheapest immutable value to build."""

    ks: tuple[int, ...]
    dcg: tuple[float, ...]
    idcg: tuple[float, ...]
    #: None where IDCG is 0: the list has no NDCG (DESIGN: ``no_relevance``)
    ndcg: tuple[float | None, ...]

    @property
    def has_relevance(self) -> bool:
        """False when the ideal DCG is 0, i.e. no NDCG at any cutoff."""
        return self.ndcg[0] is not None


#: ``_new_scores(CutoffScores, (ks, dcg, idcg, ndcg))``: built without the named tuple's
#: Python-level ``__new__`` (one call less per list scored, twice per list with the detectors)
_new_scores = tuple.__new__


@dataclass(frozen=True, slots=True)
class Scorer:
    """The hot path: scores one ranked list at every cutoff of ``spec`` in one pass.

    Everything that depends only on the spec (discount table up to max(ks), the cutoff
    indices, the no-relevance result) is computed once here, never per call. The ideal DCGs
    depend only on the best max(ks) grades of the ideal pool, which repeat a lot (grades
    are few small numbers), so they are memoized per Scorer in a bounded dict: a pure cache,
    invisible in results, safe under the GIL (a race at worst computes an entry twice).
    """

    spec: MetricSpec
    _discounts: tuple[float, ...] = field(init=False, repr=False, compare=False)
    _exponential: bool = field(init=False, repr=False, compare=False)
    #: DCG at every k of a list of gains (straight-line code for this spec)
    _dcg: CutoffSums = field(init=False, repr=False, compare=False)
    _ks: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _kmax: int = field(init=False, repr=False, compare=False)
    _zeros: tuple[float, ...] = field(init=False, repr=False, compare=False)
    _nones: tuple[None, ...] = field(init=False, repr=False, compare=False)
    _ideal_cache: dict[tuple[float, ...], tuple[float, ...]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        ks = self.spec.ks
        object.__setattr__(self, "_discounts", discount_table(self.spec, self.spec.max_k))
        object.__setattr__(self, "_exponential", self.spec.gain == "exponential")
        object.__setattr__(self, "_dcg", cutoff_sums(self._discounts, ks))
        object.__setattr__(self, "_ks", ks)
        object.__setattr__(self, "_kmax", self.spec.max_k)
        object.__setattr__(self, "_zeros", (0.0,) * len(ks))
        object.__setattr__(self, "_nones", (None,) * len(ks))
        object.__setattr__(self, "_ideal_cache", {})

    def _ideal_dcg(self, top: tuple[float, ...]) -> tuple[float, ...]:
        """IDCG at every k from the best max(ks) grades of the pool, descending (memoized)."""
        gains: Iterable[float] = top
        if self._exponential:
            gains = _exponential_gains(top)
        positive = [g for g in gains if g > 0]  # negative gains never enter the ideal
        idcg = self._dcg(positive) if positive else self._zeros
        cache = self._ideal_cache
        if len(cache) >= _IDEAL_CACHE_SIZE:
            cache.clear()
        cache[top] = idcg
        return idcg

    def score(
        self, grades: Sequence[float], ideal_pool: Sequence[float], *, best_first: bool = False
    ) -> CutoffScores:
        """Score one list.

        ``grades``: the grade of each shown document in rank order (0 already put in for
        repeated and unjudged documents, see ``grades_in_rank_order``). ``ideal_pool``: the
        grades the ideal ordering is built from (every judged doc of the query, or the
        list's own grades); it must contain the list's positive grades for NDCG ≤ 1.
        ``best_first``: the pool is already sorted descending (a query's judged pool is sorted
        once, not once per list); only its first max(ks) grades are read.
        The pool is sorted once and every cutoff is read off one cumulative sum.
        """
        kmax = self._kmax
        if best_first:
            top = tuple(ideal_pool[:kmax])
        elif len(ideal_pool) > _HEAP_FACTOR * kmax:
            top = tuple(nlargest(kmax, ideal_pool))
        else:
            top = tuple(sorted(ideal_pool, reverse=True)[:kmax])
        idcg = self._ideal_cache.get(top)
        if idcg is None:
            idcg = self._ideal_dcg(top)
        dcg = self._dcg(_exponential_gains(grades[:kmax]) if self._exponential else grades)
        if idcg is self._zeros:
            return _new_scores(CutoffScores, (self._ks, dcg, idcg, self._nones))
        return _new_scores(CutoffScores, (self._ks, dcg, idcg, tuple(map(truediv, dcg, idcg))))


def _exponential_gains(grades: Iterable[float]) -> list[float]:
    """2^g − 1 of each grade; ScoreInputError when a grade is too large for a float."""
    try:
        return [2.0**g - 1.0 for g in grades]
    except OverflowError as exc:
        raise ScoreInputError("exponential gain overflows (grade >= 1024)") from exc
