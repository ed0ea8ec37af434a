"""Judge agreement under drift: does StreamevalJudgeAgreementLow fire when an LLM judge's grades
drift away from the raters', and stay silent when they do not? (docs/judges.md)

    .venv/bin/python benchmarks/judges.py [--runs 20] [--hours 4] [--drift 0.5] [--json FILE]

Seeded simulations (``streameval.sim`` with its LLM judge on): raters grade half of every
query's candidates at the start (``rater_noise`` 0.1), the LLM judge ``llm:sim`` grades the same
pairs then re-grades one at random every second (``llm_noise`` 0.1), its grades shifted by
``llm_drift`` grade points per hour of event time (0 in the runs without drift). The stream goes
through the real pipeline (default ``[judges]``: agreement window 1h, floor 0.667, at least 50
pairs); every 5 minutes of event time a snapshot is taken, and the alert rule's expression
(``alpha < floor and pairs >= min_pairs`` on a window other than ``all``, held for its
``for: 10m``: at three snapshots in a row) is evaluated on it.

Printed per arm: the runs that fired, the median event time of the first firing, the median
alpha of the 1h window at each hour; and judged NDCG@10 (1h window) per family at the end.
Guarantee: every run with drift fires; no run without drift does.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from streameval.config import Settings
from streameval.engine.evaluator import Evaluator
from streameval.sim import SimConfig, traffic

START_MS = 1_700_000_000_000
STEP_MS = 300_000  # a snapshot every 5 minutes of event time
FOR_STEPS = 3  # `for: 10m`: the condition at three snapshots in a row spans 10 minutes
WINDOW = "1h"


@dataclass
class Run:
    seed: int
    drift: float
    #: (event minutes since start, alpha of the 1h window or None, its pairs)
    points: list[tuple[int, float | None, int]] = field(default_factory=list)
    fired_at_min: int | None = None
    ndcg: dict[str, float] = field(default_factory=dict)  # judged NDCG@10 (1h) per relevance


def sim_config(seed: int, drift: float, hours: float) -> SimConfig:
    return SimConfig(
        seed=seed,
        rate=1.0,
        queries=200,
        duration_ms=int(hours * 3_600_000),
        judgment_rate=0.0,
        llm_judge="sim",
        llm_rate=1.0,
        llm_drift=drift,
    )


def alert_holds(alpha: float | None, pairs: int, floor: float, min_pairs: int) -> bool:
    """StreamevalJudgeAgreementLow's expression on one window's figures."""
    return alpha is not None and alpha < floor and pairs >= min_pairs


def simulate(seed: int, drift: float, hours: float) -> Run:
    settings = Settings()
    evaluator = Evaluator(settings, detectors=None)
    pipeline = evaluator.pipeline
    pipeline.add_source("sim")
    run = Run(seed, drift)
    floor = settings.judges.agreement_floor
    min_pairs = settings.judges.agreement_min_pairs
    held = 0
    next_at = START_MS + STEP_MS

    def observe(now_ms: int) -> None:
        nonlocal held
        view = evaluator.snapshot().judges
        assert view is not None
        row = next((r for r in view.agreement if r.window == WINDOW), None)
        alpha, pairs = (None, 0) if row is None else (row.alpha, row.pairs)
        minute = (now_ms - START_MS) // 60_000
        run.points.append((minute, alpha, pairs))
        held = held + 1 if alert_holds(alpha, pairs, floor, min_pairs) else 0
        if held >= FOR_STEPS and run.fired_at_min is None:
            run.fired_at_min = minute

    for record in traffic(sim_config(seed, drift, hours), START_MS):
        while record.time_ms >= next_at:
            observe(next_at)
            next_at += STEP_MS
        pipeline.offer(record.raw, "sim")
    observe(next_at)
    pipeline.finish()
    # judged NDCG@10 over the 1h window, pooled over segments
    sums: dict[str, list[float]] = {}
    for row in evaluator.snapshot().ndcg:
        if row.window == WINDOW and row.k == 10 and row.relevance.startswith("judged"):
            acc = sums.setdefault(row.relevance, [0.0, 0.0])
            acc[0] += row.ndcg.total
            acc[1] += row.ndcg.n
    run.ndcg = {rel: acc[0] / acc[1] for rel, acc in sorted(sums.items()) if acc[1]}
    return run


def alpha_at(run: Run, minute: int) -> float | None:
    return next((a for m, a, _ in run.points if m == minute), None)


def summary(runs: list[Run], hours: float) -> dict[str, object]:
    fired = [r.fired_at_min for r in runs if r.fired_at_min is not None]
    by_hour = {}
    for h in range(1, int(hours) + 1):
        values = [a for r in runs if (a := alpha_at(r, 60 * h)) is not None]
        by_hour[f"{h}h"] = statistics.median(values) if values else None
    ndcg: dict[str, float] = {}
    for rel in sorted({k for r in runs for k in r.ndcg}):
        ndcg[rel] = statistics.median(r.ndcg[rel] for r in runs if rel in r.ndcg)
    return {
        "runs": len(runs),
        "fired": len(fired),
        "median_first_firing_min": statistics.median(fired) if fired else None,
        "min_alpha": min((a for r in runs for _, a, _ in r.points if a is not None), default=None),
        "median_alpha_1h_window_at": by_hour,
        "median_judged_ndcg10_1h_at_end": ndcg,
    }


def main() -> None:
    from _common import benchmark_parser, write_json

    parser = benchmark_parser(__doc__.splitlines()[0] if __doc__ else "judges")
    parser.add_argument("--runs", type=int, default=20, help="seeded runs per arm")
    parser.add_argument("--hours", type=float, default=4.0, help="event time per run")
    parser.add_argument("--drift", type=float, default=0.5, help="grade points per hour")
    args = parser.parse_args()
    result: dict[str, object] = {}
    for name, drift in (("drift", args.drift), ("no_drift", 0.0)):
        runs = [simulate(seed, drift, args.hours) for seed in range(args.runs)]
        result[name] = s = summary(runs, args.hours)
        print(f"{name} (llm_drift {drift}/h, {args.runs} runs of {args.hours} h):")
        for key, value in s.items():
            print(f"  {key}: {value}")
    drift, quiet = result["drift"], result["no_drift"]
    assert isinstance(drift, dict) and isinstance(quiet, dict)
    print(
        f"guarantee: every drifting run fires ({drift['fired']}/{drift['runs']}), "
        f"no run without drift does ({quiet['fired']}/{quiet['runs']})"
    )
    write_json(args.json, result)


if __name__ == "__main__":
    main()
