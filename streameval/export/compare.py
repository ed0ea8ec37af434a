"""The window panels' comparison: every arm against the control arm (``evaluation.control``),
by the rule of the ``StreamevalNdcgBelowControl`` alert, so the page, the alert and the
``vs_control`` detector all measure an arm against the same thing.

Per panel (window, relevance source, k) the control is every segment whose labels match
``evaluation.control``, pooled (their sufficient statistics summed, as the alert's
``arm:streameval_ndcg:mean{arm="control"}`` pools over rankers). Each other arm gets
``Δ = mean_arm − mean_control`` and the half-width of its 95 % interval,
``1.96 · sqrt(se_arm² + se_control²)``, and a verdict:

* ``below``: Δ < −:data:`MIN_EFFECT` and Δ < −:data:`CI_FACTOR` × half-width, with at least
  :data:`MIN_LISTS` lists on both sides (the alert's thresholds; see
  ``deploy/prometheus/rules/alerts.yml`` for why those); ``above``: the same, upwards;
* ``level``: judged, and neither; ``too few lists``: under :data:`MIN_LISTS` on a side, or no
  standard error yet; ``no lists``: the arm has none in the window.

Where no segment of the panel matches the control the arms are not compared at all (verdict
``no control``) and the panel says so: ranking the arms against the best of them would paint
the control red when a treatment wins, which is not what anything else here calls a regression.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from streameval.export.status_words import arm_name, signed
from streameval.snapshot import Moments, NdcgRow
from streameval.values import Segment

#: z of a two-sided 95 % normal interval.
Z95 = 1.96
#: the StreamevalNdcgBelowControl rule (deploy/prometheus/rules/alerts.yml): lists on each side,
#: the smallest difference that counts, and the multiple of the 95 % half-width it must exceed
MIN_LISTS = 200
MIN_EFFECT = 0.01
CI_FACTOR = 1.5

CONTROL, BELOW, ABOVE, LEVEL = "control", "below", "above", "level"
FEW, NO_LISTS, NO_CONTROL = "too few lists", "no lists", "no control"

#: (window, relevance, k): one panel of the page
PanelKey = tuple[str, str, int]


@dataclass(frozen=True, slots=True)
class ArmVerdict:
    """One arm of one panel against the pooled control."""

    verdict: str
    delta: float | None = None
    delta_ci95: float | None = None  # half-width of Δ's 95 % interval


def control_rule(control: Mapping[str, str]) -> str:
    """``arm = control`` (``a = x and b = y`` for several labels)."""
    return " and ".join(f"{name} = {value}" for name, value in sorted(control.items()))


def is_control(labels: tuple[str, ...], segment: Segment, control: Mapping[str, str]) -> bool:
    """Whether ``segment`` (values of ``labels``) matches every label of ``control``."""
    values = dict(zip(labels, segment, strict=False))
    return all(values.get(name) == value for name, value in control.items())


def verdict(arm: Moments, control: Moments) -> ArmVerdict:
    """One arm against the pooled control (see the module's rule)."""
    if arm.mean is None:
        return ArmVerdict(NO_LISTS)
    if control.mean is None:
        return ArmVerdict(NO_CONTROL)
    delta = arm.mean - control.mean
    se_a, se_c = arm.stderr, control.stderr
    if se_a is None or se_c is None:
        return ArmVerdict(FEW, delta)
    half = Z95 * math.sqrt(se_a * se_a + se_c * se_c)
    if arm.n < MIN_LISTS or control.n < MIN_LISTS:
        return ArmVerdict(FEW, delta, half)
    if delta < -MIN_EFFECT and delta < -CI_FACTOR * half:
        return ArmVerdict(BELOW, delta, half)
    if delta > MIN_EFFECT and delta > CI_FACTOR * half:
        return ArmVerdict(ABOVE, delta, half)
    return ArmVerdict(LEVEL, delta, half)


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def compare_to_control(
    labels: tuple[str, ...], rows: Iterable[NdcgRow], control: Mapping[str, str]
) -> tuple[list[ArmVerdict], list[dict[str, Any]]]:
    """Each row's verdict (in the order given) and, per panel (sorted), what the page shows
    about the comparison: ``control`` (the pooled control's figures, or null when no segment
    matches), ``flag`` (an arm is below control), ``flag_text``, ``note`` and ``rule``."""
    rows = list(rows)
    pooled: dict[PanelKey, Moments] = {}
    members: dict[PanelKey, list[Segment]] = {}
    for row in rows:
        key = (row.window, row.relevance, row.k)
        members.setdefault(key, [])
        if is_control(labels, row.segment, control):
            pooled[key] = pooled.get(key, Moments()) + row.ndcg
            members[key].append(row.segment)
    verdicts = []
    below: dict[PanelKey, list[str]] = {}
    for row in rows:
        key = (row.window, row.relevance, row.k)
        if key not in pooled:
            verdicts.append(ArmVerdict(NO_CONTROL))
        elif row.segment in members[key]:
            verdicts.append(ArmVerdict(CONTROL))
        else:
            one = verdict(row.ndcg, pooled[key])
            verdicts.append(one)
            if one.verdict == BELOW:
                below.setdefault(key, []).append(arm_name(row.segment))
    rule = control_rule(control)
    panels = []
    for key in sorted(members):
        window, relevance, k = key
        ctl = pooled.get(key)
        worse = sorted(below.get(key, []))
        if ctl is None:
            note = f"No arm matches the control ({rule}) in this window: arms are not compared."
        elif ctl.n == 0:
            note = f"The control ({rule}) has no lists in this window yet: arms are not compared."
        else:
            note = f"Δ: each arm minus the control ({rule}), ± its 95 % interval."
        panels.append(
            {
                "window": window,
                "relevance": relevance,
                "k": k,
                "control": None
                if ctl is None
                else {
                    "rule": rule,
                    "segments": [list(s) for s in members[key]],
                    "n": ctl.n,
                    "mean": _finite(ctl.mean),
                    "stderr": _finite(ctl.stderr),
                },
                "flag": bool(worse),
                "flag_text": f"▼ {', '.join(worse)} below control" if worse else "",
                "note": note,
                "rule": (
                    f"▼ below control: Δ < {signed(-MIN_EFFECT, 2)} and beyond {CI_FACTOR:g}× "
                    f"its 95 % interval, with {MIN_LISTS}+ lists on both sides (the "
                    "StreamevalNdcgBelowControl alert's rule; the regression detectors page)"
                ),
            }
        )
    return verdicts, panels
