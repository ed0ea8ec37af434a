"""The window panels compare each arm with the control arm of ``evaluation.control`` (pooled),
by the StreamevalNdcgBelowControl alert's rule, decided in the JSON the page reads; not with
the best arm (which painted the control red whenever a treatment won)."""

from __future__ import annotations

import math
import re

import pytest

from streameval.config import EvaluationSettings
from streameval.export.compare import CI_FACTOR, MIN_EFFECT, MIN_LISTS
from streameval.export.history import History
from streameval.export.status import status_payload
from streameval.snapshot import Moments, NdcgRow, Snapshot
from tests.deploy.deployfiles import alert_rules


def moments(n: int, mean: float, sd: float) -> Moments:
    """n values of this mean and sample standard deviation (sum of squares (n-1)·sd² + n·mean²)."""
    return Moments(n, n * mean, (n - 1) * sd * sd + n * mean * mean)


def snap(*arms: tuple[tuple[str, str], Moments], window: str = "5m") -> Snapshot:
    rows = tuple(NdcgRow(window, "judged", segment, 10, m) for segment, m in arms)
    return Snapshot(("ranker", "arm"), (window,), (10,), ndcg=rows, horizon_ms=60_000)


def by_name(payload: dict[str, object]) -> dict[str, dict[str, object]]:
    return {row["name"]: row for row in payload["ndcg"]}  # type: ignore[attr-defined,index]


CONTROL = ("bm25", "control")
TREATMENT = ("ltr", "treatment")


def test_a_winning_treatment_does_not_paint_the_control_red() -> None:
    # control 0.60, treatment 0.70, each 400 lists of sd 0.3: se 0.3 / 20 = 0.015 each;
    # delta +0.10, half-width 1.96 · sqrt(2) · 0.015 = 0.041578 -> above (0.10 > 1.5 · 0.0416)
    payload = status_payload(
        snap((CONTROL, moments(400, 0.60, 0.3)), (TREATMENT, moments(400, 0.70, 0.3))),
        History(),
    )
    rows = by_name(payload)
    control, treatment = rows["bm25 · control"], rows["ltr · treatment"]
    assert (control["role"], control["verdict"], control["delta"]) == ("control", "control", None)
    assert treatment["verdict"] == "above"
    assert treatment["delta"] == pytest.approx(0.10)
    assert treatment["delta_ci95"] == pytest.approx(1.96 * math.sqrt(2) * 0.015)
    (panel,) = payload["panels"]
    assert panel["flag"] is False and panel["flag_text"] == ""
    assert panel["control"]["n"] == 400 and panel["control"]["mean"] == pytest.approx(0.60)


def test_a_losing_treatment_is_flagged_below_control() -> None:
    payload = status_payload(
        snap((CONTROL, moments(400, 0.60, 0.3)), (TREATMENT, moments(400, 0.50, 0.3))),
        History(),
    )
    treatment = by_name(payload)["ltr · treatment"]
    assert treatment["verdict"] == "below"
    assert treatment["delta"] == pytest.approx(-0.10)
    (panel,) = payload["panels"]
    assert panel["flag"] is True
    assert panel["flag_text"] == "▼ ltr · treatment below control"
    assert "arm = control" in panel["note"]


def test_the_control_is_every_matching_segment_pooled() -> None:
    # two control segments (two rankers in arm=control): 300 lists at 0.50 and 100 at 0.70,
    # pooled mean (150 + 70) / 400 = 0.55; the treatment at 0.60 is compared with 0.55
    payload = status_payload(
        snap(
            (("bm25", "control"), moments(300, 0.50, 0.3)),
            (("bm25-b", "control"), moments(100, 0.70, 0.3)),
            (TREATMENT, moments(400, 0.60, 0.3)),
        ),
        History(),
    )
    rows = by_name(payload)
    assert rows["bm25-b · control"]["role"] == rows["bm25 · control"]["role"] == "control"
    assert rows["ltr · treatment"]["delta"] == pytest.approx(0.60 - 0.55)
    (panel,) = payload["panels"]
    assert panel["control"]["n"] == 400
    assert panel["control"]["mean"] == pytest.approx(0.55)
    assert sorted(panel["control"]["segments"]) == [["bm25", "control"], ["bm25-b", "control"]]


def test_the_control_comes_from_the_settings() -> None:
    # evaluation.control = {ranker = "ltr"}: now the "treatment" arm is the reference
    evaluation = EvaluationSettings(control={"ranker": "ltr"})
    payload = status_payload(
        snap((CONTROL, moments(400, 0.50, 0.3)), (TREATMENT, moments(400, 0.60, 0.3))),
        History(),
        evaluation=evaluation,
    )
    rows = by_name(payload)
    assert rows["ltr · treatment"]["role"] == "control"
    assert rows["bm25 · control"]["verdict"] == "below"
    assert rows["bm25 · control"]["delta"] == pytest.approx(-0.10)
    assert "ranker = ltr" in payload["panels"][0]["note"]


def test_no_segment_matches_the_control_says_so_and_compares_nothing() -> None:
    payload = status_payload(
        snap((("bm25", "a"), moments(400, 0.60, 0.3)), (("ltr", "b"), moments(400, 0.30, 0.3))),
        History(),
    )
    assert {row["verdict"] for row in payload["ndcg"]} == {"no control"}
    assert all(row["delta"] is None for row in payload["ndcg"])
    (panel,) = payload["panels"]
    assert panel["control"] is None and panel["flag"] is False
    assert panel["note"] == (
        "No arm matches the control (arm = control) in this window: arms are not compared."
    )


def test_too_few_lists_is_not_judged() -> None:
    # a large drop, but 100 lists a side (< 200): not flagged, said so
    payload = status_payload(
        snap((CONTROL, moments(100, 0.60, 0.3)), (TREATMENT, moments(100, 0.40, 0.3))),
        History(),
    )
    treatment = by_name(payload)["ltr · treatment"]
    assert treatment["verdict"] == "too few lists"
    assert treatment["delta"] == pytest.approx(-0.20)
    assert payload["panels"][0]["flag"] is False


def test_a_difference_within_the_interval_is_level() -> None:
    # delta -0.05 against a half-width 0.0416: beyond 0.01 but not beyond 1.5 half-widths
    payload = status_payload(
        snap((CONTROL, moments(400, 0.60, 0.3)), (TREATMENT, moments(400, 0.55, 0.3))),
        History(),
    )
    assert by_name(payload)["ltr · treatment"]["verdict"] == "level"


def test_panels_are_per_window_relevance_and_k() -> None:
    rows = (
        NdcgRow("1m", "judged", CONTROL, 10, moments(400, 0.6, 0.3)),
        NdcgRow("1m", "judged", TREATMENT, 10, moments(400, 0.4, 0.3)),
        NdcgRow("1m", "implicit", TREATMENT, 10, moments(400, 0.4, 0.3)),  # no control here
    )
    payload = status_payload(Snapshot(("ranker", "arm"), ("1m",), (10,), ndcg=rows), History())
    flags = {(p["window"], p["relevance"], p["k"]): p["flag"] for p in payload["panels"]}
    assert flags == {("1m", "implicit", 10): False, ("1m", "judged", 10): True}


def test_the_rule_is_the_alerts() -> None:
    """The page's thresholds are StreamevalNdcgBelowControl's (deploy/prometheus/rules)."""
    (rule,) = [r for r in alert_rules() if r["alert"] == "StreamevalNdcgBelowControl"]
    expr = " ".join(rule["expr"].split())
    assert f"delta_vs_control < -{MIN_EFFECT}" in expr
    assert f"< -{CI_FACTOR} * segment:streameval_ndcg:delta_vs_control_ci95" in expr
    assert len(re.findall(rf">= {MIN_LISTS}\b", expr)) == 2
