"""The detectors' runtime: fed finalized lists through
:class:`~streameval.engine.consumers.ListConsumer` (and judged scores early,
:class:`~streameval.engine.consumers.JudgedEarlyConsumer`), acting once per completed bucket, in
order, so the result never depends on when ``advance`` is called.

Per bucket, a list only leaves its *sufficient statistics*: per (segment, k, query) the count,
sum and sum of squares of NDCG@k. When the bucket completes (the horizon of its relevance source
is past its end) each series takes one step:

* ``vs_control`` (segment S against the control arm C): every list's residual is its NDCG minus
  the *control arm's* exponentially weighted mean for the same query (the control's overall
  level for a query it has not seen). The reference is a fixed function of the query for both
  arms, so the randomized split makes its errors cancel in ``d = mean_S(resid) − mean_C(resid)``
  (a control variate, as CUPED does with pre-period data, Deng et al. 2013), while the query-mix
  variance and the daily drift of the mix go. ``v = var_S/n_S + var_C/n_C`` with each arm's
  residual variance forgotten like the references.
* ``vs_baseline`` (segment S against its own past): residual = NDCG minus the query's own
  exponentially weighted past mean; queries without history form a second stratum compared with
  the segment's recent mean of such new queries. ``d`` is the precision-weighted mean of the two
  strata's mean residuals (:func:`~streameval.detect.arithmetic.precision_mean`). A change of the
  query mix moves neither stratum's residuals (each query is its own reference), which is what
  keeps the evening's mix from paging.

Then ``W = min(cap, max(0, W + llr(d)))`` with the Gaussian log-likelihood ratio for a drop of
``delta = min_relative_drop × level`` (the reference level, as of before the bucket); the
references and variances learn the bucket only after it has been tested.

A list whose bucket was already closed (re-read after a rebalance, :meth:`Detectors.reset`) is
ignored and counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from streameval import alarms
from streameval.detect.arithmetic import precision_mean
from streameval.detect.bucket_pass import baseline_pass, learn, residuals
from streameval.detect.series import (
    Series,
    SeriesKey,
    Track,
    detection_rows,
    dump_state,
    load_state,
)
from streameval.detect.spec import VS_BASELINE, VS_CONTROL, DetectionSpec
from streameval.detect.stash import ZERO, BucketData, FedStashes, PerQuery, Stash, SumsStash, merge
from streameval.detect.state import QueryReferences
from streameval.snapshot import DetectionRow
from streameval.values import (
    IMPLICIT,
    IMPLICIT_DEBIASED,
    JUDGED,
    ScoredList,
    Segment,
    source_named,
)

#: the key of the pooled control arm's track when several segments match ``control``
_CONTROL: Segment = ("\x00control",)


class Detectors(FedStashes):
    """Every configured detector series over the stream of finalized lists (single instance)."""

    def __init__(self, spec: DetectionSpec) -> None:
        self.spec = spec
        self._ks = tuple(k for k, _ in spec.k_index)
        self._positions = positions = tuple(i for _, i in spec.k_index)
        self._h = spec.threshold
        self._cap = spec.cap
        self._vs_control = VS_CONTROL in spec.detectors
        self._vs_baseline = VS_BASELINE in spec.detectors
        self._stash: dict[str, SumsStash] = {
            r: Stash(spec.bucket_ms, positions) for r in spec.relevance
        }
        self._bucket_ms = spec.bucket_ms
        self._fed()
        #: JudgedEarlyConsumer: judged scores are wanted early only when judged is watched
        self.takes_judged = self._judged is not None
        self._tracks: dict[tuple[Segment, str, int], Track] = {}
        self._series: dict[SeriesKey, Series] = {}
        self._control_of: dict[Segment, bool] = {}
        self._controls_seen: dict[tuple[str, int], set[Segment]] = {}

    @property
    def ignored(self) -> int:
        """Lists ignored because their bucket was already closed (re-read after a reset)."""
        return sum(stash.ignored for stash in self._stash.values())

    # --- the consumer protocols ---------------------------------------------------------------

    def _fed(self) -> None:
        """(:class:`~streameval.detect.stash.FedStashes`) each source's stash at hand."""
        self._implicit = self._stash.get(IMPLICIT)
        self._debiased = self._stash.get(IMPLICIT_DEBIASED)
        self._judged = self._stash.get(JUDGED)

    def add(self, scored: ScoredList) -> None:
        """A finalized list: its implicit score (its judged one came early, :meth:`add_judged`)."""
        stash = self._implicit
        if stash is not None:
            source = source_named(scored.sources, IMPLICIT)
            if source is not None:
                stash.add(scored.timestamp, scored.segment, scored.query_id, source.ndcg)
        stash = self._debiased
        if stash is not None:  # scored with [propensity] enabled (streameval.propensity)
            source = source_named(scored.sources, IMPLICIT_DEBIASED)
            if source is not None:
                stash.add(scored.timestamp, scored.segment, scored.query_id, source.ndcg)

    def add_judged(self, scored: ScoredList) -> None:
        """A list whose impression the watermark has passed, with its judged score."""
        stash = self._judged
        if stash is not None:
            source = source_named(scored.sources, JUDGED)  # alone, or among the others
            if source is not None:
                stash.add(scored.timestamp, scored.segment, scored.query_id, source.ndcg)

    def advance(self, horizon_ms: int) -> None:
        """The evaluation horizon: every implicit score before it has been added."""
        self.close(IMPLICIT, horizon_ms)
        if self._debiased is not None:
            self.close(IMPLICIT_DEBIASED, horizon_ms)

    def advance_judged(self, watermark_ms: int) -> None:
        """The watermark: every judged score of an impression before it has been added."""
        self.close(JUDGED, watermark_ms)

    def close(self, relevance: str, point_ms: int) -> None:
        """Every bucket of ``relevance`` before ``point_ms`` has been handed over (lists, or
        :meth:`ingest`): close them, in order."""
        stash = self._stash.get(relevance)
        if stash is not None:
            for b, data in stash.take(point_ms):
                self._close_bucket(relevance, b, data)

    def reset(self) -> None:
        """The stream is re-read from the last commit (a rebalance): drop what open buckets
        hold; the re-read hands their lists again, and lists of closed buckets are ignored."""
        for stash in self._stash.values():
            stash.clear()

    def ingest(
        self,
        relevance: str,
        bucket_ms: int,
        data: Mapping[tuple[Segment, int], Mapping[str, Sequence[float]]],
    ) -> None:
        """A whole bucket's sufficient statistics at once, keyed by (segment, k) (what a
        group-wide state topic, or a list-level simulation, would hand over instead of lists);
        merged into the bucket."""
        stash = self._stash[relevance]
        if stash.closed is not None and bucket_ms < stash.closed:
            stash.ignored += sum(int(a[0]) for pq in data.values() for a in pq.values())
            return
        for (segment, k), per_query in data.items():
            if k in self._ks:  # (else written by an instance that watched another k)
                stash.merge(bucket_ms, segment, self._ks.index(k), per_query)

    # --- the state as a value (group-wide detection's snapshots) -------------------------------

    def dump(self) -> dict[str, Any]:
        """Everything the detectors have learned, as JSON-able values (floats exact through
        ``json``), for :meth:`load` into detectors of the same spec. Only between buckets: the
        open buckets are not included (none is open right after :meth:`close`)."""
        closed = {r: stash.closed for r, stash in self._stash.items()}
        return dump_state(self._tracks, self._series, self._controls_seen, closed)

    def load(self, state: Mapping[str, Any]) -> None:
        """The state :meth:`dump` gave (raises ``ValueError`` if it is not one: nothing is
        changed then)."""
        tracks, series, controls, closed = load_state(state, self.spec, self._h)
        self._tracks, self._series, self._controls_seen = tracks, series, controls
        for relevance, stash in self._stash.items():
            stash.clear()
            stash.closed = closed.get(relevance)

    # --- per bucket ---------------------------------------------------------------------------

    def _is_control(self, segment: Segment) -> bool:
        known = self._control_of.get(segment)
        if known is None:
            known = self._control_of[segment] = self.spec.is_control(segment)
        return known

    def _track(self, segment: Segment, relevance: str, k: int) -> Track:
        track = self._tracks.get((segment, relevance, k))
        if track is None:
            track = self._tracks[segment, relevance, k] = Track(self.spec)
        return track

    def _series_of(self, detector: str, relevance: str, segment: Segment, k: int) -> Series:
        series = self._series.get((detector, relevance, segment, k))
        if series is None:
            series = self._series[detector, relevance, segment, k] = Series()
        return series

    def _step(
        self,
        detector: str,
        relevance: str,
        segment: Segment,
        k: int,
        *,
        b: int,
        d: float,
        v: float,
        delta: float,
    ) -> None:
        """One CUSUM step of a series; a step across the threshold is logged (:mod:`alarms`)."""
        series = self._series_of(detector, relevance, segment, k)
        h = self._h
        was = series.statistic >= h
        series.step(b, d, v, delta=delta, h=h, cap=self._cap)
        if (series.statistic >= h) != was:
            shift, stderr = series.estimate()
            alarms.series_changed(
                alarm=not was,
                detector=detector,
                relevance=relevance,
                k=k,
                labels=self.spec.segment_labels,
                segment=segment,
                statistic=series.statistic,
                threshold=h,
                shift=shift,
                stderr=stderr,
                bucket_ms=b,
            )

    def _close_bucket(self, relevance: str, b: int, data: BucketData) -> None:
        for j, k in enumerate(self._ks):
            segments = {seg: per_k[j] for seg, per_k in data.items() if per_k[j]}
            if segments:
                self._close_k(relevance, k, b, segments)

    def _close_k(self, relevance: str, k: int, b: int, segments: dict[Segment, PerQuery]) -> None:
        """One bucket of one relevance source and k: every series steps, then learns."""
        vs_control, vs_baseline = self._vs_control, self._vs_baseline
        controls = [seg for seg in segments if self._is_control(seg)] if vs_control else []
        # the control's references: the control segment's own track while one segment has ever
        # matched ``control`` and it learns anyway (vs_baseline); else a pooled track of its own
        seen = self._controls_seen.setdefault((relevance, k), set())
        seen.update(controls)
        if len(seen) == 1 and vs_baseline:
            (only,) = seen
            pooled = self._track(only, relevance, k)
        else:
            pooled = self._track(_CONTROL, relevance, k)
        fallback = pooled.level.mean if vs_control else None
        control_sums = ZERO
        others: list[tuple[Segment, tuple[float, float, float]]] = []
        # segments other than the control first: their vs_control residuals need the control's
        # references as of before this bucket
        for segment, per_query in segments.items():
            if segment in controls:
                continue
            if fallback is not None:  # a control arm exists: exported from then on
                self._series_of(VS_CONTROL, relevance, segment, k)
            if vs_baseline:
                track = self._track(segment, relevance, k)
                sums = self._step_baseline(
                    relevance,
                    k,
                    b,
                    segment,
                    track=track,
                    per_query=per_query,
                    control_refs=pooled.refs,
                    fallback=fallback,
                )
            elif fallback is not None:
                sums = residuals(per_query, pooled.refs, fallback)
            else:
                sums = ZERO
            if fallback is not None:
                others.append((segment, sums))
        if controls:
            if pooled is not self._tracks.get((_CONTROL, relevance, k)):  # the segment's own
                # (one control segment: it is controls[0])
                control_sums = self._step_baseline(
                    relevance,
                    k,
                    b,
                    controls[0],
                    track=pooled,
                    per_query=segments[controls[0]],
                    control_refs=pooled.refs,
                    fallback=fallback,
                )
            else:
                merged = (
                    segments[controls[0]]
                    if len(controls) == 1
                    else merge(segments[c] for c in controls)
                )
                control_sums = learn(pooled, b, merged, fallback)
                if vs_baseline:
                    for c in controls:
                        track = self._track(c, relevance, k)
                        self._step_baseline(
                            relevance,
                            k,
                            b,
                            c,
                            track=track,
                            per_query=segments[c],
                            control_refs=None,
                            fallback=None,
                        )
        if vs_control and fallback is not None:
            self._step_vs_control(
                relevance,
                k,
                b,
                pooled=pooled,
                control_sums=control_sums,
                others=others,
                fallback=fallback,
            )

    def _step_vs_control(
        self,
        relevance: str,
        k: int,
        b: int,
        *,
        pooled: Track,
        control_sums: tuple[float, float, float],
        others: list[tuple[Segment, tuple[float, float, float]]],
        fallback: float,
    ) -> None:
        spec = self.spec
        n_c, s_c, ss_c = control_sums
        var_c = pooled.vs_control.variance
        ready_c = n_c > 0 and var_c is not None and var_c > 0.0
        ready_c = ready_c and pooled.vs_control.weight >= spec.min_lists
        delta = spec.min_relative_drop * abs(fallback)
        for segment, (n, s, ss) in others:
            own = self._track(segment, relevance, k).vs_control
            var_s = own.variance
            if ready_c and n > 0 and var_s and own.weight >= spec.min_lists and delta > 0.0:
                d = s / n - s_c / n_c
                v = var_s / n + (var_c or 0.0) / n_c
                self._step(VS_CONTROL, relevance, segment, k, b=b, d=d, v=v, delta=delta)
            own.add(b, n, s, ss)
        if n_c > 0:
            pooled.vs_control.add(b, n_c, s_c, ss_c)

    def _step_baseline(
        self,
        relevance: str,
        k: int,
        b: int,
        segment: Segment,
        *,
        track: Track,
        per_query: PerQuery,
        control_refs: QueryReferences | None,
        fallback: float | None,
    ) -> tuple[float, float, float]:
        """The vs_baseline step of ``segment`` (then its references learn the bucket). Returns
        the bucket's residual sums against ``control_refs`` (``fallback`` for a query they do
        not hold), for vs_control, computed in the same pass (zeros when ``fallback`` is None).
        """
        spec = self.spec
        p = baseline_pass(per_query, b, track, control_refs, fallback)
        strata = []
        if track.known.weight >= spec.min_lists and track.known.variance:
            strata.append((int(p.known[0]), p.known[1], track.known.variance))
        if track.new.weight >= spec.min_lists and track.new.variance:
            strata.append((int(p.new[0]), p.new[1], track.new.variance))
        combined = precision_mean(strata)
        level = track.level.mean
        if combined is not None and level:
            delta = spec.min_relative_drop * abs(level)
            d, v = combined
            self._step(VS_BASELINE, relevance, segment, k, b=b, d=d, v=v, delta=delta)
        else:
            self._series_of(VS_BASELINE, relevance, segment, k)  # exported from the start
        track.known.add(b, *p.known)
        track.new.add(b, *p.new)
        if p.new_lists[0]:
            track.new_level.add(b, *p.new_lists)
        track.level.add(b, *p.lists)
        return p.control

    # --- reading ------------------------------------------------------------------------------

    def rows(self) -> tuple[DetectionRow, ...]:
        """One row per series, in a stable order (detector, relevance, segment, k)."""
        return detection_rows(self._series, self._h)
