"""Position-debiased implicit relevance (DESIGN §12, docs/propensity.md): the three figures of
issue 31 part 2, seeded, printed beside their guarantees.

    .venv/bin/python benchmarks/propensity.py [--hour-lists N] [--ordering-runs 5]
        [--regression-runs 20] [--lists 40000] [--seed 7] [--json FILE]

1. **Propensity accuracy.** The estimator (:class:`~streameval.propensity.PositionTable` and
   :func:`~streameval.propensity.estimate`) is fed straight from the simulator's own generation
   (``streameval.sim.behaviour``: the catalogue's Zipf query head, the A/B test's two rankers,
   the position-based click model with examination ``1 / i**η``), one hour of traffic at the
   design rate (4,000 records/s; the simulator writes ~3.5 records per result page, measured
   here, so ~1,100 pages/s, ~4 M pages): the full engine would take ~10 minutes for that hour
   here, the estimator alone is what is measured. Guarantee: every rank 1-10 within 10 % of the
   truth ``1 / i**η`` (relative to rank 1, as the estimator reports it).
2. **Ordering of rankers.** Rankers of known quality (ranker noise; some also show off-topic
   documents, the simulator's regression) serve the same query mix through the real pipeline
   (``Pipeline`` with ``[propensity] enabled``); per source, the mean NDCG@10 of each ranker.
   Counted: of the ranker pairs (over ``--ordering-runs`` seeds), how many ``implicit`` and
   ``implicit_debiased`` order as ``judged`` does.
3. **Regression.** An A/B test, the treatment regressed (20 % of its results replaced by
   off-topic documents); per source, the treatment's relative change of mean NDCG@10 against the
   control; over ``--regression-runs`` seeds, mean |change − judged's change| of ``implicit``
   and of ``implicit_debiased``. Guarantee: ``implicit_debiased``'s is the smaller.

``tests/unit/test_propensity_sim.py`` runs a fast version of each.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
import tracemalloc
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from streameval.config import EvaluationSettings, PropensitySettings
from streameval.engine import Pipeline
from streameval.propensity import IMPLICIT_DEBIASED, Estimate, PositionTable, estimate
from streameval.sim import SimConfig, catalogue_of, traffic
from streameval.sim.behaviour import degrade, interactions, rank
from streameval.values import IMPLICIT, JUDGED, ScoredList

try:  # run as a script (benchmarks/ on the path) or imported as benchmarks.propensity (tests)
    from _detect_sim import START_MS, offer_start_judgments, serve_page
except ImportError:  # pragma: no cover - depends on how it is imported
    from benchmarks._detect_sim import START_MS, offer_start_judgments, serve_page

DESIGN_RATE = 4_000  # records/s per instance (benchmarks/bench_load.py)
K = 10
MAX_RANK = 10
SOURCES = (JUDGED, IMPLICIT, IMPLICIT_DEBIASED)
#: rankers of the ordering figure: (name, ranker noise, share of results made off-topic)
RANKERS = (
    ("noise0.5", 0.5, 0.0),
    ("noise1", 1.0, 0.0),
    ("noise1.5", 1.5, 0.0),
    ("noise2.5", 2.5, 0.0),
    ("noise0.25+off40%", 0.25, 0.4),
    ("noise0.5+off25%", 0.5, 0.25),
    ("noise1+off15%", 1.0, 0.15),
)
REGRESSION = 0.2


def records_per_page(seed: int = 7, pages: int = 5_000) -> float:
    """Records the simulator writes per result page (impressions, clicks, dwell, purchases;
    the start's judgments left out)."""
    records = n = 0
    for record in traffic(SimConfig(seed=seed), START_MS):
        if record.kind == "judgment":
            continue
        records += 1
        if record.kind == "impression":
            n += 1
            if n > pages:
                break
    return (records - 1) / pages


@dataclass
class Accuracy:
    estimate: Estimate
    truth: tuple[float, ...]
    pages: int
    entries: int
    seconds: float

    @property
    def errors(self) -> list[float]:
        return [
            abs((p or math.nan) / t - 1.0)
            for p, t in zip(self.estimate.propensity, self.truth, strict=True)
        ]

    @property
    def worst(self) -> float:
        return max(self.errors)


def accuracy(
    pages: int, seed: int = 7, min_clicks: float = 100.0, *, cutoff: bool = True
) -> Accuracy:
    """The estimator fed ``pages`` result pages of the simulator's A/B traffic. ``cutoff``
    False: without the simulator's limit on how late an interaction may come (4 minutes after
    the impression), which cuts a long session's clicks at deep ranks, so that examination is
    exactly ``1 / i**η``."""
    sim = SimConfig(seed=seed)
    if not cutoff:
        sim = replace(sim, max_interaction_delay_ms=10**12)
    catalogue = catalogue_of(sim)
    rng = random.Random(f"propensity:{seed}")
    table = PositionTable(MAX_RANK, 1_000_000)
    noises = (sim.control.noise, sim.treatment.noise)
    start = time.perf_counter()
    for _ in range(pages):
        query = catalogue.queries[catalogue.pick(rng.random())]
        noise = noises[rng.random() < sim.treatment_share]
        shown = rank(query, noise, sim.page_size, rng)
        acted = {a.doc_id for a in interactions(shown, sim, rng)}
        table.add(
            query.query_id, shown.doc_ids, [1.0 if d in acted else 0.0 for d in shown.doc_ids]
        )
    est = estimate(table.harvest(), min_clicks, table.groups)
    truth = tuple(1.0 / (i + 1) ** sim.examination_decay for i in range(MAX_RANK))
    return Accuracy(est, truth, pages, table.entries, time.perf_counter() - start)


def calibration(runs: int, pages: int, seed: int) -> tuple[list[float], list[float], list[float]]:
    """Is the delta-method standard error honest? Over ``runs`` seeds of ``pages`` pages each
    (without the interaction cutoff, so that the truth is exactly ``1 / i**η``), per rank 2..R:
    the spread of the estimates across runs (their standard deviation), the mean standard error
    reported, and the share of runs whose 95 % interval (± 1.96 stderr) holds the truth."""
    estimates: list[list[float]] = [[] for _ in range(MAX_RANK)]
    errors: list[list[float]] = [[] for _ in range(MAX_RANK)]
    covered = [0] * MAX_RANK
    for run in range(runs):
        acc = accuracy(pages, seed + run, cutoff=False)
        for i in range(1, MAX_RANK):
            p, s = acc.estimate.propensity[i], acc.estimate.stderr[i]
            if p is None or s is None:
                continue
            estimates[i].append(p)
            errors[i].append(s)
            covered[i] += abs(p - acc.truth[i]) <= 1.96 * s
    spread = [statistics.stdev(e) if len(e) > 1 else math.nan for e in estimates[1:]]
    mean_se = [statistics.fmean(e) if e else math.nan for e in errors[1:]]
    coverage = [c / runs for c in covered[1:]]
    return spread, mean_se, coverage


def bytes_per_entry(pages: int = 20_000, seed: int = 7) -> float:
    """The table's memory per (query, doc) entry (tracemalloc over a table built from
    ``pages`` pages of a catalogue large enough that most pages add new entries, the
    simulator's clicks in them, and every query's pooled relevance computed once)."""
    sim = SimConfig(seed=seed, queries=100_000)
    catalogue = catalogue_of(sim)
    rng = random.Random(seed)
    shown_pages = []
    for _ in range(pages):
        query = catalogue.queries[catalogue.pick(rng.random())]
        shown = rank(query, 1.0, sim.page_size, rng)
        acted = {a.doc_id for a in interactions(shown, sim, rng)}
        gains = [1.0 if d in acted else 0.0 for d in shown.doc_ids]
        shown_pages.append((query.query_id, shown.doc_ids, gains))
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    table = PositionTable(MAX_RANK, 10**9)
    table.set_weights([1.0 / (i + 1) for i in range(MAX_RANK)], 1)
    for query_id, doc_ids, gains in shown_pages:
        table.add(query_id, doc_ids, gains)
        table.relevance(query_id)
    table.harvest()
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return used / table.entries


def serve(
    arms: Sequence[tuple[str, float, float]], pages: int, seed: int
) -> dict[tuple[str, str], float]:
    """``pages`` pages of the simulator's query mix, each served by a random arm (name, ranker
    noise, off-topic share), through the real pipeline with implicit_debiased on: per (arm,
    source), the mean NDCG@10 of the lists that have one."""
    sim = SimConfig(seed=seed)
    catalogue = catalogue_of(sim)
    rng = random.Random(f"serve:{seed}")
    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])

    def on_scored(scored: ScoredList) -> None:
        for source in scored.sources:
            value = source.ndcg[0]
            if value is not None:
                acc = sums[scored.segment[0], source.relevance]
                acc[0] += value
                acc[1] += 1.0

    settings = EvaluationSettings(
        ks=(K,), allowed_lateness=10**12, max_open_lists=10**7, segment_labels=("ranker",)
    )
    propensity = PropensitySettings(enabled=True, refresh_lists=1_000, min_clicks=100.0)
    pipeline = Pipeline(settings, on_scored=on_scored, propensity=propensity)
    pipeline.add_source("sim")
    offer_start_judgments(pipeline, sim, "sim")
    t = START_MS + 1
    for i in range(pages):
        index = catalogue.pick(rng.random())
        query = catalogue.queries[index]
        name, noise, size = arms[rng.randrange(len(arms))]
        shown = rank(query, noise, sim.page_size, rng)
        if size > 0:
            shown = degrade(shown, size, index, catalogue, rng)
        serve_page(
            pipeline, f"r{i}", t, query, shown, sim=sim, user=rng, source="sim",
            labels={"ranker": name},
        )  # fmt: skip
        t += 10  # 100 pages per event second
    pipeline.finish()
    return {key: total / n for key, (total, n) in sums.items() if n}


def ordering(runs: int, pages: int, seed: int) -> dict[str, list[int]]:
    """Per source: [pairs ordered as judged orders them, pairs] over ``runs`` seeds."""
    counts = {IMPLICIT: [0, 0], IMPLICIT_DEBIASED: [0, 0]}
    names = [name for name, _, _ in RANKERS]
    for run in range(runs):
        means = serve(RANKERS, pages, seed + run)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                judged = means[a, JUDGED] > means[b, JUDGED]
                for source, count in counts.items():
                    count[0] += (means[a, source] > means[b, source]) == judged
                    count[1] += 1
    return counts


def regression(runs: int, pages: int, seed: int) -> dict[str, list[float]]:
    """Per source: the treatment's relative change of mean NDCG@10 in each run."""
    arms = (("control", 1.0, 0.0), ("treatment", 1.0, REGRESSION))
    changes: dict[str, list[float]] = {source: [] for source in SOURCES}
    for run in range(runs):
        means = serve(arms, pages, seed + 1_000 + run)
        for source in SOURCES:
            control = means["control", source]
            changes[source].append((means["treatment", source] - control) / control)
    return changes


def distance(changes: dict[str, list[float]], source: str) -> float:
    """Mean |change of ``source`` − judged's change| over the runs."""
    pairs = zip(changes[source], changes[JUDGED], strict=True)
    return sum(abs(a - b) for a, b in pairs) / len(changes[JUDGED])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--hour-lists", type=int, default=None,
        help="pages fed to the estimator (default: one hour at the design rate)",
    )  # fmt: skip
    parser.add_argument("--calibration-runs", type=int, default=40)
    parser.add_argument("--ordering-runs", type=int, default=5)
    parser.add_argument("--regression-runs", type=int, default=20)
    parser.add_argument("--lists", type=int, default=40_000, help="pages per pipeline run")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None, help="also write results to FILE")
    args = parser.parse_args(argv)
    per_page = records_per_page(args.seed)
    pages = args.hour_lists or round(DESIGN_RATE / per_page * 3600)
    result: dict[str, object] = {"records_per_page": per_page}

    acc = accuracy(pages, args.seed)
    print(
        f"1. propensity after {pages:,} pages ({per_page:.2f} records/page: "
        f"{pages * per_page / DESIGN_RATE / 3600:.2f} h at {DESIGN_RATE:,} records/s), "
        f"{acc.entries:,} (query, doc) entries, {acc.seconds:.0f} s"
    )
    print("   rank   truth  estimate  ±stderr  harvested  error")
    est = acc.estimate
    for i in range(MAX_RANK):
        p, s = est.propensity[i], est.stderr[i]
        p_text = "   -  " if p is None else f"{p:.4f}"
        s_text = "   -  " if s is None else f"{s:.4f}"
        print(
            f"   {i + 1:>4}  {acc.truth[i]:.4f}  {p_text}   {s_text}  "
            f"{est.harvested[i]:>9,.0f}  {acc.errors[i]:6.2%}"
        )
    verdict = "met" if acc.worst <= 0.1 else "NOT met"
    print(f"   worst error {acc.worst:.2%} (guarantee: <= 10 %) -> {verdict}")
    uncut = accuracy(min(pages, 500_000), args.seed, cutoff=False)
    print(
        f"   without the simulator's 4-minute interaction cutoff (which cuts long sessions' "
        f"deep clicks, so that the examination there is below 1/i**η), {uncut.pages:,} pages: "
        f"worst error {uncut.worst:.2%}"
    )
    spread, mean_se, coverage = calibration(args.calibration_runs, 50_000, args.seed)
    print(
        f"   standard error, {args.calibration_runs} runs of 50,000 pages without the cutoff, "
        "ranks 2-10: spread of the estimates / mean stderr reported / 95 % interval coverage"
    )
    for i, (sd, se, cov) in enumerate(zip(spread, mean_se, coverage, strict=True)):
        print(f"      rank {i + 2:>2}: {sd:.4f} / {se:.4f} / {cov:.0%}")
    per_entry = bytes_per_entry(seed=args.seed)
    print(f"   memory: {per_entry:.0f} bytes per (query, doc) entry (tracemalloc)")
    result["accuracy"] = {
        "pages": pages,
        "entries": acc.entries,
        "truth": acc.truth,
        "propensity": est.propensity,
        "stderr": est.stderr,
        "harvested": est.harvested,
        "worst_error": acc.worst,
        "worst_error_without_cutoff": uncut.worst,
        "calibration": {"spread": spread, "mean_stderr": mean_se, "coverage": coverage},
        "bytes_per_entry": per_entry,
    }

    counts = ordering(args.ordering_runs, args.lists, args.seed)
    print(
        f"2. ordering of {len(RANKERS)} rankers ({args.lists:,} pages per run, "
        f"{args.ordering_runs} runs): pairs ordered as judged NDCG@10 orders them"
    )
    for source, (agree, total) in counts.items():
        print(f"   {source:<18} {agree}/{total}")
    result["ordering"] = counts

    changes = regression(args.regression_runs, args.lists, args.seed)
    print(
        f"3. regression ({REGRESSION:.0%} off-topic results in the treatment; "
        f"{args.regression_runs} runs of {args.lists:,} pages): relative change of NDCG@10"
    )
    for source in SOURCES:
        values = changes[source]
        print(f"   {source:<18} mean change {sum(values) / len(values):+.2%}")
    d_imp, d_deb = distance(changes, IMPLICIT), distance(changes, IMPLICIT_DEBIASED)
    print(
        f"   mean |change - judged change|: implicit {d_imp:.2%}, implicit_debiased "
        f"{d_deb:.2%} (guarantee: implicit_debiased's is smaller) -> "
        f"{'met' if d_deb < d_imp else 'NOT met'}"
    )
    result["regression"] = {
        "changes": changes,
        "distance": {IMPLICIT: d_imp, IMPLICIT_DEBIASED: d_deb},
    }
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
