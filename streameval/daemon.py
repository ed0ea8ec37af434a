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
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from kafka import TopicPartition
from kafka.errors import KafkaError
from prometheus_client import CollectorRegistry

from streameval import __version__
from streameval.config import Settings
from streameval.detect import detectors_for
from streameval.detect.group import GroupFeed
from streameval.detect.partitioned import PartitionCollector
from streameval.detect.persisted import PAIRS
from streameval.engine.evaluator import Evaluator
from streameval.errors import FencedError
from streameval.events.decode import Invalid
from streameval.events.formats import Formats
from streameval.export.collector import SnapshotCollector, validate_segment_labels
from streameval.export.history import History
from streameval.export.process import register_process_metrics
from streameval.export.server import MetricsServer
from streameval.export.status import status_source
from streameval.interleave.detector import PairTests
from streameval.kafka.checkpoint import Checkpoint
from streameval.kafka.client import client_config
from streameval.kafka.dlq import DeadLetterSink
from streameval.kafka.judgments import JudgmentReader
from streameval.kafka.lag import LagSampler
from streameval.kafka.reach import check_topics, wait_for_brokers
from streameval.kafka.records import Fetched, RawRecord
from streameval.kafka.state import StateTopic
from streameval.kafka.stream import Commits, Stream, open_stream, source_of
from streameval.log_limits import InvalidRecordLog, SecondsTimestampLog
from streameval.progress import ProgressLog
from streameval.snapshot import Snapshot

_LOG = logging.getLogger(__name__)


#: ``/healthz`` says 503 once the read loop has not come back for this long (seconds): longer
#: than anything one turn of it may wait for (a poll 0.2 s, a commit at most 10 s, a lag
#: measurement 5 s, a state-topic flush 10 s, a rebalance inside the poll up to the session
#: timeout, 45 s by default), so only a loop that is stuck (kafka-python 3.0.12 was seen waiting
#: without end inside ``poll`` after a revocation) is restarted by the orchestrator's probe
STALL_S = 300.0


@dataclass(frozen=True, slots=True)
class Intervals:
    """How often periodic work is due, in seconds of the monotonic clock."""

    commit_s: float = 5.0
    snapshot_s: float = 1.0
    lag_s: float = 5.0
    poll_ms: int = 200


class SnapshotBox:
    """The latest published snapshot: written by the loop, read by the HTTP threads."""

    def __init__(self, first: Snapshot) -> None:
        self._snapshot = first

    def publish(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot  # one reference assignment: atomic

    def get(self) -> Snapshot:
        return self._snapshot


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
        self._intervals = intervals or Intervals(commit_s=settings.kafka.commit_interval / 1000)
        #: the longest a commit waits for the state topic's and the dead letters' acknowledgements
        self._flush_timeout_s = min(10.0, max(1.0, self._intervals.commit_s))
        self._clock = clock
        self._client = client_config(settings.kafka.model_dump())
        # disabled until run() has seen a broker and the topics it reads: nothing is created on
        # the broker before those checks (issue 28)
        self._dlq = DeadLetterSink("", self._client)
        # what a dead letter is made of: the judgment record being offered, or the batch of
        # stream records (found in it by offset: no record is kept per record offered)
        self._judgment_record: RawRecord | None = None
        self._fetched: Fetched | None = None
        self._lag: dict[tuple[str, int], int] = {}
        # the regression detectors: one more consumer of finalized lists (DESIGN §9); with the
        # state topic, group-wide: the lists of this instance's partitions are reduced to
        # detector buckets per partition (the collector), written to the state topic, and the
        # detectors fed the whole group's (the feed, once the state topic is open). The
        # interleaving tests (DESIGN §10) go the same way: the collector also reduces the
        # interleaved lists to outcome counts per partition, and the group's feed the tests.
        self._detectors = detectors_for(settings)
        self._collector: PartitionCollector | None = None
        self._feed: GroupFeed | None = None
        self._pair_tests: PairTests | None = None
        if settings.kafka.state_topic:
            self._collector = PartitionCollector(
                None if self._detectors is None else self._detectors.spec,
                bucket_ms=settings.evaluation.bucket,
            )
            il = settings.evaluation.interleaving
            self._pair_tests = PairTests(il.mixture_scale, il.alpha)
        list_consumer = self._collector or self._detectors
        formats = Formats(settings.input, settings.evaluation.max_record_bytes)
        formats.check()  # a wrong mapping or schema file fails at start
        self._evaluator = Evaluator(
            settings,
            detectors=self._detectors,
            feed=list_consumer,
            dead_letter=self._dead_letter,
            persist=bool(settings.kafka.state_topic),
            decoder_for=formats.by_topic_source,
            on_seconds=SecondsTimestampLog(),
        )
        self._pipeline = self._evaluator.pipeline
        self._invalid_log = InvalidRecordLog()
        self._state: StateTopic | None = None
        # after a failed write to the state topic: not again before this (monotonic clock)
        self._persist_after = 0.0
        self._persist_backoff = 0.0
        # per partition: the state point (persisted_before) of its last successful commit
        self._committed_state: dict[str, int] = {}
        self._longest_ms = max(settings.evaluation.windows)
        # records the re-reads needed that retention had deleted (since start)
        self._records_deleted = 0
        self._box = SnapshotBox(self._snapshot())
        # the status page's charts: recorded at each publish, not only while a browser polls
        self._history = History.last_hour()
        self._progress = ProgressLog(settings.metrics.progress_interval / 1000, clock)
        # /readyz says the readiness of the last *published* snapshot, so that a 200 is never
        # served beside figures from before the rebuild it announces
        self._ready = self._published_ready = False
        # when the loop last heard from the brokers (a lag measurement: end offsets asked and
        # answered); /readyz is 503 once it is older than _stale_s (a broker outage)
        self._last_contact = clock()
        iv = self._intervals
        self._stale_s = 3 * max(iv.lag_s, iv.commit_s)
        # when the read loop last came back from a turn (None: not started yet): /healthz
        self._turned_at: float | None = None
        # end offsets to reach before /readyz says ready (None: no assignment yet)
        self._catch_up_to: dict[TopicPartition, int] | None = None
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
            ready=self._is_ready,
            live=self._is_live,
            status=status_source(self._box.get, self._history, evaluation=settings.evaluation),
            tls_certfile=m.tls_certfile,
            tls_keyfile=m.tls_keyfile,
            basic_auth=auth,
        )

    def _snapshot(self) -> Snapshot:
        snapshot = self._evaluator.snapshot(consumer_lag=self._lag)
        if self._pair_tests is not None:  # the group's tests, not this instance's partial ones
            snapshot = replace(snapshot, interleaving_tests=self._pair_tests.rows())
        return snapshot

    @property
    def ready(self) -> bool:
        return self._is_ready()

    def _is_ready(self) -> bool:
        """Caught up with the log end, and in touch with the brokers (read by the HTTP threads:
        two plain attribute reads)."""
        return self._published_ready and self._clock() - self._last_contact < self._stale_s

    def _is_live(self) -> bool:
        """The read loop has come back from a turn within :data:`STALL_S` (read by the HTTP
        threads; before the loop starts, live: the start's own reads are not a turn)."""
        turned = self._turned_at
        return turned is None or self._clock() - turned < STALL_S

    def run(self, stop: threading.Event) -> None:
        """Serve until ``stop`` is set; then commit, close, and return."""
        self.server.start()
        _LOG.info("metrics on %s://%s:%d", self.server.scheme, self.server.host, self.server.port)
        judgments: JudgmentReader | None = None
        try:
            if not self._connect(stop):
                _LOG.info("stopped while waiting for a Kafka broker")
                return
            # The start's reads (the judgment topics, the state topic: minutes when they are
            # large) end early when asked to stop, and the daemon then stops before it joins the
            # group: nothing was committed yet, so nothing is lost, and an orchestrator's
            # SIGTERM is answered in seconds instead of with its SIGKILL.
            judgments = self._read_judgments(stop.is_set)
            if not stop.is_set():
                self._state = self._open_state(stop.is_set)
            if stop.is_set():
                _LOG.info("stopped during the start's reads, before joining the group")
                return
            self._stream = open_stream(
                self._settings.kafka, client=self._client, on_revoke=self._on_revoke
            )
            self._loop(stop, judgments)
        finally:
            if judgments is not None:
                judgments.close()
            self._shutdown()

    def _connect(self, stop: threading.Event) -> bool:
        """A broker answers (or, with ``kafka.connect_retry``, once one does: False when asked
        to stop first) and every topic read exists; then the dead-letter topic is made ready.
        An error names the address or topic and the key that sets it."""
        kafka = self._settings.kafka
        if not wait_for_brokers(
            kafka.bootstrap_servers,
            security_protocol=kafka.security_protocol,
            retry=kafka.connect_retry,
            stop=stop.is_set,
            wait=stop.wait,
        ):
            return False
        check_topics(
            self._client,
            {"kafka.topics": kafka.topics, "kafka.judgment_topics": kafka.judgment_topics},
        )
        self._dlq = DeadLetterSink(kafka.dlq_topic, self._client)
        return True

    def _read_judgments(self, stop: Callable[[], bool]) -> JudgmentReader | None:
        topics = self._settings.kafka.judgment_topics
        if not topics:
            return None
        reader = JudgmentReader(topics, self._client)
        n = 0
        try:
            for record in reader.read_to_end(stop=stop):
                self._offer_judgment(record)
                n += 1
        except BaseException:
            reader.close()
            raise
        _LOG.info("read %d judgment records from %s", n, list(topics))
        return reader

    def _open_state(self, stop: Callable[[], bool]) -> StateTopic | None:
        """The window state topic, read to its end before any partition is assigned (None
        also when ``stop`` ended the read: the caller stops)."""
        topic = self._settings.kafka.state_topic
        if not topic:
            return None
        state = StateTopic(
            topic,
            self._settings.kafka.group_id,
            self._client,
            bucket_ms=self._settings.evaluation.bucket,
            flush_timeout_s=self._flush_timeout_s,
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
        if self._collector is not None:
            self._feed = GroupFeed(
                self._detectors,
                state.table.detection,
                history_ms=self._longest_ms,
                pairs=self._pair_tests,
            )
            self._feed.set_sources(state.partitions(self._settings.kafka.topics))
            self._feed.restore()  # the group's detectors as of their last snapshot
            self._feed.step()
        return state

    def _offer_judgment(self, record: RawRecord) -> None:
        self._judgment_record = record
        self._pipeline.offer_judgment(
            record.value,
            record.key,
            source_of(record.topic, record.partition),
            record.timestamp_ms,
        )

    def _loop(self, stop: threading.Event, judgments: JudgmentReader | None) -> None:
        stream = self._stream
        if stream is None:  # pragma: no cover - set by run()
            return
        iv = self._intervals
        commit_due = _Due(iv.commit_s, self._clock)
        snapshot_due = _Due(iv.snapshot_s, self._clock)
        lag = LagSampler(stream, iv.lag_s, clock=self._clock)
        pipeline = self._pipeline
        while not stop.is_set():
            self._turned_at = self._clock()
            batches = stream.poll(iv.poll_ms)
            assignment = stream.take_assignment()
            if assignment is not None:
                rewound = self._rebuild(assignment)
                # records of a rewound partition come again, from the commit on
                batches = [b for b in batches if (b.topic, b.partition) not in rewound]
            if batches:
                self._wake(batches)
            offer = pipeline.offer
            for fetched in batches:
                source = source_of(fetched.topic, fetched.partition)
                self._fetched = fetched
                for value, offset, timestamp_ms in fetched.rows:
                    offer(value or b"", source, offset, timestamp_ms)
            self._fetched = None
            self._update_idle()
            if judgments is not None:
                for record in judgments.poll(0):
                    self._offer_judgment(record)
            if self._state is not None:
                self._state.poll()
                if self._feed is not None:
                    self._follow_group()
                    self._feed.step()
            sampled = lag.sample()
            if sampled is not None:  # measured: the brokers answered
                self._lag = dict(sampled)
                self._last_contact = self._clock()
            if commit_due():
                try:
                    self._commit(stream.assignment())
                except KafkaError as exc:  # a broker outage: the next commit tries again
                    _LOG.warning("commit failed, retried at the next interval: %s", exc)
            if snapshot_due() or self._ready != self._published_ready:
                self._publish()
            self._progress(self._box.get)

    def _follow_group(self) -> None:
        """With every partition read here idle (read to its end), event time here moves with
        the rest of the group's, as far as the other partitions' progress records show it has
        passed: an instance whose partitions are silent, or were never written to, would
        otherwise hold the group frontier, and with it every instance's group-wide detectors,
        where its own last record left it (or, with no record at all, for good)."""
        feed, collector = self._feed, self._collector
        if feed is None or collector is None:
            return
        point = feed.passed_elsewhere(
            collector.sources, self._settings.evaluation.attribution_window
        )
        if point is not None and self._pipeline.follow(point):
            _LOG.debug("every partition here is idle: event time follows the group to %d", point)

    def _publish(self) -> None:
        ready = self._ready
        state = self._state
        self._box.publish(
            replace(
                self._snapshot(),
                state_records_invalid=0 if state is None else state.table.invalid,
                reread_records_deleted=self._records_deleted,
                dead_letters_failed=self._dlq.failed,
                ready=ready,
            )
        )
        self._history.record(self._box.get())
        self._published_ready = ready

    # --- rebalance ----------------------------------------------------------------------------

    def _on_revoke(self, partitions: set[TopicPartition], lost: bool) -> Commits:
        """Inside poll: what to commit for the revoked partitions (nothing when lost)."""
        self._ready = self._published_ready = False
        # not ready again before the next assignment is read up to its ends: the targets of
        # the last one may all be met already (librdkafka can hand over a whole log in the poll
        # that assigns it), which would make a member that holds nothing look ready
        self._catch_up_to = None
        _LOG.info("%d partitions %s", len(partitions), "lost" if lost else "revoked")
        commits = {} if lost else self._commits(partitions)
        if commits:
            try:
                self._flush_dead_letters()
            except KafkaError as exc:  # the next owner reads them again: nothing is lost
                _LOG.warning("revoked partitions not committed: %s", exc)
                commits = {}
        for tp in partitions:
            source = source_of(tp.topic, tp.partition)
            self._pipeline.forget_source(source)
            if self._collector is not None:
                self._collector.forget(source)
        return commits

    def _rebuild(self, assignment: set[TopicPartition]) -> set[tuple[str, int]]:
        """A new assignment: start the stream state afresh and re-read from the commits (returns
        the (topic, partition) pairs rewound to their commit)."""
        stream = self._stream
        if stream is None:  # pragma: no cover
            return set()
        pipeline = self._pipeline
        pipeline.reset()
        state = self._state
        if state is not None:
            state.read_to_end()  # what the previous owners wrote before they let go
            feed = self._feed
            assigned = {source_of(tp.topic, tp.partition) for tp in assignment}
            if feed is not None and not assigned <= feed.sources:
                # partitions were added: the group's are asked again (an admin request)
                feed.set_sources(state.partitions(self._settings.kafka.topics))
        checkpoints = stream.checkpoints(assignment)
        committed = stream.committed_offsets(assignment)
        rewound = stream.rewind(assignment)
        full_reread: set[TopicPartition] = set()
        for tp in sorted(assignment):
            source = source_of(tp.topic, tp.partition)
            pipeline.add_source(source)
            if self._collector is not None and state is not None:
                # its detector buckets before its progress are written: not collected again
                self._collector.assign(source, state.table.detection.progress(source))
            cp = checkpoints.get(tp)
            if cp is None:
                continue
            persisted = cp.persisted_before if state is not None else None
            if persisted is not None and state is not None and state.table.is_bad(source):
                _LOG.warning("%s: its state records are unreadable; re-reading it in full", source)
                state.table.clear_bad(source)
                full_reread.add(tp)
                persisted = None
            if persisted is not None and state is not None:
                since = persisted - self._longest_ms - self._settings.evaluation.bucket
                for first_ms, bucket in state.table.buckets(source, since, persisted):
                    pipeline.load_bucket(first_ms, bucket)
            pipeline.restore_source(source, cp.horizon_ms, cp.next_offset, persisted)
            if persisted is not None:
                self._committed_state[source] = persisted
        if full_reread:
            stream.seek_to_beginning(full_reread)
            rewound |= full_reread
        self._note_deleted(stream.beginning_offsets(assignment), committed, full_reread)
        # what the rebuild must read before it is ready: every partition not already at its end
        self._catch_up_to = {
            tp: end
            for tp, end in stream.end_offsets(assignment).items()
            if (start := stream.position(tp)) is None or start < end
        }
        self._ready = self._published_ready = False
        _LOG.info("assigned %d partitions; rebuilding state", len(assignment))
        return {(tp.topic, tp.partition) for tp in rewound}

    def _note_deleted(
        self,
        starts: dict[TopicPartition, int],
        committed: dict[TopicPartition, int],
        full_reread: set[TopicPartition],
    ) -> None:
        """Records between a partition's commit and its log start were deleted by retention
        before this re-read could read them: the state they held is lost (with the state topic
        only the open lists' part of it). Said loudly, and counted."""
        for tp, start in sorted(starts.items()):
            offset = 0 if tp in full_reread else committed.get(tp)
            if offset is None or start <= offset:
                continue
            self._records_deleted += start - offset
            _LOG.error(
                "%s/%d: %d records the state needs (offsets %d to %d) were deleted by the "
                "topic's retention before they could be re-read: the lists they held are lost. "
                "Keep retention.ms well above the longest window (and mind that records are "
                "deleted by their own timestamps)",
                tp.topic,
                tp.partition,
                start - offset,
                offset,
                start - 1,
            )

    def _wake(self, batches: list[Fetched]) -> None:
        """Before a batch is offered: every partition with records in it, or whose log end the
        fetch moved, is no longer idle. Otherwise a partition still marked idle from before the
        burst would not hold the watermark back while another partition's newer records are
        offered first, and its own records would then be late."""
        self._update_idle(check_ready=False)
        for fetched in batches:
            self._pipeline.set_idle(source_of(fetched.topic, fetched.partition), False)

    def _update_idle(self, *, check_ready: bool = True) -> None:
        """A partition read up to its log end does not hold the watermark back; then (once the
        poll's records were offered) see whether the rebuild has caught up."""
        stream = self._stream
        if stream is None:
            return
        positions = self._pipeline.read_positions()
        for tp in stream.assignment():
            source = source_of(tp.topic, tp.partition)
            pos = positions.get(source)
            if pos is None:
                pos = stream.position(tp)
            hw = stream.highwater(tp)
            self._pipeline.set_idle(source, hw is not None and pos is not None and pos >= hw)
        if check_ready:
            self._check_ready(positions)

    def _check_ready(self, positions: dict[str, int]) -> None:
        """Ready once every partition of the last assignment was read up to the end offset seen
        when it was assigned. Called only after a poll's records were offered, so the consumer's
        position is what the pipeline has read, or beyond it where the log has nothing left to
        read there (records removed by retention since the commit). The targets, not the
        current assignment, are checked: during a rebalance the consumer holds no partition."""
        stream = self._stream
        if self._ready or self._catch_up_to is None or stream is None:
            return
        for tp, target in self._catch_up_to.items():
            pos = positions.get(source_of(tp.topic, tp.partition), -1)
            if pos < target:
                pos = max(pos, stream.position(tp) or -1)
            if pos < target:
                return
        self._ready = True
        _LOG.info("caught up: ready")

    def _commit(self, partitions: set[TopicPartition], *, final: bool = False) -> None:
        if self._stream is not None and partitions:
            self._try_persist(partitions, final=final)
            commits = self._commits(partitions)
            self._flush_dead_letters()
            self._stream.commit(commits)
            for tp, (_, checkpoint) in commits.items():
                if checkpoint.persisted_before is not None:
                    self._committed_state[source_of(tp.topic, tp.partition)] = (
                        checkpoint.persisted_before
                    )

    def _try_persist(self, partitions: set[TopicPartition], *, final: bool) -> None:
        """:meth:`_persist`, unless a failure asked to wait: the commit then goes on with the
        state point of the last write that succeeded (a valid checkpoint, only an older one),
        and the loop keeps reading instead of waiting on the state topic at every commit."""
        now = self._clock()
        if not final and now < self._persist_after:
            return
        try:
            self._persist(partitions)
        except KafkaError as exc:
            self._persist_backoff = min(30.0, max(2.0, 2 * self._persist_backoff))
            self._persist_after = now + self._persist_backoff
            _LOG.warning(
                "state topic not written (%s); the commits keep the last state point, next "
                "try in %.0f s",
                exc,
                self._persist_backoff,
            )
        else:
            self._persist_backoff = 0.0

    def _persist(self, partitions: set[TopicPartition]) -> None:
        """Write the buckets completed since the last commit to the state topic, tombstone those
        no window covers any more, and wait for the acknowledgements: only then may the commit
        rely on them (a failure raises, and the commit waits for the next interval)."""
        state = self._state
        if state is None:
            return
        before, buckets = self._pipeline.unpersisted_buckets()
        if before is None:
            return
        for source, start, bucket in buckets:
            state.write(source, start, bucket)
        # Tombstones only below what the last *committed* checkpoint may still load: a run killed
        # between this flush and its commit is recovered from the checkpoint before it.
        margin = self._longest_ms + self._settings.evaluation.bucket
        for tp in partitions:
            source = source_of(tp.topic, tp.partition)
            committed = self._committed_state.get(source)
            if committed is not None:
                state.expire((source,), committed - margin)
        written = self._write_detection(state)
        state.flush()
        self._pipeline.mark_persisted(before)
        if self._collector is not None:
            self._collector.written(written)

    def _write_detection(self, state: StateTopic) -> list[tuple[str, str, int]]:
        """The detector buckets completed since the last write, then each partition's progress
        (after its buckets: a reader that sees the progress has them). Returns their keys."""
        collector = self._collector
        if collector is None:
            return []
        written = []
        for source, relevance, start, data in collector.ready():
            state.write_detector(source, relevance, start, data)
            written.append((source, relevance, start))
        for source, start, counts in collector.ready_pairs():
            state.write_pairs(source, start, counts)
            written.append((source, PAIRS, start))
        table = state.table.detection
        for source, progress in collector.progress().items():
            if progress != table.progress(source):
                state.write_progress(source, progress)
        feed = self._feed
        if feed is not None:
            feed.step()
            # one instance writes the snapshots: the one that reads the group's first partition
            if feed.sources and min(feed.sources) in collector.sources:
                snapshot = feed.snapshot()
                if snapshot is not None:
                    state.write_snapshot(*snapshot)
        return written

    def _flush_dead_letters(self) -> None:
        """Wait until every dead letter queued so far is acknowledged (or failed for good:
        logged and counted by the sink). A commit says that the records before it are done
        with; the dead letter of one of them still in the producer's buffer would be lost to a
        crash, since a restart reads on from the commit. Raises ``KafkaError`` when they are not
        acknowledged within the flush timeout: no commit then (the next one tries again, and a
        re-read after a crash writes those dead letters again: at least once, never lost)."""
        try:
            self._dlq.flush(timeout_s=self._flush_timeout_s)
        except KafkaError as exc:
            raise KafkaError(
                f"dead letters not acknowledged within {self._flush_timeout_s:g} s: {exc}"
            ) from exc

    def _commits(self, partitions: set[TopicPartition]) -> Commits:
        """Per partition: the oldest offset the state still needs, and the checkpoint."""
        offsets = self._pipeline.commit_offsets()
        to_commit: dict[TopicPartition, tuple[int, Checkpoint]] = {}
        for tp in partitions:
            source = source_of(tp.topic, tp.partition)
            if source in offsets:
                horizon, position = self._pipeline.counted_through(source)
                persisted = self._pipeline.persisted_before(source)
                to_commit[tp] = (offsets[source], Checkpoint(horizon, position, persisted))
        return to_commit

    # --- dead letters and shutdown ------------------------------------------------------------

    def _dead_letter(self, raw: bytes, invalid: Invalid, source: str, offset: int) -> None:
        self._invalid_log.note(invalid, source)
        if not self._dlq.enabled:
            return
        fetched = self._fetched
        record = self._judgment_record if fetched is None else fetched.raw_at(offset)
        if record is not None:
            self._dlq.send(record, invalid.reason, invalid.field)

    def _shutdown(self) -> None:
        stream = self._stream
        if stream is not None:
            try:
                self._commit(stream.assignment(), final=True)
            except (KafkaError, FencedError) as exc:  # fenced: the error that stops the run
                _LOG.warning("final commit failed: %s", exc)
            stream.close()
            self._stream = None
        if self._state is not None:
            self._state.close()
            self._state = None
        self._dlq.close(timeout_s=self._flush_timeout_s)
        self.server.stop()
