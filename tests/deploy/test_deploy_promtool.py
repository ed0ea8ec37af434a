"""promtool over the Prometheus files: config and rules valid, rule unit tests pass, and every
dashboard query parses as PromQL."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from tests.deploy.deployfiles import (
    PROMETHEUS_CONFIG,
    RULE_FILES,
    RULE_TESTS_DIR,
    dashboard,
    dashboard_queries,
    load_yaml,
    prometheus_config,
    promtool_or_skip,
    substitute,
)

pytestmark = pytest.mark.prometheus


def _promtool(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool_or_skip(), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )


def _ok(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, f"{result.args}\n{result.stdout}\n{result.stderr}"


def test_prometheus_config_is_valid_and_loads_the_rule_files() -> None:
    result = _promtool("check", "config", PROMETHEUS_CONFIG)
    _ok(result)
    # `check config` also checks the rule files it globs: both must have been found
    for path in RULE_FILES:
        assert path.name in result.stdout, result.stdout


def test_rule_files_are_valid() -> None:
    result = _promtool("check", "rules", *RULE_FILES)
    _ok(result)
    assert result.stdout.count("SUCCESS") == len(RULE_FILES)


def test_promtool_rule_unit_tests_pass() -> None:
    test_files = sorted(RULE_TESTS_DIR.glob("*.yml"))
    assert {p.name for p in test_files} >= {"recording_test.yml", "alerts_test.yml"}
    result = _promtool("test", "rules", *test_files)
    _ok(result)
    assert result.stdout.count("SUCCESS") == len(test_files), result.stdout


def test_promtool_rule_unit_tests_can_fail(tmp_path: Path) -> None:
    # Guard against a vacuous pass: the same suite against an alert rule that never fires fails.
    rules_dir = tmp_path / "rules"
    tests_dir = tmp_path / "tests"
    rules_dir.mkdir()
    tests_dir.mkdir()
    (rules_dir / "recording.yml").write_text(RULE_FILES[0].read_text(encoding="utf-8"))
    alerts = RULE_FILES[1].read_text(encoding="utf-8")
    broken = alerts.replace("segment:streameval_ndcg:delta_vs_control < -0.01", "vector(0) > 1", 1)
    assert broken != alerts
    (rules_dir / "alerts.yml").write_text(broken)
    suite = load_yaml(RULE_TESTS_DIR / "alerts_test.yml")
    suite["tests"] = [t for t in suite["tests"] if t["name"].startswith("NdcgBelowControl fires")]
    assert len(suite["tests"]) == 1
    (tests_dir / "alerts_test.yml").write_text(yaml.safe_dump(suite, sort_keys=False))
    result = _promtool("test", "rules", tests_dir / "alerts_test.yml")
    assert result.returncode != 0
    assert "StreamevalNdcgBelowControl" in result.stdout + result.stderr


def test_every_dashboard_query_parses(tmp_path: Path) -> None:
    # promtool cannot check a bare expression, but it checks rule files: wrap each dashboard
    # query (template variables replaced by sample values) in a recording rule.
    queries = dashboard_queries(dashboard())
    assert len(queries) >= 20
    rules = [
        {"record": f"dashboard_check:query_{i}", "expr": substitute(q.expr)}
        for i, q in enumerate(queries)
    ]
    path = tmp_path / "dashboard_queries.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    result = _promtool("check", "rules", path)
    _ok(result)
    assert f"{len(rules)} rules found" in result.stdout


def test_a_broken_query_is_caught(tmp_path: Path) -> None:
    # the check above really parses: an unbalanced expression fails it
    path = tmp_path / "broken.yml"
    rule = {"record": "dashboard_check:broken", "expr": "sum(rate(streameval_ndcg[5m])"}
    path.write_text(yaml.safe_dump({"groups": [{"name": "broken", "rules": [rule]}]}))
    assert _promtool("check", "rules", path).returncode != 0


def test_config_for_a_live_harness_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "prometheus.yml"
    path.write_text(prometheus_config(["127.0.0.1:9724"]))
    result = _promtool("check", "config", path)
    _ok(result)
    assert "alerts.yml" in result.stdout
