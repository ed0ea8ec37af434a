"""Gain functions: the value a document of a given grade adds before discounting.

Both are increasing in the grade and map 0 to 0, so the sign of a grade is kept: a
negative grade (e.g. "Bad" = −1) is a negative gain, i.e. a penalty.
"""

import math
from collections.abc import Callable

from streameval.score.errors import ScoreInputError
from streameval.score.spec import Gain

GainFunction = Callable[[float], float]


def linear(rel: float) -> float:
    """Gain = rel (trec_eval's ``ndcg_cut``, and the seeds' "regular" DCG)."""
    return float(rel)


def exponential(rel: float) -> float:
    """Gain = 2^rel − 1 (Burges et al.; the seeds' "alternative" DCG).

    Raises :class:`ScoreInputError` when 2^rel overflows a float (rel ≥ 1024).
    """
    try:
        return math.pow(2.0, rel) - 1.0
    except OverflowError as exc:
        raise ScoreInputError(f"exponential gain overflows for grade {rel!r}") from exc


def gain_function(name: Gain) -> GainFunction:
    """The gain function declared by ``MetricSpec.gain``."""
    if name == "linear":
        return linear
    if name == "exponential":
        return exponential
    raise ScoreInputError(f"unknown gain {name!r}")
