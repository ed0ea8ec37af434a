"""A stop asked for during the start's reads (the judgment topics, the state topic) is answered
there, not minutes later when they are read to their ends: an orchestrator sends SIGTERM and
waits a grace period (30 s by default in Kubernetes) before SIGKILL, and a large judgment topic
takes longer than that to read. Nothing is committed before the group is joined, so stopping
there loses nothing: the next start reads everything again."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable

import pytest
from kafka import KafkaAdminClient, KafkaProducer

from streameval.kafka.judgments import JudgmentReader
from streameval.kafka.records import RawRecord
from streameval.runtime.daemon import Daemon
from tests.integration.conftest import TopicFactory
from tests.integration.daemon_support import Topics, in_process_settings

pytestmark = pytest.mark.kafka

#: more than one poll's worth (kafka-python's max_poll_records is 500)
N = 3_000


def _produce_judgments(bootstrap: str, topic: str, n: int) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, acks="all")
    try:
        for i in range(n):
            value = (
                f'{{"type": "judgment", "query_id": "q{i % 97}", "doc_id": "d{i}", '
                f'"grade": {i % 4}, "timestamp": 1767225600000}}'
            )
            producer.send(topic, key=f"q{i % 97}|d{i}".encode(), value=value.encode())
        producer.flush(30)
    finally:
        producer.close()


class _StopAfter(threading.Event):
    """The daemon's ``stop`` event, set once it has been looked at ``n`` times."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self._left = n

    def is_set(self) -> bool:
        self._left -= 1
        if self._left < 0:
            self.set()
        return super().is_set()


def test_a_read_to_the_end_ends_when_asked_and_a_later_one_goes_on_from_there(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(1, prefix="judgments", config={"cleanup.policy": "compact"})
    _produce_judgments(kafka_bootstrap, topic, N)
    with JudgmentReader([topic], {"bootstrap_servers": kafka_bootstrap}) as reader:
        # asked to stop once the first records are read: what a SIGTERM in the middle of the
        # read looks like to it (a poll may come back empty first: the stop waits for records)
        first: list[RawRecord] = []
        for record in reader.read_to_end(timeout_s=60, stop=lambda: bool(first)):
            first.append(record)
        assert 0 < len(first) < N  # one poll's records (at most 500)
        # the rest, from where it stopped: none skipped, none twice
        rest = list(reader.read_to_end(timeout_s=60))
    offsets = [r.offset for r in first + rest]
    assert offsets == list(range(N))


def test_the_daemon_stops_during_its_judgment_read_without_joining_the_group(
    kafka_bootstrap: str, topic_factory: TopicFactory, caplog: pytest.LogCaptureFixture
) -> None:
    topics = Topics.made_by(topic_factory)
    _produce_judgments(kafka_bootstrap, topics.judgments, N)
    group = f"g-{uuid.uuid4().hex}"
    daemon = Daemon(in_process_settings(kafka_bootstrap, topics, group))
    # looked at before the first poll of the judgments: go on; before the second: stop (that
    # first poll may have brought nothing yet: what matters is that the read ends early)
    stop = _StopAfter(1)
    caplog.set_level(logging.INFO, logger="streameval")
    thread = threading.Thread(target=daemon.run, args=(stop,), daemon=True)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the daemon did not stop"
    read = [r for r in caplog.records if r.getMessage().startswith("read ")]
    assert len(read) == 1  # the judgments only: the state topic was not read
    count = int(read[0].getMessage().split()[1])
    assert count < N  # at most one poll's records (500)
    assert any("stopped during the start's reads" in r.getMessage() for r in caplog.records)
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        # never joined, so nothing committed: the broker knows no such group
        assert group not in {g["group_id"] for g in admin.list_groups()}
        # and the state topic was not even created
        assert topics.state not in admin.list_topics()
    finally:
        admin.close()
