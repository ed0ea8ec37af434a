"""Our ``[kafka]`` settings → the keyword arguments of kafka-python's clients, and the same
settings as librdkafka properties for the optional confluent-kafka consumer.

Only connection and security settings map, and only those accepted alike by ``KafkaConsumer``,
``KafkaProducer`` and ``KafkaAdminClient``. Settings that are about *what* to read (topics,
group, offsets) are the caller's to pass; keys this module does not know are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from streameval.errors import ConfigError

#: our key → kafka-python's keyword
_RENAMES: Mapping[str, str] = {
    "bootstrap_servers": "bootstrap_servers",
    "client_id": "client_id",
    "security_protocol": "security_protocol",
    "sasl_mechanism": "sasl_mechanism",
    "sasl_username": "sasl_plain_username",
    "sasl_password": "sasl_plain_password",
    "sasl_kerberos_service_name": "sasl_kerberos_service_name",
    "sasl_kerberos_domain_name": "sasl_kerberos_domain_name",
    "ssl_cafile": "ssl_cafile",
    "ssl_certfile": "ssl_certfile",
    "ssl_keyfile": "ssl_keyfile",
    "ssl_password": "ssl_password",
    "ssl_crlfile": "ssl_crlfile",
    "ssl_check_hostname": "ssl_check_hostname",
}

_SECURITY_PROTOCOLS = frozenset({"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"})
#: SASL mechanisms that authenticate with a username and a password
_PASSWORD_MECHANISMS = frozenset({"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"})


class _Secret(Protocol):
    def get_secret_value(self) -> object: ...


def _plain(value: object) -> object:
    """Unwraps pydantic's ``SecretStr`` (anything with ``get_secret_value``)."""
    getter = getattr(value, "get_secret_value", None)
    return getter() if callable(getter) else value


def client_config(kafka_settings: Mapping[str, object]) -> dict[str, object]:
    """kafka-python keyword arguments for the connection and security settings in
    ``kafka_settings`` (e.g. ``Settings().kafka.model_dump()``); ``None`` values are left out so
    kafka-python's defaults apply. Raises :class:`ConfigError` naming the key when SASL is asked
    for without what it needs.
    """
    config: dict[str, object] = {}
    for key, value in kafka_settings.items():
        target = _RENAMES.get(key)
        plain = _plain(value)
        if target is not None and plain is not None:
            config[target] = plain

    bootstrap = config.get("bootstrap_servers")
    if not bootstrap or not isinstance(bootstrap, str | list | tuple):
        raise ConfigError("kafka.bootstrap_servers: needed (host:port[,host:port…])")
    protocol = str(config.get("security_protocol", "PLAINTEXT")).upper()
    if protocol not in _SECURITY_PROTOCOLS:
        raise ConfigError(
            f"kafka.security_protocol: {protocol!r} is not one of {sorted(_SECURITY_PROTOCOLS)}"
        )
    if protocol.startswith("SASL"):
        mechanism = config.get("sasl_mechanism")
        if not mechanism:
            raise ConfigError(f"kafka.sasl_mechanism: needed with security_protocol={protocol}")
        if str(mechanism).upper() in _PASSWORD_MECHANISMS:
            for ours, theirs in (
                ("sasl_username", "sasl_plain_username"),
                ("sasl_password", "sasl_plain_password"),
            ):
                if not config.get(theirs):
                    raise ConfigError(f"kafka.{ours}: needed with sasl_mechanism={mechanism}")
    return config


#: kafka-python's keyword → librdkafka's property (CONFIGURATION.md of librdkafka)
_LIBRDKAFKA: Mapping[str, str] = {
    "bootstrap_servers": "bootstrap.servers",
    "client_id": "client.id",
    "security_protocol": "security.protocol",
    "sasl_mechanism": "sasl.mechanism",
    "sasl_plain_username": "sasl.username",
    "sasl_plain_password": "sasl.password",
    "sasl_kerberos_service_name": "sasl.kerberos.service.name",
    "ssl_cafile": "ssl.ca.location",
    "ssl_certfile": "ssl.certificate.location",
    "ssl_keyfile": "ssl.key.location",
    "ssl_password": "ssl.key.password",
    "ssl_crlfile": "ssl.crl.location",
}


def librdkafka_config(kafka_settings: Mapping[str, object]) -> dict[str, object]:
    """The connection and security settings as librdkafka properties (for confluent-kafka's
    clients), after the same checks as :func:`client_config`. ``ssl_check_hostname`` becomes
    ``ssl.endpoint.identification.algorithm`` (``https`` or ``none``). Raises
    :class:`ConfigError` for a setting librdkafka has no property for."""
    config: dict[str, object] = {}
    ours = {theirs: key for key, theirs in _RENAMES.items()}
    for key, value in client_config(kafka_settings).items():
        if key == "ssl_check_hostname":
            config["ssl.endpoint.identification.algorithm"] = "https" if value else "none"
            continue
        target = _LIBRDKAFKA.get(key)
        if target is None:
            raise ConfigError(
                f"kafka.{ours.get(key, key)}: not supported with consumer = 'confluent-kafka'"
            )
        if key == "bootstrap_servers" and isinstance(value, list | tuple):
            config[target] = ",".join(str(v) for v in value)
        else:
            config[target] = value
    return config
