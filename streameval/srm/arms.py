"""Which arm of the A/B a finalized list belongs to (DESIGN §12).

The arms are the values of ``evaluation.control``'s labels in the list's segment (e.g. ``arm``:
``control``, ``treatment``); with several control labels, their values joined by ``/`` in the
order of ``evaluation.segment_labels``. A list whose segment has no value for one of them
(``""``), or was folded into ``__other__`` by the segment cap, has no arm: it is counted as
:data:`EXCLUDED`, never in the test.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from streameval.join.segments import OTHER
from streameval.values import Segment

#: the arm of a list that names none (counted apart, not tested)
EXCLUDED = ""

ArmOf = Callable[[Segment], str]


def arm_reader(segment_labels: Sequence[str], control: Collection[str]) -> ArmOf:
    """The arm of a segment of ``segment_labels`` (each of ``control``'s labels among them)."""
    positions = [i for i, name in enumerate(segment_labels) if name in control]
    if len(positions) != len(control):
        missing = sorted(set(control) - set(segment_labels))
        raise ValueError(f"the control labels {missing} are not segment labels")
    if len(positions) == 1:
        (i,) = positions

        def one(segment: Segment) -> str:
            value = segment[i]
            return EXCLUDED if value == OTHER else value

        return one

    def joined(segment: Segment) -> str:
        values = [segment[i] for i in positions]
        if EXCLUDED in values or OTHER in values:
            return EXCLUDED
        return "/".join(values)

    return joined
