"""The join: events into judged ranked lists (open lists, judgments, segments)."""

from streameval.join.judgments import JudgmentIds, JudgmentStore
from streameval.join.open_lists import InteractionGrades, Joiner, OpenList
from streameval.join.segments import OTHER, SegmentCapper

__all__ = [
    "OTHER",
    "InteractionGrades",
    "Joiner",
    "JudgmentIds",
    "JudgmentStore",
    "OpenList",
    "SegmentCapper",
]
