"""`streameval run` with the state topic, against the real broker: two daemons of a group each
export the sample-ratio test of the whole log (replay's, to the bit: DESIGN §12), not each the
test of its half; a third started after both stopped restores it from the group's snapshot."""

from __future__ import annotations

import random
import uuid
from pathlib import Path
from typing import Any

import pytest

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


@pytest.fixture
def topics(topic_factory: TopicFactory) -> Topics:
    return Topics.made_by(topic_factory)


def lossy_ab_log(seed: int, requests: int, span_ms: int = 20 * 60_000) -> Log:
    """An A/B of "bm25" (control) and "ltr" (treatment) in which the treatment's logging loses
    40 % of its impressions; a few lists carry no arm; some are clicked."""
    rng = random.Random(seed)
    log = Log()
    for i in range(requests):
        if i % 50 == 7:
            labels = {"ranker": "bm25"}  # no arm: excluded
        elif rng.random() < 0.5:
            labels = {"ranker": "bm25", "arm": "control"}
        elif rng.random() < 0.6:
            labels = {"ranker": "ltr", "arm": "treatment"}
        else:
            continue  # lost
        rid = f"srm-{seed}-{i}"
        ts = T0 + int(i * span_ms / requests)
        docs = [f"d{(i + j) % 40}" for j in range(5)]
        log.add(
            "impressions",
            rid,
            {"type": "impression", "request_id": rid, "timestamp": ts, "query": f"q{i % 9}",
             "results": docs, "labels": labels},
        )  # fmt: skip
        if rng.random() < 0.3:
            log.add(
                "clicks",
                rid,
                {"type": "click", "request_id": rid, "doc_id": docs[0], "timestamp": ts + 500},
            )
    return log


def _srm(metrics: dict[Any, float]) -> tuple[float | None, float | None, dict[str, float]]:
    lists = {lbl["arm"]: v for lbl, v in samples(metrics, "streameval_srm_lists")}
    return (
        value(metrics, "streameval_srm_statistic"),
        value(metrics, "streameval_srm_alarm"),
        lists,
    )


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_two_daemons_of_a_group_test_the_groups_split(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path, consumer: str
) -> None:
    log = lossy_ab_log(13, 2000)
    sentinels(log, T0 + 45 * 60_000)
    produce(kafka_bootstrap, topics, log)
    config = tmp_path / "lateness.toml"
    # the expected split named: the sentinels' arm is then excluded (else, a new arm, it would
    # restart the test)
    config.write_text(
        '[evaluation]\nallowed_lateness = "15m"\n'
        "[srm]\nexpected = {control = 0.5, treatment = 0.5}\n"
    )
    expected = replay_json(dump_partitions(kafka_bootstrap, topics, tmp_path), config)["srm"]
    assert expected["alarm"] is True and expected["excluded"] > 0
    want_lists = {a["arm"]: float(a["lists"]) for a in expected["arms"]}
    group = f"g-{uuid.uuid4().hex}"
    env = consumer_env(consumer) | {
        "STREAMEVAL_EVALUATION__ALLOWED_LATENESS": "15m",
        "STREAMEVAL_SRM__EXPECTED": '{"control": 0.5, "treatment": 0.5}',
    }

    def tested(m: dict[Any, float]) -> bool:
        statistic, alarm, lists = _srm(m)
        return (
            lists == want_lists
            and statistic == pytest.approx(expected["statistic"], rel=1e-12)
            and alarm == 1.0
        )

    def settled(m: dict[Any, float]) -> bool:  # and the partitions split between the two
        return len(list(samples(m, "streameval_consumer_lag"))) == PARTITIONS and tested(m)

    a = DaemonProcess(topics.env(kafka_bootstrap, group, free_port()) | env, tmp_path / "a.log")
    b = DaemonProcess(topics.env(kafka_bootstrap, group, free_port()) | env, tmp_path / "b.log")
    with stopped_at_exit(a, b):
        mb = b.wait_for(settled, what="daemon b: half the partitions, replay's test", ready=True)
        ma = a.wait_for(settled, what="daemon a: half the partitions, replay's test", ready=True)
        assert _srm(ma) == _srm(mb)
        # (replay's end of input also closes the sentinels' bucket, the daemons' horizon not)
        assert (value(ma, "streameval_srm_excluded_lists") or 0) > 0
        assert a.terminate() == 0
        assert b.terminate() == 0
        assert "sample-ratio mismatch alarm started" in (tmp_path / "a.log").read_text()
    mc = restore_third(kafka_bootstrap, topics, group, env, tmp_path, done=tested)
    assert _srm(mc) == _srm(ma)
