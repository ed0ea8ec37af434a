"""The scoring stage: a finalized list in, its :class:`~streameval.values.ScoredList` out.

The metric core: pure functions from graded ranked lists to CG, DCG, NDCG@k and friends.
Declaration (:class:`MetricSpec`) is kept apart from the arithmetic; :class:`Scorer` is the
hot path the engine calls once per finalized list and relevance source. :mod:`.lists`
(:class:`~streameval.score.lists.ListScorer`) grades a finalized list for each relevance source
and scores it through the core; it is not imported here (it depends on the join, the core does
not).
"""

from streameval.score.discount import discount_table, jarvelin, log2
from streameval.score.errors import MetricSpecError, ScoreInputError
from streameval.score.gain import exponential, gain_function, linear
from streameval.score.measures import (
    cumulative_gain,
    judged_coverage,
    reciprocal_rank,
    reciprocal_rank_at,
)
from streameval.score.ndcg import CutoffScores, Scorer, dcg_at_k, ideal_gains
from streameval.score.ranking import (
    all_distinct,
    condensed,
    grades_in_rank_order,
    judged_in_rank_order,
)
from streameval.score.spec import MAX_K, MetricSpec

__all__ = [
    "MAX_K",
    "CutoffScores",
    "MetricSpec",
    "MetricSpecError",
    "ScoreInputError",
    "Scorer",
    "all_distinct",
    "condensed",
    "cumulative_gain",
    "dcg_at_k",
    "discount_table",
    "exponential",
    "gain_function",
    "grades_in_rank_order",
    "ideal_gains",
    "jarvelin",
    "judged_coverage",
    "judged_in_rank_order",
    "linear",
    "log2",
    "reciprocal_rank",
    "reciprocal_rank_at",
]
