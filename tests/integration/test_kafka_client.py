"""client_config: our [kafka] keys → kafka-python keyword arguments."""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from pydantic import SecretStr

from streameval.errors import ConfigError
from streameval.kafka.client import client_config


def test_sasl_ssl_settings_map_to_kafka_python_names() -> None:
    ours = {
        "bootstrap_servers": "k1:9093,k2:9093",
        "group_id": "streameval",
        "topics": ("search-impressions", "search-clicks"),
        "dlq_topic": "streameval-dlq",
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_username": "eval",
        "sasl_password": SecretStr("s3cret"),
        "ssl_cafile": "/etc/ca.pem",
        "ssl_certfile": None,
        "ssl_check_hostname": False,
    }
    assert client_config(ours) == {
        "bootstrap_servers": "k1:9093,k2:9093",
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "eval",
        "sasl_plain_password": "s3cret",
        "ssl_cafile": "/etc/ca.pem",
        "ssl_check_hostname": False,
    }


def test_every_mapped_keyword_is_accepted_by_all_three_clients() -> None:
    every = client_config(
        {
            "bootstrap_servers": "k:9092",
            "client_id": "c",
            "security_protocol": "SASL_SSL",
            "sasl_mechanism": "PLAIN",
            "sasl_username": "u",
            "sasl_password": "p",
            "sasl_kerberos_service_name": "kafka",
            "sasl_kerberos_domain_name": "example",
            "ssl_cafile": "a",
            "ssl_certfile": "b",
            "ssl_keyfile": "c",
            "ssl_password": "d",
            "ssl_crlfile": "e",
            "ssl_check_hostname": True,
        }
    )
    assert len(every) == 14
    for client in (KafkaConsumer, KafkaProducer, KafkaAdminClient):
        assert set(every) <= set(client.DEFAULT_CONFIG), client.__name__


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({"bootstrap_servers": ""}, "kafka.bootstrap_servers"),
        ({"bootstrap_servers": "k:1", "security_protocol": "TLS"}, "kafka.security_protocol"),
        ({"bootstrap_servers": "k:1", "security_protocol": "SASL_SSL"}, "kafka.sasl_mechanism"),
        (
            {"bootstrap_servers": "k:1", "security_protocol": "SASL_PLAINTEXT",
             "sasl_mechanism": "PLAIN", "sasl_password": "p"},
            "kafka.sasl_username",
        ),
    ],
)  # fmt: skip
def test_incomplete_security_settings_fail_naming_the_key(
    settings: dict[str, object], key: str
) -> None:
    with pytest.raises(ConfigError, match=key):
        client_config(settings)


@pytest.mark.kafka
def test_the_config_connects_to_the_broker(kafka_bootstrap: str) -> None:
    config = client_config({"bootstrap_servers": kafka_bootstrap, "client_id": "cfg-test"})
    consumer = KafkaConsumer(**config)
    try:
        assert isinstance(consumer.topics(), set)
        assert consumer.config["client_id"] == "cfg-test"
    finally:
        consumer.close()
