"""What rankers serve and what users do with it: pure functions of a seeded ``random.Random``.

- :func:`rank`: a ranker orders a query's candidates by ``true grade + N(0, noise²)``.
- :func:`degrade`: the regression — each shown result, with probability ``size``, is replaced by
  an off-topic document (another query's candidate: true grade 0, never judged for this query).
- :func:`interactions`: a position-based click model. Rank ``i`` is examined with probability
  ``1 / i**η``; an examined result is clicked with a probability that grows with its true grade.
  Clicks come in rank order, seconds apart; after each the user dwells (log-normal, longer for
  better documents) and comes back; good documents are sometimes bought (``add_to_cart`` then
  ``purchase``). Nothing happens later than ``max_interaction_delay_ms`` after the impression.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from streameval.sim.catalogue import Catalogue, Query
from streameval.sim.config import SimConfig

#: median delay from the impression to the first click, and between a return and the next click
_FIRST_CLICK_MEDIAN_MS = 4_000.0
_NEXT_CLICK_MEDIAN_MS = 3_000.0
_LOG_SIGMA = 0.6


@dataclass(frozen=True, slots=True)
class Shown:
    """One served result page: doc ids in rank order and their true grades (0 for off-topic)."""

    doc_ids: tuple[str, ...]
    grades: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Interaction:
    delay_ms: int  # after the impression
    doc_id: str
    position: int  # 1-based rank
    action: str  # click, dwell, add_to_cart, purchase
    dwell_ms: int | None = None


def rank(query: Query, noise: float, page_size: int, rng: random.Random) -> Shown:
    """The top ``page_size`` candidates by noisy score (ties broken by candidate order)."""
    gauss = rng.gauss
    keys = [g + gauss(0.0, noise) for g in query.grades] if noise else list(query.grades)
    scored = sorted(range(len(keys)), key=keys.__getitem__, reverse=True)[:page_size]
    return Shown(tuple(query.doc_ids[i] for i in scored), tuple(query.grades[i] for i in scored))


def degrade(
    shown: Shown, size: float, query_index: int, catalogue: Catalogue, rng: random.Random
) -> Shown:
    """Each result replaced, with probability ``size``, by a distinct off-topic document."""
    if size <= 0:
        return shown
    n_queries = len(catalogue.queries)
    doc_ids = list(shown.doc_ids)
    grades = list(shown.grades)
    used = set(doc_ids)
    for i in range(len(doc_ids)):
        if rng.random() >= size:
            continue
        while True:
            other = rng.randrange(n_queries - 1)
            other += other >= query_index  # any query but this one
            candidates = catalogue.queries[other].doc_ids
            doc = candidates[rng.randrange(len(candidates))]
            if doc not in used:
                break
        used.add(doc)
        doc_ids[i], grades[i] = doc, 0
    return Shown(tuple(doc_ids), tuple(grades))


def _lognormal(median_ms: float, rng: random.Random) -> float:
    return rng.lognormvariate(math.log(median_ms), _LOG_SIGMA)


def interactions(shown: Shown, config: SimConfig, rng: random.Random) -> list[Interaction]:
    """The interactions of one user with ``shown``, in event-time order."""
    clicked = [
        i
        for i, grade in enumerate(shown.grades)
        if rng.random() < 1.0 / (i + 1) ** config.examination_decay
        and rng.random() < config.click_given_grade[grade]
    ]
    out: list[Interaction] = []
    limit = config.max_interaction_delay_ms
    t = _lognormal(_FIRST_CLICK_MEDIAN_MS, rng)
    for i in clicked:
        doc, grade, position = shown.doc_ids[i], shown.grades[i], i + 1
        if t > limit:
            break
        out.append(Interaction(int(t), doc, position, "click"))
        dwell = _lognormal(config.dwell_median_ms[grade], rng)
        if rng.random() < config.purchase_given_grade[grade]:
            for share, action in ((0.5, "add_to_cart"), (0.9, "purchase")):
                if t + share * dwell <= limit:
                    out.append(Interaction(int(t + share * dwell), doc, position, action))
        t += dwell
        if t <= limit:
            out.append(Interaction(int(t), doc, position, "dwell", int(dwell)))
        t += _lognormal(_NEXT_CLICK_MEDIAN_MS, rng)
    out.sort(key=lambda x: x.delay_ms)
    return out
