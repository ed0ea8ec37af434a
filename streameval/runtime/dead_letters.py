"""Dead-letter routing: a record the pipeline rejects goes to the dead-letter topic as it was
read (the judgment record being offered, or the stream record found by its offset in the batch
being offered: no record is kept per record offered), and is logged (rate-limited)."""

from __future__ import annotations

from kafka.errors import KafkaError

from streameval.events.decode import Invalid
from streameval.kafka.dlq import DeadLetterSink
from streameval.kafka.records import Fetched, RawRecord
from streameval.log_limits import InvalidRecordLog


class DeadLetters:
    """The pipeline's ``dead_letter`` callback, and the sink behind it.

    The sink is disabled until the start has seen a broker and the topics it reads (nothing is
    created on the broker before those checks, issue 28): :meth:`open` then sets the real one.
    """

    def __init__(self, client: dict[str, object], *, flush_timeout_s: float) -> None:
        self._client = client
        self._flush_timeout_s = flush_timeout_s
        self.sink = DeadLetterSink("", client)
        self._invalid_log = InvalidRecordLog()
        # what a dead letter is made of: the judgment record being offered, or the batch of
        # stream records
        self.judgment_record: RawRecord | None = None
        self.fetched: Fetched | None = None

    def open(self, topic: str) -> None:
        """The dead-letter topic is made ready (created when missing)."""
        self.sink = DeadLetterSink(topic, self._client)

    def __call__(self, raw: bytes, invalid: Invalid, source: str, offset: int) -> None:
        self._invalid_log.note(invalid, source)
        if not self.sink.enabled:
            return
        fetched = self.fetched
        record = self.judgment_record if fetched is None else fetched.raw_at(offset)
        if record is not None:
            self.sink.send(record, invalid.reason, invalid.field)

    @property
    def failed(self) -> int:
        """Dead letters that failed for good (logged and counted by the sink)."""
        return self.sink.failed

    def flush(self) -> None:
        """Wait until every dead letter queued so far is acknowledged (or failed for good:
        logged and counted by the sink). A commit says that the records before it are done
        with; the dead letter of one of them still in the producer's buffer would be lost to a
        crash, since a restart reads on from the commit. Raises ``KafkaError`` when they are not
        acknowledged within the flush timeout: no commit then (the next one tries again, and a
        re-read after a crash writes those dead letters again: at least once, never lost)."""
        try:
            self.sink.flush(timeout_s=self._flush_timeout_s)
        except KafkaError as exc:
            raise KafkaError(
                f"dead letters not acknowledged within {self._flush_timeout_s:g} s: {exc}"
            ) from exc

    def close(self) -> None:
        self.sink.close(timeout_s=self._flush_timeout_s)
