"""Weighted prefix sums at a few cutoffs: the one loop DCG and ideal DCG both run.

``cutoff_sums(weights, ks)`` returns ``f`` with ``f(values)[j] = Σ_{i < ks[j]} values[i] ·
weights[i]``: values beyond max(ks) are ignored, a shorter sequence is padded with zeros. With the
discounts as weights and the gains as values these are DCG@k for every k at once.

For the usual cutoffs (max(ks) ≤ 64) ``f`` is straight-line code generated once per spec, as
``collections.namedtuple`` and ``dataclasses`` generate theirs: the weights are constants of the
function, there is no iterator and no intermediate list, which makes it about twice as fast as
``accumulate(map(mul, …))`` followed by picking the cutoffs. The additions run left to right,
exactly as that loop's, so the results are bit for bit the same (a test holds it to the loop).
"""

from collections.abc import Callable, Sequence
from itertools import accumulate
from operator import itemgetter, mul

CutoffSums = Callable[[Sequence[float]], tuple[float, ...]]

#: above this many terms the generated function would be long for little gain: loop instead
UNROLL_LIMIT = 64


def cutoff_sums(weights: Sequence[float], ks: Sequence[int]) -> CutoffSums:
    """The function of weighted prefix sums at ``ks`` (ascending, ≥ 1) — see the module."""
    if not ks or list(ks) != sorted(set(ks)) or ks[0] < 1:
        raise ValueError(f"cutoffs must be distinct, ascending and >= 1, got {ks!r}")
    kmax = ks[-1]
    if len(weights) < kmax:
        raise ValueError(f"need {kmax} weights, got {len(weights)}")
    weights = tuple(float(w) for w in weights[:kmax])
    if kmax > UNROLL_LIMIT:
        return looped_cutoff_sums(weights, ks)
    return _unrolled(weights, tuple(ks))


def looped_cutoff_sums(weights: Sequence[float], ks: Sequence[int]) -> CutoffSums:
    """The same function as a loop over the terms (the reference for the unrolled one)."""
    weights = tuple(weights)
    kmax = ks[-1]
    pick = itemgetter(*(k - 1 for k in ks))
    single = len(ks) == 1

    def sums(values: Sequence[float]) -> tuple[float, ...]:
        prefix = list(accumulate(map(mul, values, weights)))  # map stops at the weights' end
        if len(prefix) < kmax:
            prefix.extend([prefix[-1] if prefix else 0.0] * (kmax - len(prefix)))
        picked = pick(prefix)
        return (picked,) if single else tuple(picked)

    return sums


def _unrolled(weights: tuple[float, ...], ks: tuple[int, ...]) -> CutoffSums:
    kmax = ks[-1]
    params = ", ".join(f"w{i}={w!r}" for i, w in enumerate(weights))
    body = [
        f"def sums(v, {params}, _pad={(0.0,) * kmax!r}):",
        f"    if len(v) < {kmax}:",
        "        v = (*v, *_pad[len(v):])",
        "    s = v[0] * w0",
    ]
    results = []
    for i in range(kmax):
        if i:
            body.append(f"    s += v[{i}] * w{i}")
        if i + 1 in ks:
            body.append(f"    r{i} = s")
            results.append(f"r{i}")
    body.append(f"    return ({', '.join(results)},)")
    namespace: dict[str, object] = {}
    exec(compile("\n".join(body), f"<cutoff_sums ks={ks}>", "exec"), namespace)
    sums = namespace["sums"]
    if not callable(sums):  # pragma: no cover - the source above defines it
        raise TypeError("cutoff_sums: generated code did not define a function")
    return sums
