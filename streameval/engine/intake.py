"""Intake accounting: where every record read went, by outcome (DESIGN §5).

read == accepted + invalid + duplicate + late + unmatched (+ pending: clicks still waiting for
their impression, each later moved to accepted or unmatched). Every record the engine is offered
ends in exactly one :class:`~streameval.values.Outcome`, answered as an :class:`Offered`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from streameval.events.decode import Invalid
from streameval.snapshot import Intake
from streameval.values import ACCEPTED, DUPLICATE, LATE, PENDING, UNMATCHED, Outcome

EVENT_TYPES = ("impression", "click", "judgment")


@dataclass(frozen=True, slots=True)
class Offered:
    """What became of one record: its outcome, the event type, and why it was invalid."""

    outcome: Outcome
    type: str | None = None
    invalid: Invalid | None = None


#: the answers without an ``invalid`` reason, made once (one per record would cost ~5 % of offer)
OFFERED = {
    (outcome, kind): Offered(outcome, kind)
    for outcome in Outcome
    for kind in (None, "impression", "click", "judgment")
}


class IntakeCounters:
    __slots__ = ("accepted", "duplicate", "invalid", "late", "pending", "read", "unmatched")

    def __init__(self) -> None:
        self.read = 0
        self.accepted: Counter[str] = Counter()
        self.invalid: Counter[str] = Counter()
        self.duplicate: Counter[str] = Counter()
        self.late: Counter[str] = Counter()
        self.unmatched = 0
        self.pending = 0

    def count(self, outcome: Outcome, kind: str, count: bool, *, new_record: bool = True) -> None:
        """One record of type ``kind`` ended in ``outcome`` (nothing when ``count`` is false: a
        record a previous run counted; ``new_record`` false: a waiting click's final outcome,
        read and counted pending earlier)."""
        if not count:
            return
        if new_record:
            self.read += 1
        if outcome is ACCEPTED:
            self.accepted[kind] += 1
        elif outcome is PENDING:
            self.pending += 1
        elif outcome is DUPLICATE:
            self.duplicate[kind] += 1
        elif outcome is LATE:
            self.late[kind] += 1
        elif outcome is UNMATCHED:
            self.unmatched += 1

    def count_invalid(self, reason: str) -> None:
        self.read += 1
        self.invalid[reason] += 1

    def unmatched_from_pending(self, clicks: int) -> None:
        """``clicks`` counted pending will never meet their impression: unmatched."""
        self.pending -= clicks
        self.unmatched += clicks

    def snapshot(self) -> Intake:
        return Intake(
            records_read=self.read,
            accepted=dict(self.accepted),
            invalid=dict(self.invalid),
            duplicate=dict(self.duplicate),
            late=dict(self.late),
            unmatched_clicks=self.unmatched,
            pending_clicks=self.pending,
        )
