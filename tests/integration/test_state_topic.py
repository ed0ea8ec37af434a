"""The state topic's own configuration, against the real broker (DESIGN §6).

A start reads the whole state topic. Compaction cleans only closed segments, so what a start reads
is bounded by the live buckets only if segments close often: the daemon creates the topic with
short segments (``STATE_TOPIC_CONFIGS``), refuses one that deletes by time, and warns about one
whose segments stay open for days. The last test shows the mechanism the short segments rely on:
with segments that close, the broker's cleaner takes superseded buckets and tombstones out of
what a fresh start reads.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType

from streameval.errors import ConfigError
from streameval.kafka.state import STATE_TOPIC_CONFIGS, StateTopic, _ensure_compacted
from streameval.kafka.state_table import state_key
from streameval.runtime.state_codecs import STATE_CODECS
from streameval.windows.persisted import encode_bucket
from streameval.windows.store import Bucket

pytestmark = pytest.mark.kafka


def _configs(bootstrap: str, topic: str, names: list[str]) -> dict[str, Any]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        described = admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic, names)], config_filter="all"
        )
    finally:
        admin.close()
    return {n: described["topic"][topic][n]["value"] for n in names}


def test_the_state_topic_is_created_compacted_with_short_segments(kafka_bootstrap: str) -> None:
    topic = f"state-{uuid.uuid4().hex[:10]}"
    StateTopic(topic, "g", {"bootstrap_servers": kafka_bootstrap}, codecs=STATE_CODECS).close()
    got = _configs(kafka_bootstrap, topic, list(STATE_TOPIC_CONFIGS))
    assert got == {"cleanup.policy": "compact", "segment.ms": "600000",
                   "delete.retention.ms": "600000"}  # fmt: skip


def test_an_existing_topic_that_deletes_by_time_is_refused(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(1, prefix="state", config={"cleanup.policy": "delete"})
    with pytest.raises(ConfigError, match=r"cleanup\.policy=delete"):
        StateTopic(topic, "g", {"bootstrap_servers": kafka_bootstrap}, codecs=STATE_CODECS)


def test_an_existing_compacted_topic_with_week_long_segments_is_used_with_a_warning(
    kafka_bootstrap: str, topic_factory: Callable[..., str], caplog: pytest.LogCaptureFixture
) -> None:
    week = topic_factory(1, prefix="state", config={"cleanup.policy": "compact"})
    short = topic_factory(1, prefix="state",
                          config={"cleanup.policy": "compact", "segment.ms": "600000"})  # fmt: skip
    config = {"bootstrap_servers": kafka_bootstrap}
    with caplog.at_level(logging.WARNING, logger="streameval.kafka.state"):
        StateTopic(short, "g", config, codecs=STATE_CODECS).close()
        assert not [r for r in caplog.records if "segment.ms" in r.getMessage()]
        StateTopic(week, "g", config, codecs=STATE_CODECS).close()
    warned = [r.getMessage() for r in caplog.records if "segment.ms=604800000" in r.getMessage()]
    assert len(warned) == 1
    assert "17280 records per partition per day" in warned[0]


def test_with_segments_that_close_the_cleaner_bounds_what_a_start_reads(
    kafka_bootstrap: str,
) -> None:
    """Ten buckets written 100 times each, half of them then tombstoned (1,005 records): once
    segments close (here after 1 s) and the broker's cleaner has run, a fresh start reads only
    what is live. The cleaner is the broker's, on its own schedule
    (``log.cleaner.backoff.ms``, 15 s by default): this waits for it, up to a deadline."""
    topic = f"state-{uuid.uuid4().hex[:10]}"
    config = {"bootstrap_servers": kafka_bootstrap}
    fast = {
        "cleanup.policy": "compact",
        "segment.ms": "1000",
        "delete.retention.ms": "0",
        "min.cleanable.dirty.ratio": "0.01",
    }
    _ensure_compacted(topic, config, topic_configs=fast)
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
    bucket = encode_bucket(Bucket())
    try:
        for _ in range(100):
            for b in range(10):
                producer.send(topic, key=state_key("g", "t/0", b * 10_000), value=bucket)
            producer.flush()
        for b in range(5, 10):  # the older half is tombstoned
            producer.send(topic, key=state_key("g", "t/0", b * 10_000), value=None)
        producer.flush()
        written = 1_005
        deadline = time.monotonic() + 120
        read = written
        while time.monotonic() < deadline:
            # a record after segment.ms closes the segment that holds everything above
            producer.send(topic, key=state_key("g", "t/1", 0), value=bucket).get(timeout=30)
            time.sleep(2)
            state = StateTopic(topic, "g", config, bucket_ms=10_000, codecs=STATE_CODECS)
            try:
                read = state.read_to_end()
                held = state.table.view()
            finally:
                state.close()
            if read < 50:
                break
    finally:
        producer.close()
    assert read < 50, f"a start still read {read} of {written} records after 120 s"
    # what compaction kept is what the table held anyway: five live buckets of t/0
    assert sorted(held["t/0"]) == [0, 10_000, 20_000, 30_000, 40_000]
