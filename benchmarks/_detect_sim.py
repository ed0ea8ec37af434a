"""A list-level simulation of the sequential detectors (``benchmarks/detection.py
--sequential``): days of traffic in minutes of CPU.

Scored lists are drawn, not replayed: for every query of the simulator's catalogue, ``samples``
result pages are served by the simulator's own ranker (``streameval.sim.behaviour.rank``), once
as is and once degraded by the regression (``degrade``), users act on them through the
simulator's click model (``interactions``), and the real pipeline scores them (judged NDCG@10
against the start's judgments, implicit NDCG@10 from the interactions). A simulated bucket of
10 s then draws Poisson(rate × 10 s) lists: the query from the simulator's mix at that moment
(Zipf popularity, with the daily cycle of :class:`streameval.sim.traffic.DailyMix`), the arm,
and one of that query's pre-scored pages (the degraded ones for the regressed arm after the
regression). Each bucket's per-(segment, query) sufficient statistics go to the real
:class:`~streameval.detect.Detectors` (``ingest``), which close it as the daemon would:
judged buckets once the watermark passes them (10 s of allowed lateness), implicit ones after
the attribution window too (5 min).

What it leaves out: the judgment trickle (the pools are scored against the start's judgments,
so a query's NDCG does not drift), duplicate and late events, and the joins' bookkeeping.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from streameval.config import EvaluationSettings, Settings
from streameval.detect import Detectors, detectors_for
from streameval.engine import Pipeline
from streameval.sim import SimConfig, catalogue_of, traffic
from streameval.sim import records as sim_records
from streameval.sim.behaviour import Shown, degrade, interactions, rank
from streameval.sim.catalogue import Query
from streameval.sim.traffic import DailyMix
from streameval.values import IMPLICIT, JUDGED, ScoredList

START_MS = 1_700_000_000_000
BUCKET_MS = 10_000
LATENESS_MS = 10_000
ATTRIBUTION_MS = 300_000
K = 10


@dataclass(frozen=True)
class Pools:
    query_ids: list[str]
    popularity: np.ndarray  # (Q,) Zipf popularity
    rich: np.ndarray  # (Q,) bool: in the half of the catalogue the daily cycle favours
    judged: np.ndarray  # (V, Q, M): per variant (0 = as served); NaN = no NDCG
    implicit: np.ndarray  # (V, Q, M)


def build_pools(sim: SimConfig, samples: int, variants: Sequence[tuple[float, float]]) -> Pools:
    """``samples`` scored pages per query for each variant (ranker noise, share of results
    replaced by off-topic documents); variant 0 is what is served without a regression."""
    catalogue = catalogue_of(sim)
    n_queries = len(catalogue.queries)
    evaluation = EvaluationSettings(ks=(K,), allowed_lateness=10**12, max_open_lists=10**7)
    scored: dict[str, ScoredList] = {}
    pipeline = Pipeline(evaluation, on_scored=lambda s: scored.__setitem__(s.request_id, s))
    pipeline.add_source("pools")
    offer_start_judgments(pipeline, sim, "pools")
    judged = np.full((len(variants), n_queries, samples), np.nan)
    implicit = np.full((len(variants), n_queries, samples), np.nan)
    t = START_MS + 1
    for q, query in enumerate(catalogue.queries):
        for m in range(samples):
            # the variants of one page are paired: the same ranker noise draws (scaled), the
            # same user (click draws), so a query's pages differ only by the regression
            seed = f"{sim.seed}:{q}:{m}"
            for regressed, (noise, size) in enumerate(variants):
                shown = rank(query, noise, sim.page_size, random.Random(f"rank:{seed}"))
                if size > 0:
                    shown = degrade(shown, size, q, catalogue, random.Random(f"deg:{seed}"))
                user = random.Random(f"user:{seed}")
                rid = f"{q}.{m}.{regressed}"
                serve_page(pipeline, rid, t, query, shown, sim=sim, user=user, source="pools")
                t += 1
    pipeline.finish()
    for rid, s in scored.items():
        q, m, regressed = (int(x) for x in rid.split("."))
        for source in s.sources:
            value = source.ndcg[0]
            into = judged if source.relevance == JUDGED else implicit
            into[regressed, q, m] = np.nan if value is None else value
    mix = DailyMix(catalogue, sim, START_MS)
    return Pools(
        query_ids=[q.query_id for q in catalogue.queries],
        popularity=np.array([catalogue.popularity(i) for i in range(n_queries)]),
        rich=np.array(mix.rich),
        judged=judged,
        implicit=implicit,
    )


def offer_start_judgments(pipeline: Pipeline, sim: SimConfig, source: str = "input") -> None:
    """The judgments ``sim``'s traffic starts with (half of every query's candidates, at their
    raters' grades) into ``pipeline``, from ``source``."""
    for record in traffic(replace(sim, rate=1e-9, judgment_rate=0.0), START_MS):
        if record.kind != "judgment":
            break
        pipeline.offer(record.raw, source)


def serve_page(
    pipeline: Pipeline,
    rid: str,
    t: int,
    query: Query,
    shown: Shown,
    *,
    sim: SimConfig,
    user: random.Random,
    source: str = "input",
    teams: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> None:
    """One page of ``query`` shown at ``t`` (``teams``: each result's, when interleaved;
    ``labels``: the impression's) and what ``user`` did on it under ``sim``'s click model,
    offered to ``pipeline`` as request ``rid``."""
    raw = sim_records.impression(
        rid, t, query_id=query.query_id, query=query.text, doc_ids=shown.doc_ids,
        labels=dict(labels or {}),
        teams=teams,
    )  # fmt: skip
    pipeline.offer(raw, source)
    for j, act in enumerate(interactions(shown, sim, user)):
        raw = sim_records.interaction(
            rid, t + act.delay_ms, event_id=f"{rid}.{j}", doc_id=act.doc_id,
            position=act.position, action=act.action, dwell_ms=act.dwell_ms,
        )  # fmt: skip
        pipeline.offer(raw, source)


@dataclass
class Run:
    """One simulated stretch and what every detector series did in it."""

    #: per series (detector, relevance, segment): event time (ms after the start) at which each
    #: alarm episode became visible (the bucket's end + lateness, + attribution for implicit)
    alarms: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)
    series: set[tuple[str, str, str]] = field(default_factory=set)
    buckets: int = 0

    def first_after(self, key: tuple[str, str, str], t_ms: int) -> int | None:
        return next((t for t in self.alarms.get(key, []) if t >= t_ms), None)


def simulate(
    pools: Pools,
    *,
    rate: float,
    duration_ms: int,
    seed: int,
    ab: bool,
    amplitude: float,
    phase: float,
    regression_at_ms: int | None,
    settings: Settings,
    variant: int = 1,
    day_ms: int = 86_400_000,
) -> Run:
    """Buckets of lists into the real detectors; every alarm episode's visible time."""
    detectors = detectors_for(settings)
    assert detectors is not None
    rng = np.random.default_rng(seed)
    n_queries = len(pools.query_ids)
    samples = pools.judged.shape[2]
    sign = np.where(pools.rich, 1.0, -1.0)
    segments = [("ltr", "treatment"), ("bm25", "control")] if ab else [("bm25", "")]
    regressed_arm = 0  # the treatment, or the single ranker
    qids = pools.query_ids
    run = Run()
    alarmed: dict[tuple[str, str, str], bool] = {}
    for i in range(duration_ms // BUCKET_MS):
        b = START_MS + i * BUCKET_MS
        mid = i * BUCKET_MS + BUCKET_MS / 2
        swing = amplitude * math.sin(2 * math.pi * (mid / day_ms + phase))
        p = pools.popularity * (1 + swing * sign)
        p /= p.sum()
        n = rng.poisson(rate * BUCKET_MS / 1000)
        q = rng.choice(n_queries, size=n, p=p)
        arm = (rng.random(n) < 0.5).astype(int) if ab else np.zeros(n, dtype=int)
        m = rng.integers(0, samples, n)
        late = regression_at_ms is not None and i * BUCKET_MS >= regression_at_ms
        for relevance, pool in ((JUDGED, pools.judged), (IMPLICIT, pools.implicit)):
            regressed = ((arm == regressed_arm) & late).astype(int) * variant
            values = pool[regressed, q, m]
            data = {}
            for a, segment in enumerate(segments):
                mask = (arm == a) & ~np.isnan(values)
                if not mask.any():
                    continue
                qa, va = q[mask], values[mask]
                counts = np.bincount(qa, minlength=n_queries)
                sums = np.bincount(qa, weights=va, minlength=n_queries)
                squares = np.bincount(qa, weights=va * va, minlength=n_queries)
                idx = np.nonzero(counts)[0]
                data[segment, K] = {
                    qids[j]: [c, s, ss]
                    for j, c, s, ss in zip(
                        idx.tolist(),
                        counts[idx].tolist(),
                        sums[idx].tolist(),
                        squares[idx].tolist(),
                        strict=True,
                    )
                }
            detectors.ingest(relevance, b, data)
        detectors.advance_judged(b + BUCKET_MS)
        detectors.advance(b + BUCKET_MS)
        _note_alarms(detectors, run, alarmed, i)
        run.buckets += 1
    return run


def _note_alarms(
    detectors: Detectors, run: Run, alarmed: dict[tuple[str, str, str], bool], i: int
) -> None:
    for row in detectors.rows():
        key = (row.detector, row.relevance, row.segment[0])
        run.series.add(key)
        if row.alarm and not alarmed.get(key, False):
            wait = LATENESS_MS + (ATTRIBUTION_MS if row.relevance == IMPLICIT else 0)
            run.alarms.setdefault(key, []).append((i + 1) * BUCKET_MS + wait)
        alarmed[key] = row.alarm


def median(values: Sequence[float | None]) -> float | None:
    """Median with a missed detection (None) counted as infinitely late."""
    ordered = sorted(math.inf if v is None else v for v in values)
    if not ordered:
        return None
    mid = len(ordered) // 2
    value = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    return None if math.isinf(value) else value
