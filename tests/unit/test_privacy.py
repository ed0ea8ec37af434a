"""Secrets are ``SecretStr`` from the moment they are read, and never show up in a repr, a dump,
a configuration error, a log line or an HTTP answer; only the Kafka client gets the plain value.

The daemon's own log against a real SASL broker is checked in ``tests/integration/test_sasl.py``.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from pydantic import SecretStr

from streameval import cli
from streameval.config import KafkaSettings, MetricsSettings, load_settings
from streameval.errors import ConfigError
from streameval.export.server import MetricsServer
from streameval.kafka.client import client_config

SASL = "sasl-Pa55-wörd-7f3a"
SSL = "ssl-key-pass-91c2"
BASIC = "basic-auth-secret-5e8d"
SECRETS = (SASL, SSL, BASIC)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("STREAMEVAL_"):
            monkeypatch.delenv(name)


def _no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


def _env_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STREAMEVAL_KAFKA__SECURITY_PROTOCOL", "SASL_SSL")
    monkeypatch.setenv("STREAMEVAL_KAFKA__SASL_MECHANISM", "PLAIN")
    monkeypatch.setenv("STREAMEVAL_KAFKA__SASL_USERNAME", "alice")
    monkeypatch.setenv("STREAMEVAL_KAFKA__SASL_PASSWORD", SASL)
    monkeypatch.setenv("STREAMEVAL_KAFKA__SSL_PASSWORD", SSL)
    monkeypatch.setenv("STREAMEVAL_METRICS__BASIC_AUTH_USERNAME", "prom")
    monkeypatch.setenv("STREAMEVAL_METRICS__BASIC_AUTH_PASSWORD", BASIC)


def test_every_secret_setting_is_a_secret_str() -> None:
    for model, names in (
        (KafkaSettings, ("sasl_password", "ssl_password")),
        (MetricsSettings, ("basic_auth_password",)),
    ):
        for name in names:
            annotation = str(model.model_fields[name].annotation)
            assert "SecretStr" in annotation, (model.__name__, name, annotation)


def test_secrets_from_the_environment_stay_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    _env_secrets(monkeypatch)
    s = load_settings()
    assert isinstance(s.kafka.sasl_password, SecretStr)
    assert isinstance(s.kafka.ssl_password, SecretStr)
    assert isinstance(s.metrics.basic_auth_password, SecretStr)
    # the values were read (a setting silently dropped would also "not leak")
    assert s.kafka.sasl_password.get_secret_value() == SASL
    assert s.metrics.basic_auth_password.get_secret_value() == BASIC
    for rendering in (
        repr(s),
        str(s),
        f"{s}",
        repr(s.kafka),
        repr(s.metrics),
        s.model_dump_json(),
        json.dumps(s.model_dump(mode="json")),
        repr(s.model_dump()),
    ):
        _no_secret(rendering)


def test_secrets_from_a_file_stay_hidden(tmp_path: Path) -> None:
    cfg = tmp_path / "streameval.toml"
    cfg.write_text(
        "[kafka]\n"
        'security_protocol = "SASL_PLAINTEXT"\nsasl_mechanism = "PLAIN"\n'
        f'sasl_username = "alice"\nsasl_password = "{SASL}"\n'
    )
    s = load_settings(cfg)
    assert s.kafka.sasl_password is not None
    assert s.kafka.sasl_password.get_secret_value() == SASL
    _no_secret(repr(s))


def test_the_kafka_client_alone_gets_the_plain_value(monkeypatch: pytest.MonkeyPatch) -> None:
    _env_secrets(monkeypatch)
    config = client_config(load_settings().kafka.model_dump())
    assert config["sasl_plain_password"] == SASL
    assert config["sasl_plain_username"] == "alice"
    assert config["ssl_password"] == SSL


def test_configuration_errors_do_not_echo_secrets(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _env_secrets(monkeypatch)
    # a wrong value next to the secrets: the message names the key, not the values around it
    monkeypatch.setenv("STREAMEVAL_EVALUATION__KS", "[0]")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "evaluation.ks" in str(info.value)
    _no_secret(str(info.value))
    # a password without its username
    monkeypatch.delenv("STREAMEVAL_EVALUATION__KS")
    monkeypatch.delenv("STREAMEVAL_METRICS__BASIC_AUTH_USERNAME")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "basic_auth_username" in str(info.value)
    _no_secret(str(info.value))
    # SASL without its username: the client configuration names the key
    monkeypatch.setenv("STREAMEVAL_METRICS__BASIC_AUTH_USERNAME", "prom")
    monkeypatch.delenv("STREAMEVAL_KAFKA__SASL_USERNAME")
    with pytest.raises(ConfigError) as info:
        client_config(load_settings().kafka.model_dump())
    assert "kafka.sasl_username" in str(info.value)
    _no_secret(str(info.value))


def test_the_command_line_error_does_not_echo_secrets(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    _env_secrets(monkeypatch)
    monkeypatch.setenv("STREAMEVAL_METRICS__PORT", "70000")  # fails at start, before Kafka
    caplog.set_level(logging.DEBUG)
    kafka_logger = logging.getLogger("kafka")
    level = kafka_logger.level
    try:
        code = cli.main(["run", "--log-level", "DEBUG"])
    finally:
        kafka_logger.setLevel(level)  # `run` sets it for the process
    out = capsys.readouterr()
    assert code != 0
    assert "metrics.port" in out.err
    _no_secret(out.out + out.err + caplog.text)


def _get(url: str, auth: tuple[str, str] | None = None) -> tuple[int, str, str]:
    request = urllib.request.Request(url)
    if auth is not None:
        import base64

        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            return r.status, r.read().decode(), str(r.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), str(exc.headers)


def test_basic_auth_password_is_never_sent_back_or_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server = MetricsServer(
        CollectorRegistry(),
        host="127.0.0.1",
        port=0,
        ready=lambda: True,
        status=lambda: {"ok": True},
        basic_auth=("prom", SecretStr(BASIC)),
    )
    _no_secret(repr(server))
    server.start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        # wrong password, no password, right password: none answers with the secret
        denied = _get(f"{base}/metrics", ("prom", BASIC + "x"))
        assert denied[0] == 401
        anonymous = _get(f"{base}/api/status")
        assert anonymous[0] == 401
        allowed = _get(f"{base}/api/status", ("prom", BASIC))
        assert allowed[0] == 200
        for _status, body, headers in (denied, anonymous, allowed):
            _no_secret(body + headers)
    finally:
        server.stop()
    _no_secret(caplog.text)
