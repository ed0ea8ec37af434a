"""SASL/PLAIN against a real broker (scripts/kafka-broker with STREAMEVAL_KAFKA_SASL_PLAIN, in a
data dir of its own): the daemon configured with SASL_PLAINTEXT reads and scores exactly like
replay; with a wrong password it stops with a clear message; the password is never in its log.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient

from tests.integration.conftest import (
    BROKER_SCRIPT,
    START_TIMEOUT_S,
    STOP_TIMEOUT_S,
    _broker_env,
    _broker_script,
    _unavailable,
)
from tests.integration.daemon_support import (
    T0,
    DaemonProcess,
    Topics,
    _clean_env,
    assert_windows_match,
    dump_partitions,
    free_port,
    make_log,
    produce,
    replay_json,
    sentinels,
    value,
)

pytestmark = pytest.mark.kafka

USER = "streameval-test"
PASSWORD = f"pw-{uuid.uuid4().hex}"


@pytest.fixture(scope="module")
def sasl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = _broker_env(tmp_path_factory.mktemp("sasl-broker"))
    env["STREAMEVAL_KAFKA_SASL_PLAIN"] = f"{USER}:{PASSWORD}"
    done = _broker_script("start", env, START_TIMEOUT_S)
    lines = done.stdout.split()
    if done.returncode != 0 or not lines:
        _broker_script("stop", env, STOP_TIMEOUT_S)
        _unavailable(f"{BROKER_SCRIPT} start (SASL) exited {done.returncode}: {done.stderr[-999:]}")
    try:
        yield lines[-1]
    finally:
        _broker_script("stop", env, STOP_TIMEOUT_S)


def _auth(password: str = PASSWORD) -> dict[str, Any]:
    return {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": USER,
        "sasl_plain_password": password,
    }


def _env(bootstrap: str, password: str) -> dict[str, str]:
    return {
        "STREAMEVAL_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
        "STREAMEVAL_KAFKA__SECURITY_PROTOCOL": "SASL_PLAINTEXT",
        "STREAMEVAL_KAFKA__SASL_MECHANISM": "PLAIN",
        "STREAMEVAL_KAFKA__SASL_USERNAME": USER,
        "STREAMEVAL_KAFKA__SASL_PASSWORD": password,
    }


def _num(metrics: dict[Any, float], name: str) -> float:
    v = value(metrics, name)
    return -1.0 if v is None else v


def test_the_broker_refuses_clients_without_the_password(sasl_broker: str) -> None:
    """The positive control: the SASL option of scripts/kafka-broker really authenticates."""
    admin = KafkaAdminClient(bootstrap_servers=sasl_broker, **_auth())
    assert isinstance(admin.list_topics(), list)
    admin.close()
    for config in (_auth("wrong-password"), {}):
        with pytest.raises(Exception):  # noqa: B017 - kafka-python: a timeout, whatever the cause
            KafkaAdminClient(
                bootstrap_servers=sasl_broker, request_timeout_ms=5000, **config
            ).list_topics()


@pytest.mark.parametrize("consumer", ["kafka-python", "confluent-kafka"])
def test_the_daemon_reads_and_scores_over_sasl(
    sasl_broker: str, tmp_path: Path, consumer: str
) -> None:
    """With either client of the consumer group (the confluent one gets the settings as
    librdkafka properties)."""
    topics = Topics.created_on(sasl_broker, **_auth())
    log = make_log(8, 300)
    sentinels(log, T0 + 30 * 60_000)
    produce(sasl_broker, topics, log, **_auth())
    expected = replay_json(dump_partitions(sasl_broker, topics, tmp_path, **_auth()))
    env = topics.env(sasl_broker, f"g-{uuid.uuid4().hex}", free_port()) | _env(
        sasl_broker, PASSWORD
    )
    env["STREAMEVAL_KAFKA__CONSUMER"] = consumer
    log_path = tmp_path / "daemon.log"
    daemon = DaemonProcess(env, log_path)
    try:
        horizon_s = expected["horizon_ms"] / 1000
        metrics = daemon.wait_for(
            lambda m: (
                _num(m, "streameval_records_read_total") == len(log.records)
                and _num(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
            ),
            what="the daemon to read over SASL",
            ready=True,
        )
        assert assert_windows_match(metrics, expected) > 20
        assert daemon.terminate() == 0
    finally:
        if daemon.proc.poll() is None:
            daemon.kill()
    text = log_path.read_text(errors="replace")
    assert PASSWORD not in text
    assert "caught up: ready" in text


def test_a_wrong_password_stops_the_daemon_with_a_clear_message(sasl_broker: str) -> None:
    env = {
        **_clean_env(),
        **_env(sasl_broker, "not-" + PASSWORD),
        "STREAMEVAL_KAFKA__TOPICS": '["any-impressions"]',
        "STREAMEVAL_METRICS__HOST": "127.0.0.1",
        "STREAMEVAL_METRICS__PORT": str(free_port()),
    }
    done = subprocess.run(
        [sys.executable, "-m", "streameval.cli", "run", "--log-level", "DEBUG"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        cwd=os.getcwd(),
    )
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("streameval: error:"), done.stderr[-3000:]
    assert "sasl_password" in last and USER in last  # says what to check, and as whom
    assert "Traceback" not in done.stderr
    output = done.stdout + done.stderr
    assert PASSWORD not in output  # neither the right one (a substring of the wrong one) ...
    assert "not-" + PASSWORD not in output  # ... nor the one given
