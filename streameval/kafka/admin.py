"""The admin requests of the daemon's start (a topic's partitions, a topic created when
missing), through one short-lived ``KafkaAdminClient`` each: connected, asked, closed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from kafka.errors import KafkaError, TopicAlreadyExistsError

from streameval.errors import KafkaUnavailableError

#: the key (and variable) that says where the brokers are: in every error about reaching them
BOOTSTRAP_KEY = "kafka.bootstrap_servers / STREAMEVAL_KAFKA__BOOTSTRAP_SERVERS"


@contextlib.contextmanager
def admin_client(config: Mapping[str, Any], purpose: str) -> Iterator[Any]:
    """A connected ``KafkaAdminClient`` (``config``: kafka-python keyword arguments), closed on
    the way out. A failure to connect raises :class:`KafkaUnavailableError` saying what the
    connection was for (``purpose``, e.g. "to check the state topic")."""
    try:
        admin = KafkaAdminClient(**config)
    except KafkaError as exc:
        raise KafkaUnavailableError(f"cannot connect {purpose}: {exc} ({BOOTSTRAP_KEY})") from exc
    try:
        yield admin
    finally:
        admin.close()


def create_topic(admin: Any, topic: str, configs: Mapping[str, str] | None = None) -> bool:
    """Create ``topic`` with one partition, the broker's replication factor and ``configs``;
    False when it exists already (e.g. created meanwhile by another instance). Other refusals
    (not authorized, a bad config) raise kafka-python's ``KafkaError``."""
    try:
        admin.create_topics([NewTopic(topic, 1, -1, topic_configs=dict(configs or {}))])
    except TopicAlreadyExistsError:
        return False
    return True
