"""From a ranked list of doc ids to the grade sequence the scorer reads."""

from collections.abc import Container, Mapping, Sequence
from itertools import repeat

from streameval.score.errors import ScoreInputError


def all_distinct(doc_ids: Sequence[str]) -> bool:
    """No doc repeats in the list (else a repeat gains only at its first position)."""
    return len(set(doc_ids)) == len(doc_ids)


def grades_in_rank_order(
    doc_ids: Sequence[str], grade_of: Mapping[str, float], default: float = 0.0
) -> list[float]:
    """The grade of each position; ``default`` for docs missing from ``grade_of``.

    A doc repeated in the list gains only at its first position: later repeats get 0, and
    positions are kept (DESIGN §2), so the docs after a repeat keep their rank.
    """
    grades = list(map(grade_of.get, doc_ids, repeat(default, len(doc_ids))))
    if not all_distinct(doc_ids):  # the rare list with a repeated doc
        seen: set[str] = set()
        for position, doc in enumerate(doc_ids):
            if doc in seen:
                grades[position] = 0.0
            else:
                seen.add(doc)
    return grades


def judged_in_rank_order(doc_ids: Sequence[str], judged: Container[str]) -> list[bool]:
    """For each position, whether its doc has a judgment (input of coverage and condensing)."""
    return [doc in judged for doc in doc_ids]


def condensed(grades: Sequence[float], judged_flags: Sequence[bool]) -> list[float]:
    """The list with its unjudged docs dropped (DESIGN ``unjudged = "condensed"``).

    The judged docs move up to close the gaps, as in Sakai's condensed lists.
    """
    if len(grades) != len(judged_flags):
        raise ScoreInputError(
            f"grades and judged flags differ in length: {len(grades)} != {len(judged_flags)}"
        )
    return [g for g, judged in zip(grades, judged_flags, strict=True) if judged]
