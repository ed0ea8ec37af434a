"""``streameval simulate`` into a real broker, read back with kafka-python.

The expected records are the simulator's own for the same flags (it is deterministic), so the
test checks exactly what was produced where: topics, keys, values, Kafka timestamps, and that an
impression and its clicks share a partition number.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from kafka import KafkaConsumer, TopicPartition

from streameval.cli import main
from streameval.sim import JUDGMENT_KEY_SEPARATOR, SimConfig, traffic
from tests.integration.conftest import TopicFactory

pytestmark = pytest.mark.kafka

START_MS = 1_700_000_000_000
PARTITIONS = 3


def _read_all(bootstrap: str, topic: str, expected: int) -> list[tuple[int, bytes, bytes, int]]:
    """(partition, key, value, timestamp) of the first ``expected`` records of ``topic``."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        consumer_timeout_ms=10_000,
    )
    try:
        partitions = sorted(consumer.partitions_for_topic(topic) or ())
        consumer.assign([TopicPartition(topic, p) for p in partitions])
        out = []
        for message in consumer:
            out.append((message.partition, message.key, message.value, message.timestamp))
            if len(out) >= expected:
                break
        return out
    finally:
        consumer.close()


def test_simulate_produces_keyed_copartitioned_records_with_event_timestamps(
    kafka_bootstrap: str, topic_factory: TopicFactory, tmp_path: Path
) -> None:
    impressions = topic_factory(PARTITIONS, prefix="imp")
    clicks = topic_factory(PARTITIONS, prefix="clk")
    judgments = topic_factory(1, prefix="jud")
    config = tmp_path / "streameval.toml"
    config.write_text(
        f'[kafka]\ntopics = ["{impressions}", "{clicks}"]\njudgment_topics = ["{judgments}"]\n'
    )
    code = main(
        [
            *("simulate", "--config", str(config), "--bootstrap-servers", kafka_bootstrap),
            *("--speed", "0", "--start", str(START_MS), "--duration", "3m", "--rate", "4"),
            *("--queries", "40", "--seed", "9", "--regression-at", "1m"),
        ]
    )
    assert code == 0

    sim = replace(
        SimConfig(),
        seed=9,
        rate=4.0,
        duration_ms=180_000,
        queries=40,
        regression_at_ms=60_000,
    )
    want = list(traffic(sim, START_MS))
    by_kind = Counter(r.kind for r in want)
    # 4/s over 3 min: ~720 impressions; at the start round(0.5 * 25) = 12 (half to even) of the
    # 25 candidates of each of the 40 queries are judged, 480, then a trickle of 0.1/s
    assert by_kind["impression"] > 500 and by_kind["click"] > 500
    assert by_kind["judgment"] >= 480

    got = {
        "impression": _read_all(kafka_bootstrap, impressions, by_kind["impression"]),
        "click": _read_all(kafka_bootstrap, clicks, by_kind["click"]),
        "judgment": _read_all(kafka_bootstrap, judgments, by_kind["judgment"]),
    }
    for kind, rows in got.items():
        expected = [(r.key.encode(), r.raw, r.time_ms) for r in want if r.kind == kind]
        produced = [(key, value, ts) for _, key, value, ts in rows]
        # each partition keeps the order it was sent in; over partitions compare as multisets
        assert Counter(produced) == Counter(expected), kind

    partition_of = {key: p for p, key, _, _ in got["impression"]}
    assert len(set(partition_of.values())) == PARTITIONS  # spread over every partition
    for partition, key, value, _ in got["click"]:
        assert json.loads(value)["request_id"].encode() == key
        assert partition_of[key] == partition
    for _, key, value, _ in got["judgment"]:
        judgment = json.loads(value)
        assert key.decode() == judgment["query_id"] + JUDGMENT_KEY_SEPARATOR + judgment["doc_id"]
