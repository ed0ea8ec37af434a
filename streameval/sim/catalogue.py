"""The query catalogue: Zipf-popular queries, each with candidate documents of hidden true grade.

Built once from a seed; small (``queries × candidates`` grades). Documents are distinct per query
(``d<query>-<n>``), so a document of another query is off-topic here: true grade 0, never judged
for this query.
"""

from __future__ import annotations

import bisect
import itertools
import random
from dataclasses import dataclass

from streameval.sim.config import SimConfig

_HEADS = (
    "shoes", "jacket", "lamp", "sofa", "headphones", "kettle", "backpack", "watch", "tent",
    "monitor", "keyboard", "blender", "mattress", "camera", "bike", "desk", "jeans", "drill",
    "pillow", "router", "scarf", "printer", "guitar", "stroller", "vacuum", "sunglasses",
)  # fmt: skip
_MODIFIERS = (
    "red", "cheap", "wireless", "leather", "kids", "waterproof", "vintage", "large", "organic",
    "black", "portable", "wooden", "summer", "running", "gaming", "ergonomic", "mini", "steel",
    "folding", "smart", "linen", "noise cancelling", "outdoor", "electric", "blue", "winter",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Query:
    query_id: str
    text: str
    doc_ids: tuple[str, ...]
    #: true grade (0..3) of each candidate, aligned with ``doc_ids``
    grades: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Catalogue:
    queries: tuple[Query, ...]
    #: cumulative popularity of ``queries`` (most popular first), last entry 1.0
    cumulative: tuple[float, ...]

    def pick(self, u: float) -> int:
        """The index of the query drawn by a uniform ``u`` in [0, 1)."""
        return min(bisect.bisect_right(self.cumulative, u), len(self.queries) - 1)

    def popularity(self, index: int) -> float:
        low = self.cumulative[index - 1] if index else 0.0
        return self.cumulative[index] - low


def query_text(index: int) -> str:
    """A readable, distinct query text for the ``index``-th query (``"red shoes"``, …)."""
    heads, mods = len(_HEADS), len(_MODIFIERS)
    head = _HEADS[index % heads]
    rest = index // heads
    if rest == 0:
        return head
    words = [_MODIFIERS[(rest - 1) % mods]]
    rest = (rest - 1) // mods
    if rest:
        words.append(f"{rest}")
    return " ".join([*words, head])


def build_catalogue(config: SimConfig, rng: random.Random) -> Catalogue:
    """The catalogue of ``config.queries`` queries, grades drawn from ``config.grade_weights``."""
    grades = range(len(config.grade_weights))
    weights = [1.0 / (rank**config.zipf_exponent) for rank in range(1, config.queries + 1)]
    total = sum(weights)
    cumulative = [c / total for c in itertools.accumulate(weights)]
    cumulative[-1] = 1.0
    queries = []
    for q in range(config.queries):
        drawn = rng.choices(grades, weights=config.grade_weights, k=config.candidates)
        queries.append(
            Query(
                query_id=f"q{q:05d}",
                text=query_text(q),
                doc_ids=tuple(f"d{q}-{n}" for n in range(config.candidates)),
                grades=tuple(drawn),
            )
        )
    return Catalogue(tuple(queries), tuple(cumulative))
