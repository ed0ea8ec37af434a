"""Intake accounting: where every record read went, by outcome (DESIGN §5).

read == accepted + invalid + duplicate + late + unmatched (+ pending: clicks still waiting for
their impression, each later moved to accepted or unmatched).
"""

from __future__ import annotations

from collections import Counter

from streameval.snapshot import Intake

EVENT_TYPES = ("impression", "click", "judgment")


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
