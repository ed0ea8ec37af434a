"""``[kafka]``: the cluster, the topics read and written, the consumer group and its client."""

from __future__ import annotations

import importlib.util
import re
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator

from streameval.config.base import FROZEN, Duration

#: the characters Kafka allows in a ``group.instance.id``
_INSTANCE_ID = re.compile(r"[A-Za-z0-9._-]+")


class KafkaSettings(BaseModel):
    """The Kafka cluster, the topics read and written, and the consumer group (DESIGN §6)."""

    model_config = FROZEN

    #: the brokers to bootstrap from, comma-separated "host:port" pairs
    bootstrap_servers: str = "localhost:9092"
    #: the consumer group of ``topics``: the instances of one deployment share it and split the
    #: partitions; also the prefix of the group's keys in ``state_topic``
    group_id: str = Field("streameval", min_length=1)
    #: impressions and clicks (native or UBI); co-partitioned by request_id
    topics: tuple[str, ...] = ("search-impressions", "search-clicks")
    #: graded judgments, keyed by query_id + doc_id (+ judge) and compacted; every instance reads
    #: all of them, to their end before any list is finalized
    judgment_topics: tuple[str, ...] = ("search-judgments",)
    #: "" turns the dead-letter topic off
    dlq_topic: str = "streameval-dlq"
    #: the window state changelog (DESIGN §6): a compacted topic of finalized buckets, so that a
    #: restart or rebalance loads them instead of re-reading the longest window; "" turns it off
    state_topic: str = "streameval-state"
    #: where a group without committed offsets starts (extension)
    auto_offset_reset: Literal["earliest", "latest"] = "earliest"
    #: the client id the Kafka clients give the brokers (extension)
    client_id: str = "streameval"
    #: how often offsets (with their checkpoint) are committed (extension)
    commit_interval: Duration = 5_000
    #: a member silent for this long leaves the group and its partitions move (extension)
    session_timeout: Duration = 45_000
    #: at start, when no broker of ``bootstrap_servers`` answers: false (the default) fails
    #: within seconds saying so; true retries with backoff (1 s doubling to 30 s) while the
    #: process lives, serving /healthz meanwhile (/readyz stays 503)
    connect_retry: bool = False
    #: static group membership (KIP-345; extension): this instance's own, stable id in the
    #: group, e.g. a StatefulSet pod's name (``$HOSTNAME``). A member that comes back with its
    #: id within ``session_timeout`` gets its partitions back at once, without a rebalance (a
    #: crashed instance is not blind for the session timeout); but a static member does not
    #: leave the group when it stops, so the partitions of one that does not come back wait
    #: ``session_timeout`` before they move. Unset: dynamic membership. Each instance needs
    #: its own id: two with the same one fence each other.
    group_instance_id: str | None = None
    #: the client that reads ``topics`` in the consumer group (extension): "kafka-python" (the
    #: default) or "confluent-kafka" (librdkafka; the optional extra ``streameval[confluent]``;
    #: co-partitions with librdkafka's range assignor, so the topics need equal partition counts,
    #: and every member of a group must use the same client). Judgments and the dead-letter
    #: topic always use kafka-python.
    consumer: Literal["kafka-python", "confluent-kafka"] = Field(
        "kafka-python",
        description="client of the consumer group: kafka-python (default) or confluent-kafka "
        "(pip install 'streameval[confluent]'; topics with equal partition counts; one client "
        "per group)",
    )
    # security settings, passed through to the Kafka client
    #: how the clients talk to the brokers: TLS ("SSL", "SASL_SSL") and SASL authentication
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    #: the SASL mechanism: "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", ...
    sasl_mechanism: str | None = None
    #: the SASL user name
    sasl_username: str | None = None
    #: the SASL password (a secret: never printed or logged)
    sasl_password: SecretStr | None = None
    #: the CA certificate (PEM file) that signed the brokers' certificates
    ssl_cafile: str | None = None
    #: the client certificate (PEM file), for brokers that authenticate clients by TLS
    ssl_certfile: str | None = None
    #: the client certificate's private key (PEM file)
    ssl_keyfile: str | None = None
    #: the password of ``ssl_keyfile`` (a secret)
    ssl_password: SecretStr | None = None
    #: check that a broker's certificate names the host connected to
    ssl_check_hostname: bool = True

    @field_validator("consumer")
    @classmethod
    def _consumer_installed(cls, value: str) -> str:
        if value == "confluent-kafka" and importlib.util.find_spec("confluent_kafka") is None:
            raise ValueError(
                "confluent-kafka is not installed: pip install 'streameval[confluent]'"
            )
        return value

    @field_validator("group_instance_id")
    @classmethod
    def _instance_id(cls, value: str | None) -> str | None:
        # Kafka's rule for an instance id (JoinGroupRequest.validateGroupInstanceId, as for a
        # topic name), which excludes whitespace; a pod's name always passes it
        if value is not None and (
            not _INSTANCE_ID.fullmatch(value) or value in (".", "..") or len(value) > 249
        ):
            raise ValueError(
                f"{value!r} must be 1 to 249 of A-Z a-z 0-9 . _ - (no whitespace), e.g. the "
                "pod's name ($HOSTNAME), or unset for dynamic membership"
            )
        return value

    @model_validator(mode="after")
    def _topics_given(self) -> KafkaSettings:
        if not self.topics or any(not t for t in self.topics):
            raise ValueError("topics: at least one non-empty topic name is needed")
        return self
