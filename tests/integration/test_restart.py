"""Restarts after SIGKILL through the real broker (issue 15 item 1, DESIGN §6's state changelog).

The acceptance scenario: one topic holds impressions and clicks (2 partitions, keyed by
request_id), ~75 minutes of event time is in it before the daemon starts, the daemon reads it
all, commits a few times, and is SIGKILLed with nothing more arriving; a new process waits out
the dead member's session (the default 45 s) and takes over. Its windows must equal those the
killed one showed, and /readyz must not say 200 before they do — also when the records the
re-read would need were deleted meanwhile (what a topic's retention does to records whose
timestamps are old), and with either consumer client. With the state topic off, the daemon
re-reads the longest window as before."""

from __future__ import annotations

import json
import random
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition

from tests.integration.conftest import TopicFactory
from tests.integration.daemon_support import (
    CONSUMERS,
    T0,
    DaemonProcess,
    free_port,
    samples,
    value,
)

pytestmark = pytest.mark.kafka

PARTITIONS = 2
SPAN_MS = 75 * 60_000
IMPRESSIONS_PER_S = 3
ATTRIBUTION_MS = 300_000  # the defaults
LATENESS_MS = 10_000
BUCKET_MS = 10_000
#: what the comparison reads: every window figure, and the horizon they are reported at
WINDOW_FAMILIES = (
    "streameval_window_lists",
    "streameval_window_ndcg_sum",
    "streameval_window_ndcg_sum_squares",
    "streameval_judged_coverage",
    "streameval_engagement_lists",
    "streameval_clicked_lists",
    "streameval_evaluation_horizon_timestamp_seconds",
)


def _events(seed: int) -> list[tuple[int, str, bytes]]:
    """(event time, key, value) in event-time order: impressions of two arms, 60 % clicked."""
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(30)]
    out: list[tuple[int, str, dict[str, Any]]] = []
    for i in range(SPAN_MS // 1000 * IMPRESSIONS_PER_S):
        rid = f"r{seed}-{i}"
        ts = T0 + i * 1000 // IMPRESSIONS_PER_S
        results = rng.sample(docs, 10)
        arm = "control" if i % 2 else "treatment"
        out.append(
            (
                ts,
                rid,
                {
                    "type": "impression",
                    "request_id": rid,
                    "timestamp": ts,
                    "query": f"q{rng.randrange(8)}",
                    "results": results,
                    "labels": {"ranker": arm, "arm": arm},
                },
            )
        )
        if rng.random() < 0.6:
            c = ts + rng.randint(500, 120_000)
            doc = results[min(int(rng.expovariate(0.5)), 9)]
            out.append(
                (c, rid, {"type": "click", "request_id": rid, "doc_id": doc, "timestamp": c})
            )
    out.sort(key=lambda e: e[0])
    return [(ts, key, json.dumps(ev).encode()) for ts, key, ev in out]


def _judgments(seed: int) -> list[tuple[str, bytes]]:
    rng = random.Random(seed)
    out = []
    for q in range(8):
        for d in rng.sample(range(30), 10):
            rec = {
                "type": "judgment",
                "query": f"q{q}",
                "doc_id": f"d{d}",
                "grade": rng.randint(0, 3),
            }
            out.append((f"q{q}\x1fd{d}", json.dumps(rec | {"timestamp": T0 - 1}).encode()))
    return out


def _produce(bootstrap: str, events_topic: str, judgments_topic: str, seed: int) -> int:
    """The log, each record dated by its event time as `streameval simulate` dates them; returns
    the number of records (judgments included: the daemon reads them too)."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=20)
    judgments = _judgments(seed)
    for key, raw in judgments:
        producer.send(judgments_topic, key=key.encode(), value=raw)
    events = _events(seed)
    for ts, key, raw in events:
        producer.send(events_topic, key=key.encode(), value=raw, timestamp_ms=ts)
    producer.flush()
    producer.close()
    return len(events) + len(judgments)


def _windows(metrics: dict[Any, float]) -> dict[Any, float]:
    return {key: v for key, v in metrics.items() if key[0] in WINDOW_FAMILIES}


def _assert_same(got: dict[Any, float], want: dict[Any, float]) -> None:
    assert got.keys() == want.keys(), sorted(set(got) ^ set(want))[:5]
    for key, v in want.items():
        assert got[key] == pytest.approx(v, rel=1e-9, abs=1e-12), key


def _committed(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    """The group's committed offsets (read by a consumer that never joins the group)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        found = {p: consumer.committed(TopicPartition(topic, p)) for p in range(PARTITIONS)}
    finally:
        consumer.close(autocommit=False)
    return {p: offset for p, offset in found.items() if offset is not None}


def _ends(bootstrap: str, topic: str) -> dict[int, int]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        return {tp.partition: off for tp, off in consumer.end_offsets(tps).items()}
    finally:
        consumer.close()


def _first_run(
    bootstrap: str, env: dict[str, str], total: int, tmp_path: Path
) -> tuple[dict[Any, float], dict[Any, float]]:
    """Start, read everything, let a few commits pass, SIGKILL; (windows, last metrics)."""
    first = DaemonProcess(env, tmp_path / "first.log")
    try:
        metrics = first.wait_for(
            lambda m: value(m, "streameval_records_read_total") == total,
            timeout_s=180,
            what="the first run reads the whole log",
            ready=True,
        )
        time.sleep(4)  # several commits (kafka.commit_interval = 1s), nothing arriving
        metrics = first.metrics()
        windows = _windows(metrics)
        assert any(k[0] == "streameval_window_lists" and ("window", "1h") in k[1] for k in windows)
    finally:
        first.kill()
    return windows, metrics


def _second_run(
    env: dict[str, str], want: dict[Any, float], tmp_path: Path, timeout_s: float
) -> DaemonProcess:
    """Restart; whenever /readyz says 200 the windows are the killed run's."""
    second = DaemonProcess(env, tmp_path / "second.log")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if second.proc.poll() is not None:
            raise AssertionError(f"the restarted daemon exited\n{second.log_tail()}")
        status, _ = second.get("/readyz")
        if status == 200:
            _assert_same(_windows(second.metrics()), want)
            return second
        time.sleep(0.2)
    second.kill()
    raise AssertionError(f"the restarted daemon was not ready in {timeout_s}s\n{second.log_tail()}")


def _env(bootstrap: str, events: str, judgments: str, state: str, consumer: str) -> dict[str, str]:
    return {
        "STREAMEVAL_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
        "STREAMEVAL_KAFKA__GROUP_ID": f"restart-{uuid.uuid4().hex}",
        "STREAMEVAL_KAFKA__TOPICS": json.dumps([events]),
        "STREAMEVAL_KAFKA__JUDGMENT_TOPICS": json.dumps([judgments]),
        "STREAMEVAL_KAFKA__DLQ_TOPIC": "",
        "STREAMEVAL_KAFKA__STATE_TOPIC": state,
        "STREAMEVAL_KAFKA__COMMIT_INTERVAL": "1s",
        "STREAMEVAL_KAFKA__CONSUMER": consumer,
        "STREAMEVAL_METRICS__HOST": "127.0.0.1",
        "STREAMEVAL_METRICS__PORT": str(free_port()),
    }


def _topics(topic_factory: TopicFactory) -> tuple[str, str]:
    # retention.ms=-1: records dated 2026-01-01 would otherwise be deleted by the 7-day default
    # at the broker's next retention check, at a moment the test does not choose
    events = topic_factory(PARTITIONS, prefix="events", config={"retention.ms": "-1"})
    judgments = topic_factory(1, prefix="judgments", config={"cleanup.policy": "compact"})
    return events, judgments


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_sigkill_after_catch_up_with_nothing_arriving_restores_the_windows(
    kafka_bootstrap: str, topic_factory: TopicFactory, tmp_path: Path, consumer: str
) -> None:
    events, judgments = _topics(topic_factory)
    total = _produce(kafka_bootstrap, events, judgments, seed=1)
    env = _env(kafka_bootstrap, events, judgments, f"state-{uuid.uuid4().hex}", consumer)
    want, metrics = _first_run(kafka_bootstrap, env, total, tmp_path)

    # the commits bound the re-read by the open lists' span, not the longest window
    horizon_ms = int(value(metrics, "streameval_evaluation_horizon_timestamp_seconds") * 1000)
    committed = _committed(kafka_bootstrap, env["STREAMEVAL_KAFKA__GROUP_ID"], events)
    ends = _ends(kafka_bootstrap, events)
    reread = sum(ends[p] - committed[p] for p in range(PARTITIONS))
    newest = max(ts for ts, _, _ in _events(1))
    open_span = [ts for ts, _, _ in _events(1) if ts >= horizon_ms - horizon_ms % BUCKET_MS]
    last_hour = [ts for ts, _, _ in _events(1) if ts >= newest - 3_600_000]
    assert horizon_ms == newest - LATENESS_MS - ATTRIBUTION_MS
    assert 0 < reread <= len(open_span) < len(last_hour) / 10

    second = _second_run(env, want, tmp_path, timeout_s=150)  # the default 45 s session first
    try:
        # and it stays so: nothing arrives, nothing changes
        time.sleep(2)
        _assert_same(_windows(second.metrics()), want)
        assert value(second.metrics(), "streameval_reread_records_deleted_total") == 0
    finally:
        second.terminate()


def test_records_deleted_before_the_restart_lose_no_window_and_are_reported(
    kafka_bootstrap: str, topic_factory: TopicFactory, tmp_path: Path
) -> None:
    """The acceptance run's failure: the topic's retention deleted the records (dated by their
    old event time) between the kill and the restart. Before the state topic the new process
    said ready with no horizon and no windows, and never re-read the hour it lost."""
    events, judgments = _topics(topic_factory)
    total = _produce(kafka_bootstrap, events, judgments, seed=2)
    env = _env(kafka_bootstrap, events, judgments, f"state-{uuid.uuid4().hex}", "kafka-python")
    env["STREAMEVAL_KAFKA__SESSION_TIMEOUT"] = "6s"
    want, _ = _first_run(kafka_bootstrap, env, total, tmp_path)
    ends = _ends(kafka_bootstrap, events)
    committed = _committed(kafka_bootstrap, env["STREAMEVAL_KAFKA__GROUP_ID"], events)
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        admin.delete_records({TopicPartition(events, p): ends[p] for p in range(PARTITIONS)})
    finally:
        admin.close()

    second = _second_run(env, want, tmp_path, timeout_s=90)
    try:
        deleted = sum(ends[p] - committed[p] for p in range(PARTITIONS))
        metrics = second.metrics()
        assert value(metrics, "streameval_reread_records_deleted_total") == deleted > 0
        assert "deleted by the topic's retention" in second.log_tail()
        assert value(metrics, "streameval_open_lists") == 0  # those were lost, and said so
    finally:
        second.terminate()


def test_without_the_state_topic_the_restart_re_reads_the_longest_window(
    kafka_bootstrap: str, topic_factory: TopicFactory, tmp_path: Path
) -> None:
    events, judgments = _topics(topic_factory)
    total = _produce(kafka_bootstrap, events, judgments, seed=3)
    env = _env(kafka_bootstrap, events, judgments, "", "kafka-python")
    env["STREAMEVAL_KAFKA__SESSION_TIMEOUT"] = "6s"
    want, metrics = _first_run(kafka_bootstrap, env, total, tmp_path)
    committed = _committed(kafka_bootstrap, env["STREAMEVAL_KAFKA__GROUP_ID"], events)
    ends = _ends(kafka_bootstrap, events)
    horizon_ms = int(value(metrics, "streameval_evaluation_horizon_timestamp_seconds") * 1000)
    window_start = horizon_ms - horizon_ms % BUCKET_MS - 3_600_000
    in_window = [ts for ts, _, _ in _events(3) if ts >= window_start]
    assert sum(ends[p] - committed[p] for p in range(PARTITIONS)) >= len(in_window)
    second = _second_run(env, want, tmp_path, timeout_s=90)
    second.terminate()
    assert not any(
        n == "streameval_state_records_invalid_total" and v for (n, _), v in metrics.items()
    )
    assert list(samples(metrics, "streameval_consumer_lag"))
