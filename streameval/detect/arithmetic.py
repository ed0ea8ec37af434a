"""The detectors' arithmetic: pure functions of numbers, no state, no clock.

A detector turns each completed bucket of one series into one Gaussian observation ``d`` (the
bucket's mean shift of NDCG@k against its reference, see :mod:`streameval.detect.detectors`) with
variance ``v``, and runs Page's one-sided CUSUM (Page 1954) on the log-likelihood ratio of
"shifted down by ``delta``" against "not shifted"::

    llr(d) = log N(d; -delta, v) - log N(d; 0, v) = -delta * (d + delta / 2) / v
    W_b    = min(cap, max(0, W_{b-1} + llr(d_b)))        alarm while W_b >= h

With exact likelihood-ratio increments, Lorden (1971) bounds the average run length to a false
alarm below: ``E_inf[N] >= exp(h)`` steps (here buckets). So ``h = log(target / bucket)`` gives at
least one ``target`` between false alarms per series (:func:`threshold`). The cap (which the alarm
never needs: it holds from ``h`` on) bounds how long an alarm outlives a fixed regression.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

_LN2 = math.log(2.0)


def threshold(false_alarm_every_ms: int, bucket_ms: int) -> float:
    """``h`` with ``exp(h)`` buckets = one false alarm per ``false_alarm_every_ms`` (Lorden's
    bound for a CUSUM stepping once a bucket)."""
    if bucket_ms <= 0 or false_alarm_every_ms <= bucket_ms:
        raise ValueError("the false-alarm period must be longer than one bucket")
    return math.log(false_alarm_every_ms / bucket_ms)


def decay(elapsed_ms: int, half_life_ms: int) -> float:
    """The weight left to an observation ``elapsed_ms`` old under exponential forgetting."""
    if elapsed_ms <= 0:
        return 1.0
    return math.exp(-_LN2 * elapsed_ms / half_life_ms)


def gaussian_llr(d: float, v: float, delta: float) -> float:
    """log of N(d; -delta, v) / N(d; 0, v): the evidence of one observation for a drop of
    ``delta`` (> 0) over no change."""
    return -delta * (d + delta / 2.0) / v


def cusum_step(w: float, llr: float, cap: float) -> float:
    """One step of the one-sided CUSUM, held within [0, cap]."""
    w += llr
    if w < 0.0:
        return 0.0
    return cap if w > cap else w


def precision_mean(strata: Iterable[tuple[int, float, float]]) -> tuple[float, float] | None:
    """The precision-weighted mean of stratum means and its variance.

    ``strata``: per stratum (lists n, sum of residuals s, per-list residual variance var). Each
    stratum mean s/n has variance var/n; weighting by n/var gives the minimum-variance unbiased
    combination: ``d = sum(s / var) / sum(n / var)``, ``v = 1 / sum(n / var)``. None when no
    stratum has lists (or a usable variance).
    """
    precision = 0.0
    weighted = 0.0
    for n, s, var in strata:
        if n <= 0 or var <= 0.0:
            continue
        precision += n / var
        weighted += s / var
    if precision <= 0.0:
        return None
    return weighted / precision, 1.0 / precision


def residual_sums(
    count: int, total: float, total_sq: float, reference: float
) -> tuple[float, float]:
    """Sum and sum of squares of ``x - reference`` over a group of values given by their
    count, sum and sum of squares (all lists of one query in one bucket share a reference)."""
    s = total - count * reference
    ss = total_sq - 2.0 * reference * total + count * reference * reference
    return s, max(ss, 0.0)
