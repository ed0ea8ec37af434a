"""status_payload, status_source and the self-contained status page."""

from __future__ import annotations

import json
import math
import re

import pytest

from streameval.export.history import History
from streameval.export.status import Z95, status_page_html, status_payload
from streameval.snapshot import EngagementRow, Intake, Moments, NdcgRow, Snapshot


def snapshot(horizon_ms: int = 60_000) -> Snapshot:
    return Snapshot(
        segment_labels=("ranker", "arm"),
        windows=("5m",),
        ks=(10,),
        ndcg=(
            # 0.2, 0.4, 0.6: mean 0.4, sample variance 0.04, stderr sqrt(0.04 / 3) = 0.11547
            NdcgRow(
                "5m",
                "judged",
                ("bm25", "control"),
                10,
                Moments(3, 1.2, 0.04 + 0.16 + 0.36),
                Moments(3, 1.5, 0.75),
            ),
            NdcgRow("5m", "implicit", ("ltr", "canary"), 10, Moments(1, 0.9, 0.81)),
            NdcgRow("5m", "implicit", ("ltr", "empty"), 10, Moments()),
        ),
        engagement=(EngagementRow("5m", ("bm25", "control"), 4, 1, Moments(4, 0.5, 0.25), 2),),
        lists_total={("judged", "scored"): 3},
        intake=Intake(
            records_read=9,
            accepted={"impression": 4, "click": 3},
            invalid={"bad_json": 1},
            late={"click": 1},
        ),
        open_lists=2,
        judgments=5,
        watermark_ms=horizon_ms + 300_000,
        horizon_ms=horizon_ms,
        consumer_lag={("search-clicks", 0): 7},
    )


def test_payload_band_is_mean_plus_minus_196_stderr() -> None:
    payload = status_payload(snapshot(), History())
    judged = next(r for r in payload["ndcg"] if r["relevance"] == "judged")
    stderr = math.sqrt(0.04 / 3)
    assert judged["mean"] == pytest.approx(0.4)
    assert judged["stderr"] == pytest.approx(stderr)
    assert judged["low"] == pytest.approx(0.4 - 1.96 * stderr)
    assert judged["high"] == pytest.approx(0.4 + 1.96 * stderr)
    assert judged["coverage"] == pytest.approx(0.5)
    assert judged["labels"] == {"ranker": "bm25", "arm": "control"}
    assert judged["n"] == 3
    assert Z95 == 1.96


def test_payload_undefined_figures_are_null() -> None:
    payload = status_payload(snapshot(), History())
    canary, empty = (r for r in payload["ndcg"] if r["relevance"] == "implicit")
    assert (canary["mean"], canary["stderr"], canary["low"], canary["high"]) == (
        0.9,
        None,
        None,
        None,
    )
    assert canary["coverage"] is None
    assert (empty["mean"], empty["n"]) == (None, 0)


def test_payload_progress_intake_and_engagement() -> None:
    payload = status_payload(snapshot(), History())
    assert json.loads(json.dumps(payload, allow_nan=False)) == payload
    assert (payload["horizon_ms"], payload["watermark_ms"]) == (60_000, 360_000)
    assert payload["intake"] == {
        "records_read": 9,
        "accepted": {"click": 3, "impression": 4},
        "invalid": {"bad_json": 1},
        "duplicate": {},
        "late": {"click": 1},
        "unmatched_clicks": 0,
    }
    assert payload["consumer_lag"] == [{"topic": "search-clicks", "partition": 0, "lag": 7}]
    assert payload["lists_total"] == [{"relevance": "judged", "outcome": "scored", "count": 3}]
    (engagement,) = payload["engagement"]
    assert engagement["click_through_rate"] == 0.25  # 1 / 4
    assert engagement["zero_click_rate"] == 0.5  # 2 / 4
    assert engagement["mrr"] == 0.125  # 0.5 / 4
    assert (payload["open_lists"], payload["judgments"], payload["ready"]) == (2, 5, True)


def test_page_is_self_contained() -> None:
    html = status_page_html().decode()
    assert html.startswith("<!doctype html>")
    assert "api/status" in html
    # Works offline: no external scripts, styles, fonts or images.
    assert not re.search(r"https?://", html)
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", html)
    assert "@import" not in html and "url(" not in html


def test_payload_shows_each_detector_and_when_it_fired() -> None:
    from dataclasses import replace

    from streameval.snapshot import DetectionRow

    rows = (
        DetectionRow(
            "vs_control",
            "judged",
            ("ltr", "treatment"),
            10,
            14.0,
            12.47,
            True,
            1_700_000_000_000,
            shift=-0.02,
            shift_stderr=0.004,
        ),
        DetectionRow(
            "vs_baseline", "judged", ("bm25", "control"), 10, math.inf, 12.47, False, None
        ),
    )
    payload = status_payload(replace(snapshot(), detection=rows), History())
    fired, quiet = payload["detection"]
    assert fired["alarm"] is True and fired["first_alarm_ms"] == 1_700_000_000_000
    assert fired["labels"] == {"ranker": "ltr", "arm": "treatment"}
    assert fired["shift"] == -0.02 and fired["shift_stderr"] == 0.004
    assert quiet["alarm"] is False and quiet["first_alarm_ms"] is None
    assert quiet["statistic"] is None  # not finite: null, never NaN/Infinity in JSON
    json.dumps(payload, allow_nan=False)
    # the page renders them (a tile per series, red with the time it fired)
    assert 'id="detectors"' in status_page_html().decode()
