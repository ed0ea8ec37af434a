"""What the detectors learn: per (segment, relevance, k) the references and moments
(:class:`Track`), per series one CUSUM (:class:`Series`), and both as JSON-able values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from streameval.detect.arithmetic import cusum_step, gaussian_llr
from streameval.detect.spec import DetectionSpec
from streameval.detect.state import EwMoments, QueryReferences
from streameval.snapshot import DetectionRow
from streameval.values import Segment


class Track:
    """What one (segment, relevance, k) has learned from its past buckets."""

    __slots__ = ("known", "level", "new", "new_level", "refs", "vs_control")

    def __init__(self, spec: DetectionSpec) -> None:
        h = spec.half_life_ms
        self.refs = QueryReferences(h, spec.max_queries)
        self.level = EwMoments(h)  # NDCG@k of every list
        self.new_level = EwMoments(h)  # NDCG@k of lists whose query had no reference
        self.known = EwMoments(h)  # residuals against the query's own reference
        self.new = EwMoments(h)  # residuals of new queries against new_level
        self.vs_control = EwMoments(h)  # residuals against the control's references


class Series:
    """One CUSUM: its statistic, the buckets its alarm first held, last began and last stopped
    holding (event time), and the current excursion's inverse-variance sums (for the shift
    estimate)."""

    __slots__ = (
        "alarm_since_ms",
        "bucket_ms",
        "cleared_ms",
        "first_alarm_ms",
        "inv_var",
        "statistic",
        "weighted",
    )

    def __init__(self) -> None:
        self.statistic = 0.0
        self.first_alarm_ms: int | None = None
        self.weighted = 0.0  # sum of d / v over the excursion
        self.inv_var = 0.0  # sum of 1 / v over the excursion
        self.bucket_ms: int | None = None
        #: start of the bucket at which the current (or the last) alarm began to hold
        self.alarm_since_ms: int | None = None
        #: start of the bucket at which the last alarm stopped holding (None while it holds)
        self.cleared_ms: int | None = None

    def dump(self) -> list[float | int | None]:
        return [
            self.statistic,
            self.first_alarm_ms,
            self.weighted,
            self.inv_var,
            self.bucket_ms,
            self.alarm_since_ms,
            self.cleared_ms,
        ]

    def estimate(self) -> tuple[float | None, float | None]:
        """The shift over the current excursion and its standard error (None before a step)."""
        if self.inv_var > 0.0:
            return self.weighted / self.inv_var, self.inv_var**-0.5
        return None, None

    def step(
        self, bucket_ms: int, d: float, v: float, *, delta: float, h: float, cap: float
    ) -> None:
        held = self.statistic >= h
        if self.statistic <= 0.0:  # a new excursion starts here
            self.weighted = self.inv_var = 0.0
        self.statistic = cusum_step(self.statistic, gaussian_llr(d, v, delta), cap)
        self.weighted += d / v
        self.inv_var += 1.0 / v
        self.bucket_ms = bucket_ms
        holds = self.statistic >= h
        if holds and not held:
            self.alarm_since_ms, self.cleared_ms = bucket_ms, None
            if self.first_alarm_ms is None:
                self.first_alarm_ms = bucket_ms
        elif held and not holds:
            self.cleared_ms = bucket_ms


#: what :func:`load_state` gives back: the tracks, the series, the control segments seen per
#: (relevance, k), and per relevance source the start of its first open bucket
Loaded = tuple[
    dict[tuple[Segment, str, int], Track],
    dict[tuple[str, str, Segment, int], Series],
    dict[tuple[str, int], set[Segment]],
    dict[str, int | None],
]


def dump_state(
    tracks: Mapping[tuple[Segment, str, int], Track],
    series: Mapping[tuple[str, str, Segment, int], Series],
    controls_seen: Mapping[tuple[str, int], set[Segment]],
    closed: Mapping[str, int | None],
) -> dict[str, Any]:
    """The detectors' learned state as JSON-able values (floats exact through ``json``)."""
    dumped_tracks = []
    for (segment, relevance, k), track in tracks.items():
        moments = [m.dump() for m in (track.level, track.new_level, track.known, track.new)]
        dumped_tracks.append(
            [list(segment), relevance, k, track.refs.dump(), *moments, track.vs_control.dump()]
        )
    dumped_series = [
        [detector, relevance, list(segment), k, *s.dump()]
        for (detector, relevance, segment, k), s in series.items()
    ]
    controls = [
        [relevance, k, sorted(list(seg) for seg in seen)]
        for (relevance, k), seen in controls_seen.items()
    ]
    return {
        "tracks": dumped_tracks,
        "series": dumped_series,
        "controls": controls,
        "closed": dict(closed),
    }


def load_state(state: Mapping[str, Any], spec: DetectionSpec, threshold: float) -> Loaded:
    """What :func:`dump_state` gave, read back for detectors of ``spec`` (raises ``ValueError``
    if it is not one)."""
    try:
        tracks: dict[tuple[Segment, str, int], Track] = {}
        for seg, relevance, k, refs, *moments in state["tracks"]:
            track = Track(spec)
            track.refs.load(refs)
            for m, values in zip(
                (track.level, track.new_level, track.known, track.new, track.vs_control),
                moments,
                strict=True,
            ):
                m.load(values)
            tracks[tuple(seg), str(relevance), int(k)] = track
        series: dict[tuple[str, str, Segment, int], Series] = {}
        for entry in state["series"]:
            detector, relevance, seg, k, stat, first, weighted, inv_var, b, *episode = entry
            one = Series()
            one.statistic, one.weighted, one.inv_var = stat, weighted, inv_var
            one.first_alarm_ms, one.bucket_ms = first, b
            if episode:  # (a snapshot written before episodes were kept has none)
                one.alarm_since_ms, one.cleared_ms = episode
            elif stat >= threshold:
                one.alarm_since_ms = first
            series[str(detector), str(relevance), tuple(seg), int(k)] = one
        controls = {
            (str(relevance), int(k)): {tuple(seg) for seg in segs}
            for relevance, k, segs in state["controls"]
        }
        closed = {str(r): None if c is None else int(c) for r, c in state["closed"].items()}
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a detectors' state: {exc!r}") from exc
    return tracks, series, controls, closed


SeriesKey = tuple[str, str, Segment, int]  # (detector, relevance, segment, k)


def detection_rows(
    series: Mapping[SeriesKey, Series], threshold: float
) -> tuple[DetectionRow, ...]:
    """One exported row per series, in a stable order (detector, relevance, segment, k)."""
    out = []
    for (detector, relevance, segment, k), s in sorted(series.items()):
        shift, stderr = s.estimate()
        out.append(
            DetectionRow(
                detector=detector,
                relevance=relevance,
                segment=segment,
                k=k,
                statistic=s.statistic,
                threshold=threshold,
                alarm=s.statistic >= threshold,
                first_alarm_ms=s.first_alarm_ms,
                shift=shift,
                shift_stderr=stderr,
                bucket_ms=s.bucket_ms,
                alarm_since_ms=s.alarm_since_ms,
                cleared_ms=s.cleared_ms,
            )
        )
    return tuple(out)
