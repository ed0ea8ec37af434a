"""The interleaving test's mixture scale τ: decisive lists until the alarm, per preference and τ.

    .venv/bin/python benchmarks/interleaving_scale.py [--seeds 400] [--json FILE]

What the default of ``evaluation.interleaving.mixture_scale`` should be. The test
(``streameval/interleave/detector.py``, Robbins' normal mixture, Johari et al. 2022) alarms once
log Λ(S, n) ≥ log(1/α) for S = wins − losses over n decisive lists; τ sets the preference
|2·P(win) − 1| it is quickest for, and every τ keeps P(ever a false alarm) ≤ α. Simulated here at
the level of decisive lists: each is a win with probability (1 + μ)/2 for the opponent (the
ranker's preference is −μ), independent, ``--seeds`` seeded runs per (μ, τ), and log Λ evaluated
after every list with the project's own :func:`log_mixture_ratio_sum` (vectorized over the run
with the same closed form). Printed per row: the median lists to the alarm (runs that never
alarm within the horizon count as the horizon), the path approximation beside it (the n at which
log Λ(−μn, n) crosses the threshold), and, for μ = 0, the share of runs that alarmed within the
horizon beside α.

The preferences: 0.018 and 0.026 are what a 2 % and a 3 % drop of NDCG@10 give in the
simulator's click model (``bench_interleaving.py --strata 60000 --seeds 30``: −0.0264 on
decisive lists for 3 %); 0.05, 0.1 and 0.2 stand for larger regressions. Decisive lists per
query are not identically distributed in a real population (heavy-head queries differ in how
much the rankers disagree), but the test sees only their sum, whose drift is μ per list and
whose increments stay in [−1, 1]: what the guarantee and the delay depend on.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

import numpy as np
from scipy.special import log_ndtr

from streameval.interleave.detector import log_mixture_ratio_sum

ALPHA = 0.01
PREFERENCES = (0.0, 0.018, 0.026, 0.05, 0.1, 0.2)
SCALES = (0.026, 0.03, 0.05, 0.1)
#: lists simulated per run under the null
NULL_HORIZON = 200_000


def log_lambda(s: np.ndarray, n: np.ndarray, scale: float) -> np.ndarray:
    """:func:`log_mixture_ratio_sum` over arrays (checked against it in :func:`main`)."""
    a = n + 1.0 / (scale * scale)
    root = np.sqrt(a)
    return math.log(2.0) - np.log(scale * root) + s * s / (2.0 * a) + log_ndtr(-s / root)


def path_lists(mu: float, scale: float, threshold: float) -> int | None:
    """The n at which the expected path S = −μn crosses the threshold (None for μ = 0)."""
    if mu <= 0:
        return None
    n = 1
    while log_mixture_ratio_sum(-mu * n, n, scale) < threshold:
        n += max(1, n // 1000)
    return n


def lists_to_alarm(
    mu: float, scale: float, threshold: float, seeds: int, horizon: int
) -> list[int]:
    """Per seeded run: the decisive lists until log Λ first reached the threshold (``horizon``
    when it did not within it)."""
    out = []
    n = np.arange(1, horizon + 1, dtype=np.float64)
    for seed in range(seeds):
        rng = np.random.default_rng([seed, round(mu * 1e6)])
        steps = np.where(rng.random(horizon) < (1.0 + mu) / 2.0, -1.0, 1.0)  # a loss: −1
        s = np.cumsum(steps)
        crossed = np.flatnonzero(log_lambda(s, n, scale) >= threshold)
        out.append(int(crossed[0]) + 1 if crossed.size else horizon)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=400)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    threshold = math.log(1.0 / ALPHA)
    # the vectorized form must be the detector's own arithmetic: checked, not assumed
    for s, n in ((-40.0, 1000), (3.0, 50)):
        vectorized = float(log_lambda(np.array([s]), np.array([float(n)]), 0.05)[0])
        if not math.isclose(vectorized, log_mixture_ratio_sum(s, n, 0.05), rel_tol=1e-9):
            raise SystemExit(f"log_lambda({s}, {n}) = {vectorized} is not the detector's value")
    rows = []
    print(f"alpha = {ALPHA}, {args.seeds} seeded runs per row")
    print(f"{'preference':>10} {'scale':>6} {'median lists':>13} {'path':>7} {'alarmed':>8}")
    for mu in PREFERENCES:
        for scale in SCALES:
            path = path_lists(mu, scale, threshold)
            horizon = NULL_HORIZON if path is None else 6 * path
            runs = lists_to_alarm(mu, scale, threshold, args.seeds, horizon)
            alarmed = sum(r < horizon for r in runs) / len(runs)
            median = statistics.median(runs)
            rows.append(
                {
                    "preference": -mu,
                    "scale": scale,
                    "median_lists": median,
                    "path_lists": path,
                    "alarmed": alarmed,
                    "horizon": horizon,
                }
            )
            shown = "-" if mu == 0 else f"{median:.0f}"
            print(
                f"{-mu:>10.3f} {scale:>6.3f} {shown:>13} {path or '-':>7} "
                f"{alarmed:>8.3f}" + (f"  (guarantee: <= {ALPHA})" if mu == 0 else "")
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
