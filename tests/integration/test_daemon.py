"""`streameval run` against the real broker: its figures equal `streameval replay`'s for the
same log; killed and restarted, it loses and double-counts nothing; bad records go to the DLQ."""

from __future__ import annotations

import math
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import TopicFactory
from tests.integration.daemon_support import (
    CONSUMERS,
    T0,
    DaemonProcess,
    Log,
    Topics,
    assert_windows_match,
    consumer_env,
    dump_partitions,
    free_port,
    make_log,
    produce,
    read_all,
    replay_json,
    samples,
    sentinels,
    value,
)

pytestmark = pytest.mark.kafka


@pytest.fixture
def topics(topic_factory: TopicFactory) -> Topics:
    return Topics.made_by(topic_factory)


def _read(metrics: dict[Any, float], name: str) -> float:
    v = value(metrics, name)
    return -1.0 if v is None else v


def intake_of(metrics: dict[Any, float]) -> dict[str, Any]:
    accepted = {lbl["type"]: int(v) for lbl, v in samples(metrics, "streameval_events_total")}
    return {
        "read": int(_read(metrics, "streameval_records_read_total")),
        "accepted_by_type": {t: n for t, n in accepted.items() if n},
        "accepted": sum(accepted.values()),
        "invalid": {
            lbl["reason"]: int(v)
            for lbl, v in samples(metrics, "streameval_invalid_events_total")
            if v
        },
        "duplicate": int(sum(v for _, v in samples(metrics, "streameval_duplicate_events_total"))),
        "late": int(sum(v for _, v in samples(metrics, "streameval_late_events_total"))),
        "unmatched": int(_read(metrics, "streameval_unmatched_clicks_total")),
    }


def _setup(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path, log: Log
) -> tuple[dict[str, Any], int]:
    sentinels(log, T0 + 30 * 60_000)
    produce(kafka_bootstrap, topics, log)
    expected = replay_json(dump_partitions(kafka_bootstrap, topics, tmp_path))
    return expected, len(log.records)


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_daemon_figures_equal_replay_and_bad_records_reach_the_dlq(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path, consumer: str
) -> None:
    expected, total = _setup(kafka_bootstrap, topics, tmp_path, make_log(1, 400))
    assert expected["intake"]["invalid"] == {"bad_json": 5}  # requests 5, 102, 199, 296, 393
    horizon_s = expected["horizon_ms"] / 1000
    env = topics.env(kafka_bootstrap, f"g-{uuid.uuid4().hex}", free_port()) | consumer_env(consumer)
    daemon = DaemonProcess(env, tmp_path / "daemon.log")
    try:
        metrics = daemon.wait_for(
            lambda m: (
                _read(m, "streameval_records_read_total") == total
                and _read(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
            ),
            what="the daemon to read the whole log and be ready",
            ready=True,
        )
        rows = assert_windows_match(metrics, expected)
        assert rows > 20
        intake = intake_of(metrics)
        want = {k: expected["intake"][k] for k in intake}
        assert intake == want
        assert intake["read"] == total
        assert intake["read"] == (
            intake["accepted"]
            + sum(intake["invalid"].values())
            + intake["duplicate"]
            + intake["late"]
            + intake["unmatched"]
        )
        assert daemon.terminate() == 0  # SIGTERM: a clean stop
    finally:
        if daemon.proc.poll() is None:
            daemon.kill()
    dead = read_all(kafka_bootstrap, topics.dlq)
    assert len(dead) == 5
    # each dead letter is the record it names (the daemon finds it by offset in the batch the
    # client read), key and value as they were
    clicks = {
        f"{r.topic}/{r.partition}/{r.offset}": r for r in read_all(kafka_bootstrap, topics.clicks)
    }
    for record in dead:
        headers = dict(record.headers)
        assert headers["streameval.reason"] == b"bad_json"
        assert record.value.startswith(b'{"type": "click"')
        original = clicks[headers["streameval.source"].decode()]
        assert (record.key, record.value) == (original.key, original.value)
    assert len({dict(r.headers)["streameval.source"] for r in dead}) == 5


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_killed_and_restarted_daemon_loses_and_double_counts_nothing(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path, consumer: str
) -> None:
    first = make_log(2, 300)
    # no new judgments in the second part: a judgment applies to lists finalized after it is
    # read (DESIGN §6), and the buckets the first run persisted keep the judged scores it gave
    # them, while replay applies the second part's judgments to nearly every list
    second = make_log(3, 300, start_ms=T0 + 20 * 60_000 + 1, span_ms=10 * 60_000, judgments=False)
    produce(kafka_bootstrap, topics, first)
    env = topics.env(kafka_bootstrap, f"g-{uuid.uuid4().hex}", free_port()) | consumer_env(consumer)
    # run 1: read the first part, commit, then die without warning
    daemon = DaemonProcess(env, tmp_path / "daemon-1.log")
    n_first = len(first.records)
    daemon.wait_for(
        lambda m: _read(m, "streameval_records_read_total") == n_first,
        what="run 1 to read its part",
    )
    daemon.kill()
    # run 2 and 3: more traffic arrives while it is down; killed again part-way
    produce(kafka_bootstrap, topics, second)
    daemon = DaemonProcess(env, tmp_path / "daemon-2.log")
    daemon.wait_for(lambda m: _read(m, "streameval_records_read_total") > 0, what="run 2 to start")
    daemon.kill()
    rest = Log()
    sentinels(rest, T0 + 60 * 60_000)
    produce(kafka_bootstrap, topics, rest)
    expected = replay_json(dump_partitions(kafka_bootstrap, topics, tmp_path))
    horizon_s = expected["horizon_ms"] / 1000
    daemon = DaemonProcess(env, tmp_path / "daemon-3.log")
    try:
        metrics = daemon.wait_caught_up(horizon_s, "run 3 to hold every partition and catch up")
        # windows are rebuilt from Kafka: exactly the uninterrupted figures
        assert_windows_match(metrics, expected)
        # run 3 counted only what no earlier run had committed as counted, and its accounting
        # identity holds
        intake = intake_of(metrics)
        assert 0 < intake["read"] <= expected["intake"]["read"]
        assert intake["read"] == (
            intake["accepted"]
            + sum(intake["invalid"].values())
            + intake["duplicate"]
            + intake["late"]
            + intake["unmatched"]
        )
        assert intake["late"] == expected["intake"]["late"]
    finally:
        if daemon.proc.poll() is None:
            daemon.terminate()


def test_a_tombstone_in_the_judgment_topic_deletes_the_judgment(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path
) -> None:
    """The judgment topic is compacted and keyed by query and doc: a tombstone (a record with
    no value) deletes what its key said, as compaction will, and is counted as a judgment."""

    def judged(doc: str, grade: int) -> dict[str, Any]:
        return {"type": "judgment", "query": "q", "doc_id": doc, "grade": grade, "timestamp": T0}

    log = Log()
    log.add("judgments", "q\x1fa", judged("a", 3))
    log.add("judgments", "q\x1fb", judged("b", 1))
    log.records.append(("judgments", b"q\x1fa", None, None))  # type: ignore[arg-type]
    log.add(
        "impressions",
        "r1",
        {
            "type": "impression",
            "request_id": "r1",
            "timestamp": T0,
            "query": "q",
            "results": ["a", "b"],
            "labels": {"ranker": "r", "arm": "a"},
        },
    )
    sentinels(log, T0 + 30 * 60_000)
    produce(kafka_bootstrap, topics, log)

    daemon = DaemonProcess(
        topics.env(kafka_bootstrap, f"g-{uuid.uuid4().hex}", free_port()), tmp_path / "d.log"
    )
    try:
        metrics = daemon.wait_for(
            lambda m: (
                _read(m, "streameval_records_read_total") == len(log.records)
                and value(
                    m,
                    "streameval_lists_scored_total",
                    k="3",
                    relevance="judged",
                    ranker="r",
                    arm="a",
                )
                == 1
            ),
            what="the judgments, the tombstone and the list",
        )
        assert _read(metrics, "streameval_judgments") == 1  # b's grade alone
        intake = intake_of(metrics)
        assert intake["accepted_by_type"]["judgment"] == 3
        assert intake["invalid"] == {}
        # a is unjudged now: shown [a=0, b=1], pool [1]; NDCG@3 = (1/log2 3) / 1
        ndcg = value(
            metrics, "streameval_ndcg_sum_total", k="3", relevance="judged", ranker="r", arm="a"
        )
        assert ndcg == pytest.approx(1 / math.log2(3))
        assert daemon.terminate() == 0
    finally:
        if daemon.proc.poll() is None:
            daemon.kill()
