"""The start's reads, before the daemon joins its group: a broker and the topics it reads, the
judgment topics read to their end, the window state topic read to its end (and the group's
detectors restored from it).

Each read ends early when asked to stop (``stop``): nothing was committed yet, so nothing is
lost, and an orchestrator's SIGTERM is answered in seconds instead of with its SIGKILL."""

from __future__ import annotations

import logging
from collections.abc import Callable

from streameval.config import Settings
from streameval.group.feed import GroupFeed
from streameval.kafka.judgments import JudgmentReader
from streameval.kafka.reach import check_topics, wait_for_brokers
from streameval.kafka.records import RawRecord
from streameval.kafka.state import StateTopic
from streameval.runtime.compose import Evaluation
from streameval.runtime.dead_letters import DeadLetters
from streameval.runtime.state_codecs import STATE_CODECS, DaemonStateTopic

_LOG = logging.getLogger("streameval.daemon")  # the daemon's log lines keep their name


def connect(
    settings: Settings,
    client: dict[str, object],
    dead_letters: DeadLetters,
    *,
    stop: Callable[[], bool],
    wait: Callable[[float], bool],
) -> bool:
    """A broker answers (or, with ``kafka.connect_retry``, once one does: False when asked
    to stop first) and every topic read exists; then the dead-letter topic is made ready.
    An error names the address or topic and the key that sets it."""
    kafka = settings.kafka
    if not wait_for_brokers(
        kafka.bootstrap_servers,
        security_protocol=kafka.security_protocol,
        retry=kafka.connect_retry,
        stop=stop,
        wait=wait,
    ):
        return False
    check_topics(
        client,
        {"kafka.topics": kafka.topics, "kafka.judgment_topics": kafka.judgment_topics},
    )
    dead_letters.open(kafka.dlq_topic)
    return True


def read_judgments(
    settings: Settings,
    client: dict[str, object],
    offer: Callable[[RawRecord], None],
    stop: Callable[[], bool],
) -> JudgmentReader | None:
    """The judgment topics read to their end, each record offered (None: no judgment topic);
    the reader is left open to follow them."""
    topics = settings.kafka.judgment_topics
    if not topics:
        return None
    reader = JudgmentReader(topics, client)
    n = 0
    try:
        for record in reader.read_to_end(stop=stop):
            offer(record)
            n += 1
    except BaseException:
        reader.close()
        raise
    _LOG.info("read %d judgment records from %s", n, list(topics))
    return reader


def open_state(
    settings: Settings,
    client: dict[str, object],
    *,
    flush_timeout_s: float,
    stop: Callable[[], bool],
) -> DaemonStateTopic | None:
    """The window state topic, read to its end before any partition is assigned (None
    also when ``stop`` ended the read: the caller stops)."""
    topic = settings.kafka.state_topic
    if not topic:
        return None
    state = StateTopic(
        topic,
        settings.kafka.group_id,
        client,
        codecs=STATE_CODECS,
        bucket_ms=settings.evaluation.bucket,
        flush_timeout_s=flush_timeout_s,
    )
    try:
        n = state.read_to_end(stop)
    except BaseException:
        state.close()
        raise
    if stop():
        state.close()
        return None
    _LOG.info("read %d state records from %s", n, topic)
    return state


def group_feed(
    settings: Settings, evaluation: Evaluation, state: DaemonStateTopic
) -> GroupFeed | None:
    """The group's detectors and interleaving tests, fed from the state topic and restored as
    of their last snapshot (None without the collector)."""
    if evaluation.collector is None:
        return None
    feed = GroupFeed(
        evaluation.detectors,
        state.table.detection,
        history_ms=max(settings.evaluation.windows),
        pairs=evaluation.pair_tests,
        srm=evaluation.srm_test,
    )
    feed.set_sources(state.partitions(settings.kafka.topics))
    feed.restore()  # the group's detectors as of their last snapshot
    feed.step()
    return feed
