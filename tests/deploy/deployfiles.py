"""The deployment files and small helpers to read them, for tests/deploy and for later tests that
run a real Prometheus against a live streameval (reuse `RULE_FILES`, `promtool_or_skip`,
`prometheus_config`).

Nothing here starts a process; everything is a pure function of the files in the checkout.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.ci import in_ci

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
DEPLOY = ROOT / "deploy"
PROMETHEUS_DIR = DEPLOY / "prometheus"
PROMETHEUS_CONFIG = PROMETHEUS_DIR / "prometheus.yml"
RULES_DIR = PROMETHEUS_DIR / "rules"
RULE_FILES = (RULES_DIR / "recording.yml", RULES_DIR / "alerts.yml")
RULE_TESTS_DIR = PROMETHEUS_DIR / "tests"
GRAFANA_DIR = DEPLOY / "grafana"
DASHBOARD_JSON = GRAFANA_DIR / "dashboards" / "streameval.json"
DASHBOARD_SOURCE = GRAFANA_DIR / "dashboard.py"
DATASOURCES = GRAFANA_DIR / "provisioning" / "datasources" / "prometheus.yml"
DASHBOARD_PROVIDERS = GRAFANA_DIR / "provisioning" / "dashboards" / "dashboards.yml"
CREATE_TOPICS = DEPLOY / "kafka" / "create-topics.sh"

METRICS_PORT = 9724  # DESIGN §7, [metrics] port

#: DESIGN §7: the sub-commands of `streameval`.
DESIGN_COMMANDS = frozenset({"run", "demo", "replay", "simulate", "schema", "config"})
#: DESIGN §6: default topics.
DESIGN_TOPICS = frozenset(
    {"search-impressions", "search-clicks", "search-judgments", "streameval-dlq"}
)
#: DESIGN §7: configuration keys by section (kafka also passes security settings through).
DESIGN_CONFIG_KEYS: Mapping[str, frozenset[str]] = {
    "kafka": frozenset(
        {
            "bootstrap_servers",
            "group_id",
            "topics",
            "judgment_topics",
            "dlq_topic",
            "security_protocol",
            "sasl_mechanism",
            "sasl_username",
            "sasl_password",
            "ssl_cafile",
        }
    ),
    "metrics": frozenset({"host", "port"}),
    "evaluation": frozenset(
        {
            "ks",
            "gain",
            "discount",
            "discount_base",
            "ideal",
            "unjudged",
            "no_relevance",
            "attribution_window",
            "allowed_lateness",
            "windows",
            "bucket",
            "segment_labels",
            "max_segments",
            "implicit_grades",
            "dwell_grade",
        }
    ),
}


def promtool_or_skip() -> str:
    """Path of promtool. Missing: a failure in CI (CI=true), a skip on a developer machine."""
    return _binary_or_skip("promtool")


def prometheus_or_skip() -> str:
    """Path of the Prometheus server. Missing: a failure in CI (CI=true), else a skip."""
    return _binary_or_skip("prometheus")


def _binary_or_skip(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        message = f"{name} not found (scripts/install-test-deps installs Debian's prometheus)"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    return path


def load_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


# --- Prometheus rules -------------------------------------------------------------------------


def rules(path: Path) -> list[dict[str, Any]]:
    """Every rule (recording or alerting) of a rule file, in order."""
    return [rule for group in load_yaml(path)["groups"] for rule in group["rules"]]


def recorded_names() -> frozenset[str]:
    return frozenset(
        rule["record"] for path in RULE_FILES for rule in rules(path) if "record" in rule
    )


def alert_rules() -> list[dict[str, Any]]:
    return [rule for path in RULE_FILES for rule in rules(path) if "alert" in rule]


def rule_groups() -> list[dict[str, Any]]:
    """Every rule group of the rule files, in file order."""
    return [group for path in RULE_FILES for group in load_yaml(path)["groups"]]


def recording_first_group_order() -> list[str]:
    """Group names with the recording-only groups first (file order kept within each part): the
    order a live Prometheus usually converges to, for promtool's `group_eval_order`."""
    groups = rule_groups()
    recording = [g["name"] for g in groups if all("record" in r for r in g["rules"])]
    return recording + [g["name"] for g in groups if g["name"] not in recording]


def referenced_metric_names() -> frozenset[str]:
    """Exported metric names the rules and the dashboard (queries and template variables) select:
    every name they use that is not itself a recording rule."""
    exprs = [rule["expr"] for path in RULE_FILES for rule in rules(path)]
    board = dashboard()
    exprs += [query.expr for query in dashboard_queries(board)]
    exprs += [_variable_query(v) for v in query_variables(board)]
    used = frozenset().union(*(metric_names(expr) for expr in exprs))
    return used - recorded_names()


def query_variables(board: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The dashboard's query variables (not the datasource variable, whose query is a plugin
    id, not PromQL)."""
    return [v for v in board.get("templating", {}).get("list", []) if v["type"] == "query"]


_LABEL_VALUES = re.compile(r"^\s*label_values\((?P<selector>.+),\s*\w+\s*\)\s*$")


def _variable_query(variable: Mapping[str, Any]) -> str:
    """The PromQL of a query variable (`label_values(selector, label)` -> selector), else ""."""
    query = variable.get("query", "")
    text = query.get("query", "") if isinstance(query, Mapping) else str(query)
    match = _LABEL_VALUES.match(text)
    return match.group("selector") if match else text


# --- PromQL identifiers -----------------------------------------------------------------------

_STRINGS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_RANGES = re.compile(r"\[[^\[\]]*\]")
# A name not preceded by a word character, a dot or a digit (so the `m` of `5m` and the `e` of
# `1e3` are not names) and not followed by `(` (a function call).
_NAMES = re.compile(r"(?<![\w:.])([A-Za-z_:][\w:]*)(?![\w:])(?!\s*\()")
_KEYWORDS = frozenset(
    {
        "and",
        "or",
        "unless",
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "offset",
        "bool",
        "atan2",
        "inf",
        "nan",
    }
)


def metric_names(expr: str) -> frozenset[str]:
    """The metric names an expression selects: strings, label matchers, grouping clauses and
    range durations removed, then every remaining name that is not a function or a keyword."""
    text = _STRINGS.sub('""', expr)
    text = _MATCHERS.sub("", text)
    text = _GROUPING.sub("", text)
    text = _RANGES.sub("", text)
    return frozenset(name for name in _NAMES.findall(text) if name.lower() not in _KEYWORDS)


# --- Grafana dashboard ------------------------------------------------------------------------

#: A sample value for every template variable, to turn dashboard queries into plain PromQL.
SAMPLE_VARIABLES: Mapping[str, str] = {
    "job": "streameval",
    "namespace": "search",
    "k": "10",
    "window": "5m",
    "relevance": "judged",
    "ranker": "ltr",
    "arm": "treatment",
    "__rate_interval": "1m",
    "__interval": "15s",
    "__range": "1h",
}
_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]")


def dashboard() -> dict[str, Any]:
    with DASHBOARD_JSON.open(encoding="utf-8") as handle:
        loaded: dict[str, Any] = json.load(handle)
    return loaded


def panels(board: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, including those nested in collapsed rows."""
    for panel in board["panels"]:
        yield panel
        yield from panel.get("panels", [])


@dataclass(frozen=True)
class DashboardQuery:
    where: str  # "panel 7 'title' target B", for messages
    expr: str


def dashboard_queries(board: Mapping[str, Any]) -> list[DashboardQuery]:
    return [
        DashboardQuery(f"panel {p['id']} {p['title']!r} target {t['refId']}", t["expr"])
        for p in panels(board)
        for t in p.get("targets", [])
    ]


def variables_used(expr: str) -> frozenset[str]:
    return frozenset(next(g for g in m.groups() if g) for m in _VARIABLE.finditer(expr))


def substitute(expr: str, values: Mapping[str, str] = SAMPLE_VARIABLES) -> str:
    """The expression with every Grafana variable replaced; KeyError for an unknown one."""
    return _VARIABLE.sub(lambda m: values[next(g for g in m.groups() if g)], expr)


# --- docker compose ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Mount:
    source: Path  # on the host, resolved against the compose file's directory
    target: str  # in the container


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = load_yaml(COMPOSE)
    return loaded


def bind_mounts(service: Mapping[str, Any]) -> list[Mount]:
    """Bind mounts of a service (short `./src:/dst[:ro]` or long syntax); named volumes skipped."""
    mounts: list[Mount] = []
    for volume in service.get("volumes", []):
        if isinstance(volume, str):
            source, target = volume.split(":")[:2]
        elif volume.get("type") == "bind":
            source, target = volume["source"], volume["target"]
        else:
            continue
        if source.startswith((".", "/")):
            mounts.append(Mount((COMPOSE.parent / source).resolve(), target))
    return mounts


def host_path(service: Mapping[str, Any], container_path: str) -> Path | None:
    """Where a container path of a service lives on the host, through its bind mounts."""
    for mount in sorted(bind_mounts(service), key=lambda m: -len(m.target)):
        target = mount.target.rstrip("/")
        if container_path == target or container_path.startswith(target + "/"):
            return mount.source / container_path[len(target) :].lstrip("/")
    return None


def published_ports(service: Mapping[str, Any]) -> list[tuple[int, int]]:
    """(host, container) pairs of a service's short-syntax port mappings."""
    pairs: list[tuple[int, int]] = []
    for entry in service.get("ports", []):
        parts = str(entry).split(":")
        pairs.append((int(parts[-2]), int(parts[-1].split("/")[0])))
    return pairs


def command_list(service: Mapping[str, Any]) -> list[str]:
    command = service.get("command", [])
    return [str(part) for part in (command.split() if isinstance(command, str) else command)]


# --- Prometheus config for other harnesses ----------------------------------------------------


def prometheus_config(targets: list[str], scrape_interval: str = "1s") -> str:
    """A Prometheus config scraping `targets` as job `streameval` with this checkout's rules:
    for tests that run a real Prometheus against a live streameval."""
    config = {
        "global": {"scrape_interval": scrape_interval, "evaluation_interval": scrape_interval},
        "rule_files": [str(path) for path in RULE_FILES],
        "scrape_configs": [{"job_name": "streameval", "static_configs": [{"targets": targets}]}],
    }
    return yaml.safe_dump(config, sort_keys=False)
