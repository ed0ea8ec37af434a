"""The propensity estimate from harvested pair sums: weighted least squares on the log ratios,
against values worked out by hand or by numpy's least squares (an independent solver)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from streameval.propensity import estimate


def _pairs(size: int, values: dict[tuple[int, int], float]) -> list[list[float]]:
    pairs = [[0.0] * size for _ in range(size)]
    for (k, j), v in values.items():
        pairs[k][j] = v
    return pairs


def test_two_ranks_ratio_and_delta_method_stderr() -> None:
    # rank 2 harvested 25 clicks against rank 1's 50: p2 = 25/50 = 0.5; var(log p2) =
    # 1/50 + 1/25 = 0.06, so stderr = 0.5 * sqrt(0.06)
    est = estimate(_pairs(2, {(0, 1): 50.0, (1, 0): 25.0}), min_clicks=1)
    assert est.propensity == (1.0, pytest.approx(0.5))
    assert est.stderr[0] == 0.0
    assert est.stderr[1] == pytest.approx(0.5 * math.sqrt(0.06))
    assert est.harvested == (50.0, 25.0)
    assert est.complete


def test_consistent_ratios_are_recovered_exactly_whatever_the_weights() -> None:
    # p = (1, 1/2, 1/3): every pair's ratio agrees, so least squares fits them all exactly
    pairs = _pairs(3, {(0, 1): 40, (1, 0): 20, (0, 2): 30, (2, 0): 10, (1, 2): 30, (2, 1): 20})
    est = estimate(pairs, min_clicks=1)
    assert est.propensity == (1.0, pytest.approx(0.5), pytest.approx(1 / 3))


def test_inconsistent_ratios_match_numpy_weighted_least_squares() -> None:
    values = {(0, 1): 80, (1, 0): 30, (0, 2): 60, (2, 0): 25, (1, 2): 45, (2, 1): 50,
              (0, 3): 20, (3, 0): 4, (2, 3): 15, (3, 2): 9}  # fmt: skip
    est = estimate(_pairs(4, values), min_clicks=1)
    # independently: rows x_k - x_j = log(T_kj / T_jk), weight 1/(1/T_kj + 1/T_jk), x_0 = 0
    rows, ys, ws = [], [], []
    for (k, j), a in values.items():
        if k < j:
            b = values[j, k]
            row = np.zeros(3)
            if k:
                row[k - 1] += 1
            row[j - 1] -= 1
            rows.append(row)
            ys.append(math.log(a / b))
            ws.append(1 / (1 / a + 1 / b))
    x_mat, y, w = np.array(rows), np.array(ys), np.array(ws)
    sw = np.sqrt(w)
    fit = np.linalg.lstsq(x_mat * sw[:, None], y * sw, rcond=None)[0]
    cov = np.linalg.inv(x_mat.T @ (x_mat * w[:, None]))
    for k in range(1, 4):
        assert est.propensity[k] == pytest.approx(math.exp(fit[k - 1]), rel=1e-12)
        assert est.stderr[k] == pytest.approx(
            math.exp(fit[k - 1]) * math.sqrt(cov[k - 1, k - 1]), rel=1e-9
        )


def test_a_rank_below_min_clicks_or_not_connected_is_not_estimated() -> None:
    # rank 3 harvested 2 against rank 1 and 20 against rank 4, but its pair with rank 1 is all
    # that links it: with min_clicks 25 it is out, and rank 4 (20) too
    values = {(0, 1): 50, (1, 0): 25, (0, 2): 3, (2, 0): 2, (2, 3): 20, (3, 2): 20}
    est = estimate(_pairs(4, values), min_clicks=25)
    assert est.propensity[:2] == (1.0, pytest.approx(0.5))
    assert est.propensity[2:] == (None, None)
    assert est.stderr[2:] == (None, None)
    assert est.harvested == (53, 25, 22, 20)
    assert not est.complete


def test_nothing_harvested_estimates_nothing() -> None:
    est = estimate(_pairs(3, {}), min_clicks=1)
    assert est.propensity == (None, None, None)
    assert est.harvested == (0.0, 0.0, 0.0)
    assert not est.complete


def test_a_rank_reached_only_through_another_rank_is_estimated() -> None:
    # rank 3 is never shown against rank 1, only against rank 2: p3 = p2 * 10/20
    values = {(0, 1): 50, (1, 0): 25, (1, 2): 20, (2, 1): 10}
    est = estimate(_pairs(3, values), min_clicks=1)
    assert est.propensity == (1.0, pytest.approx(0.5), pytest.approx(0.25))
    # var(log p3) = var(log p2) + var(log p3/p2) (a chain): (1/50 + 1/25) + (1/20 + 1/10)
    assert est.stderr[2] == pytest.approx(0.25 * math.sqrt(0.06 + 0.15))


def test_given_groups_the_stderr_is_the_delete_a_group_jackknifes() -> None:
    # three groups of queries; each leave-one-out fit has two ranks, so p2 = T21 / T12 of the rest
    groups = [
        _pairs(2, {(0, 1): 20.0, (1, 0): 12.0}),
        _pairs(2, {(0, 1): 30.0, (1, 0): 14.0}),
        _pairs(2, {(0, 1): 10.0, (1, 0): 4.0}),
    ]
    total = _pairs(2, {(0, 1): 60.0, (1, 0): 30.0})
    est = estimate(total, min_clicks=1, groups=groups)
    assert est.propensity == (1.0, pytest.approx(0.5))
    leave_out = np.array([(30 - 12) / (60 - 20), (30 - 14) / (60 - 30), (30 - 4) / (60 - 10)])
    expected = math.sqrt(2 / 3 * ((leave_out - leave_out.mean()) ** 2).sum())
    assert est.stderr[1] == pytest.approx(expected)
    assert est.stderr[0] == 0.0


def test_a_rank_a_leave_one_out_fit_misses_keeps_the_delta_method_error() -> None:
    # every click harvested at rank 2 is in the first group: without it, rank 2 has no pair
    groups = [_pairs(2, {(0, 1): 50.0, (1, 0): 25.0}), _pairs(2, {})]
    est = estimate(_pairs(2, {(0, 1): 50.0, (1, 0): 25.0}), min_clicks=1, groups=groups)
    assert est.stderr[1] == pytest.approx(0.5 * math.sqrt(0.06))
