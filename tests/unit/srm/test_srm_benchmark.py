"""A fast version of benchmarks/srm.py (docs/srm.md's figures), so that it cannot rot: A/A runs
stay within the stated α at every list, a lossy arm alarms, and the real consumer at bucket
granularity alarms where the per-list test does (at most a few buckets later)."""

from __future__ import annotations

import math

import numpy as np

from benchmarks.srm import aa, lists_to_alarm, log_bf_path, loss_draws, through_consumer
from streameval.srm.arithmetic import threshold


def test_aa_runs_alarm_at_most_at_alpha() -> None:
    peaks = aa(runs=300, lists=20_000, concentration=1000.0, seed=5)
    for alpha in (0.2, 0.1, 0.05):
        share = float(np.mean(peaks >= threshold(alpha)))
        assert share <= alpha, (alpha, share)
    assert float(np.mean(peaks >= threshold(0.2))) > 0.02  # not trivially quiet


def test_a_lossy_arm_alarms_and_the_consumer_agrees_with_the_per_list_test() -> None:
    bar = threshold(0.001)
    stops = []
    for run in range(12):
        draws = loss_draws(run, 400_000, 0.05, seed=31)
        stops.append(lists_to_alarm(log_bf_path(draws, 1000.0), bar))
    assert all(not math.isinf(s) for s in stops)
    assert 10_000 < float(np.median(stops)) < 200_000
    for run in range(2):
        draws = loss_draws(run, 400_000, 0.05, seed=31)
        got, row = through_consumer(draws, 0.001, 1000.0)
        assert row is not None and row.alarm
        # looked at once a bucket (2,000 lists): at the end of the bucket it crossed in, or a
        # few buckets later when the statistic dipped back by that bucket's end
        assert stops[run] <= got <= stops[run] + 5 * 2_000, (stops[run], got)
