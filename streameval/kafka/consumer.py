"""The stream ``kafka.consumer`` asks for: kafka-python's or confluent-kafka's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from streameval.kafka.source import OnRevoke, Stream
from streameval.kafka.stream import EventStream

if TYPE_CHECKING:
    from streameval.config import KafkaSettings


def open_stream(
    kafka: KafkaSettings, *, client: Mapping[str, object], on_revoke: OnRevoke
) -> Stream:
    """The stream ``kafka.consumer`` asks for: :class:`EventStream` with the kafka-python keyword
    arguments ``client``, or the confluent-kafka one (imported only then) with the same settings
    as librdkafka properties."""
    if kafka.consumer == "confluent-kafka":
        from streameval.kafka.client import librdkafka_config
        from streameval.kafka.confluent_stream import ConfluentStream

        return ConfluentStream(
            kafka.topics,
            group_id=kafka.group_id,
            config=librdkafka_config(kafka.model_dump()),
            auto_offset_reset=kafka.auto_offset_reset,
            on_revoke=on_revoke,
            session_timeout_ms=kafka.session_timeout,
            group_instance_id=kafka.group_instance_id,
        )
    return EventStream(
        kafka.topics,
        group_id=kafka.group_id,
        client=client,
        auto_offset_reset=kafka.auto_offset_reset,
        on_revoke=on_revoke,
        session_timeout_ms=kafka.session_timeout,
        group_instance_id=kafka.group_instance_id,
    )
