"""interleaving.sensitivity: impressions until a 3 % NDCG@10 regression of the treatment is
detected, team-draft interleaving against an A/B split, on the same simulated population.

    .venv/bin/python benchmarks/bench_interleaving.py [--quick] [--seeds 20] [--json FILE]

The population and click model are the simulator's defaults (``streameval.sim.SimConfig``):
1 000 queries with Zipf(1.0) popularity (a heavy head: the top 10 queries are a third of the
traffic), 25 candidates per query with hidden grades 0..3, a page of 10, a position-based click
model (rank i examined with probability 1/i; P(click | grade) = 0.02, 0.15, 0.4, 0.7), dwell
and purchases. Control and treatment are equally good rankers until the regression, which starts
with the traffic: each result of the treatment's own ranking is replaced, with probability 3 %,
by an off-topic document, so the treatment's expected judged NDCG@10 drops by 3 % (the
simulator's ``regression_size``). For each seed:

* **interleaving**: every request gets one team-draft page of both rankings (``SimConfig(
  interleaving=True)``), through the real pipeline; the figure is the number of impressions up
  to the end of the bucket at which the ``interleaving`` detector first alarms that the
  treatment is worse (``first_alarm`` of ``replay --output json``; alpha = 0.05 over the whole
  run, mixture scale 0.03: tuned to a preference of about 3 %).
* **A/B split**: half the requests served by each arm, through the real pipeline, each list's
  NDCG@10 taken as it is scored; the test is one-sided Welch's z on the difference of mean
  NDCG@10 (treatment below control) over consecutive, non-overlapping windows of W impressions,
  p < 0.05 in a window = detected at that window's end. W is the grid value with the smallest
  median (the most favourable to the A/B test). Judged NDCG@10 (the simulator judges half of
  every query's candidates at the start, exactly the NDCG the regression is defined on) is the
  baseline; implicit NDCG@10 (the same click model) is reported beside it.

Medians over the seeds; a run that did not detect within its cap counts as the cap (so a median
at the cap means "more than the cap"). Mind the asymmetry: the interleaving detector's 5 % bounds
the chance of *ever* a false alarm; the per-window test has 5 % *per window*.
"""

from __future__ import annotations

import bisect
import math
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from _common import Result, Target, suite_parser, write_json

from streameval.config import EvaluationSettings
from streameval.pipeline import Pipeline
from streameval.scored import ScoredList
from streameval.sim import SimConfig, traffic

NAME = "interleaving.sensitivity"
TARGET = 0.1  # interleaving needs at most a tenth of the A/B impressions
START_MS = 1_700_000_000_000
REGRESSION = 0.03
K = 10
ALPHA = 0.05
MIXTURE_SCALE = 0.03
_Z95 = 1.6448536269514722  # one-sided p < 0.05


def sim_config(seed: int, *, interleaving: bool) -> SimConfig:
    return SimConfig(
        seed=seed,
        interleaving=interleaving,
        regression_at_ms=0,
        regression_size=REGRESSION,
        judgment_rate=0.0,
    )


def interleaving_run(seed: int, cap: int) -> tuple[int, bool]:
    """(impressions until the treatment's alarm, or ``cap``; whether it alarmed)."""
    config = sim_config(seed, interleaving=True)
    settings = EvaluationSettings(
        interleaving={"alpha": ALPHA, "mixture_scale": MIXTURE_SCALE}, ks=(K,)
    )
    pipeline = Pipeline(settings)
    stamps: list[int] = []
    check_at = START_MS
    treatment, control = config.treatment.name, config.control.name
    for record in traffic(config, START_MS):
        pipeline.offer(record.raw)
        if record.kind != "impression":
            continue
        stamps.append(record.time_ms)
        if record.time_ms >= check_at or len(stamps) >= cap:
            check_at = record.time_ms + 60_000
            for test in pipeline.snapshot().interleaving_tests:
                if (test.ranker, test.opponent) == (treatment, control) and test.first_alarm_ms:
                    end = test.first_alarm_ms + settings.bucket  # the alarm's bucket, whole
                    return bisect.bisect_left(stamps, end), True
            if len(stamps) >= cap:
                return cap, False
    return cap, False


@dataclass
class ArmLists:
    """Per scored list of the A/B run, in impression order: its arm and NDCG@10 per source."""

    treatment: list[bool]
    judged: list[float | None]
    implicit: list[float | None]


def ab_run(seed: int, impressions: int) -> ArmLists:
    config = sim_config(seed, interleaving=False)
    lists: list[ScoredList] = []
    pipeline = Pipeline(EvaluationSettings(ks=(K,)), on_scored=lists.append)
    n = 0
    for record in traffic(config, START_MS):
        if record.kind == "impression":
            n += 1
            if n > impressions:
                break
        pipeline.offer(record.raw)
    pipeline.finish()
    lists.sort(key=lambda s: s.timestamp)
    out = ArmLists([], [], [])
    for scored in lists:
        out.treatment.append(scored.labels.get("arm") == "treatment")
        by_source = {s.relevance: s.ndcg[0] for s in scored.sources}
        out.judged.append(by_source["judged"])
        out.implicit.append(by_source["implicit"])
    return out


def _moments(values: Sequence[float]) -> tuple[int, float, float]:
    n = len(values)
    if n < 2:
        return n, 0.0, 0.0
    return n, statistics.fmean(values), statistics.variance(values)


def first_detection(treatment: Sequence[bool], ndcg: Sequence[float | None], width: int) -> int:
    """Impressions (lists) until the first window of ``width`` lists whose one-sided Welch z
    says treatment < control at p < 0.05; ``len(ndcg)`` (the cap) when none does."""
    for start in range(0, len(ndcg) - width + 1, width):
        t = [v for a, v in zip(treatment[start : start + width], ndcg[start : start + width],
                               strict=True) if a and v is not None]  # fmt: skip
        c = [v for a, v in zip(treatment[start : start + width], ndcg[start : start + width],
                               strict=True) if not a and v is not None]  # fmt: skip
        nt, mt, vt = _moments(t)
        nc, mc, vc = _moments(c)
        if nt < 2 or nc < 2:
            continue
        se = math.sqrt(vt / nt + vc / nc)
        if se > 0 and (mc - mt) / se > _Z95:
            return start + width
    return len(ndcg)


def main() -> int:
    parser = suite_parser(__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    seeds = range(args.seeds)
    il_cap = 150_000 if args.quick else 400_000
    ab_cap = 20_000 if args.quick else 60_000
    widths = (500, 1_000, 2_000, 5_000) if args.quick else (500, 1_000, 2_000, 5_000, 10_000)

    started = time.monotonic()
    il: list[int] = []
    il_alarmed = 0
    for seed in seeds:
        n, alarmed = interleaving_run(seed, il_cap)
        il.append(n)
        il_alarmed += alarmed
        print(f"seed {seed}: interleaving alarm after {n} impressions ({alarmed=})", flush=True)
    ab_judged: dict[int, list[int]] = {w: [] for w in widths}
    ab_implicit: dict[int, list[int]] = {w: [] for w in widths}
    for seed in seeds:
        arms = ab_run(seed, ab_cap)
        for w in widths:
            ab_judged[w].append(first_detection(arms.treatment, arms.judged, w))
            ab_implicit[w].append(first_detection(arms.treatment, arms.implicit, w))
        print(
            f"seed {seed}: A/B judged "
            + ", ".join(f"W={w}: {ab_judged[w][-1]}" for w in widths)
            + " | implicit "
            + ", ".join(f"W={w}: {ab_implicit[w][-1]}" for w in widths),
            flush=True,
        )
    best_w = min(widths, key=lambda w: statistics.median(ab_judged[w]))
    best_wi = min(widths, key=lambda w: statistics.median(ab_implicit[w]))
    il_median = statistics.median(il)
    ab_median = statistics.median(ab_judged[best_w])
    ab_implicit_median = statistics.median(ab_implicit[best_wi])
    print(
        f"\n{len(seeds)} seeds, {time.monotonic() - started:.0f} s\n"
        f"interleaving (team-draft, detector alpha {ALPHA}, scale {MIXTURE_SCALE}): median "
        f"{il_median:.0f} impressions, alarmed in {il_alarmed}/{len(seeds)} (cap {il_cap})\n"
        f"A/B judged NDCG@{K}, per-window Welch z p<0.05, best W={best_w}: median "
        f"{ab_median:.0f} impressions (cap {ab_cap})\n"
        f"A/B implicit NDCG@{K}, best W={best_wi}: median {ab_implicit_median:.0f} (cap {ab_cap})\n"
        f"interleaving / A/B judged = {il_median / ab_median:.2f} (target <= {TARGET})"
    )
    result = Result(
        NAME,
        il_median,
        "impressions",
        baseline=ab_median,
        baseline_name=f"A/B judged NDCG@{K} (window {best_w})",
        target=Target(TARGET, at_most=True),
        note=f"median over {len(seeds)} seeds, {REGRESSION:.0%} regression; interleaving alarmed "
        f"in {il_alarmed}/{len(seeds)} (cap {il_cap}); A/B implicit NDCG@{K}: median "
        f"{ab_implicit_median:.0f} (cap {ab_cap})",
    )
    write_json(
        args.json,
        {
            "benchmark": NAME,
            "results": [result.as_dict()],
            "interleaving": il,
            "ab_judged": {str(w): v for w, v in ab_judged.items()},
            "ab_implicit": {str(w): v for w, v in ab_implicit.items()},
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
