"""Detection time of the shipped regression alert, in CI: the simulator through the pipeline in
event time, the series a scrape would see every 15 s, and deploy/prometheus/rules evaluated on
them by promtool (benchmarks/detection.py does the same at 50 queries/s and a 3 % drop).

Here the regression is large (the treatment's expected NDCG@k drops 20 %) and the traffic light
(10 queries/s) so that it runs in seconds. Bounds, derived from the settings rather than measured:

* No window holds a list served after the regression before the evaluation horizon passes it:
  the horizon trails the newest event by attribution window + allowed lateness = 5m10s. The
  first evaluation after that is at +5m15s (evaluations every 15 s, regression on one), and then
  the window holds 5 s of the regressed arm: so no condition can hold before +5m15s.
* Once the 5m window lies wholly after the regression (horizon > regression + 5m, i.e. event
  time > +10m10s, the next bucket closing at +10m20s, evaluated by +10m30s) the judged NDCG@10
  of the treatment is 20 % below control's: ~0.11 on ~0.56 (sd ~0.25 per list). Each arm has
  ~1500 lists in that window (~1250 with a judged relevant doc): stderr 0.25/sqrt(1250) = 0.007
  per arm; the alert's margin is 1.5 times the difference's 95 % CI half-width,
  2.94·sqrt(2)·0.007 = 0.029. The drop is nearly 4 times that and above the 0.01 floor, and both
  arms exceed 200 lists: the condition holds by +10m30s.
* `for: 5m`: the alert fires exactly 5 minutes after its condition first held (evaluations at
  the same 15 s steps), and while the drop lasts it stays firing.
* Without a regression the two arms rank equally well: no alert fires over 40 minutes; nor before
  the regression in the regressed run (for this seed: the false-alarm rate over hours of
  traffic is what benchmarks/detection.py measures). StreamevalNdcgBelowBaseline cannot fire at
  all here (its `offset 6h` guard needs six hours of history).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from benchmarks.detection import (
    INSTANCE,
    JOB,
    RULE_FILES,
    DetectionError,
    Episode,
    Outcome,
    Scrapes,
    alerts_query,
    episodes,
    measure,
    parse_duration_s,
    parse_failures,
    rule_test,
    series_values,
)
from streameval.config import load_settings
from streameval.sim import SimConfig
from tests.deploy import deployfiles
from tests.deploy.deployfiles import promtool_or_skip

pytestmark = pytest.mark.prometheus

MINUTE = 60
REGRESSION_S = 8 * MINUTE
AFTER_S = 20 * MINUTE
NULL_S = 40 * MINUTE
HORIZON_LAG_S = 5 * MINUTE + 10  # attribution window + allowed lateness (defaults)


@pytest.fixture(scope="module")
def outcome() -> Outcome:
    promtool_or_skip()
    sim = SimConfig(rate=10.0, queries=300, candidates=20, seed=7)
    return measure(
        load_settings(),
        sim,
        regression_at_ms=REGRESSION_S * 1000,
        size=0.2,
        after_ms=AFTER_S * 1000,
        null_ms=NULL_S * 1000,
    )


def _labels(ep: Episode) -> tuple[str, str, str, str, str]:
    return (
        ep.label("alertname"),
        ep.label("k"),
        ep.label("window"),
        ep.label("relevance"),
        ep.label("arm"),
    )


def test_the_regression_is_detected_within_the_derived_bounds(outcome: Outcome) -> None:
    found = {_labels(d.episode): d for d in outcome.detections}
    main = found.get(("StreamevalNdcgBelowControl", "10", "5m", "judged", "treatment"))
    assert main is not None, sorted(found)
    assert 10 * MINUTE + 30 >= main.true_after_s >= HORIZON_LAG_S + 5
    assert main.fires_after_s == main.true_after_s + 5 * MINUTE
    assert main.episode.end_s == outcome.end_s  # still firing at the end
    assert main.firing_share == 1.0
    for d in outcome.detections:
        # only the treatment against control (the baseline rule has no 6 h history here)
        assert _labels(d.episode)[0] == "StreamevalNdcgBelowControl"
        assert d.episode.label("arm") == "treatment"
        assert d.true_after_s >= HORIZON_LAG_S + 5
        assert d.fires_after_s - d.true_after_s == 5 * MINUTE
    # every k of the judged 5m window sees a 20 % drop (it is the same for every k by design)
    judged_5m = {k for (_, k, w, rel, _) in found if (w, rel) == ("5m", "judged")}
    assert judged_5m == {"1", "3", "5", "10"}


def test_nothing_fires_without_a_regression(outcome: Outcome) -> None:
    assert outcome.null.span_s == NULL_S
    assert outcome.null.fired == ()
    assert outcome.before.span_s == REGRESSION_S
    assert outcome.before.fired == ()


# --- the harness itself ---------------------------------------------------------------------


def test_series_values_mark_a_vanished_series_stale() -> None:
    key = (("__name__", "m"), ("instance", INSTANCE), ("job", JOB))
    scrapes = Scrapes(15_000, ({}, {key: 2.0}, {key: 0.1 + 0.2}, {}, {}, {key: 5.0}))
    assert series_values(scrapes, key) == "_ 2.0 0.30000000000000004 stale _ 5.0"


def test_promtool_sees_each_scrape_at_its_time(tmp_path: Path) -> None:
    # A rule test built like the detection one, with expectations instead of empty ones: the
    # value of step i is seen at i·15 s, a vanished series is gone at once (stale marker, not
    # the 5 min lookback), and the recording rules run on the input.
    promtool_or_skip()
    labels = {"k": "10", "window": "5m", "relevance": "judged", "ranker": "r", "arm": "treatment"}
    common = (("instance", INSTANCE), ("job", JOB), *labels.items())
    lists = (("__name__", "streameval_window_lists"), *common)
    total = (("__name__", "streameval_window_ndcg_sum"), *common)
    step = {tuple(sorted(lists)): 400.0, tuple(sorted(total)): 250.0}
    scrapes = Scrapes(15_000, ({}, step, {**step, tuple(sorted(total)): 200.0}, {}))
    suite = rule_test(scrapes)
    mean = 'segment:streameval_ndcg:mean{k="10", window="5m"}'
    inner = ", ".join(f'{k}="{v}"' for k, v in {"job": JOB, **labels}.items())
    selector = f"segment:streameval_ndcg:mean{{{inner}}}"
    test = suite["tests"][0]
    test["promql_expr_test"] = [
        {"expr": mean, "eval_time": "15s", "exp_samples": [{"labels": selector, "value": 0.625}]},
        {"expr": mean, "eval_time": "30s", "exp_samples": [{"labels": selector, "value": 0.5}]},
        {"expr": mean, "eval_time": "45s", "exp_samples": []},
        {"expr": mean, "eval_time": "0s", "exp_samples": []},
    ]
    path = tmp_path / "harness_test.yml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    result = subprocess.run(
        [promtool_or_skip(), "test", "rules", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert suite["rule_files"] == [str(p) for p in deployfiles.RULE_FILES]
    assert [str(p) for p in RULE_FILES] == [str(p) for p in deployfiles.RULE_FILES]
    assert suite["group_eval_order"] == deployfiles.recording_first_group_order()


PROMTOOL_OUTPUT = """Unit Testing:  detection_test.yml
  FAILED:
    expr: "ALERTS{alertname=~\\"StreamevalNdcgBelowControl|StreamevalNdcgBelowBaseline\\"}", time: 15m45s,
        exp: nil
        got: {__name__="ALERTS", alertname="StreamevalNdcgBelowControl", alertstate="pending", k="10", window="5m"} 1E+00
    expr: "ALERTS{alertname=~\\"StreamevalNdcgBelowControl|StreamevalNdcgBelowBaseline\\"}", time: 1h,
        exp: nil
        got: {__name__="ALERTS", alertname="StreamevalNdcgBelowControl", alertstate="firing", k="10", window="5m"} 1E+00, {__name__="ALERTS", alertname="StreamevalNdcgBelowControl", alertstate="pending", k="1", window="1m"} 1E+00
"""  # noqa: E501


def test_promtool_failures_read_as_an_alerts_timeline() -> None:
    assert alerts_query() in PROMTOOL_OUTPUT.replace('\\"', '"')
    timeline = parse_failures(1, PROMTOOL_OUTPUT)
    k10 = (("alertname", "StreamevalNdcgBelowControl"), ("k", "10"), ("window", "5m"))
    k1 = (("alertname", "StreamevalNdcgBelowControl"), ("k", "1"), ("window", "1m"))
    assert timeline == {945: {k10: "pending"}, 3600: {k10: "firing", k1: "pending"}}
    assert parse_failures(0, "Unit Testing: x\n  SUCCESS\n") == {}


@pytest.mark.parametrize(
    "output",
    [
        "Unit Testing:  x.yml\n  FAILED:\n    alertname: A, time: 1m, \n",  # not our query
        '  FAILED:\n    expr: "up", time: 1m,\n        exp: nil\n        got: {} 1\n',
        "could not load rule files\n",  # promtool failed before testing
        "Unit Testing:  x.yml\n  FAILED:\n",  # failed, but no ALERTS reported
    ],
)
def test_any_other_promtool_failure_is_an_error(output: str) -> None:
    with pytest.raises(DetectionError):
        parse_failures(1, output)


def test_durations_as_promtool_prints_them() -> None:
    assert parse_duration_s("0s") == 0
    assert parse_duration_s("15m45s") == 945
    assert parse_duration_s("1h") == 3600
    assert parse_duration_s("1h15s") == 3615
    assert parse_duration_s("1h1m") == 3660
    assert parse_duration_s("1d2h") == 93600
    with pytest.raises(DetectionError):
        parse_duration_s("15 minutes")


def test_episodes_split_on_a_gap_and_record_when_they_fire() -> None:
    a = (("alertname", "A"),)
    timeline = {
        15: {a: "pending"},
        30: {a: "pending"},
        45: {a: "firing"},
        # nothing at 60: the episode ended at 45
        75: {a: "pending"},
    }
    assert episodes(timeline, 15) == [Episode(a, 15, 45, 45), Episode(a, 75, None, 75)]
