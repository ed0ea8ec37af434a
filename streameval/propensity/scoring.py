"""Scoring ``implicit_debiased``: inverse-propensity-weighted gains over a pooled ideal. Pure.

* The gain of a shown doc with an interaction at rank i is ``gain(grade) / max(p̂_i, clip)``
  (DESIGN §3's grade map, then the metric's gain), 0 without one: its expectation over the
  users who see the doc at rank i is ``gain · P(interaction | examined)`` whatever i is, so the
  list's DCG of these gains is an unbiased estimate of its DCG under the debiased relevance
  (Joachims, Swaminathan, Schnabel, "Unbiased Learning-to-Rank with Biased Feedback", WSDM 2017).
  Clipping the propensity from below at ``clip`` bounds every weight by ``1 / clip`` (Strehl,
  Langford, Li, Kakade, "Learning from Logged Implicit Exploration Data", NeurIPS 2010): a
  little bias for a bounded variance.
* The ideal is the query's pool (as judged NDCG's default, trec_eval's qrels pool): every doc of
  the query in the table, each with its debiased relevance ``Σ gains / Σ_k n_k · max(p̂_k,
  clip)`` (interaction gains over expected examinations), best first. A per-list ideal would
  undo the weighting (a list with one click would score as ``implicit``) and, like
  ``implicit``, skip every list without interactions; against the pool a list without
  interactions scores 0 and a regression that removes relevant docs shows as a drop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def clipped(propensity: Sequence[float], clip: float) -> tuple[float, ...]:
    """Each propensity clipped from below at ``clip``."""
    return tuple(p if p > clip else clip for p in propensity)


def ips_gains(
    doc_ids: Sequence[str], gain_of: Mapping[str, float], weights: Sequence[float], depth: int
) -> list[float]:
    """The weighted gains of the first ``depth`` results: ``gain_of[doc] / weights[i]`` (the
    clipped propensities, the last one for ranks beyond them), 0 for docs without an
    interaction and for a doc's repeats after its first position."""
    out: list[float] = []
    seen: set[str] = set()
    last = len(weights) - 1
    for i, doc in enumerate(doc_ids[:depth]):
        gain = gain_of.get(doc, 0.0)
        if gain and doc not in seen:
            out.append(gain / weights[min(i, last)])
        else:
            out.append(0.0)
        seen.add(doc)
    return out


def expected_examinations(impressions: Sequence[float], weights: Sequence[float]) -> float:
    """``Σ_k impressions[k] · weights[k]``: how many of a doc's impressions were examined."""
    return sum(n * w for n, w in zip(impressions, weights, strict=True))


def pooled_relevance(impressions: Sequence[float], gains: float, weights: Sequence[float]) -> float:
    """A (query, doc)'s debiased relevance: its interaction gains over its expected
    examinations (0 when never shown)."""
    expected = expected_examinations(impressions, weights)
    return gains / expected if expected > 0 else 0.0
