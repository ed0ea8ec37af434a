"""One bucket's sums against the references: the residuals of its lists, and the references
learning the bucket after it has been tested (the detectors' inner loops)."""

from __future__ import annotations

from typing import NamedTuple

from streameval.detect.series import Track
from streameval.detect.stash import ZERO, Agg, PerQuery
from streameval.detect.state import QueryReferences


def residuals(
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


def learn(
    track: Track, b: int, per_query: dict[str, Agg], fallback: float | None
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


class BucketPass(NamedTuple):
    """One bucket's sums of one segment, from :func:`baseline_pass` (each count, sum, sum of
    squares)."""

    known: tuple[float, float, float]  # residuals of queries with a reference
    new: tuple[float, float, float]  # residuals of new queries against their recent mean
    new_lists: tuple[float, float, float]  # NDCG of the new queries' lists
    lists: tuple[float, float, float]  # NDCG of every list
    control: tuple[float, float, float]  # residuals against the control's references


def baseline_pass(  # noqa: PLR0915 (one loop over the bucket, on purpose)
    per_query: PerQuery,
    b: int,
    track: Track,
    control_refs: QueryReferences | None,
    fallback: float | None,
) -> BucketPass:
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
    return BucketPass(
        (n_k, s_k, max(ss_k, 0.0)),
        (n_n, s_n, max(ss_n, 0.0)),
        (c_new, t_new, tt_new),
        (n_all, t_all, tt_all),
        (n_all, s_c, max(ss_c, 0.0)) if cget is not None or control else ZERO,
    )
