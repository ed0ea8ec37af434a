"""``streameval run``: Kafka in, the pipeline in the middle, ``/metrics`` out.

The loop only moves records between its parts: the :class:`Stream` (Kafka I/O), the
:class:`Pipeline` (decoding, join, windows), the dead-letter sink, and a published snapshot that
the HTTP thread reads (a scrape never touches live state). Periodic work (commits, lag, the
snapshot) is due by an injected monotonic clock.

Recovery: offsets are committed as the oldest record the state still needs, with a checkpoint
(horizon and read position) in the commit's metadata. After a start or any rebalance the state
is rebuilt by re-reading from there; what the checkpoint says was counted is not counted again.
With the window state changelog (``kafka.state_topic``) the complete buckets are written to a
compacted topic before each commit, so the state needs only the open lists' records: a rebuild
loads the buckets and re-reads about an attribution window instead of the longest window.
What a commit guarantees, and the order of its writes: :mod:`~streameval.runtime.committer`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from kafka.errors import KafkaError
from prometheus_client import CollectorRegistry

from streameval import __version__
from streameval.config import Settings
from streameval.errors import FencedError
from streameval.export.collector import SnapshotCollector, validate_segment_labels
from streameval.export.process import register_process_metrics
from streameval.export.server import MetricsServer
from streameval.export.status import status_source
from streameval.kafka.client import client_config
from streameval.kafka.consumer import open_stream
from streameval.kafka.judgments import JudgmentReader
from streameval.kafka.lag import LagSampler
from streameval.kafka.partition import source_of
from streameval.kafka.records import RawRecord
from streameval.kafka.source import Stream
from streameval.runtime import startup
from streameval.runtime.committer import Committer
from streameval.runtime.compose import evaluation_for
from streameval.runtime.dead_letters import DeadLetters
from streameval.runtime.health import Health
from streameval.runtime.idleness import Idleness
from streameval.runtime.publish import Publisher
from streameval.runtime.rebalance import Rebalance
from streameval.runtime.state_codecs import DaemonStateTopic

_LOG = logging.getLogger("streameval.daemon")  # the daemon's log lines keep their name


@dataclass(frozen=True, slots=True)
class Intervals:
    """How often periodic work is due, in seconds of the monotonic clock."""

    commit_s: float = 5.0
    snapshot_s: float = 1.0
    lag_s: float = 5.0
    poll_ms: int = 200


class _Due:
    def __init__(self, every_s: float, clock: Callable[[], float]) -> None:
        self._every = every_s
        self._clock = clock
        self._next = clock()

    def __call__(self) -> bool:
        now = self._clock()
        if now < self._next:
            return False
        self._next = now + self._every
        return True


class Daemon:
    def __init__(
        self,
        settings: Settings,
        *,
        intervals: Intervals | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        validate_segment_labels(settings.evaluation.segment_labels)
        self._settings = settings
        self._intervals = iv = intervals or Intervals(
            commit_s=settings.kafka.commit_interval / 1000
        )
        #: the longest a commit waits for the state topic's and the dead letters' acknowledgements
        self._flush_timeout_s = min(10.0, max(1.0, iv.commit_s))
        self._clock = clock
        self._client = client_config(settings.kafka.model_dump())
        self._dead_letters = DeadLetters(self._client, flush_timeout_s=self._flush_timeout_s)
        self._evaluation = evaluation_for(settings, self._dead_letters)
        self._pipeline = self._evaluation.pipeline
        self._committer = Committer(
            self._pipeline,
            self._dead_letters,
            clock=clock,
            longest_ms=max(settings.evaluation.windows),
            bucket_ms=settings.evaluation.bucket,
        )
        self._state: DaemonStateTopic | None = None
        self._rebalance: Rebalance | None = None  # once the start's reads are done
        self._lag: dict[tuple[str, int], int] = {}
        self._publisher = Publisher(
            self._evaluation.snapshot(self._lag),
            progress_every_s=settings.metrics.progress_interval / 1000,
            clock=clock,
        )
        self._box = self._publisher.box
        self._health = Health(clock, stale_s=3 * max(iv.lag_s, iv.commit_s))
        self._stream: Stream | None = None
        self._registry = CollectorRegistry()
        self._registry.register(SnapshotCollector(self._box.get, version=__version__))
        register_process_metrics(self._registry)  # process_* (RSS, CPU, open fds)
        m = settings.metrics
        auth = None
        if m.basic_auth_username is not None and m.basic_auth_password is not None:
            auth = (m.basic_auth_username, m.basic_auth_password)
        self.server = MetricsServer(
            self._registry,
            host=m.host,
            port=m.port,
            ready=self._health.is_ready,
            live=self._health.is_live,
            status=status_source(
                self._box.get, self._publisher.history, evaluation=settings.evaluation
            ),
            tls_certfile=m.tls_certfile,
            tls_keyfile=m.tls_keyfile,
            basic_auth=auth,
        )

    @property
    def ready(self) -> bool:
        return self._health.is_ready()

    def run(self, stop: threading.Event) -> None:
        """Serve until ``stop`` is set; then commit, close, and return."""
        self.server.start()
        _LOG.info("metrics on %s://%s:%d", self.server.scheme, self.server.host, self.server.port)
        judgments: JudgmentReader | None = None
        settings = self._settings
        try:
            if not startup.connect(
                settings, self._client, self._dead_letters, stop=stop.is_set, wait=stop.wait
            ):
                _LOG.info("stopped while waiting for a Kafka broker")
                return
            # The start's reads (the judgment topics, the state topic: minutes when they are
            # large) end early when asked to stop, and the daemon then stops before it joins the
            # group: nothing was committed yet, so nothing is lost, and an orchestrator's
            # SIGTERM is answered in seconds instead of with its SIGKILL.
            judgments = startup.read_judgments(
                settings, self._client, self._offer_judgment, stop.is_set
            )
            if not stop.is_set():
                self._state = startup.open_state(
                    settings,
                    self._client,
                    flush_timeout_s=self._flush_timeout_s,
                    stop=stop.is_set,
                )
            if stop.is_set():
                _LOG.info("stopped during the start's reads, before joining the group")
                return
            rebalance, idleness = self._join_parts()
            self._stream = open_stream(
                settings.kafka, client=self._client, on_revoke=rebalance.on_revoke
            )
            self._loop(stop, judgments, rebalance, idleness)
        finally:
            if judgments is not None:
                judgments.close()
            self._shutdown()

    def _join_parts(self) -> tuple[Rebalance, Idleness]:
        """After the start's reads: the parts that the group's partitions need."""
        state, evaluation, committer = self._state, self._evaluation, self._committer
        feed = None
        if state is not None:
            feed = startup.group_feed(self._settings, evaluation, state)
        committer.state, committer.collector, committer.feed = state, evaluation.collector, feed
        rebalance = Rebalance(
            self._settings,
            self._pipeline,
            committer,
            self._health,
            state=state,
            collector=evaluation.collector,
            feed=feed,
        )
        self._rebalance = rebalance
        idleness = Idleness(
            self._pipeline,
            self._health,
            attribution_window_ms=self._settings.evaluation.attribution_window,
            collector=evaluation.collector,
            feed=feed,
        )
        return rebalance, idleness

    def _offer_judgment(self, record: RawRecord) -> None:
        self._dead_letters.judgment_record = record
        self._pipeline.offer_judgment(
            record.value,
            record.key,
            source_of(record.topic, record.partition),
            record.timestamp_ms,
        )

    def _loop(
        self,
        stop: threading.Event,
        judgments: JudgmentReader | None,
        rebalance: Rebalance,
        idleness: Idleness,
    ) -> None:
        stream = self._stream
        if stream is None:  # pragma: no cover - set by run()
            return
        iv = self._intervals
        commit_due = _Due(iv.commit_s, self._clock)
        snapshot_due = _Due(iv.snapshot_s, self._clock)
        lag = LagSampler(stream, iv.lag_s, clock=self._clock)
        pipeline, health, dead_letters = self._pipeline, self._health, self._dead_letters
        while not stop.is_set():
            health.turned()
            batches = stream.poll(iv.poll_ms)
            assignment = stream.take_assignment()
            if assignment is not None:
                rewound = rebalance.rebuild(stream, assignment)
                # records of a rewound partition come again, from the commit on
                batches = [b for b in batches if (b.topic, b.partition) not in rewound]
            if batches:
                idleness.wake(stream, batches)
            offer_batch = pipeline.offer_batch  # (a partition's batch at once: GIL released)
            for fetched in batches:
                dead_letters.fetched = fetched
                offer_batch(fetched.rows, source_of(fetched.topic, fetched.partition))
            dead_letters.fetched = None
            idleness.update(stream)
            if judgments is not None:
                for record in judgments.poll(0):
                    self._offer_judgment(record)
            if self._state is not None:
                self._state.poll()
                feed = self._committer.feed
                if feed is not None:
                    idleness.follow_group()
                    feed.step()
            sampled = lag.sample()
            if sampled is not None:  # measured: the brokers answered
                self._lag = dict(sampled.items())
                health.contact()
            if commit_due():
                try:
                    self._committer.commit(stream, stream.assignment())
                except KafkaError as exc:  # a broker outage: the next commit tries again
                    _LOG.warning("commit failed, retried at the next interval: %s", exc)
            if snapshot_due() or health.ready != health.published_ready:
                self._publish()
            self._publisher.log_progress()

    def _publish(self) -> None:
        ready = self._health.ready
        state = self._state
        rebalance = self._rebalance
        self._publisher.publish(
            replace(
                self._evaluation.snapshot(self._lag),
                state_records_invalid=0 if state is None else state.table.invalid,
                reread_records_deleted=0 if rebalance is None else rebalance.records_deleted,
                dead_letters_failed=self._dead_letters.failed,
                ready=ready,
            )
        )
        self._health.published_ready = ready

    def _shutdown(self) -> None:
        stream = self._stream
        if stream is not None:
            try:
                self._committer.commit(stream, stream.assignment(), final=True)
            except (KafkaError, FencedError) as exc:  # fenced: the error that stops the run
                _LOG.warning("final commit failed: %s", exc)
            stream.close()
            self._stream = None
        if self._state is not None:
            self._state.close()
            self._state = None
        self._dead_letters.close()
        self.server.stop()
