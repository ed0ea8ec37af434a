"""``kafka.group_instance_id`` (static group membership, KIP-345): the key, its validation, and
that each consumer client is given it (the broker's side: the integration test of that name)."""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from kafka import TopicPartition
from kafka.errors import FencedInstanceIdError

from streameval.config import load_settings
from streameval.errors import ConfigError, FencedError
from streameval.kafka import confluent_stream, confluent_support, stream
from streameval.kafka.checkpoint import Checkpoint
from streameval.kafka.consumer import open_stream

TOPICS = ["impressions", "clicks"]


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STREAMEVAL_KAFKA__GROUP_INSTANCE_ID", raising=False)


def test_unset_by_default_dynamic_membership() -> None:
    assert load_settings().kafka.group_instance_id is None


def test_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STREAMEVAL_KAFKA__GROUP_INSTANCE_ID", "streameval-2")
    assert load_settings().kafka.group_instance_id == "streameval-2"


def test_read_from_the_file(tmp_path: Any) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[kafka]\ngroup_instance_id = "eval.pod_0"\n')
    assert load_settings(path).kafka.group_instance_id == "eval.pod_0"


@pytest.mark.parametrize("bad", ["", " ", "pod 0", "pod-0\n", "\tpod", "pod/0", "..", "x" * 250])
def test_a_bad_id_is_one_line_naming_the_key(bad: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(kafka={"group_instance_id": bad})
    message = str(info.value)
    assert message.startswith("invalid configuration: kafka.group_instance_id: ")
    assert "no whitespace" in message
    assert "\n" not in message


def test_the_longest_id_kafka_takes_is_taken() -> None:
    assert load_settings(kafka={"group_instance_id": "a" * 249}).kafka.group_instance_id


class _FakeKafkaConsumer:
    made: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        _FakeKafkaConsumer.made.append(kwargs)
        self.fenced = False

    def partitions_for_topic(self, topic: str) -> set[int]:
        return {0}

    def subscribe(self, topics: list[str], listener: Any) -> None:
        pass

    def topics(self) -> set[str]:
        return set(TOPICS)

    def poll(self, timeout_ms: int) -> dict[Any, Any]:
        raise FencedInstanceIdError("Got fenced exception for group_instance_id pod-0")

    def commit(self, offsets: Any, timeout_ms: int) -> None:
        raise FencedInstanceIdError()


@pytest.fixture
def kafka_python(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    _FakeKafkaConsumer.made = []
    monkeypatch.setattr(stream, "KafkaConsumer", _FakeKafkaConsumer)
    yield _FakeKafkaConsumer.made


def _open(kafka: dict[str, Any]) -> Any:
    settings = load_settings(kafka={"topics": TOPICS, **kafka})
    return open_stream(settings.kafka, client={}, on_revoke=lambda p, lost: {})


@pytest.mark.parametrize("instance_id", [None, "streameval-0"])
def test_kafka_python_is_given_the_id(
    kafka_python: list[dict[str, Any]], instance_id: str | None
) -> None:
    _open({"group_instance_id": instance_id})
    assert [made["group_instance_id"] for made in kafka_python] == [instance_id]


def test_kafka_python_fencing_is_a_config_error_naming_the_key(
    kafka_python: list[dict[str, Any]],
) -> None:
    s = _open({"group_instance_id": "pod-0"})
    with pytest.raises(FencedError, match=r"^kafka\.group_instance_id: 'pod-0' is used by"):
        s.poll(100)
    with pytest.raises(FencedError) as info:
        s.commit({TopicPartition("impressions", 0): (5, Checkpoint(0, 5, None))})
    assert isinstance(info.value, ConfigError)  # the CLI's one line, exit code 2


class _CkError:
    _FENCED = -144
    FENCED_INSTANCE_ID = 82
    _FATAL = -150

    def __init__(self, code: int, text: str) -> None:
        self._code, self._text = code, text

    def code(self) -> int:
        return self._code

    def str(self) -> str:
        return self._text

    def fatal(self) -> bool:
        return self._fatal

    _fatal = True


class _CkException(Exception):
    pass


def _fake_ck(made: list[dict[str, Any]]) -> Any:
    topic = types.SimpleNamespace(error=None, partitions={0: None})

    class Admin:
        def __init__(self, config: Any) -> None:
            pass

        def list_topics(self, timeout: float) -> Any:
            return types.SimpleNamespace(topics=dict.fromkeys(TOPICS, topic))

    class Consumer:
        def __init__(self, config: dict[str, Any]) -> None:
            made.append(config)

        def subscribe(self, topics: list[str], **callbacks: Any) -> None:
            pass

        def consume(self, n: int, timeout: float) -> list[Any]:
            raise _CkException(_CkError(_CkError._FENCED, "Static consumer fenced"))

    return types.SimpleNamespace(
        admin=types.SimpleNamespace(AdminClient=Admin),
        Consumer=Consumer,
        KafkaException=_CkException,
        KafkaError=_CkError,
        version=lambda: ("2.16.1", 0),
        libversion=lambda: ("2.16.0", 0),
    )


@pytest.fixture
def confluent(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    made: ClassVar[list[dict[str, Any]]] = []
    monkeypatch.setattr(confluent_stream, "_import", lambda: _fake_ck(made))
    yield made


def test_confluent_kafka_is_given_the_id(confluent: list[dict[str, Any]]) -> None:
    _open({"consumer": "confluent-kafka", "group_instance_id": "streameval-1"})
    _open({"consumer": "confluent-kafka"})
    assert [made.get("group.instance.id") for made in confluent] == ["streameval-1", None]
    assert "group.instance.id" not in confluent[1]  # dynamic: librdkafka's default


def test_confluent_kafka_fencing_is_a_config_error_naming_the_key(
    confluent: list[dict[str, Any]],
) -> None:
    s = _open({"consumer": "confluent-kafka", "group_instance_id": "pod-1"})
    with pytest.raises(FencedError, match=r"^kafka\.group_instance_id: 'pod-1' is used by"):
        s.poll(100)


def test_a_fatal_message_error_of_a_fenced_member_is_the_fenced_error(
    confluent: list[dict[str, Any]],
) -> None:
    s = _open({"consumer": "confluent-kafka", "group_instance_id": "pod-1"})
    fenced = _CkError(_CkError._FATAL, "Fatal error: Broker: Static consumer fenced by other")
    message = types.SimpleNamespace(error=lambda: fenced)
    s._consumer.consume = lambda n, timeout: [message]
    with pytest.raises(FencedError):
        s.poll(100)
    other = _CkError(_CkError._FATAL, "Fatal error: something else")
    s._consumer.consume = lambda n, timeout: [types.SimpleNamespace(error=lambda: other)]
    with pytest.raises(confluent_support.FatalConsumerError) as info:
        s.poll(100)
    assert not isinstance(info.value, FencedError)


def test_a_fenced_members_fatal_error_is_not_dropped_with_a_batch_that_crossed_a_rebalance(
    confluent: list[dict[str, Any]],
) -> None:
    """librdkafka takes a fenced member's partitions away in the same ``consume()`` call that
    hands out its one fatal error; the batch is dropped (the new assignment is read again), the
    error must not be, or the member runs on with every commit failing."""
    s = _open({"consumer": "confluent-kafka", "group_instance_id": "pod-1"})
    fenced = _CkError(_CkError._FATAL, "Fatal error: Broker: Static consumer fenced by other")

    def consume_across_a_revocation(n: int, timeout: float) -> list[Any]:
        s._revoked_in_call = True  # what the revoke (or lost) callback sets during the call
        return [types.SimpleNamespace(error=lambda: fenced)]

    s._consumer.consume = consume_across_a_revocation
    with pytest.raises(FencedError, match=r"^kafka\.group_instance_id: 'pod-1' is used by"):
        s.poll(100)


def test_a_fenced_members_message_error_is_fatal_by_its_code_alone(
    confluent: list[dict[str, Any]],
) -> None:
    """librdkafka hands a fenced member a message whose error has the code ``_FATAL`` but whose
    ``fatal()`` is False (seen against a real broker): the code decides."""
    s = _open({"consumer": "confluent-kafka", "group_instance_id": "pod-1"})
    fenced = _CkError(_CkError._FATAL, "Fatal error: Broker: Static consumer fenced by other")
    fenced._fatal = False
    s._consumer.consume = lambda n, timeout: [types.SimpleNamespace(error=lambda: fenced)]
    with pytest.raises(FencedError, match=r"^kafka\.group_instance_id: 'pod-1' is used by"):
        s.poll(100)
