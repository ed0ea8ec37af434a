"""The sample-ratio test as the exporters show it: /metrics samples, ``replay --output json``'s
``"srm"`` object, and the status page's payload (a ``vs_control`` alarm during an SRM marked as
resting on a broken split), for a hand-built snapshot."""

from __future__ import annotations

import json
import math

from prometheus_client import CollectorRegistry

from streameval.export import names
from streameval.export.collector import SnapshotCollector, format_snapshot
from streameval.export.history import History
from streameval.export.status import status_page_html, status_payload
from streameval.report import snapshot_json, snapshot_table
from streameval.snapshot import DetectionRow, Snapshot, SrmArmRow, SrmRow

T = 1_700_000_000_000
SRM = SrmRow(
    (SrmArmRow("control", 5230, 0.523, 0.5), SrmArmRow("treatment", 4770, 0.477, 0.5)),
    12,
    10.5,
    math.log(1000),
    T,
    T - 600_000,
)


def _vs_control(alarm: bool) -> DetectionRow:
    return DetectionRow(
        "vs_control", "judged", ("ltr", "treatment"), 10, 20.0 if alarm else 1.0, 12.5, alarm,
        T if alarm else None, -0.07, 0.004, T, T if alarm else None, None,
    )  # fmt: skip


def _snapshot(srm: SrmRow | None, alarm: bool = True) -> Snapshot:
    return Snapshot(
        segment_labels=("ranker", "arm"),
        windows=("5m",),
        ks=(10,),
        horizon_ms=T + 60_000,
        detection=(_vs_control(alarm),),
        srm=srm,
    )


def test_metrics() -> None:
    registry = CollectorRegistry()
    registry.register(SnapshotCollector(lambda: _snapshot(SRM), version="x"))
    get = registry.get_sample_value
    assert get(names.SRM_STATISTIC) == 10.5
    assert get(names.SRM_THRESHOLD) == math.log(1000)
    assert get(names.SRM_ALARM) == 1.0
    assert get(names.SRM_FIRST_ALARM) == T / 1000
    assert get(names.SRM_EXCLUDED_LISTS) == 12
    assert get(names.SRM_LISTS, {"arm": "treatment"}) == 4770
    assert get(names.SRM_OBSERVED_SHARE, {"arm": "control"}) == 0.523
    assert get(names.SRM_EXPECTED_SHARE, {"arm": "control"}) == 0.5
    quiet = SrmRow(SRM.arms, 0, 1.0, math.log(1000), None, T)
    families = {f.name: f for f in format_snapshot(_snapshot(quiet), version="x")}
    assert families[names.SRM_ALARM].samples[0].value == 0.0
    assert names.SRM_FIRST_ALARM not in families  # absent until it has alarmed
    # off: no family at all
    assert not [f for f in format_snapshot(_snapshot(None), version="x") if "srm" in f.name]


def test_replay_json() -> None:
    out = snapshot_json(_snapshot(SRM))
    assert out["srm"] == {
        "arms": [
            {"arm": "control", "lists": 5230, "observed_share": 0.523, "expected_share": 0.5},
            {"arm": "treatment", "lists": 4770, "observed_share": 0.477, "expected_share": 0.5},
        ],
        "excluded": 12,
        "statistic": 10.5,
        "threshold": math.log(1000),
        "alarm": True,
        "first_alarm": T,
        "since": T - 600_000,
    }
    assert "srm" not in snapshot_json(_snapshot(None))


def test_status_payload_marks_a_vs_control_alarm_during_an_srm() -> None:
    payload = status_payload(_snapshot(SRM), History())
    json.dumps(payload, allow_nan=False)  # plain JSON
    (entry,) = payload["detection"]
    assert entry["broken_split"] is True
    srm = payload["srm"]
    assert srm["state"] == "alarm" and srm["status"].startswith("mismatch since ")
    assert srm["headline"] == (
        "sample ratio control 52.30 % (expected 50.00 %) · treatment 47.70 % (expected 50.00 %)"
    )
    assert "10,000 lists" in srm["detail"] and "12 without an arm" in srm["detail"]
    assert "broken split" in srm["broken_split_note"]
    # no SRM alarm, or no vs_control alarm: not marked
    quiet = SrmRow(SRM.arms, 0, 1.0, math.log(1000), None, T)
    assert status_payload(_snapshot(quiet), History())["detection"][0]["broken_split"] is False
    assert status_payload(_snapshot(SRM, False), History())["detection"][0]["broken_split"] is False
    assert status_payload(_snapshot(None), History())["srm"] is None


def test_the_page_shows_the_note_and_the_srm_line() -> None:
    page = status_page_html().decode()
    assert "broken_split" in page and "srmLine(data.srm)" in page


def test_replay_table_line() -> None:
    last = snapshot_table(_snapshot(SRM)).splitlines()[-1]
    assert last == (
        "sample ratio: MISMATCH: lists control 5230 (0.5230 vs 0.5000), treatment 4770 "
        "(0.4770 vs 0.5000); log Bayes factor 10.50 (threshold 6.91); 12 without an arm"
    )
    assert "sample ratio" not in snapshot_table(_snapshot(None))
