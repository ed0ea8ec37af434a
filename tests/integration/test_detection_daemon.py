"""The regression detectors of `streameval run` reading a log from Kafka say what `streameval
replay` says for the same log: the same series, statistics and `first_alarm` (DESIGN §7: "a
replay of a log says when the daemon would have paged")."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from streameval.sim import SimConfig, traffic
from tests.integration.conftest import TopicFactory
from tests.integration.daemon_support import (
    CONSUMERS,
    PARTITIONS,
    T0,
    DaemonProcess,
    Log,
    Topics,
    consumer_env,
    dump_partitions,
    free_port,
    produce,
    replay_json,
    restore_third,
    samples,
    sentinels,
    stopped_at_exit,
    value,
)

pytestmark = pytest.mark.kafka

ROLE = {"impression": "impressions", "click": "clicks", "judgment": "judgments"}


@pytest.fixture
def topics(topic_factory: TopicFactory) -> Topics:
    return Topics.made_by(topic_factory)


def simulated_log() -> Log:
    """15 min of an A/B test at 20 queries/s; the treatment loses 30 % of its judged NDCG at
    +6 min."""
    sim = SimConfig(
        rate=20, queries=100, seed=4, duration_ms=15 * 60_000,
        regression_at_ms=6 * 60_000, regression_size=0.3, max_interaction_delay_ms=200_000,
    )  # fmt: skip
    log = Log()
    for record in traffic(sim, T0):
        log.records.append((ROLE[record.kind], record.key.encode(), record.raw, None))
    return log


def _key(labels: dict[str, Any]) -> tuple[str, str, str, str, str]:
    return (labels["detector"], str(labels["k"]), labels["relevance"], labels["ranker"],
            labels["arm"])  # fmt: skip


def test_the_daemon_pages_at_the_bucket_replay_says(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path
) -> None:
    log = simulated_log()
    sentinels(log, T0 + 30 * 60_000)
    produce(kafka_bootstrap, topics, log)
    expected = replay_json(dump_partitions(kafka_bootstrap, topics, tmp_path))
    want = {_key({**row, **row["segment"]}): row for row in expected["detection"]}
    # the treatment's drop was found, and nothing else alarmed
    fired = {key for key, row in want.items() if row["first_alarm"] is not None}
    assert ("vs_control", "10", "judged", "ltr-v2", "treatment") in fired
    assert all(key[4] == "treatment" for key in fired)
    env = topics.env(kafka_bootstrap, f"g-{uuid.uuid4().hex}", free_port())
    daemon = DaemonProcess(env, tmp_path / "daemon.log")
    try:
        metrics = daemon.wait_for(
            lambda m: reached(m, expected), what="the daemon to reach replay's horizon", ready=True
        )
        assert_detection_matches(metrics, want)
        # assigned once: kafka-python's first join no longer sees empty metadata and rejoins
        log = (tmp_path / "daemon.log").read_text()
        assert log.count("rebuilding state") == 1, log
        assert daemon.terminate() == 0
    finally:
        if daemon.proc.poll() is None:
            daemon.kill()


def reached(metrics: dict[Any, float], expected: dict[str, Any]) -> bool:
    """At replay's horizon, and the detectors fed up to it (with the state topic they are fed
    from it: after the commit that writes the last buckets)."""
    horizon = value(metrics, "streameval_evaluation_horizon_timestamp_seconds")
    if horizon != expected["horizon_ms"] / 1000:
        return False
    stats = {_key(lbl): v for lbl, v in samples(metrics, "streameval_regression_statistic")}
    return all(
        _key({**row, **row["segment"]}) in stats
        and stats[_key({**row, **row["segment"]})]
        == pytest.approx(row["statistic"], rel=1e-9, abs=1e-9)
        for row in expected["detection"]
    )


def detection_of(metrics: dict[Any, float]) -> dict[tuple[str, ...], tuple[float | None, ...]]:
    """Per series: statistic, alarm, first alarm, shift, as exported."""
    out: dict[tuple[str, ...], tuple[float | None, ...]] = {}
    first = {
        _key(lbl): v
        for lbl, v in samples(metrics, "streameval_regression_first_alarm_timestamp_seconds")
    }
    alarm = {_key(lbl): v for lbl, v in samples(metrics, "streameval_regression_alarm")}
    shift = {_key(lbl): v for lbl, v in samples(metrics, "streameval_regression_shift")}
    for lbl, v in samples(metrics, "streameval_regression_statistic"):
        key = _key(lbl)
        out[key] = (v, alarm[key], first.get(key), shift.get(key))
    return out


def assert_detection_matches(metrics: dict[Any, float], want: dict[Any, dict[str, Any]]) -> None:
    statistic = {_key(lbl): v for lbl, v in samples(metrics, "streameval_regression_statistic")}
    first = {
        _key(lbl): v
        for lbl, v in samples(metrics, "streameval_regression_first_alarm_timestamp_seconds")
    }
    alarm = {_key(lbl): v for lbl, v in samples(metrics, "streameval_regression_alarm")}
    assert set(statistic) == set(want)
    for key, row in want.items():
        assert statistic[key] == pytest.approx(row["statistic"], rel=1e-9, abs=1e-9), key
        assert alarm[key] == (1.0 if row["alarm"] else 0.0), key
        at = row["first_alarm"]
        assert first.get(key) == (None if at is None else at / 1000), key


class GroupOfTwo(NamedTuple):
    expected: dict[str, Any]  # replay's JSON of the whole log
    group: str
    env: dict[str, str]
    a: DaemonProcess
    b: DaemonProcess


def group_of_two(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path, log: Log, consumer: str
) -> GroupOfTwo:
    """``log`` produced, replay's figures of it, and two daemons of a new group started on it.

    The hand-over (one member reads first and then gives half the partitions up) re-reads
    partitions in any order: the 15m allowed lateness of the other hand-over tests covers that,
    for the daemons and replay alike (with 10 s, clicks of the re-read came late, and the
    implicit series of both daemons, still equal to each other, differed from replay's)."""
    produce(kafka_bootstrap, topics, log)
    config = tmp_path / "lateness.toml"
    config.write_text('[evaluation]\nallowed_lateness = "15m"\n')
    expected = replay_json(dump_partitions(kafka_bootstrap, topics, tmp_path), config)
    group = f"g-{uuid.uuid4().hex}"
    env = consumer_env(consumer) | {"STREAMEVAL_EVALUATION__ALLOWED_LATENESS": "15m"}
    a = DaemonProcess(topics.env(kafka_bootstrap, group, free_port()) | env, tmp_path / "a.log")
    b = DaemonProcess(topics.env(kafka_bootstrap, group, free_port()) | env, tmp_path / "b.log")
    return GroupOfTwo(expected, group, env, a, b)


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_two_daemons_of_a_group_report_the_same_group_wide_detection(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path, consumer: str
) -> None:
    """DESIGN §9: with the state topic, each instance runs the detectors on the group's buckets:
    two daemons holding half of the partitions each export the same detector series, equal to
    replay's of the whole log (not each its half's)."""
    log = simulated_log()
    sentinels(log, T0 + 40 * 60_000)  # the horizon (- 15m - 5m) past the 15 minutes of traffic
    expected, group, env, a, b = group_of_two(kafka_bootstrap, topics, tmp_path, log, consumer)
    want = {_key({**row, **row["segment"]}): row for row in expected["detection"]}
    assert any(row["first_alarm"] is not None for row in want.values())
    with stopped_at_exit(a, b):

        def settled(m: dict[Any, float]) -> bool:
            held = len(list(samples(m, "streameval_consumer_lag")))
            return held == PARTITIONS and reached(m, expected)

        ma = a.wait_for(
            settled, what="daemon a: half the partitions, replay's detection", ready=True
        )
        mb = b.wait_for(
            settled, what="daemon b: half the partitions, replay's detection", ready=True
        )
        ma = a.wait_for(settled, what="daemon a, still", ready=True)
        assert_detection_matches(ma, want)
        assert_detection_matches(mb, want)
        # the same numbers, not merely close: the same buckets, fed in the same order
        assert detection_of(ma) == detection_of(mb)
        # while the windows stay each instance's own part
        lists_a = sum(v for _, v in samples(ma, "streameval_window_lists"))
        lists_b = sum(v for _, v in samples(mb, "streameval_window_lists"))
        assert lists_a > 0 and lists_b > 0
        assert a.terminate() == 0
        assert b.terminate() == 0
    # a new instance of the group restores the detectors' snapshot and feeds the buckets since
    # (the older ones are tombstoned by then): the same state again, to the bit
    mc = restore_third(
        kafka_bootstrap, topics, group, env, tmp_path, done=lambda m: reached(m, expected)
    )
    assert detection_of(mc) == detection_of(ma)


def detected(metrics: dict[Any, float], expected: dict[str, Any]) -> bool:
    """Every detector series of replay's, at replay's statistic (the horizon aside)."""
    stats = {_key(lbl): v for lbl, v in samples(metrics, "streameval_regression_statistic")}
    return all(
        stats.get(_key({**row, **row["segment"]})) == pytest.approx(row["statistic"], abs=1e-9)
        for row in expected["detection"]
    )


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_a_member_whose_partitions_are_never_written_to_does_not_stall_the_group(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path, consumer: str
) -> None:
    """Every record of the log on partition 0: the member that does not hold it (the
    assignors give two members 0 and 2, and 1 and 3, or with librdkafka's range 0 and 1, and 2
    and 3) reads nothing at all. Its watermark would never exist, its partitions would report no
    progress, and the group frontier, and every instance's detectors with it, would wait for
    good. Read to their ends, its partitions follow the group's event time instead
    (`Pipeline.follow`): both members export replay's detection."""
    log = simulated_log()
    sentinels(log, T0 + 40 * 60_000)
    log.records = [
        (role, key, raw, None if role == "judgments" else 0)
        for role, key, raw, partition in log.records
        if partition in (None, 0)  # the sentinels of the other partitions left out
    ]
    expected, _, _, a, b = group_of_two(kafka_bootstrap, topics, tmp_path, log, consumer)
    want = {_key({**row, **row["segment"]}): row for row in expected["detection"]}
    assert any(row["first_alarm"] is not None for row in want.values())
    with stopped_at_exit(a, b):

        def settled(m: dict[Any, float]) -> bool:
            held = len(list(samples(m, "streameval_consumer_lag")))
            return held == PARTITIONS and detected(m, expected)

        ma = a.wait_for(settled, what="daemon a: half the partitions, replay's detection")
        mb = b.wait_for(settled, what="daemon b: half the partitions, replay's detection")
        assert_detection_matches(ma, want)
        assert_detection_matches(mb, want)
        assert detection_of(ma) == detection_of(mb)
        # one of them read every list, the other none
        lists = sorted(sum(v for _, v in samples(m, "streameval_window_lists")) for m in (ma, mb))
        assert lists[0] == 0 < lists[1]
        assert a.terminate() == 0
        assert b.terminate() == 0
