"""Judges (DESIGN §12): judge families, judged NDCG per family, agreement between families,
judgment freshness and judged coverage by query frequency. A consumer of the judgment table and
of finalized lists, beside :mod:`streameval.detect` and :mod:`streameval.interleave`."""

from streameval.judges.agreement import PairSums, alpha_interval
from streameval.judges.families import HUMAN, OTHER, Families, family_of
from streameval.judges.frequency import SpaceSaving
from streameval.judges.tracker import HEAD, TAIL, JudgeTracker, relevance_of

__all__ = [
    "HEAD",
    "HUMAN",
    "OTHER",
    "TAIL",
    "Families",
    "JudgeTracker",
    "PairSums",
    "SpaceSaving",
    "alpha_interval",
    "family_of",
    "relevance_of",
]
