"""A detection set-up's declaration: one frozen value, made once from the settings.

The arithmetic lives in :mod:`streameval.detect.arithmetic`, the runtime state in
:mod:`streameval.detect.detectors`; this is what they are told.
"""

from __future__ import annotations

from dataclasses import dataclass

from streameval.config import Settings
from streameval.detect.arithmetic import threshold
from streameval.values import Segment

VS_CONTROL = "vs_control"
VS_BASELINE = "vs_baseline"


@dataclass(frozen=True, slots=True)
class DetectionSpec:
    segment_labels: tuple[str, ...]
    #: (label, value) pairs that mark the control arm (``evaluation.control``)
    control: tuple[tuple[str, str], ...]
    detectors: tuple[str, ...]
    #: the cutoffs watched, and every cutoff the scorer computes (sorted): where to find each
    ks: tuple[int, ...]
    scored_ks: tuple[int, ...]
    relevance: tuple[str, ...]
    bucket_ms: int
    min_relative_drop: float
    false_alarm_every_ms: int
    half_life_ms: int
    max_queries: int
    min_lists: int

    def __post_init__(self) -> None:
        if missing := set(self.ks) - set(self.scored_ks):
            raise ValueError(f"watched ks {sorted(missing)} are not scored")

    @property
    def threshold(self) -> float:
        """h: Lorden's bound gives at least ``false_alarm_every`` between false alarms."""
        return threshold(self.false_alarm_every_ms, self.bucket_ms)

    @property
    def cap(self) -> float:
        """The statistic is held at most here (twice h): an alarm clears in about twice its
        detection delay once the regression is fixed."""
        return 2.0 * self.threshold

    @property
    def k_index(self) -> tuple[tuple[int, int], ...]:
        """(k, position in a SourceScore's per-k tuples) for each watched k."""
        return tuple((k, self.scored_ks.index(k)) for k in self.ks)

    def is_control(self, segment: Segment) -> bool:
        labels = dict(zip(self.segment_labels, segment, strict=True))
        return all(labels.get(name) == value for name, value in self.control)

    @staticmethod
    def from_settings(settings: Settings) -> DetectionSpec | None:
        """The spec of ``settings``' ``[detection]`` section; None when no detector runs."""
        det, ev = settings.detection, settings.evaluation
        detectors = settings.detectors_in_effect
        if not detectors:
            return None
        ks = tuple(k for k in det.ks if k in ev.ks) or (max(ev.ks),)
        return DetectionSpec(
            segment_labels=ev.segment_labels,
            control=tuple(sorted(ev.control.items())),
            detectors=detectors,
            ks=ks,
            scored_ks=tuple(sorted(ev.ks)),
            relevance=det.relevance,
            bucket_ms=ev.bucket,
            min_relative_drop=det.min_relative_drop,
            false_alarm_every_ms=det.false_alarm_every,
            half_life_ms=det.half_life,
            max_queries=det.max_queries,
            min_lists=det.min_lists,
        )
