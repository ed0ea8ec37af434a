"""Interleaving (DESIGN §10): credit per team, outcomes per pair, windows and a sequential test.

A consumer of finalized lists beside :mod:`streameval.windows`, fed through
:class:`streameval.engine.consumers.ListConsumer`.
"""

from streameval.interleave.detector import PairTest, log_mixture_ratio
from streameval.interleave.store import InterleavingStore
from streameval.score.credit import OUTCOMES, list_outcomes, pair_outcomes, team_credit

__all__ = [
    "OUTCOMES",
    "InterleavingStore",
    "PairTest",
    "list_outcomes",
    "log_mixture_ratio",
    "pair_outcomes",
    "team_credit",
]
