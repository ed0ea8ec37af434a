"""Issue 28 §4, with a real broker: a topic the daemon reads that does not exist is named with
the key that lists it, before anything is created on the broker (the dead-letter and state
topics are made only once every topic read is there); a broker found by the start's probe is
one (the probe speaks Kafka's ApiVersions to it)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid

import pytest
from kafka import KafkaAdminClient

from streameval.errors import KafkaUnavailableError
from streameval.kafka.reach import probe
from streameval.runtime.daemon import Daemon
from tests.integration.conftest import TopicFactory
from tests.integration.daemon_support import Topics, free_port, in_process_settings

pytestmark = pytest.mark.kafka


def _topics_on(bootstrap: str) -> set[str]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="streameval-tests")
    try:
        return set(admin.list_topics())
    finally:
        admin.close()


def test_the_probe_recognises_a_real_broker(kafka_bootstrap: str) -> None:
    assert probe(kafka_bootstrap) is None


@pytest.mark.parametrize("key", ["kafka.judgment_topics", "kafka.topics"])
def test_a_missing_topic_is_named_with_its_key_and_nothing_is_created(
    kafka_bootstrap: str, topic_factory: TopicFactory, key: str
) -> None:
    made = Topics.made_by(topic_factory)
    missing = f"missing-{uuid.uuid4().hex}"
    dlq = f"dlq-{uuid.uuid4().hex}"  # not there: the daemon would create it
    settings = in_process_settings(kafka_bootstrap, made, f"g-{uuid.uuid4().hex}", dlq_topic=dlq)
    wrong = {
        key.split(".")[1]: [missing] if key == "kafka.judgment_topics" else [made.clicks, missing]
    }
    settings = settings.model_copy(update={"kafka": settings.kafka.model_copy(update=wrong)})
    daemon = Daemon(settings)
    with pytest.raises(KafkaUnavailableError) as info:
        daemon.run(threading.Event())
    message = str(info.value)
    assert missing in message and key in message
    assert "STREAMEVAL_" + key.upper().replace(".", "__") in message
    on_broker = _topics_on(kafka_bootstrap)
    assert dlq not in on_broker and made.state not in on_broker
    assert missing not in on_broker  # and no auto-creation by a metadata request


def test_the_command_says_it_in_one_line(kafka_bootstrap: str, topic_factory: TopicFactory) -> None:
    made = Topics.made_by(topic_factory)
    missing = f"missing-{uuid.uuid4().hex}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMEVAL_")}
    env |= {
        "STREAMEVAL_KAFKA__BOOTSTRAP_SERVERS": kafka_bootstrap,
        "STREAMEVAL_KAFKA__TOPICS": f"{made.impressions},{made.clicks}",
        "STREAMEVAL_KAFKA__JUDGMENT_TOPICS": missing,
        "STREAMEVAL_KAFKA__DLQ_TOPIC": made.dlq,
        "STREAMEVAL_KAFKA__STATE_TOPIC": made.state,
        "STREAMEVAL_METRICS__HOST": "127.0.0.1",
        "STREAMEVAL_METRICS__PORT": str(free_port()),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "streameval.cli", "run", "--log-level", "WARNING"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("streameval: error: ")
    assert missing in lines[0] and "kafka.judgment_topics" in lines[0]
