"""The `[kafka]` settings as librdkafka properties (the optional confluent-kafka consumer), and
the `kafka.consumer` setting that asks for it."""

from __future__ import annotations

import importlib.util
import os

import pytest
from pydantic import SecretStr

from streameval.config import load_settings
from streameval.errors import ConfigError
from streameval.kafka.checkpoint import Checkpoint
from streameval.kafka.client import librdkafka_config


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("STREAMEVAL_"):
            monkeypatch.delenv(name)


def test_defaults_map_to_plaintext_librdkafka_properties() -> None:
    config = librdkafka_config(load_settings().kafka.model_dump())
    assert config == {
        "bootstrap.servers": "localhost:9092",
        "client.id": "streameval",
        "security.protocol": "PLAINTEXT",
        "ssl.endpoint.identification.algorithm": "https",
    }


def test_sasl_and_ssl_settings_map_to_their_librdkafka_names() -> None:
    settings = load_settings(
        kafka={
            "bootstrap_servers": "a:9093,b:9093",
            "security_protocol": "SASL_SSL",
            "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_username": "svc",
            "sasl_password": "s3cret",
            "ssl_cafile": "/etc/ca.pem",
            "ssl_certfile": "/etc/client.pem",
            "ssl_keyfile": "/etc/client.key",
            "ssl_password": "keypass",
            "ssl_check_hostname": False,
        }
    )
    config = librdkafka_config(settings.kafka.model_dump())
    assert config == {
        "bootstrap.servers": "a:9093,b:9093",
        "client.id": "streameval",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "svc",
        "sasl.password": "s3cret",  # unwrapped from SecretStr for the client only
        "ssl.ca.location": "/etc/ca.pem",
        "ssl.certificate.location": "/etc/client.pem",
        "ssl.key.location": "/etc/client.key",
        "ssl.key.password": "keypass",
        "ssl.endpoint.identification.algorithm": "none",
    }


def test_the_same_checks_as_for_kafka_python() -> None:
    with pytest.raises(ConfigError, match=r"kafka\.sasl_password"):
        librdkafka_config(
            {
                "bootstrap_servers": "a:9092",
                "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "PLAIN",
                "sasl_username": "u",
            }
        )
    with pytest.raises(ConfigError, match=r"kafka\.bootstrap_servers"):
        librdkafka_config({"bootstrap_servers": ""})


def test_a_list_of_servers_is_joined_and_a_setting_without_a_property_is_refused() -> None:
    config = librdkafka_config({"bootstrap_servers": ["a:1", "b:2"]})
    assert config["bootstrap.servers"] == "a:1,b:2"
    with pytest.raises(ConfigError, match=r"kafka\.sasl_kerberos_domain_name"):
        librdkafka_config({"bootstrap_servers": "a:1", "sasl_kerberos_domain_name": "x"})


def test_librdkafka_accepts_every_property_name() -> None:
    """librdkafka refuses an unknown property when the client is made (no broker needed)."""
    from confluent_kafka import Consumer

    config = librdkafka_config(
        {
            "bootstrap_servers": "127.0.0.1:1",
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "PLAIN",
            "sasl_username": "u",
            "sasl_password": SecretStr("p"),
            "ssl_password": SecretStr("k"),
            "ssl_check_hostname": True,
        }
    )
    Consumer({**config, "group.id": "g"}).close()


def test_consumer_setting_defaults_to_kafka_python_and_names_the_extra_when_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert load_settings().kafka.consumer == "kafka-python"
    assert load_settings(kafka={"consumer": "confluent-kafka"}).kafka.consumer == "confluent-kafka"
    with pytest.raises(ConfigError, match=r"kafka\.consumer: Input should be"):
        load_settings(kafka={"consumer": "rdkafka"})
    monkeypatch.setenv("STREAMEVAL_KAFKA__CONSUMER", "confluent-kafka")
    assert load_settings().kafka.consumer == "confluent-kafka"
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "confluent_kafka" else real(name, *a),
    )
    with pytest.raises(ConfigError, match=r"kafka\.consumer: .*streameval\[confluent\]"):
        load_settings()


def test_checkpoint_committed_by_confluent_kafka_reads_back_in_kafka_python() -> None:
    """librdkafka commits metadata as a C string, NUL included; kafka-python returns the NUL."""
    checkpoint = Checkpoint(1_767_227_090_000, 103)
    assert Checkpoint.decode(checkpoint.encode() + "\x00") == checkpoint
    assert Checkpoint.decode(checkpoint.encode()) == checkpoint
