"""The start's admin helpers against the real broker: a topic is created once, an existing one
is left alone, a refusal is kafka-python's error, and a broker that does not answer is a
:class:`KafkaUnavailableError` that says what the connection was for."""

from __future__ import annotations

import uuid

import pytest
from kafka.errors import KafkaError

from streameval.errors import KafkaUnavailableError
from streameval.kafka.admin import admin_client, create_topic


@pytest.mark.kafka
def test_a_topic_is_created_once_with_its_configs(kafka_bootstrap: str) -> None:
    topic = f"admin-{uuid.uuid4().hex}"
    with admin_client({"bootstrap_servers": kafka_bootstrap}, "to test") as admin:
        try:
            assert create_topic(admin, topic, {"cleanup.policy": "compact"}) is True
            assert create_topic(admin, topic, {"cleanup.policy": "compact"}) is False
            (described,) = admin.describe_topics([topic])
            assert len(described["partitions"]) == 1
        finally:
            admin.delete_topics([topic])


@pytest.mark.kafka
def test_a_refused_topic_raises_the_clients_error(kafka_bootstrap: str) -> None:
    topic = f"admin-{uuid.uuid4().hex}"
    with admin_client({"bootstrap_servers": kafka_bootstrap}, "to test") as admin:
        with pytest.raises(KafkaError):
            create_topic(admin, topic, {"cleanup.policy": "neither"})
        assert topic not in admin.list_topics()


def test_no_broker_is_unavailable_and_says_what_for() -> None:
    config = {"bootstrap_servers": "127.0.0.1:1", "bootstrap_timeout_ms": 1_000}
    with (
        pytest.raises(KafkaUnavailableError, match="cannot connect to check the topics"),
        admin_client(config, "to check the topics"),
    ):
        pytest.fail("connected to nothing")
