"""benchmarks/judges.py, fast: one seeded run with an LLM judge drifting from the raters fires
StreamevalJudgeAgreementLow's expression, one without drift does not (the full figure: the
benchmark's 20 runs per arm, in docs/judges.md)."""

from __future__ import annotations

from benchmarks.judges import alert_holds, alpha_at, simulate


def test_the_rule_expression() -> None:
    assert alert_holds(0.5, 50, 0.667, 50)
    assert not alert_holds(0.5, 49, 0.667, 50)  # too few pairs
    assert not alert_holds(0.667, 500, 0.667, 50)  # at the floor is not below it
    assert not alert_holds(None, 500, 0.667, 50)  # undefined


def test_drift_fires_and_no_drift_does_not() -> None:
    drifting = simulate(seed=1, drift=0.5, hours=2.5)
    assert drifting.fired_at_min is not None
    a1, a2 = alpha_at(drifting, 60), alpha_at(drifting, 120)
    assert a1 is not None and a2 is not None and a2 < a1 - 0.15  # agreement falling
    # the drifting judge's judged NDCG leaves the raters' (its grades are shifted up)
    assert drifting.ndcg["judged:llm:sim"] != drifting.ndcg["judged:human"]
    steady = simulate(seed=1, drift=0.0, hours=2.5)
    assert steady.fired_at_min is None
    assert min(a for _, a, _ in steady.points if a is not None) > 0.8
