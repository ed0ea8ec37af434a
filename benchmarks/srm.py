"""The sample-ratio test's figures (DESIGN §12, docs/srm.md): its false alarms in A/A runs beside
the stated α, and how many impressions it takes to alarm when 1 % of the treatment's impressions
are lost (a logging bug), over seeded runs.

    .venv/bin/python benchmarks/srm.py [--aa-runs 1000] [--loss-runs 200] [--lists 1000000]
        [--loss-lists 5000000] [--loss 0.01] [--alpha 0.001] [--concentration 1000]
        [--consumer-runs 5] [--seed 31] [--json FILE]

(a) **A/A**: ``--aa-runs`` runs of ``--lists`` lists each, every list falling in either arm of a
50/50 split with probability 1/2, the test looked at after *every* list (the most looks there
can be: the daemon looks once a bucket, a subsequence). Reported: the share of runs whose
statistic ever reached log(1/α), for the configured α and, from the same paths (each run's
maximum of the statistic), for α = 0.1, 0.05 and 0.01, where a thousand runs can tell a share
from its bound.

(b) **1 % loss**: a 50/50 split where 1 % of the treatment's impressions never reach the log, so
a list is the treatment's with probability 0.495 / 0.995; ``--loss-runs`` runs of up to
``--loss-lists`` lists, looked at after every list. Reported: the quartiles of the lists to the
alarm (a run that has not alarmed by its end counts as beyond it) and the share of runs that
alarm within ``--lists`` and within ``--loss-lists`` lists.

(c) the same as (b) for the first ``--consumer-runs`` seeds **through the real consumer**
(:class:`~streameval.srm.counter.SrmCounter` with its :class:`~streameval.srm.sequential.SrmTest`:
finalized lists in 10 s event-time buckets at 200 lists a second, the test looked at once a
bucket closes), beside the per-list figure of the same draws: the consumer alarms at the end of
the bucket in which the per-list test first crossed, or later when the statistic dips below
the threshold by the bucket's end.

The per-list statistic is computed in its product form (a Pólya urn: the n+1-th list, of arm i,
multiplies the Bayes factor by (a_i + x_i) / ((Σa + n) · p_i)), cumulated with numpy;
:func:`streameval.srm.arithmetic.log_bayes_factor` (the closed form the daemon uses) is checked
against it on every run's final counts.
"""

from __future__ import annotations

import argparse
import logging
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import write_json
from streameval.alarms import LOGGER
from streameval.snapshot import SrmRow
from streameval.srm.arithmetic import log_bayes_factor, threshold
from streameval.srm.counter import SrmCounter
from streameval.srm.sequential import SrmTest
from streameval.values import ScoredList

SHARES = (0.5, 0.5)
BUCKET_MS = 10_000
LISTS_PER_SECOND = 200
T0 = 1_700_000_000_000


def log_bf_path(treatment: np.ndarray, concentration: float) -> np.ndarray:
    """The log Bayes factor of a 50/50 split after each list (``treatment``: 1 where the list
    is the treatment's, 0 the control's), in the product form."""
    n = np.arange(treatment.size, dtype=np.float64)
    t_before = np.cumsum(treatment, dtype=np.float64) - treatment
    c_before = n - t_before
    a = concentration * 0.5
    num = np.where(treatment == 1, a + t_before, a + c_before)
    steps = np.log(num) - np.log(concentration + n) - math.log(0.5)
    return np.cumsum(steps)


def _check_closed_form(treatment: np.ndarray, path: np.ndarray, concentration: float) -> None:
    t = int(treatment.sum())
    closed = log_bayes_factor([treatment.size - t, t], SHARES, concentration)
    if not math.isclose(closed, float(path[-1]), rel_tol=1e-9, abs_tol=1e-6):
        raise SystemExit(f"closed form {closed} != product form {path[-1]}")


def aa(runs: int, lists: int, concentration: float, seed: int) -> np.ndarray:
    """Each A/A run's maximum of the statistic over its ``lists`` looks."""
    rng = np.random.default_rng(seed)
    peaks = np.empty(runs)
    for r in range(runs):
        treatment = (rng.random(lists) < 0.5).astype(np.int8)
        path = log_bf_path(treatment, concentration)
        peaks[r] = path.max()
        if r == 0:
            _check_closed_form(treatment, path, concentration)
    return peaks


def treatment_share(loss: float) -> float:
    """A list's chance of being the treatment's when ``loss`` of its impressions are lost."""
    return 0.5 * (1 - loss) / (1 - 0.5 * loss)


def loss_draws(run: int, lists: int, loss: float, seed: int) -> np.ndarray:
    """Run ``run``'s arms (1: treatment), the same draws for (b) and (c)."""
    rng = np.random.default_rng([seed, run])
    return (rng.random(lists) < treatment_share(loss)).astype(np.int8)


def lists_to_alarm(path: np.ndarray, bar: float) -> float:
    """The number of lists at the first look at or beyond ``bar`` (inf: none)."""
    hit = np.flatnonzero(path >= bar)
    return float(hit[0] + 1) if hit.size else math.inf


def through_consumer(
    treatment: np.ndarray, alpha: float, concentration: float
) -> tuple[float, SrmRow | None]:
    """The lists counted when the real consumer's test first alarms (inf: never), and its
    final row: the lists at 200 a second, in 10 s buckets, advanced once a second."""
    test = SrmTest(None, alpha, concentration)
    counter = SrmCounter(test, lambda segment: segment[0], BUCKET_MS)
    arms = (("control",), ("treatment",))
    template = ScoredList("r", "q", 0, {}, arms[0], (), False, None, False)
    step = 1000 // LISTS_PER_SECOND
    for i, is_treatment in enumerate(treatment.tolist()):
        ts = T0 + i * step
        counter.add(template._replace(timestamp=ts, segment=arms[is_treatment]))
        if not (i + 1) % LISTS_PER_SECOND:
            counter.advance(ts + 1)
        if test.first_alarm_ms is not None:
            break
    counter.advance(T0 + treatment.size * step + BUCKET_MS)
    if test.first_alarm_ms is None:
        return math.inf, test.row()
    return float(sum(test.counts.values())), test.row()


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[1], q[2]


def _finite(x: float) -> float | None:
    """``x``, or None for "never" (JSON has no infinity)."""
    return None if math.isinf(x) else x


def _int(x: float) -> str:
    return "never" if math.isinf(x) else f"{x:,.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--aa-runs", type=int, default=1000)
    parser.add_argument("--loss-runs", type=int, default=200)
    parser.add_argument("--lists", type=int, default=1_000_000)
    parser.add_argument("--loss-lists", type=int, default=5_000_000)
    parser.add_argument("--loss", type=float, default=0.01)
    parser.add_argument("--alpha", type=float, default=0.001)
    parser.add_argument("--concentration", type=float, default=1000.0)
    parser.add_argument("--consumer-runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    logging.getLogger(LOGGER).addHandler(logging.NullHandler())  # (c)'s alarm lines: not here
    out = run(args)
    write_json(args.json, out)
    return 0


def run(args: argparse.Namespace) -> dict[str, Any]:
    began = time.perf_counter()
    bar = threshold(args.alpha)
    peaks = aa(args.aa_runs, args.lists, args.concentration, args.seed)
    alphas = sorted({0.1, 0.05, 0.01, args.alpha}, reverse=True)
    false_alarms = {a: float(np.mean(peaks >= threshold(a))) for a in alphas}
    print(
        f"(a) A/A: {args.aa_runs} runs of {args.lists:,} lists, 50/50, looked at after every "
        f"list, concentration {args.concentration:g}"
    )
    for a in alphas:
        share = false_alarms[a]
        print(f"    alpha {a:<6g} share of runs that ever alarm {share:.4f}  (bound {a:g})")
    stops: list[float] = []
    for r in range(args.loss_runs):
        treatment = loss_draws(r, args.loss_lists, args.loss, args.seed)
        path = log_bf_path(treatment, args.concentration)
        if r == 0:
            _check_closed_form(treatment, path, args.concentration)
        stops.append(lists_to_alarm(path, bar))
    q1, median, q3 = quartiles(stops)
    within = float(np.mean([s <= args.lists for s in stops]))
    within_all = float(np.mean([not math.isinf(s) for s in stops]))
    print(
        f"(b) {args.loss:.0%} of the treatment's impressions lost: {args.loss_runs} runs of up to "
        f"{args.loss_lists:,} lists, alpha {args.alpha:g}: lists to the alarm median "
        f"{_int(median)} (quartiles {_int(q1)}, {_int(q3)}); alarmed within {args.lists:,} "
        f"lists {within:.1%}, within {args.loss_lists:,} {within_all:.1%}"
    )
    consumer = []
    for r in range(min(args.consumer_runs, args.loss_runs)):
        treatment = loss_draws(r, args.loss_lists, args.loss, args.seed)
        got, _ = through_consumer(treatment, args.alpha, args.concentration)
        consumer.append({"run": r, "per_list": _finite(stops[r]), "consumer_buckets": _finite(got)})
        print(
            f"(c) run {r}: per list {_int(stops[r])}, through the consumer (10 s buckets of "
            f"2,000 lists) {_int(got)}"
        )
    print(f"    ({time.perf_counter() - began:.0f} s)", file=sys.stderr)
    return {
        "aa": {
            "runs": args.aa_runs,
            "lists": args.lists,
            "share_that_ever_alarm": {str(a): false_alarms[a] for a in alphas},
        },
        "loss": {
            "loss": args.loss,
            "runs": args.loss_runs,
            "max_lists": args.loss_lists,
            "lists_to_alarm_quartiles": [_finite(q) for q in (q1, median, q3)],
            "alarmed_within_lists": within,
            "alarmed_within_max_lists": within_all,
        },
        "consumer": consumer,
        "alpha": args.alpha,
        "concentration": args.concentration,
    }


if __name__ == "__main__":
    sys.exit(main())
