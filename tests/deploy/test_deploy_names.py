"""Rules and dashboard refer only to metrics streameval exports (streameval.export.names.ALL) or
to series the recording rules define; every alert is tested both ways."""

from __future__ import annotations

import re

import pytest

from streameval.export import names
from tests.deploy.deployfiles import (
    RULE_FILES,
    RULE_TESTS_DIR,
    SAMPLE_VARIABLES,
    alert_rules,
    dashboard,
    dashboard_queries,
    load_yaml,
    metric_names,
    panels,
    query_variables,
    recorded_names,
    rules,
    variables_used,
)

KNOWN = names.ALL | names.PROCESS | recorded_names()


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("streameval_ndcg", {"streameval_ndcg"}),
        # functions, grouping labels, label matchers, durations and numbers are not metric names
        (
            'sum by (job, k) (rate(streameval_lists_scored_total{k="10", arm=~"a|b"}[5m])) > 1e3',
            {"streameval_lists_scored_total"},
        ),
        (
            "a:b:c / on (job) group_left (arm) d_e offset 6h and bool_x",
            {"a:b:c", "d_e", "bool_x"},
        ),
        ('absent(x{le="0.5"}) or vector(1)', {"x"}),
        ("time() - streameval_watermark_timestamp_seconds", {names.WATERMARK}),
        ("round(x, 0.0001) unless ignoring (instance) y", {"x", "y"}),
        ("clamp_min(m1 - m2 ^ 2 / m3, 0)", {"m1", "m2", "m3"}),
        ("sum(rate(typo_metric[1h30m]))", {"typo_metric"}),
    ],
)
def test_metric_name_extraction(expr: str, expected: set[str]) -> None:
    assert metric_names(expr) == expected


def test_rules_refer_only_to_exported_or_recorded_metrics() -> None:
    seen: set[str] = set()
    for path in RULE_FILES:
        for rule in rules(path):
            used = metric_names(rule["expr"])
            unknown = used - KNOWN
            assert not unknown, f"{path.name}: {rule.get('record') or rule.get('alert')}: {unknown}"
            seen |= used
    # the rules really are built on the exported sufficient statistics
    assert {names.WINDOW_NDCG_SUM, names.WINDOW_NDCG_SUM_SQUARES, names.WINDOW_LISTS} <= seen


def test_recording_rules_are_defined_before_use_within_their_group() -> None:
    # inside a group, rules run in order: a recorded series used by a later rule of the same
    # group is then fresh; used before its definition it would be one evaluation old
    for path in RULE_FILES:
        for group in load_yaml(path)["groups"]:
            defined: set[str] = set()
            in_group = {r["record"] for r in group["rules"] if "record" in r}
            for rule in group["rules"]:
                early = (metric_names(rule["expr"]) & in_group) - defined
                assert not early, f"{group['name']}: {early} used before defined"
                if "record" in rule:
                    defined.add(rule["record"])


def test_alert_annotations_query_recorded_series_that_exist() -> None:
    series = re.compile(r"\b[a-z_]+:[a-z0-9_]+:[a-z0-9_]+\b")
    recorded = recorded_names()
    queried = set()
    for rule in alert_rules():
        text = " ".join(rule.get("annotations", {}).values())
        for name in series.findall(text):
            assert name in recorded, f"{rule['alert']}: {name}"
            queried.add(name)
    assert "segment:streameval_ndcg:delta_vs_control_ci95" in queried


def test_every_alert_has_labels_annotations_and_for() -> None:
    alerts = alert_rules()
    assert {a["alert"] for a in alerts} == {
        "StreamevalRegression",
        "StreamevalNdcgBelowControl",
        "StreamevalNdcgBelowBaseline",
        "StreamevalNoData",
        "StreamevalHorizonStalled",
        "StreamevalConsumerLagGrowing",
        "StreamevalInvalidRecordsHigh",
        "StreamevalDeadLettersFailing",
        "StreamevalInterleavingRankerWorse",
        "StreamevalSampleRatioMismatch",
        "StreamevalJudgeAgreementLow",
    }
    for alert in alerts:
        assert alert["labels"]["severity"] in {"critical", "warning", "info"}, alert["alert"]
        assert {"summary", "description"} <= set(alert["annotations"]), alert["alert"]
        assert re.fullmatch(r"\d+m", alert["for"]), alert["alert"]
    # ranking quality pages only through the sequential detectors (DESIGN §9); the window-margin
    # rules are dashboard context
    severity = {a["alert"]: a["labels"]["severity"] for a in alerts}
    assert severity["StreamevalRegression"] == "critical"
    assert severity["StreamevalSampleRatioMismatch"] == "warning"  # a warning, not a page
    assert (
        severity["StreamevalNdcgBelowControl"] == severity["StreamevalNdcgBelowBaseline"] == "info"
    )


def test_every_alert_has_a_firing_and_a_not_firing_unit_test() -> None:
    firing: set[str] = set()
    quiet: set[str] = set()
    for path in RULE_TESTS_DIR.glob("*.yml"):
        for case in load_yaml(path)["tests"]:
            for check in case.get("alert_rule_test", []):
                (firing if check.get("exp_alerts") else quiet).add(check["alertname"])
    alerts = {a["alert"] for a in alert_rules()}
    assert alerts - firing == set(), "alerts without a firing test"
    assert alerts - quiet == set(), "alerts without a not-firing test"


def test_dashboard_queries_refer_only_to_exported_or_recorded_metrics() -> None:
    board = dashboard()
    seen: set[str] = set()
    for query in dashboard_queries(board):
        used = metric_names(query.expr)
        assert used, f"{query.where}: no metric in {query.expr!r}"
        assert not used - KNOWN, f"{query.where}: unknown {used - KNOWN}"
        seen |= used
    # the panels the dashboard is for are there
    for wanted in (
        "segment:streameval_ndcg:mean",
        "segment:streameval_ndcg:ci95_low",
        "segment:streameval_ndcg:ci95_high",
        "segment:streameval_ndcg:delta_vs_control",
        "segment:streameval_click_through_rate:ratio",
        "segment:streameval_mrr:mean",
        "segment:streameval_zero_click_rate:ratio",
        "segment:streameval_judged_coverage:mean",
        "segment:streameval_lists_scored:rate5m",
        names.EVENTS_TOTAL,
        names.INVALID_EVENTS_TOTAL,
        names.LATE_EVENTS_TOTAL,
        names.DUPLICATE_EVENTS_TOTAL,
        names.UNMATCHED_CLICKS_TOTAL,
        names.WATERMARK,
        names.HORIZON,
        names.CONSUMER_LAG,
    ):
        assert wanted in seen, wanted


def test_dashboard_variables_are_defined_and_read_streameval_labels() -> None:
    board = dashboard()
    variables = {v["name"]: v for v in query_variables(board)}
    assert set(variables) == {"namespace", "job", "k", "window", "relevance", "ranker", "arm"}
    label_values = re.compile(r"label_values\(\s*([\w:]+)(\{[^{}]*\})?\s*,\s*(\w+)\s*\)")
    for name, variable in variables.items():
        match = label_values.fullmatch(variable["query"]["query"])
        assert match, name
        metric, selector, label = match.groups()
        assert metric in names.ALL
        assert label == name
        # the evaluation labels are those of the chosen job; the job those of the namespace
        expected = {"namespace": None, "job": '{namespace=~"$namespace"}'}
        assert selector == expected.get(name, '{job="$job"}'), name
    builtins = {"__rate_interval", "__interval", "__range"}
    for query in dashboard_queries(board):
        assert variables_used(query.expr) <= set(variables) | builtins, query.where
    # every variable used has a sample value for the parse check
    assert set(variables) | builtins <= set(SAMPLE_VARIABLES)


def test_every_dashboard_selector_is_of_the_chosen_job() -> None:
    # One Prometheus scrapes several deployments (a job each: "<namespace>/<name>" under the
    # Prometheus Operator): a selector without the job would pool them into one figure.
    board = dashboard()
    checked = 0
    for query in dashboard_queries(board):
        for name in metric_names(query.expr):
            for match in re.finditer(re.escape(name) + r"(?![\w:])\s*(\{[^{}]*\})?", query.expr):
                assert 'job="$job"' in (match.group(1) or ""), f"{query.where}: {name}"
                checked += 1
    assert checked >= 50


def test_repeated_panels_repeat_over_a_multi_value_variable() -> None:
    board = dashboard()
    variables = {v["name"]: v for v in board["templating"]["list"]}
    repeated = [p for p in panels(board) if p.get("repeat")]
    assert repeated
    for panel in repeated:
        assert variables[panel["repeat"]]["multi"], panel["title"]
