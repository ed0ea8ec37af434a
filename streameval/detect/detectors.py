"""The detectors' runtime: fed finalized lists through :class:`~streameval.finalized.ListConsumer`
(and judged scores early, :class:`~streameval.finalized.JudgedEarlyConsumer`), acting once per
completed bucket, in order, so the result never depends on when ``advance`` is called.

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

from collections.abc import Iterable

from streameval.detect.arithmetic import cusum_step, gaussian_llr, precision_mean
from streameval.detect.spec import VS_BASELINE, VS_CONTROL, DetectionSpec
from streameval.detect.state import EwMoments, QueryReferences
from streameval.scored import IMPLICIT, JUDGED, ScoredList, SourceScore
from streameval.snapshot import DetectionRow, Segment

#: per query: [count, sum, sum of squares] of NDCG@k in one bucket
Agg = list[float]
#: one bucket of one relevance source: (segment, k) -> query_id -> Agg
BucketData = dict[tuple[Segment, int], dict[str, Agg]]
#: the key of the pooled control arm's track (every segment that matches ``control``)
_CONTROL: Segment = ("\x00control",)


class _Track:
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


class _Series:
    """One CUSUM: its statistic, the bucket its alarm first held, and the current excursion's
    inverse-variance sums (for the shift estimate)."""

    __slots__ = ("bucket_ms", "first_alarm_ms", "inv_var", "statistic", "weighted")

    def __init__(self) -> None:
        self.statistic = 0.0
        self.first_alarm_ms: int | None = None
        self.weighted = 0.0  # sum of d / v over the excursion
        self.inv_var = 0.0  # sum of 1 / v over the excursion
        self.bucket_ms: int | None = None

    def step(
        self, bucket_ms: int, d: float, v: float, *, delta: float, h: float, cap: float
    ) -> None:
        if self.statistic <= 0.0:  # a new excursion starts here
            self.weighted = self.inv_var = 0.0
        self.statistic = cusum_step(self.statistic, gaussian_llr(d, v, delta), cap)
        self.weighted += d / v
        self.inv_var += 1.0 / v
        self.bucket_ms = bucket_ms
        if self.statistic >= h and self.first_alarm_ms is None:
            self.first_alarm_ms = bucket_ms


def _merge(parts: Iterable[dict[str, Agg]]) -> dict[str, Agg]:
    merged: dict[str, Agg] = {}
    for part in parts:
        for q, (c, s, ss) in part.items():
            agg = merged.get(q)
            if agg is None:
                merged[q] = [c, s, ss]
            else:
                agg[0] += c
                agg[1] += s
                agg[2] += ss
    return merged


class Detectors:
    """Every configured detector series over the stream of finalized lists (single instance)."""

    def __init__(self, spec: DetectionSpec) -> None:
        self.spec = spec
        self._k_index = spec.k_index
        self._bucket = spec.bucket_ms
        self._h = spec.threshold
        self._cap = spec.cap
        self._vs_control = VS_CONTROL in spec.detectors
        self._vs_baseline = VS_BASELINE in spec.detectors
        self._implicit = IMPLICIT in spec.relevance
        self._judged = JUDGED in spec.relevance
        self._pending: dict[str, dict[int, BucketData]] = {r: {} for r in spec.relevance}
        # per relevance: buckets before this start are closed
        self._closed: dict[str, int | None] = dict.fromkeys(spec.relevance)
        self._tracks: dict[tuple[Segment, str, int], _Track] = {}
        self._series: dict[tuple[str, str, Segment, int], _Series] = {}
        self._control_of: dict[Segment, bool] = {}
        #: lists ignored because their bucket was already closed (re-read after a reset)
        self.ignored = 0

    # --- the consumer protocols ---------------------------------------------------------------

    def add(self, scored: ScoredList) -> None:
        """A finalized list: its implicit score (its judged one came early, :meth:`add_judged`)."""
        if self._implicit:
            for source in scored.sources:
                if source.relevance == IMPLICIT:
                    self._stash(IMPLICIT, scored, source)

    def add_judged(self, scored: ScoredList) -> None:
        """A list whose impression the watermark has passed, with its judged score."""
        if self._judged:
            for source in scored.sources:
                if source.relevance == JUDGED:
                    self._stash(JUDGED, scored, source)

    def advance(self, horizon_ms: int) -> None:
        """The evaluation horizon: every implicit score before it has been added."""
        if self._implicit:
            self._close(IMPLICIT, horizon_ms)

    def advance_judged(self, watermark_ms: int) -> None:
        """The watermark: every judged score of an impression before it has been added."""
        if self._judged:
            self._close(JUDGED, watermark_ms)

    def reset(self) -> None:
        """The stream is re-read from the last commit (a rebalance): drop what open buckets
        hold; the re-read hands their lists again, and lists of closed buckets are ignored."""
        for pending in self._pending.values():
            pending.clear()

    # --- per list -----------------------------------------------------------------------------

    def _stash(self, relevance: str, scored: ScoredList, source: SourceScore) -> None:
        ts = scored.timestamp
        b = ts - ts % self._bucket
        closed = self._closed[relevance]
        if closed is not None and b < closed:
            self.ignored += 1
            return
        pending = self._pending[relevance]
        data = pending.get(b)
        if data is None:
            data = pending[b] = {}
        segment = scored.segment
        qid = scored.query_id
        ndcg = source.ndcg
        for k, i in self._k_index:
            x = ndcg[i]
            if x is None:
                continue
            per_query = data.get((segment, k))
            if per_query is None:
                per_query = data[segment, k] = {}
            agg = per_query.get(qid)
            if agg is None:
                per_query[qid] = [1, x, x * x]
            else:
                agg[0] += 1
                agg[1] += x
                agg[2] += x * x

    def ingest(self, relevance: str, bucket_ms: int, data: BucketData) -> None:
        """A whole bucket's sufficient statistics at once (what a group-wide state topic, or a
        list-level simulation, would hand over instead of lists); merged into the bucket."""
        closed = self._closed[relevance]
        if closed is not None and bucket_ms < closed:
            self.ignored += sum(int(a[0]) for pq in data.values() for a in pq.values())
            return
        pending = self._pending[relevance]
        into = pending.setdefault(bucket_ms, {})
        for key, per_query in data.items():
            into[key] = _merge((into.get(key, {}), per_query))

    # --- per bucket ---------------------------------------------------------------------------

    def _close(self, relevance: str, horizon_ms: int) -> None:
        closed = self._closed[relevance]
        if closed is not None and horizon_ms < closed + self._bucket:
            return  # no bucket completed since the last call (most calls)
        end = horizon_ms - horizon_ms % self._bucket
        self._closed[relevance] = end
        pending = self._pending[relevance]
        if not pending:
            return
        for b in sorted(b for b in pending if b < end):
            self._close_bucket(relevance, b, pending.pop(b))

    def _is_control(self, segment: Segment) -> bool:
        known = self._control_of.get(segment)
        if known is None:
            known = self._control_of[segment] = self.spec.is_control(segment)
        return known

    def _track(self, segment: Segment, relevance: str, k: int) -> _Track:
        track = self._tracks.get((segment, relevance, k))
        if track is None:
            track = self._tracks[segment, relevance, k] = _Track(self.spec)
        return track

    def _series_of(self, detector: str, relevance: str, segment: Segment, k: int) -> _Series:
        series = self._series.get((detector, relevance, segment, k))
        if series is None:
            series = self._series[detector, relevance, segment, k] = _Series()
        return series

    def _close_bucket(self, relevance: str, b: int, data: BucketData) -> None:
        for k, _ in self._k_index:
            segments = {seg: pq for (seg, kk), pq in data.items() if kk == k}
            if self._vs_control:
                self._step_vs_control(relevance, k, b, segments)
            if self._vs_baseline:
                for segment, per_query in segments.items():
                    self._step_vs_baseline(relevance, k, b, segment, per_query)

    def _step_vs_control(
        self, relevance: str, k: int, b: int, segments: dict[Segment, dict[str, Agg]]
    ) -> None:
        spec = self.spec
        control_parts = [pq for seg, pq in segments.items() if self._is_control(seg)]
        control = control_parts[0] if len(control_parts) == 1 else _merge(control_parts)
        pooled = self._track(_CONTROL, relevance, k)
        fallback = pooled.level.mean
        # every other segment against the control's references as of before this bucket
        others: list[tuple[Segment, tuple[float, float, float]]] = []
        for segment, per_query in segments.items():
            if self._is_control(segment):
                continue
            self._series_of(VS_CONTROL, relevance, segment, k)  # exported from the first list
            if fallback is not None:
                others.append((segment, _residuals(per_query, pooled.refs, fallback)))
        # the control's own residuals (against the same references), then it learns the bucket
        n_c, s_c, ss_c = _learn(pooled, b, control, fallback) if control else (0.0, 0.0, 0.0)
        var_c = pooled.vs_control.variance
        ready_c = n_c > 0 and var_c and pooled.vs_control.weight >= spec.min_lists
        for segment, (n, s, ss) in others:
            own = self._track(segment, relevance, k).vs_control
            var_s = own.variance
            if ready_c and n > 0 and var_s and own.weight >= spec.min_lists and fallback:
                d = s / n - s_c / n_c
                v = var_s / n + var_c / n_c  # type: ignore[operator]
                delta = spec.min_relative_drop * abs(fallback)
                self._series_of(VS_CONTROL, relevance, segment, k).step(
                    b, d, v, delta=delta, h=self._h, cap=self._cap
                )
            own.add(b, n, s, ss)
        if fallback is not None and n_c > 0:
            pooled.vs_control.add(b, n_c, s_c, ss_c)

    def _step_vs_baseline(
        self, relevance: str, k: int, b: int, segment: Segment, per_query: dict[str, Agg]
    ) -> None:
        spec = self.spec
        track = self._track(segment, relevance, k)
        series = self._series_of(VS_BASELINE, relevance, segment, k)
        refs = track.refs
        get, update = refs.get, refs.update
        new_ref = track.new_level.mean
        n_k = s_k = ss_k = 0.0  # queries with a reference
        n_n = s_n = ss_n = 0.0  # new queries, against the recent mean of new queries
        c_new = t_new = tt_new = 0.0
        n_all = t_all = tt_all = 0.0
        for q, (c, t, tt) in per_query.items():
            entry = get(q)
            if entry is not None:
                ref = entry[1]
                n_k += c
                s_k += t - c * ref
                ss_k += tt - 2.0 * ref * t + c * ref * ref
            else:
                c_new += c
                t_new += t
                tt_new += tt
                if new_ref is not None:
                    n_n += c
                    s_n += t - c * new_ref
                    ss_n += tt - 2.0 * new_ref * t + c * new_ref * new_ref
            update(q, b, c, t)  # after its residual: the reference learns the bucket
            n_all += c
            t_all += t
            tt_all += tt
        strata = []
        if track.known.weight >= spec.min_lists and track.known.variance:
            strata.append((int(n_k), s_k, track.known.variance))
        if track.new.weight >= spec.min_lists and track.new.variance:
            strata.append((int(n_n), s_n, track.new.variance))
        combined = precision_mean(strata)
        level = track.level.mean
        if combined is not None and level:
            delta = spec.min_relative_drop * abs(level)
            series.step(b, combined[0], combined[1], delta=delta, h=self._h, cap=self._cap)
        track.known.add(b, n_k, s_k, max(ss_k, 0.0))
        track.new.add(b, n_n, s_n, max(ss_n, 0.0))
        if c_new:
            track.new_level.add(b, c_new, t_new, tt_new)
        track.level.add(b, n_all, t_all, tt_all)

    # --- reading ------------------------------------------------------------------------------

    def rows(self) -> tuple[DetectionRow, ...]:
        """One row per series, in a stable order (detector, relevance, segment, k)."""
        h = self._h
        out = []
        for (detector, relevance, segment, k), s in sorted(self._series.items()):
            shift = stderr = None
            if s.inv_var > 0.0:
                shift = s.weighted / s.inv_var
                stderr = s.inv_var**-0.5
            out.append(
                DetectionRow(
                    detector=detector,
                    relevance=relevance,
                    segment=segment,
                    k=k,
                    statistic=s.statistic,
                    threshold=h,
                    alarm=s.statistic >= h,
                    first_alarm_ms=s.first_alarm_ms,
                    shift=shift,
                    shift_stderr=stderr,
                    bucket_ms=s.bucket_ms,
                )
            )
        return tuple(out)


def _residuals(
    per_query: dict[str, Agg], refs: QueryReferences, fallback: float
) -> tuple[float, float, float]:
    """Count, sum and sum of squares of NDCG − reference over one bucket's lists, the reference
    being the query's in ``refs`` (``fallback`` for a query without one)."""
    n = s = ss = 0.0
    get = refs.get
    for q, (c, t, tt) in per_query.items():
        entry = get(q)
        ref = fallback if entry is None else entry[1]
        n += c
        s += t - c * ref
        ss += tt - 2.0 * ref * t + c * ref * ref
    return n, s, max(ss, 0.0)


def _learn(
    track: _Track, b: int, per_query: dict[str, Agg], fallback: float | None
) -> tuple[float, float, float]:
    """The bucket's lists join the references and the level (after being tested); returns the
    count, sum and sum of squares of their residuals against the references as they were
    (``fallback`` for a query without one; zeros when ``fallback`` is None)."""
    n = s = ss = 0.0
    t_all = tt_all = 0.0
    get, update = track.refs.get, track.refs.update
    for q, (c, t, tt) in per_query.items():
        if fallback is not None:
            entry = get(q)
            ref = fallback if entry is None else entry[1]
            s += t - c * ref
            ss += tt - 2.0 * ref * t + c * ref * ref
        update(q, b, c, t)
        n += c
        t_all += t
        tt_all += tt
    track.level.add(b, n, t_all, tt_all)
    if fallback is None:
        return 0.0, 0.0, 0.0
    return n, s, max(ss, 0.0)
