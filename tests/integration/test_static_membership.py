"""Static group membership through the real broker (issue 28 §1, KIP-345: kafka.group_instance_id).

A SIGKILLed daemon (an OOM kill, a lost node) restarted at once was not ready for the dead
member's session timeout (45 s by default): the broker kept its partitions with the dead
member until then. With ``kafka.group_instance_id`` the new process, with the same id, takes
the dead member's place and its partitions at once, and only its own rebuild is left. The
scenario is test_restart's (its log, ~21,000 records of which the restart re-reads the open
lists' ~1,500): the restarted daemon must be ready well within the session timeout, with the
killed one's windows. And what static membership changes besides: a graceful stop does not
leave the group (the member waits for its id to come back), and two instances with one id
fence each other with an error naming the key, instead of a crash loop without explanation.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient

from tests.integration.conftest import TopicFactory
from tests.integration.daemon_support import CONSUMERS, DaemonProcess, free_port, value
from tests.integration.test_restart import (
    _assert_same,
    _env,
    _first_run,
    _produce,
    _topics,
    _windows,
)

pytestmark = pytest.mark.kafka

#: the default kafka.session_timeout: without static membership the restart waits it out
SESSION_S = 45
#: the restarted daemon's bound from spawn to /readyz 200 (its rebuild: ~1,500 records to
#: re-read, the state topic, the judgments; 2-4 s measured on a shared 2-core machine)
READY_WITHIN_S = 15


def _static_env(bootstrap: str, events: str, judgments: str, consumer: str) -> dict[str, str]:
    env = _env(bootstrap, events, judgments, f"state-{uuid.uuid4().hex}", consumer)
    return env | {"STREAMEVAL_KAFKA__GROUP_INSTANCE_ID": "streameval-0"}


def _members(bootstrap: str, group: str) -> list[dict[str, Any]]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        members: list[dict[str, Any]] = admin.describe_groups([group])[group]["members"]
    finally:
        admin.close()
    return members


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_a_sigkilled_static_member_restarted_at_once_is_ready_within_its_rebuild(
    kafka_bootstrap: str, topic_factory: TopicFactory, tmp_path: Path, consumer: str
) -> None:
    events, judgments = _topics(topic_factory)
    total = _produce(kafka_bootstrap, events, judgments, seed=11)
    env = _static_env(kafka_bootstrap, events, judgments, consumer)
    assert "STREAMEVAL_KAFKA__SESSION_TIMEOUT" not in env  # the default 45 s
    want, _ = _first_run(kafka_bootstrap, env, total, tmp_path)  # ends with the SIGKILL

    spawned = time.monotonic()
    second = DaemonProcess(env, tmp_path / "second.log")
    try:
        while time.monotonic() - spawned < SESSION_S:
            if second.proc.poll() is not None:
                raise AssertionError(f"the restarted daemon exited\n{second.log_tail()}")
            if second.get("/readyz")[0] == 200:
                break
            time.sleep(0.1)
        ready_s = time.monotonic() - spawned
        assert ready_s < READY_WITHIN_S, (
            f"ready {ready_s:.1f} s after spawn (the dead member's session waited out?)\n"
            f"{second.log_tail()}"
        )
        _assert_same(_windows(second.metrics()), want)
        time.sleep(2)  # and it stays so: nothing arrives, nothing changes
        _assert_same(_windows(second.metrics()), want)
        # the one member of the group is the new process, under the same instance id
        members = _members(kafka_bootstrap, env["STREAMEVAL_KAFKA__GROUP_ID"])
        assert [m["group_instance_id"] for m in members] == ["streameval-0"]
    finally:
        assert second.terminate() == 0


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_a_static_member_stays_in_the_group_through_a_graceful_stop(
    kafka_bootstrap: str, topic_factory: TopicFactory, tmp_path: Path, consumer: str
) -> None:
    """A static member sends no LeaveGroup when it stops (both clients, as Java's): its
    partitions wait for its id to come back (a rolling restart: no rebalance) or for its
    session to time out (a scale-down). The final commit is still made."""
    events, judgments = _topics(topic_factory)
    total = _produce(kafka_bootstrap, events, judgments, seed=12)
    env = _static_env(kafka_bootstrap, events, judgments, consumer)
    group = env["STREAMEVAL_KAFKA__GROUP_ID"]
    first = DaemonProcess(env, tmp_path / "first.log")
    try:
        first.wait_for(
            lambda m: value(m, "streameval_records_read_total") == total,
            timeout_s=180,
            what="the first run reads the whole log",
            ready=True,
        )
        want = _windows(first.metrics())
    finally:
        assert first.terminate() == 0
    assert [m["group_instance_id"] for m in _members(kafka_bootstrap, group)] == ["streameval-0"]
    assert "Leaving consumer group" not in first.log_path.read_text()

    spawned = time.monotonic()
    second = DaemonProcess(env, tmp_path / "second.log")
    try:
        second.wait_for(lambda m: True, timeout_s=SESSION_S, what="the restart", ready=True)
        assert time.monotonic() - spawned < READY_WITHIN_S
        _assert_same(_windows(second.metrics()), want)
    finally:
        assert second.terminate() == 0


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_two_instances_with_one_id_fence_the_older_with_an_error_naming_the_key(
    kafka_bootstrap: str, topic_factory: TopicFactory, tmp_path: Path, consumer: str
) -> None:
    """The broker gives the id's partitions to the instance that joined last and fences the
    other: that one stops with one line naming kafka.group_instance_id and a non-zero code (a
    crash loop of two such pods then says why), and the newer one reads on."""
    events, judgments = _topics(topic_factory)
    total = _produce(kafka_bootstrap, events, judgments, seed=13)
    env = _static_env(kafka_bootstrap, events, judgments, consumer)
    env["STREAMEVAL_KAFKA__SESSION_TIMEOUT"] = "6s"  # heartbeats every 2 s
    older = DaemonProcess(env, tmp_path / "older.log")
    newer: DaemonProcess | None = None
    try:
        older.wait_for(
            lambda m: value(m, "streameval_records_read_total") == total,
            timeout_s=180,
            what="the older instance reads the whole log",
            ready=True,
        )
        newer = DaemonProcess(
            env | {"STREAMEVAL_METRICS__PORT": str(free_port())}, tmp_path / "newer.log"
        )
        try:
            code = older.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"the fenced instance still runs\n{older.log_tail()}\n{newer.log_tail()}"
            ) from None
        assert code == 2
        errors = [
            ln for ln in older.log_path.read_text().splitlines() if ln.startswith("streameval:")
        ]
        assert errors == [
            "streameval: error: kafka.group_instance_id: 'streameval-0' is used by another "
            "running instance, which the group now reads with; give each instance its own id "
            "(e.g. the pod's name, $HOSTNAME)"
        ]
        assert "Traceback" not in older.log_path.read_text()
        newer.wait_for(
            lambda m: value(m, "streameval_records_read_total") is not None,
            timeout_s=60,
            what="the newer instance reads on",
            ready=True,
        )
        assert newer.running
    finally:
        if older.running:
            older.kill()
        if newer is not None:
            assert newer.terminate() == 0
