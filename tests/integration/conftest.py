"""Fixtures of the integration tests: one real Apache Kafka broker for the whole test session.

Where the broker comes from, first match wins:
  1. ``KAFKA_BOOTSTRAP_SERVERS`` (an existing cluster, e.g. the docker-compose one),
  2. testcontainers' ``KafkaContainer`` when a Docker engine answers,
  3. ``scripts/kafka-broker start``: the real broker's jars (fetched once with Maven) run in a JVM,
     with a fresh data dir and free loopback ports, stopped at the end of the session.
When none works, the tests that need Kafka fail under ``CI=true`` and are skipped otherwise.

Tests that use these fixtures are marked ``pytest.mark.kafka``.

A real schema registry, for the Avro tests that need one: ``scripts/schema-registry start``
(Apicurio Registry assembled from Maven Central, in-memory storage) on a free loopback port, for the
session; a failure to start fails the tests that need it under ``CI=true`` and skips them otherwise.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NoReturn, Protocol

import pytest
from kafka import KafkaAdminClient

from tests.ci import in_ci

REPO = Path(__file__).resolve().parents[2]
BROKER_SCRIPT = REPO / "scripts" / "kafka-broker"
REGISTRY_SCRIPT = REPO / "scripts" / "schema-registry"
# Generous: on a cold machine `start` first fetches the jars with Maven.
START_TIMEOUT_S = 600
STOP_TIMEOUT_S = 120


class TopicFactory(Protocol):
    """Creates a uuid-named topic and returns its name; deleted after the test."""

    def __call__(
        self,
        partitions: int = 1,
        *,
        prefix: str = "test",
        config: Mapping[str, str] | None = None,
    ) -> str: ...


def _unavailable(reason: str) -> NoReturn:
    message = f"no Kafka broker for the integration tests: {reason}"
    if in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def _docker_answers() -> bool:
    """True when a Docker engine answers a ping; cheap when there is none (no socket, no host)."""
    if not os.environ.get("DOCKER_HOST") and not Path("/var/run/docker.sock").exists():
        return False
    try:
        import docker

        client = docker.from_env(timeout=3)
        try:
            return client.ping() is True
        finally:
            client.close()
    except Exception:
        return False


def _container_broker() -> Iterator[str]:
    from testcontainers.community.kafka import KafkaContainer

    container = KafkaContainer().with_kraft()
    container.start()
    try:
        yield container.get_bootstrap_server()
    finally:
        container.stop()


def _broker_env(data_dir: Path) -> dict[str, str]:
    # A fresh data dir on free ports: drop a developer's fixed-port settings.
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"STREAMEVAL_KAFKA_PORT", "STREAMEVAL_KAFKA_CONTROLLER_PORT"}
    }
    env["STREAMEVAL_KAFKA_DATA_DIR"] = str(data_dir)
    # The broker stops by itself if this test process dies without running the finalizer.
    env["STREAMEVAL_KAFKA_WATCH_PID"] = str(os.getpid())
    return env


def _script(
    script: Path, command: str, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(script), command],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _broker_script(
    command: str, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    return _script(BROKER_SCRIPT, command, env, timeout)


def _service(
    script: Path, env: dict[str, str], unavailable: Callable[[str], NoReturn]
) -> Iterator[str]:
    """Runs ``script start`` (the last word it prints is the address yielded), then ``script
    stop``; a start that fails or hangs stops what it may have started and calls ``unavailable``."""
    name = f"scripts/{script.name}"
    if not os.access(script, os.X_OK):
        unavailable(f"{script} is missing or not executable")
    try:
        started = _script(script, "start", env, START_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            _script(script, "stop", env, STOP_TIMEOUT_S)
        unavailable(f"{name} start: {error}")
    lines = started.stdout.split()
    if started.returncode != 0 or not lines:
        _script(script, "stop", env, STOP_TIMEOUT_S)
        unavailable(f"{name} start exited {started.returncode}:\n{started.stderr[-3000:]}")
    try:
        yield lines[-1]
    finally:
        _script(script, "stop", env, STOP_TIMEOUT_S)


def _local_broker(data_dir: Path) -> Iterator[str]:
    yield from _service(BROKER_SCRIPT, _broker_env(data_dir), _unavailable)


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``host:port`` of a real Kafka broker, shared by the whole session."""
    external = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "").strip()
    if external:
        yield external
        return
    if _docker_answers():
        yield from _container_broker()
        return
    yield from _local_broker(tmp_path_factory.mktemp("kafka-broker"))


@pytest.fixture
def topic_factory(kafka_bootstrap: str) -> Iterator[TopicFactory]:
    """Creates uuid-named topics (ready: every partition has a leader); deletes them afterwards."""
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap, client_id="streameval-tests")
    created: list[str] = []

    def create(
        partitions: int = 1,
        *,
        prefix: str = "test",
        config: Mapping[str, str] | None = None,
    ) -> str:
        name = f"{prefix}-{uuid.uuid4().hex}"
        spec = {
            "num_partitions": partitions,
            "replication_factor": 1,
            "configs": dict(config or {}),
        }
        admin.create_topics({name: spec}, wait_for_metadata=True)
        created.append(name)
        return name

    try:
        yield create
    finally:
        if created:
            with contextlib.suppress(Exception):
                admin.delete_topics(created)
        admin.close()


def _no_registry(reason: str) -> NoReturn:
    message = f"no schema registry for the Avro tests: {reason}"
    if in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def schema_registry_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The Confluent-compatible API of a real schema registry (Apicurio Registry, in memory),
    started for the session on a free loopback port: ``http://127.0.0.1:PORT/apis/ccompat/v6``."""
    env = {k: v for k, v in os.environ.items() if k != "STREAMEVAL_REGISTRY_PORT"}
    env["STREAMEVAL_REGISTRY_DATA_DIR"] = str(tmp_path_factory.mktemp("schema-registry"))
    env["STREAMEVAL_REGISTRY_WATCH_PID"] = str(os.getpid())
    yield from _service(REGISTRY_SCRIPT, env, _no_registry)


def register_schema(registry_url: str, subject: str, schema: str) -> int:
    """Registers an Avro schema under ``subject`` (Confluent's ``POST
    /subjects/{subject}/versions``) and returns the id the registry gave it."""
    request = urllib.request.Request(
        f"{registry_url}/subjects/{subject}/versions",
        data=json.dumps({"schema": schema}).encode(),
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        schema_id = json.loads(response.read())["id"]
    if not isinstance(schema_id, int):
        raise TypeError(f"the registry answered a schema id that is no integer: {schema_id!r}")
    return schema_id
