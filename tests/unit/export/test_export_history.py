"""History: a bounded ring that only moves forward with the evaluation horizon."""

from __future__ import annotations

import json

import pytest

from streameval.errors import StreamevalError
from streameval.export.history import History, SeriesValue
from streameval.snapshot import Moments, NdcgRow, Snapshot


def snap(horizon_ms: int | None, *rows: NdcgRow) -> Snapshot:
    return Snapshot(
        segment_labels=("arm",), windows=("5m",), ks=(10,), ndcg=rows, horizon_ms=horizon_ms
    )


def row(arm: str, moments: Moments, k: int = 10) -> NdcgRow:
    return NdcgRow("5m", "implicit", (arm,), k, moments)


def test_no_horizon_is_not_recorded() -> None:
    history = History()
    assert history.record(snap(None, row("a", Moments(1, 0.5, 0.25)))) is False
    assert len(history) == 0


def test_appends_only_when_horizon_advances() -> None:
    history = History()
    assert history.record(snap(1000)) is True
    assert history.record(snap(1000)) is False  # same horizon: same figures
    assert history.record(snap(900)) is False  # older horizon (e.g. another instance's view)
    assert history.record(snap(1010)) is True
    assert [p.horizon_ms for p in history.points()] == [1000, 1010]


def test_bounded_keeps_the_newest_points() -> None:
    history = History(max_points=3)
    for horizon in range(1, 6):
        history.record(snap(horizon * 10))
    assert [p.horizon_ms for p in history.points()] == [30, 40, 50]
    assert len(history) == 3


def test_max_points_must_be_positive() -> None:
    with pytest.raises(StreamevalError, match="max_points"):
        History(max_points=0)


def test_point_values_are_mean_stderr_n() -> None:
    history = History()
    # values 0.2 and 0.6: mean 0.4; sample variance 0.08; stderr sqrt(0.08 / 2) = 0.2
    history.record(snap(5, row("a", Moments(2, 0.8, 0.04 + 0.36))))
    (point,) = history.points()
    value = point.values["5m", "implicit", ("a",), 10]
    assert value.mean == pytest.approx(0.4)
    assert value.stderr == pytest.approx(0.2)
    assert value.n == 2


def test_non_finite_values_become_none() -> None:
    history = History()
    history.record(snap(5, row("a", Moments(1, float("nan"), float("nan")))))
    (point,) = history.points()
    assert point.values["5m", "implicit", ("a",), 10] == SeriesValue(None, None, 1)


def test_to_json_aligns_series_on_the_horizon_axis() -> None:
    history = History(max_points=10)
    history.record(snap(100, row("a", Moments(1, 0.5, 0.25))))
    history.record(snap(200, row("a", Moments(2, 1.0, 0.5)), row("b", Moments(1, 0.9, 0.81))))
    data = history.to_json()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["max_points"] == 10
    assert data["horizons_ms"] == [100, 200]
    a, b = data["series"]
    assert (a["segment"], a["window"], a["relevance"], a["k"]) == (["a"], "5m", "implicit", 10)
    assert a["mean"] == [0.5, 0.5]
    assert a["stderr"] == [None, 0.0]  # 0.5, 0.5: zero spread
    assert a["n"] == [1, 2]
    assert b["segment"] == ["b"]
    assert b["mean"] == [None, 0.9]  # absent at the first horizon
    assert b["n"] == [0, 1]


def test_to_json_rounds_to_five_decimals() -> None:
    history = History()
    history.record(snap(1, row("a", Moments(3, 1.0, 0.5))))  # mean 1/3
    (series,) = history.to_json()["series"]
    assert series["mean"] == [0.33333]
