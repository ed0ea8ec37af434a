"""The detector tiles in words an engineer reads at a glance, decided in the JSON the page reads:
who, which metric, by how much against what, and since when (or cleared when), in event time;
the statistic against its threshold as detail."""

from __future__ import annotations

from dataclasses import replace

from streameval.export.history import History
from streameval.export.status import status_payload
from streameval.snapshot import DetectionRow, Snapshot

# (`date -u -d '2026-11-27 20:54:30' +%s` and so on)
FIRED_MS = 1_795_812_870_000  # 2026-11-27 20:54:30Z
CLEARED_MS = 1_795_813_330_000  # 2026-11-27 21:02:10Z
DAY_BEFORE_MS = 1_795_737_590_000  # 2026-11-26 23:59:50Z
HORIZON_MS = CLEARED_MS + 600_000

TREATMENT = ("ltr", "treatment")
CONTROL = ("bm25", "control")


def detection(**fields: object) -> DetectionRow:
    base = DetectionRow(
        detector="vs_control",
        relevance="judged",
        segment=TREATMENT,
        k=10,
        statistic=20.04,
        threshold=12.47,
        alarm=True,
        first_alarm_ms=FIRED_MS,
        shift=-0.0702,
        shift_stderr=0.0041,
        bucket_ms=HORIZON_MS - 10_000,
        alarm_since_ms=FIRED_MS,
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def payload_of(*rows: DetectionRow) -> list[dict[str, object]]:
    snapshot = Snapshot(("ranker", "arm"), ("5m",), (10,), horizon_ms=HORIZON_MS, detection=rows)
    return status_payload(snapshot, History())["detection"]  # type: ignore[no-any-return]


def test_an_alarm_in_words() -> None:
    (tile,) = payload_of(detection())
    assert tile["state"] == "alarm"
    assert tile["headline"] == "ltr · treatment judged NDCG@10 −0.070 ± 0.004 vs control"
    assert tile["status"] == "alarm since 20:54:30Z"
    assert tile["detail"] == ("vs_control CUSUM 20.0 / threshold 12.5 (alarm while at or above it)")
    assert tile["alarm_since_ms"] == FIRED_MS and tile["cleared_ms"] is None


def test_an_alarm_that_fired_and_cleared_is_shown_cleared_with_when() -> None:
    row = detection(statistic=3.2, alarm=False, cleared_ms=CLEARED_MS, shift=-0.009)
    (tile,) = payload_of(row)
    assert tile["state"] == "cleared"
    assert tile["status"] == "alarm cleared at 21:02:10Z (it held from 20:54:30Z)"
    assert tile["cleared_ms"] == CLEARED_MS
    assert tile["headline"] == "ltr · treatment judged NDCG@10 −0.009 ± 0.004 vs control"


def test_a_second_alarm_says_since_when_and_when_the_first_was() -> None:
    (tile,) = payload_of(detection(alarm_since_ms=CLEARED_MS))
    assert tile["status"] == "alarm since 21:02:10Z"
    assert tile["detail"].endswith(" · first alarm 20:54:30Z")


def test_an_event_time_of_another_day_carries_its_date() -> None:
    (tile,) = payload_of(detection(alarm_since_ms=DAY_BEFORE_MS, first_alarm_ms=DAY_BEFORE_MS))
    assert tile["status"] == "alarm since 2026-11-26 23:59:50Z"


def test_quiet_and_warming_up_series() -> None:
    quiet = detection(
        detector="vs_baseline",
        segment=CONTROL,
        statistic=0.0,
        alarm=False,
        first_alarm_ms=None,
        alarm_since_ms=None,
        shift=0.0123,
    )
    warming = replace(quiet, segment=TREATMENT, shift=None, shift_stderr=None, bucket_ms=None)
    first, second = payload_of(quiet, warming)
    assert first["state"] == "quiet" and first["status"] == "no alarm"
    assert first["headline"] == (
        "bm25 · control judged NDCG@10 +0.012 ± 0.004 vs its own recent past"
    )
    assert second["state"] == "warming up"
    assert second["headline"] == (
        "ltr · treatment judged NDCG@10 vs its own recent past: no estimate yet"
    )


def test_alarms_come_first_then_cleared_ones() -> None:
    quiet = detection(segment=CONTROL, statistic=0.0, alarm=False, first_alarm_ms=None)
    quiet = replace(quiet, alarm_since_ms=None)
    cleared = detection(relevance="implicit", alarm=False, statistic=1.0, cleared_ms=CLEARED_MS)
    fired = detection(k=5)
    states = [(t["state"], t["k"]) for t in payload_of(quiet, cleared, fired)]
    assert states == [("alarm", 5), ("cleared", 10), ("quiet", 10)]
