"""The impression and click topics read with confluent-kafka (librdkafka): the optional
:class:`~streameval.kafka.source.Stream` behind ``kafka.consumer = "confluent-kafka"``.

kafka-python decodes every record in Python; librdkafka fetches and decodes in C threads, which
is what this client is for. The semantics are :class:`~streameval.kafka.stream.EventStream`'s:

* **Co-partitioning.** librdkafka has no pluggable assignor, so the group uses its ``range``
  assignor: for each topic it sorts the members alike and hands out contiguous ranges, so with
  equal partition counts (checked at start, else :class:`ConfigError`) partition i of every
  topic goes to the same member. A group's members must all use the same client (the
  kafka-python one announces its own assignor, and a group needs one both support).
* **Rebalances.** Eager (``range``): every partition is revoked before any is assigned.
  librdkafka runs the callbacks inside ``consume()``. A revocation asks ``on_revoke`` what to
  commit and commits it synchronously before the partitions move; lost partitions (session
  expired, fenced) are dropped uncommitted. An assignment reads each partition's commit and
  assigns it from there explicitly (no commit: the log's start or end, as
  ``auto_offset_reset`` says; a commit outside the log: the same), so the start position is
  known before a record arrives.
* **One poll, one side of a rebalance.** A ``consume()`` call can return records fetched before
  a revocation that ran inside it, and records of the next assignment after it. A batch during
  which a partition was revoked or lost is therefore dropped whole, and :meth:`rewind` seeks the
  new assignment back to where it started; a batch whose only event was an assignment (to a
  member holding nothing) holds only the new assignment's records, from its start: it is kept.
* **Static membership.** With ``group_instance_id`` (``group.instance.id``, KIP-345)
  librdkafka does not send LeaveGroup when the consumer closes (the revoke callback still runs
  and commits): the partitions stay with the id until it comes back or the session times out.
  A member fenced by another with the same id gets a fatal error from librdkafka, raised as
  :class:`~streameval.errors.FencedError`.
* **Offsets.** Positions are tracked here (librdkafka reports none before a record is handed
  out, and after a seek), as the start of the assignment and then the offset after the last
  record returned. End offsets come from an admin client's ListOffsets: on the consumer's
  connection the request would wait behind the fetch long-poll (~0.5 s per partition).

Errors of the brokers are raised as kafka-python's ``KafkaError``, the interface's error type
(:mod:`~streameval.kafka.confluent_support`). confluent_kafka is imported only when this stream
is built.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from kafka.errors import KafkaError

from streameval.errors import FencedError, KafkaUnavailableError
from streameval.kafka.checkpoint import Checkpoint
from streameval.kafka.confluent_support import (
    FatalConsumerError,
    _import,
    _log_error,
    check_topics,
    per_partition,
    raise_fatal,
    retrying,
)
from streameval.kafka.partition import Partition
from streameval.kafka.records import Fetched
from streameval.kafka.source import Commits, OnRevoke

if TYPE_CHECKING:
    import confluent_kafka

_LOG = logging.getLogger(__name__)
#: librdkafka's own log lines
_LIBRDKAFKA_LOG = logging.getLogger("streameval.kafka.librdkafka")

_T = TypeVar("_T")


class ConfluentStream:
    def __init__(
        self,
        topics: Sequence[str],
        *,
        group_id: str,
        config: Mapping[str, object],
        auto_offset_reset: str,
        on_revoke: OnRevoke,
        max_poll_records: int = 5000,
        session_timeout_ms: int = 45_000,
        request_timeout_s: float = 30.0,
        group_instance_id: str | None = None,
    ) -> None:
        ck = _import()
        self._ck = ck
        self._instance_id = group_instance_id
        self._on_revoke = on_revoke
        self._earliest = auto_offset_reset == "earliest"
        self._max_poll_records = max_poll_records
        self._timeout_s = request_timeout_s
        self._assigned: set[Partition] = set()
        self._new_assignment: set[Partition] | None = None
        #: where each assigned partition started (its commit, or the reset), for rewind
        self._start: dict[tuple[str, int], int] = {}
        #: the offset after the last record returned, per assigned partition
        self._pos: dict[tuple[str, int], int] = {}
        #: a partition was revoked or lost during the current consume(): drop its batch
        self._revoked_in_call = False
        #: assigned partitions whose records were dropped: rewind() seeks them to their start
        self._dropped: set[Partition] = set()
        #: an exception raised inside a rebalance callback, re-raised by poll()
        self._failure: BaseException | None = None
        common = {**config, "logger": _LIBRDKAFKA_LOG, "error_cb": _log_error}
        self._admin_config = common
        self._admin = ck.admin.AdminClient(common)
        check_topics(ck, self._admin, topics)
        try:
            self._consumer: confluent_kafka.Consumer = ck.Consumer(
                {
                    **common,
                    "group.id": group_id,
                    **({"group.instance.id": group_instance_id} if group_instance_id else {}),
                    "enable.auto.commit": False,
                    "enable.auto.offset.store": False,
                    "auto.offset.reset": auto_offset_reset,
                    "partition.assignment.strategy": "range",
                    "session.timeout.ms": session_timeout_ms,
                    "heartbeat.interval.ms": max(1_000, session_timeout_ms // 3),
                    # as kafka-python reads: every record, not only committed transactions
                    "isolation.level": "read_uncommitted",
                }
            )
        except ck.KafkaException as exc:
            raise KafkaUnavailableError(
                f"cannot create the confluent-kafka consumer: {exc}"
            ) from exc
        _LOG.info(
            "reading %s with confluent-kafka %s (librdkafka %s)",
            list(topics),
            ck.version()[0],
            ck.libversion()[0],
        )
        self._consumer.subscribe(
            list(topics),
            on_assign=self._assigned_cb,
            on_revoke=self._revoked_cb,
            on_lost=self._lost_cb,
        )

    # --- rebalance callbacks (inside consume()) -------------------------------------------------

    def _assigned_cb(self, consumer: Any, partitions: list[Any]) -> None:
        try:
            if self._assigned:  # eager: never, but then records of both sides may be mixed
                self._revoked_in_call = True
            tps = {Partition(p.topic, p.partition) for p in partitions}
            starts = self._start_offsets(tps)
            consumer.assign(
                [self._ck.TopicPartition(tp.topic, tp.partition, starts[tp]) for tp in sorted(tps)]
            )
            self._assigned = tps
            self._start = dict(starts.items())
            self._pos = dict(self._start)
            self._new_assignment = set(tps)
        except BaseException as exc:  # raised again by poll(), outside librdkafka's call
            self._failure = exc

    def _revoked_cb(self, consumer: Any, partitions: list[Any]) -> None:
        self._give_up(partitions, lost=False)

    def _lost_cb(self, consumer: Any, partitions: list[Any]) -> None:
        self._give_up(partitions, lost=True)

    def _give_up(self, partitions: list[Any], *, lost: bool) -> None:
        self._revoked_in_call = True
        tps = {Partition(p.topic, p.partition) for p in partitions}
        try:
            offsets = self._on_revoke(tps, lost)
            if offsets and not lost:
                try:
                    self.commit(offsets)
                except KafkaError as exc:
                    _LOG.warning("commit of revoked partitions failed: %s", exc)
        except BaseException as exc:
            self._failure = exc
        finally:
            self._assigned -= tps
            self._dropped -= tps
            for tp in tps:
                self._start.pop(tp, None)
                self._pos.pop(tp, None)

    def _start_offsets(self, partitions: set[Partition]) -> dict[Partition, int]:
        """Each partition's commit when it is within the log, else the log's start (earliest)
        or end (latest)."""
        ck = self._ck
        committed = {
            Partition(c.topic, c.partition): c.offset
            for c in self._retrying(
                "committed offsets",
                lambda: self._consumer.committed(self._ck_list(partitions), self._timeout_s),
            )
        }
        low = self._list_offsets(partitions, ck.admin.OffsetSpec.earliest(), self._timeout_s)
        high = self._list_offsets(partitions, ck.admin.OffsetSpec.latest(), self._timeout_s)
        starts = {}
        for tp in partitions:
            offset = committed.get(tp, -1)
            if offset < 0 or not low[tp] <= offset <= high[tp]:
                offset = low[tp] if self._earliest else high[tp]
            starts[tp] = offset
        return starts

    def take_assignment(self) -> set[Partition] | None:
        assignment, self._new_assignment = self._new_assignment, None
        return assignment

    # --- reading ----------------------------------------------------------------------------

    def poll(self, timeout_ms: int) -> list[Fetched]:
        self._revoked_in_call = False
        try:
            # Any: the stubs type a Message's fields Optional, set on every record returned
            messages: list[Any] = self._consumer.consume(self._max_poll_records, timeout_ms / 1000)
        except self._ck.KafkaException as exc:
            self._raise_if_fenced(exc.args[0] if exc.args else None, exc)
            raise KafkaError(f"consume failed: {exc}") from exc
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
        try:
            if self._revoked_in_call:
                # records of the revoked partitions may precede the callback in this batch, and
                # the new assignment's follow it: read the new assignment again from its start.
                # A fatal error is never dropped with them: a fenced member's partitions are
                # taken away in the same call that hands out its (one) fatal error.
                raise_fatal(messages)
                self._dropped = set(self._assigned)
                return []
            return per_partition(messages, self._pos)
        except FatalConsumerError as exc:
            self._raise_if_fenced(exc.error, exc)
            raise

    def _raise_if_fenced(self, error: Any, cause: BaseException) -> None:
        """:class:`FencedError` when ``error`` (a confluent-kafka ``KafkaError``) says that
        another member with this ``group.instance.id`` fenced this one: librdkafka raises it
        as a fatal error, and every call after it fails with ``_FATAL``."""
        if self._instance_id is None or error is None:
            return
        try:
            code = error.code()
            text = str(error.str())
        except AttributeError:
            return
        ck_error = self._ck.KafkaError
        if code in (ck_error._FENCED, ck_error.FENCED_INSTANCE_ID) or (
            code == ck_error._FATAL and "fenced" in text.lower()
        ):
            raise FencedError(self._instance_id) from cause

    def assignment(self) -> set[Partition]:
        return set(self._assigned)

    def checkpoints(self, partitions: set[Partition]) -> dict[Partition, Checkpoint]:
        if not partitions:
            return {}
        out: dict[Partition, Checkpoint] = {}
        committed = self._retrying(
            "committed offsets",
            lambda: self._consumer.committed(self._ck_list(partitions), self._timeout_s),
        )
        for c in committed:
            if c.offset < 0:
                continue
            try:
                metadata = c.metadata
            except (UnicodeDecodeError, ValueError):  # not NUL-terminated (librdkafka#4649)
                _LOG.warning(
                    "%s/%d: unreadable commit metadata; no checkpoint", c.topic, c.partition
                )
                continue
            cp = Checkpoint.decode(metadata)
            if cp is not None:
                out[Partition(c.topic, c.partition)] = cp
        return out

    def rewind(self, partitions: set[Partition]) -> set[Partition]:
        """Seek the partitions whose records a dropped batch held back to where their assignment
        started (their commit: nothing has been committed for them since). The others were
        assigned from their commit and every record polled from them since is still due."""
        moved = partitions & self._dropped
        for tp in sorted(moved):
            start = self._start[tp]
            self._call(self._consumer.seek, self._ck.TopicPartition(tp.topic, tp.partition, start))
            self._pos[tp] = start
        self._dropped -= moved
        if moved:
            _LOG.info("a poll crossed the rebalance: %d partitions read again", len(moved))
        return moved

    def end_offsets(
        self, partitions: set[Partition], timeout_ms: int | None = None
    ) -> dict[Partition, int]:
        if not partitions:
            return {}
        timeout_s = self._timeout_s if timeout_ms is None else timeout_ms / 1000
        return self._list_offsets(partitions, self._ck.admin.OffsetSpec.latest(), timeout_s)

    def beginning_offsets(self, partitions: set[Partition]) -> dict[Partition, int]:
        if not partitions:
            return {}
        return self._list_offsets(partitions, self._ck.admin.OffsetSpec.earliest(), self._timeout_s)

    def committed_offsets(self, partitions: set[Partition]) -> dict[Partition, int]:
        if not partitions:
            return {}
        committed = self._retrying(
            "committed offsets",
            lambda: self._consumer.committed(self._ck_list(partitions), self._timeout_s),
        )
        return {Partition(c.topic, c.partition): c.offset for c in committed if c.offset >= 0}

    def seek_to_beginning(self, partitions: set[Partition]) -> None:
        for tp, start in self.beginning_offsets(partitions).items():
            self._call(self._consumer.seek, self._ck.TopicPartition(tp.topic, tp.partition, start))
            self._start[tp] = start
            self._pos[tp] = start

    def highwater(self, tp: Partition) -> int | None:
        try:
            _, high = self._consumer.get_watermark_offsets(
                self._ck.TopicPartition(tp.topic, tp.partition), cached=True
            )
        except self._ck.KafkaException:
            return None
        return high if high >= 0 else None

    def position(self, tp: Partition) -> int | None:
        return self._pos.get(tp)

    def commit(self, offsets: Commits) -> None:
        if not offsets:
            return
        ck_offsets = [
            self._ck.TopicPartition(tp.topic, tp.partition, offset, metadata=cp.encode())
            for tp, (offset, cp) in offsets.items()
        ]
        try:
            result = self._consumer.commit(offsets=ck_offsets, asynchronous=False)
        except self._ck.KafkaException as exc:
            self._raise_if_fenced(exc.args[0] if exc.args else None, exc)
            raise KafkaError(f"commit failed: {exc}") from exc
        failed = [f"{c.topic}/{c.partition}: {c.error}" for c in result or () if c.error]
        if failed:
            raise KafkaError(f"commit failed: {failed}")

    def close(self) -> None:
        try:
            # the revoke callback commits first; then a dynamic member leaves the group, a
            # static one (group.instance.id) does not: its partitions wait for its id
            self._consumer.close()
        except self._ck.KafkaException as exc:  # pragma: no cover - best effort at shutdown
            _LOG.warning("closing the consumer failed: %s", exc)

    # --- helpers ----------------------------------------------------------------------------

    def _ck_list(self, partitions: set[Partition]) -> list[Any]:
        return [self._ck.TopicPartition(tp.topic, tp.partition) for tp in sorted(partitions)]

    def _call(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        """``method(...)``, with confluent-kafka's exceptions raised as kafka-python's."""
        try:
            return method(*args, **kwargs)
        except self._ck.KafkaException as exc:
            raise KafkaError(f"{getattr(method, '__name__', 'call')} failed: {exc}") from exc

    def _retrying(
        self, what: str, attempt: Callable[[], _T], on_retry: Callable[[], None] | None = None
    ) -> _T:
        """:func:`~streameval.kafka.confluent_support.retrying` within the request timeout."""
        return retrying(self._ck, self._timeout_s, what, attempt, on_retry)

    def _list_offsets(
        self, partitions: set[Partition], spec: Any, timeout_s: float
    ) -> dict[Partition, int]:
        request = {self._ck.TopicPartition(tp.topic, tp.partition): spec for tp in partitions}

        def attempt() -> dict[Partition, int]:
            futures = self._admin.list_offsets(request, request_timeout=timeout_s)
            return {
                Partition(ck_tp.topic, ck_tp.partition): future.result(timeout=timeout_s + 5).offset
                for ck_tp, future in futures.items()
            }

        def fresh_admin() -> None:
            # librdkafka's admin client keeps sending the leader epoch it cached before a
            # broker restart (FENCED_LEADER_EPOCH until the request times out, measured): a new
            # client starts from fresh metadata
            self._admin = self._ck.admin.AdminClient(self._admin_config)

        return self._retrying("log offsets", attempt, fresh_admin)
