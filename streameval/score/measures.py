"""The small measures reported alongside NDCG: CG, reciprocal rank, judged coverage."""

from collections.abc import Sequence

from streameval.score.errors import ScoreInputError


def _check_k(k: int) -> None:
    if k < 1:
        raise ScoreInputError(f"k must be >= 1, got {k}")


def cumulative_gain(gains: Sequence[float], k: int) -> float:
    """CG@k: the plain sum of the first k values (no position discount); padding adds 0."""
    _check_k(k)
    return float(sum(gains[:k]))


def reciprocal_rank(relevant: Sequence[bool]) -> float:
    """1 / (rank of the first true flag), 0.0 when there is none."""
    for rank, flag in enumerate(relevant, start=1):
        if flag:
            return 1.0 / rank
    return 0.0


def reciprocal_rank_at(first_position: int | None) -> float:
    """1 / first_position (1-based), 0.0 for None (nothing clicked / relevant)."""
    if first_position is None:
        return 0.0
    if first_position < 1:
        raise ScoreInputError(f"positions are 1-based, got {first_position}")
    return 1.0 / first_position


def judged_coverage(judged_flags: Sequence[bool], k: int) -> float | None:
    """Share of the top-k positions whose doc is judged: judged@k / min(k, len(list)).

    The denominator is the number of positions actually shown, so a 3-doc list that is fully
    judged has coverage 1.0 at k = 10 (padding positions are not "unjudged docs"). An empty
    list has no positions and no coverage: None.
    """
    _check_k(k)
    top = judged_flags[:k]
    if not top:
        return None
    return sum(1 for flag in top if flag) / len(top)
