"""Segments: the values of the configured ``segment_labels`` of an impression, capped.

Label values come from traffic, so their number is unbounded; Prometheus series must not be.
The first ``max_segments`` distinct combinations are kept as they are; any later one folds into
``__other__`` (every label), so a flood of distinct values costs one series.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from streameval.values import Segment

OTHER = "__other__"


class SegmentCapper:
    __slots__ = ("_labels", "_max", "_other", "_seen")

    def __init__(self, labels: tuple[str, ...], max_segments: int) -> None:
        self._labels = labels
        self._max = max_segments
        self._seen: dict[Segment, Segment] = {}
        self._other: Segment = (OTHER,) * len(labels)

    @property
    def labels(self) -> tuple[str, ...]:
        return self._labels

    def segment_of(self, labels: Mapping[str, str]) -> Segment:
        """The (capped, shared) segment of an impression with these ``labels``."""
        key = tuple([labels.get(name, "") for name in self._labels])  # a list: no generator
        seg = self._seen.get(key)
        if seg is not None:
            return seg
        if len(self._seen) >= self._max:
            return self._other
        seg = tuple(sys.intern(v) for v in key)
        self._seen[seg] = seg
        return seg

    def __len__(self) -> int:
        return len(self._seen)
