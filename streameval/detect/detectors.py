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

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from streameval.detect import alarms
from streameval.detect.arithmetic import cusum_step, gaussian_llr, precision_mean
from streameval.detect.spec import VS_BASELINE, VS_CONTROL, DetectionSpec
from streameval.detect.state import EwMoments, QueryReferences
from streameval.snapshot import DetectionRow
from streameval.values import IMPLICIT, JUDGED, ScoredList, Segment
from streameval.windows.spec import pop_before

#: per query: (count, sum, sum of squares) of NDCG@k in one bucket (a tuple: one allocation, and
#: the rare repeat of a query within a bucket replaces it)
Agg = tuple[float, float, float]
#: per query_id, its Agg (one bucket, segment, relevance source and k)
PerQuery = dict[str, Agg]
#: one bucket of one relevance source: segment -> one PerQuery per watched k
BucketData = dict[Segment, list[PerQuery]]
#: the key of the pooled control arm's track when several segments match ``control``
_CONTROL: Segment = ("\x00control",)
_ZERO = (0.0, 0.0, 0.0)


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


class Stash:
    """The open buckets of one relevance source: per bucket, segment and watched k, the
    sufficient statistics per query. Buckets before ``closed`` are closed."""

    __slots__ = (
        "bucket_ms",
        "closed",
        "cur",
        "cur_b",
        "cur_end",
        "ignored",
        "pending",
        "positions",
        "single",
    )

    def __init__(self, bucket_ms: int, positions: tuple[int, ...]) -> None:
        self.bucket_ms = bucket_ms
        self.positions = positions  # where each watched k sits in a SourceScore's tuples
        self.single = positions[0] if len(positions) == 1 else None
        self.pending: dict[int, BucketData] = {}
        self.closed: int | None = None
        # the bucket last added to, [cur_b, cur_end), and its data: a list inside it needs two
        # comparisons, not the modulo of an epoch-ms timestamp (a two-digit int)
        self.cur_b = self.cur_end = 0
        self.cur: BucketData = {}
        self.ignored = 0

    def add(self, ts: int, segment: Segment, query_id: str, ndcg: tuple[float | None, ...]) -> None:
        # once per list and relevance source: the query's sums are folded here, inline
        single = self.single
        if single is not None:  # one watched k (the default)
            x = ndcg[single]
            if x is None:
                return  # no NDCG@k (e.g. no interaction, `no_relevance = "skip"`)
            if not self.cur_b <= ts < self.cur_end and not self._enter(ts):
                return
            per_k = self.cur.get(segment)
            if per_k is None:
                per_k = self.cur[segment] = [{}]
            per_query = per_k[0]
            agg = per_query.get(query_id)
            if agg is None:
                per_query[query_id] = (1, x, x * x)
            else:
                c, t, tt = agg
                per_query[query_id] = (c + 1, t + x, tt + x * x)
            return
        if not self.cur_b <= ts < self.cur_end and not self._enter(ts):
            return
        per_k = self.cur.get(segment)
        if per_k is None:
            per_k = self.cur[segment] = [{} for _ in self.positions]
        for per_query, i in zip(per_k, self.positions, strict=True):
            value = ndcg[i]
            if value is not None:
                _fold(per_query, query_id, value)

    def _enter(self, ts: int) -> bool:
        """Make the bucket of ``ts`` the one added to; False (the list counted as ignored) when
        it is already closed."""
        b = ts - ts % self.bucket_ms
        closed = self.closed
        if closed is not None and b < closed:
            self.ignored += 1
            return False
        cur = self.pending.get(b)
        if cur is None:
            cur = self.pending[b] = {}
        self.cur_b = b
        self.cur_end = b + self.bucket_ms
        self.cur = cur
        return True

    def leave(self) -> None:
        """Forget the bucket last added to (it may be taken or merged into): the next list
        looks its bucket up again."""
        self.cur_b = self.cur_end = 0

    def take(self, horizon_ms: int) -> list[tuple[int, BucketData]]:
        """The buckets the horizon completed since the last call, in order (removed)."""
        closed = self.closed
        if closed is not None and horizon_ms < closed + self.bucket_ms:
            return []  # no bucket completed since the last call (most calls)
        end = horizon_ms - horizon_ms % self.bucket_ms
        self.closed = end
        self.leave()
        return pop_before(self.pending, end)

    def clear(self) -> None:
        self.pending.clear()
        self.leave()


def _fold(per_query: PerQuery, query_id: str, x: float) -> None:
    """One list's NDCG@k into its query's sums."""
    agg = per_query.get(query_id)
    if agg is None:
        per_query[query_id] = (1, x, x * x)
    else:
        c, t, tt = agg
        per_query[query_id] = (c + 1, t + x, tt + x * x)


def _merge(parts: Iterable[Mapping[str, Sequence[float]]]) -> PerQuery:
    merged: PerQuery = {}
    for part in parts:
        for q, (c, s, ss) in part.items():
            agg = merged.get(q)
            if agg is None:
                merged[q] = (c, s, ss)
            else:
                merged[q] = (agg[0] + c, agg[1] + s, agg[2] + ss)
    return merged


class Detectors:
    """Every configured detector series over the stream of finalized lists (single instance)."""

    def __init__(self, spec: DetectionSpec) -> None:
        self.spec = spec
        self._ks = tuple(k for k, _ in spec.k_index)
        positions = tuple(i for _, i in spec.k_index)
        self._h = spec.threshold
        self._cap = spec.cap
        self._vs_control = VS_CONTROL in spec.detectors
        self._vs_baseline = VS_BASELINE in spec.detectors
        self._stash = {r: Stash(spec.bucket_ms, positions) for r in spec.relevance}
        self._implicit = self._stash.get(IMPLICIT)
        self._judged = self._stash.get(JUDGED)
        #: JudgedEarlyConsumer: judged scores are wanted early only when judged is watched
        self.takes_judged = self._judged is not None
        self._tracks: dict[tuple[Segment, str, int], _Track] = {}
        self._series: dict[tuple[str, str, Segment, int], _Series] = {}
        self._control_of: dict[Segment, bool] = {}
        self._controls_seen: dict[tuple[str, int], set[Segment]] = {}

    @property
    def ignored(self) -> int:
        """Lists ignored because their bucket was already closed (re-read after a reset)."""
        return sum(stash.ignored for stash in self._stash.values())

    # --- the consumer protocols ---------------------------------------------------------------

    def add(self, scored: ScoredList) -> None:
        """A finalized list: its implicit score (its judged one came early, :meth:`add_judged`)."""
        stash = self._implicit
        if stash is not None:
            source = scored.sources[0]  # ListScorer's order: implicit, judged
            if source.relevance != IMPLICIT:
                source = next(s for s in scored.sources if s.relevance == IMPLICIT)
            stash.add(scored.timestamp, scored.segment, scored.query_id, source.ndcg)

    def add_judged(self, scored: ScoredList) -> None:
        """A list whose impression the watermark has passed, with its judged score."""
        stash = self._judged
        if stash is not None:
            source = scored.sources[-1]  # the judged source only, or implicit then judged
            if source.relevance != JUDGED:
                source = next(s for s in scored.sources if s.relevance == JUDGED)
            stash.add(scored.timestamp, scored.segment, scored.query_id, source.ndcg)

    def advance(self, horizon_ms: int) -> None:
        """The evaluation horizon: every implicit score before it has been added."""
        self.close(IMPLICIT, horizon_ms)

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
        into = stash.pending.setdefault(bucket_ms, {})
        for (segment, k), per_query in data.items():
            if k not in self._ks:
                continue  # written by an instance that watched another k
            j = self._ks.index(k)
            per_k = into.get(segment)
            if per_k is None:
                per_k = into[segment] = [{} for _ in self._ks]
            per_k[j] = _merge((per_k[j], per_query))
        stash.leave()

    # --- the state as a value (group-wide detection's snapshots) -------------------------------

    def dump(self) -> dict[str, Any]:
        """Everything the detectors have learned, as JSON-able values (floats exact through
        ``json``), for :meth:`load` into detectors of the same spec. Only between buckets: the
        open buckets are not included (none is open right after :meth:`close`)."""
        tracks = []
        for (segment, relevance, k), track in self._tracks.items():
            moments = [m.dump() for m in (track.level, track.new_level, track.known, track.new)]
            tracks.append(
                [list(segment), relevance, k, track.refs.dump(), *moments, track.vs_control.dump()]
            )
        series = [
            [detector, relevance, list(segment), k, *s.dump()]
            for (detector, relevance, segment, k), s in self._series.items()
        ]
        controls = [
            [relevance, k, sorted(list(seg) for seg in seen)]
            for (relevance, k), seen in self._controls_seen.items()
        ]
        closed = {r: stash.closed for r, stash in self._stash.items()}
        return {"tracks": tracks, "series": series, "controls": controls, "closed": closed}

    def load(self, state: Mapping[str, Any]) -> None:
        """The state :meth:`dump` gave (raises ``ValueError`` if it is not one: nothing is
        changed then)."""
        try:
            tracks: dict[tuple[Segment, str, int], _Track] = {}
            for seg, relevance, k, refs, *moments in state["tracks"]:
                track = _Track(self.spec)
                track.refs.load(refs)
                for m, values in zip(
                    (track.level, track.new_level, track.known, track.new, track.vs_control),
                    moments,
                    strict=True,
                ):
                    m.load(values)
                tracks[tuple(seg), str(relevance), int(k)] = track
            series: dict[tuple[str, str, Segment, int], _Series] = {}
            for entry in state["series"]:
                detector, relevance, seg, k, stat, first, weighted, inv_var, b, *episode = entry
                one = _Series()
                one.statistic, one.weighted, one.inv_var = stat, weighted, inv_var
                one.first_alarm_ms, one.bucket_ms = first, b
                if episode:  # (a snapshot written before episodes were kept has none)
                    one.alarm_since_ms, one.cleared_ms = episode
                elif stat >= self._h:
                    one.alarm_since_ms = first
                series[str(detector), str(relevance), tuple(seg), int(k)] = one
            controls = {
                (str(relevance), int(k)): {tuple(seg) for seg in segs}
                for relevance, k, segs in state["controls"]
            }
            closed = {str(r): None if c is None else int(c) for r, c in state["closed"].items()}
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a detectors' state: {exc!r}") from exc
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
        control_sums = _ZERO
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
                sums = _residuals(per_query, pooled.refs, fallback)
            else:
                sums = _ZERO
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
                    else _merge(segments[c] for c in controls)
                )
                control_sums = _learn(pooled, b, merged, fallback)
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
        pooled: _Track,
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
        track: _Track,
        per_query: PerQuery,
        control_refs: QueryReferences | None,
        fallback: float | None,
    ) -> tuple[float, float, float]:
        """The vs_baseline step of ``segment`` (then its references learn the bucket). Returns
        the bucket's residual sums against ``control_refs`` (``fallback`` for a query they do
        not hold), for vs_control, computed in the same pass (zeros when ``fallback`` is None).
        """
        spec = self.spec
        p = _baseline_pass(per_query, b, track, control_refs, fallback)
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
        h = self._h
        out = []
        for (detector, relevance, segment, k), s in sorted(self._series.items()):
            shift, stderr = s.estimate()
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
                    alarm_since_ms=s.alarm_since_ms,
                    cleared_ms=s.cleared_ms,
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


class _Pass(NamedTuple):
    """One bucket's sums of one segment, from :func:`_baseline_pass` (each count, sum, sum of
    squares)."""

    known: tuple[float, float, float]  # residuals of queries with a reference
    new: tuple[float, float, float]  # residuals of new queries against their recent mean
    new_lists: tuple[float, float, float]  # NDCG of the new queries' lists
    lists: tuple[float, float, float]  # NDCG of every list
    control: tuple[float, float, float]  # residuals against the control's references


def _baseline_pass(  # noqa: PLR0915 (one loop over the bucket, on purpose)
    per_query: PerQuery,
    b: int,
    track: _Track,
    control_refs: QueryReferences | None,
    fallback: float | None,
) -> _Pass:
    """Residuals of one segment's bucket against its own references (and, with ``fallback``,
    against ``control_refs``); each query's reference learns the bucket after its residuals."""
    refs = track.refs
    table = refs.entries
    get = table.get
    factors = refs.factors
    # the control's reference of each query: its own entry when the control's references are
    # the segment's own (the control segment), else looked up (``fallback`` without one)
    same = control_refs is refs
    cget = None if control_refs is None or fallback is None or same else control_refs.entries.get
    control = same and fallback is not None
    cfall = 0.0 if fallback is None else fallback
    new_ref = track.new_level.mean
    n_k = s_k = ss_k = 0.0
    n_n = s_n = ss_n = 0.0
    c_new = t_new = tt_new = 0.0
    n_all = t_all = tt_all = 0.0
    s_c = ss_c = 0.0
    for q, (c, t, tt) in per_query.items():
        if cget is not None:
            centry = cget(q)
            cref = cfall if centry is None else centry[1]
            s_c += t - c * cref
            ss_c += tt - 2.0 * cref * t + c * cref * cref
        entry = get(q)
        if entry is not None:
            ref = entry[1]
            r = t - c * ref  # the residual sum, and its sum of squares
            rr = tt - 2.0 * ref * t + c * ref * ref
            if control:
                s_c += r
                ss_c += rr
            n_k += c
            s_k += r
            ss_k += rr
            # the reference learns the bucket, after its residuals (QueryReferences.update)
            elapsed = b - entry[2]
            if elapsed > 0:
                f = factors.get(elapsed)
                weight = entry[0] * (refs.factor(elapsed) if f is None else f) + c
                entry[2] = b
            else:
                weight = entry[0] + c
            entry[1] = ref + r / weight
            entry[0] = weight
        else:
            if control:
                s_c += t - c * cfall
                ss_c += tt - 2.0 * cfall * t + c * cfall * cfall
            c_new += c
            t_new += t
            tt_new += tt
            if new_ref is not None:
                n_n += c
                s_n += t - c * new_ref
                ss_n += tt - 2.0 * new_ref * t + c * new_ref * new_ref
            table[q] = [c, t / c, b]
        n_all += c
        t_all += t
        tt_all += tt
    refs.trim()
    return _Pass(
        (n_k, s_k, max(ss_k, 0.0)),
        (n_n, s_n, max(ss_n, 0.0)),
        (c_new, t_new, tt_new),
        (n_all, t_all, tt_all),
        (n_all, s_c, max(ss_c, 0.0)) if cget is not None or control else _ZERO,
    )
