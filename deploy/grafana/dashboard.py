"""Generate deploy/grafana/dashboards/streameval.json, the streameval Grafana dashboard.

The JSON is committed (Grafana provisions it from the file); this script is its source, so that
panels stay uniform and every query is written once. After editing, regenerate:

    python deploy/grafana/dashboard.py > deploy/grafana/dashboards/streameval.json

tests/deploy checks that the committed JSON is this script's output and that every query parses
and uses only metrics streameval exports or recording rules define. Standard library only.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

#: Provisioned in deploy/grafana/provisioning/datasources/prometheus.yml.
DATASOURCE_UID = "streameval-prometheus"
DATASOURCE = {"type": "prometheus", "uid": DATASOURCE_UID}
DASHBOARD_UID = "streameval"

# Label matchers shared by the panels (Grafana template variables).
SEG = 'ranker=~"$ranker", arm=~"$arm"'
WIN = f'k="$k", window="$window", relevance="$relevance", {SEG}'
RATE = "$__rate_interval"

Json = dict[str, Any]


@dataclass(frozen=True)
class Query:
    expr: str
    legend: str


@dataclass(frozen=True)
class Panel:
    title: str
    queries: tuple[Query, ...]
    width: int
    height: int = 8
    kind: str = "timeseries"
    unit: str = "short"
    description: str = ""
    decimals: int | None = None
    min: float | None = None
    max: float | None = None
    stacked: bool = False
    overrides: tuple[Json, ...] = ()
    thresholds: tuple[tuple[float | None, str], ...] = ()
    threshold_style: str = "off"
    repeat: str | None = None
    extra: Json = field(default_factory=dict)


@dataclass(frozen=True)
class Row:
    title: str
    panels: tuple[Panel, ...]


def _override(matcher: str, value: str, properties: dict[str, Any]) -> Json:
    return {
        "matcher": {"id": matcher, "options": value},
        "properties": [{"id": key, "value": val} for key, val in properties.items()],
    }


# The 95 % band: the dashed "ci95" series of the overview panels ...
CI_DASHED = _override(
    "byRegexp",
    ".*ci95.*",
    {"custom.lineStyle": {"dash": [4, 4], "fill": "dash"}, "custom.lineWidth": 1},
)
# ... and, in the per-arm panels where the series names are fixed, a filled band.
CI_BAND = (
    _override(
        "byName",
        "ci95 high",
        {"custom.fillBelowTo": "ci95 low", "custom.fillOpacity": 20, "custom.lineWidth": 0},
    ),
    _override("byName", "ci95 low", {"custom.lineWidth": 0}),
)


def _thresholds(steps: tuple[tuple[float | None, str], ...]) -> Json:
    if not steps:
        steps = ((None, "green"),)
    return {"mode": "absolute", "steps": [{"value": v, "color": c} for v, c in steps]}


def _panel_json(panel: Panel, panel_id: int, x: int, y: int) -> Json:
    defaults: Json = {"unit": panel.unit, "thresholds": _thresholds(panel.thresholds)}
    for key in ("decimals", "min", "max"):
        value = getattr(panel, key)
        if value is not None:
            defaults[key] = value
    if panel.kind == "timeseries":
        defaults["custom"] = {
            "drawStyle": "line",
            "lineWidth": 2,
            "fillOpacity": 25 if panel.stacked else 0,
            "showPoints": "never",
            "spanNulls": False,
            "stacking": {"mode": "normal" if panel.stacked else "none", "group": "A"},
            "thresholdsStyle": {"mode": panel.threshold_style},
        }
        options: Json = {
            "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
            "tooltip": {"mode": "multi", "sort": "desc"},
        }
    else:
        defaults["color"] = {"mode": "thresholds"}
        options = {
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
            "colorMode": "value",
            "graphMode": "area",
            "textMode": "value_and_name",
            "justifyMode": "auto",
            "orientation": "auto",
        }
    result: Json = {
        "id": panel_id,
        "type": panel.kind,
        "title": panel.title,
        "description": panel.description,
        "datasource": DATASOURCE,
        "gridPos": {"h": panel.height, "w": panel.width, "x": x, "y": y},
        "fieldConfig": {"defaults": defaults, "overrides": list(panel.overrides)},
        "options": options,
        "targets": [
            {
                "datasource": DATASOURCE,
                "refId": chr(ord("A") + i),
                "expr": q.expr,
                "legendFormat": q.legend,
                "range": True,
                "instant": False,
            }
            for i, q in enumerate(panel.queries)
        ],
    }
    if panel.repeat:
        result.update({"repeat": panel.repeat, "repeatDirection": "h", "maxPerRow": 4})
    result.update(panel.extra)
    return result


def _variable(name: str, label: str, *, default: str, multi: bool, sort: int) -> Json:
    current = (
        {"selected": True, "text": ["All"], "value": ["$__all"]}
        if multi
        else {"selected": True, "text": default, "value": default}
    )
    query = f"label_values(streameval_window_lists, {name})"
    return {
        "name": name,
        "label": label,
        "type": "query",
        "datasource": DATASOURCE,
        "query": {"query": query, "refId": f"var-{name}"},
        "definition": query,
        "refresh": 2,
        "sort": sort,
        "multi": multi,
        "includeAll": multi,
        "allValue": ".*" if multi else None,
        "current": current,
        "options": [],
        "hide": 0,
    }


def rows() -> tuple[Row, ...]:
    ndcg = "segment:streameval_ndcg"
    return (
        Row(
            "Now",
            (
                Panel(
                    "NDCG@$k per arm ($window, $relevance)",
                    (
                        Query(
                            'arm:streameval_ndcg:mean{k="$k", window="$window", '
                            'relevance="$relevance", arm=~"$arm"}',
                            "{{arm}}",
                        ),
                    ),
                    width=8,
                    height=5,
                    kind="stat",
                    decimals=3,
                    description="Pooled over instances and rankers; the evaluation horizon lags "
                    "the wall clock by the attribution window.",
                ),
                Panel(
                    "Δ NDCG@$k vs control",
                    (
                        Query(
                            f'{ndcg}:delta_vs_control{{k="$k", window="$window", '
                            f'relevance="$relevance", {SEG}}}',
                            "{{ranker}}/{{arm}}",
                        ),
                    ),
                    width=6,
                    height=5,
                    kind="stat",
                    decimals=3,
                    thresholds=((None, "red"), (-0.01, "green")),
                    description="Red below -0.01, the minimum effect of "
                    "StreamevalNdcgBelowControl.",
                ),
                Panel(
                    "Lists scored / s",
                    (
                        Query(
                            'sum(segment:streameval_lists_scored:rate5m{k="$k", '
                            'relevance="$relevance"})',
                            "lists/s",
                        ),
                    ),
                    width=4,
                    height=5,
                    kind="stat",
                    unit="none",
                    decimals=1,
                ),
                Panel(
                    "Invalid share",
                    (Query("job:streameval_invalid_events:ratio_rate5m", "{{job}}"),),
                    width=3,
                    height=5,
                    kind="stat",
                    unit="percentunit",
                    decimals=1,
                    thresholds=((None, "green"), (0.05, "red")),
                ),
                Panel(
                    "Horizon lag",
                    (
                        Query(
                            "time() - min(streameval_evaluation_horizon_timestamp_seconds)",
                            "horizon",
                        ),
                    ),
                    width=3,
                    height=5,
                    kind="stat",
                    unit="s",
                    thresholds=((None, "green"), (900, "orange"), (1800, "red")),
                    description="Wall clock minus the oldest instance's evaluation horizon: "
                    "about attribution window + allowed lateness when healthy.",
                ),
            ),
        ),
        Row(
            "Ranking quality",
            (
                Panel(
                    "NDCG@$k by segment, 95 % CI dashed ($window window, $relevance)",
                    (
                        Query(f"{ndcg}:mean{{{WIN}}}", "{{ranker}}/{{arm}}"),
                        Query(f"{ndcg}:ci95_low{{{WIN}}}", "{{ranker}}/{{arm}} ci95 low"),
                        Query(f"{ndcg}:ci95_high{{{WIN}}}", "{{ranker}}/{{arm}} ci95 high"),
                    ),
                    width=16,
                    height=9,
                    decimals=3,
                    overrides=(CI_DASHED,),
                    description="Mean NDCG@k over the window as of the evaluation horizon, "
                    "pooled exactly over instances; dashed: mean ± 1.96·stderr.",
                ),
                Panel(
                    "Δ NDCG@$k vs control, 95 % CI",
                    (
                        Query(
                            f"{ndcg}:delta_vs_control{{{WIN}}}",
                            "{{ranker}}/{{arm}}",
                        ),
                        Query(
                            f"{ndcg}:delta_vs_control{{{WIN}}}"
                            f" - {ndcg}:delta_vs_control_ci95{{{WIN}}}",
                            "{{ranker}}/{{arm}} ci95 low",
                        ),
                        Query(
                            f"{ndcg}:delta_vs_control{{{WIN}}}"
                            f" + {ndcg}:delta_vs_control_ci95{{{WIN}}}",
                            "{{ranker}}/{{arm}} ci95 high",
                        ),
                    ),
                    width=8,
                    height=9,
                    decimals=3,
                    overrides=(CI_DASHED,),
                    thresholds=((None, "red"), (-0.01, "transparent")),
                    threshold_style="line",
                    description="Non-control segment minus the pooled control arm. The alert "
                    "fires when the whole band is below 0 and below -0.01 for 5 minutes.",
                ),
                Panel(
                    "NDCG@$k over the last hour of processing, from the cumulative counters",
                    (
                        Query(
                            f'{ndcg}:mean_rate1h{{k="$k", relevance="$relevance", {SEG}}}',
                            "{{ranker}}/{{arm}}",
                        ),
                    ),
                    width=24,
                    height=7,
                    decimals=3,
                    description="rate(ndcg_sum_total) / rate(lists_scored_total) over 1h: "
                    "processing time, not event time, but cheap over weeks and unaffected by "
                    "restarts. Use it for long ranges; the windows above for the live read-out.",
                ),
                Panel(
                    "NDCG@$k, arm $arm, 95 % CI band",
                    (
                        Query(
                            'arm:streameval_ndcg:mean{k="$k", window="$window", '
                            'relevance="$relevance", arm="$arm"}',
                            "mean",
                        ),
                        Query(
                            'arm:streameval_ndcg:mean{k="$k", window="$window", '
                            'relevance="$relevance", arm="$arm"} - 1.96 * '
                            'arm:streameval_ndcg:stderr{k="$k", window="$window", '
                            'relevance="$relevance", arm="$arm"}',
                            "ci95 low",
                        ),
                        Query(
                            'arm:streameval_ndcg:mean{k="$k", window="$window", '
                            'relevance="$relevance", arm="$arm"} + 1.96 * '
                            'arm:streameval_ndcg:stderr{k="$k", window="$window", '
                            'relevance="$relevance", arm="$arm"}',
                            "ci95 high",
                        ),
                    ),
                    width=12,
                    decimals=3,
                    overrides=CI_BAND,
                    repeat="arm",
                ),
            ),
        ),
        Row(
            "Judged vs implicit",
            (
                Panel(
                    "NDCG@$k, judged and implicit ($window)",
                    (
                        Query(
                            f'{ndcg}:mean{{k="$k", window="$window", {SEG}}}',
                            "{{relevance}} {{ranker}}/{{arm}}",
                        ),
                    ),
                    width=10,
                    decimals=3,
                    description="Implicit grades come from clicks, judged ones from explicit "
                    "judgments; a change in only one of them points at the signal, not the ranker.",
                ),
                Panel(
                    "Judged coverage@$k",
                    (
                        Query(
                            f'segment:streameval_judged_coverage:mean{{k="$k", '
                            f'window="$window", relevance="judged", {SEG}}}',
                            "{{ranker}}/{{arm}}",
                        ),
                    ),
                    width=7,
                    unit="percentunit",
                    min=0,
                    max=1,
                    description="Share of the top-k docs that have a judgment; unjudged docs "
                    "count 0, so judged NDCG is a lower bound when coverage is low.",
                ),
                Panel(
                    "Lists in the $window window",
                    (Query(f"segment:streameval_window_lists:sum{{{WIN}}}", "{{ranker}}/{{arm}}"),),
                    width=7,
                    description="The n behind every mean and CI above; alerts need 200 per side.",
                ),
            ),
        ),
        Row(
            "Engagement",
            (
                Panel(
                    "Click-through rate ($window)",
                    (
                        Query(
                            f'segment:streameval_click_through_rate:ratio{{window="$window", '
                            f"{SEG}}}",
                            "{{ranker}}/{{arm}}",
                        ),
                    ),
                    width=8,
                    unit="percentunit",
                ),
                Panel(
                    "MRR of the first click ($window)",
                    (
                        Query(
                            f'segment:streameval_mrr:mean{{window="$window", {SEG}}}',
                            "{{ranker}}/{{arm}}",
                        ),
                    ),
                    width=8,
                    decimals=3,
                ),
                Panel(
                    "Zero-click rate ($window)",
                    (
                        Query(
                            f'segment:streameval_zero_click_rate:ratio{{window="$window", {SEG}}}',
                            "{{ranker}}/{{arm}}",
                        ),
                    ),
                    width=8,
                    unit="percentunit",
                ),
            ),
        ),
        Row(
            "Throughput and intake",
            (
                Panel(
                    "Lists scored per second",
                    (
                        Query(
                            f'segment:streameval_lists_scored:rate5m{{k="$k", {SEG}}}',
                            "{{relevance}} {{ranker}}/{{arm}}",
                        ),
                    ),
                    width=8,
                    unit="none",
                ),
                Panel(
                    "Intake outcomes (records/s, stacked)",
                    (
                        Query(
                            f"sum by (type) (rate(streameval_events_total[{RATE}]))",
                            "accepted {{type}}",
                        ),
                        Query(
                            f"sum by (reason) (rate(streameval_invalid_events_total[{RATE}]))",
                            "invalid {{reason}}",
                        ),
                        Query(
                            f"sum by (type) (rate(streameval_duplicate_events_total[{RATE}]))",
                            "duplicate {{type}}",
                        ),
                        Query(
                            f"sum by (type) (rate(streameval_late_events_total[{RATE}]))",
                            "late {{type}}",
                        ),
                        Query(
                            f"sum(rate(streameval_unmatched_clicks_total[{RATE}]))",
                            "unmatched click",
                        ),
                        Query(
                            f"sum(rate(streameval_records_read_total[{RATE}]))",
                            "records read",
                        ),
                    ),
                    width=10,
                    unit="none",
                    stacked=True,
                    overrides=(
                        _override(
                            "byName",
                            "records read",
                            {
                                "custom.stacking": {"mode": "none", "group": "A"},
                                "custom.fillOpacity": 0,
                                "custom.lineStyle": {"dash": [4, 4], "fill": "dash"},
                                "color": {"mode": "fixed", "fixedColor": "text"},
                            },
                        ),
                    ),
                    description="Every record read lands in exactly one outcome, so the stack "
                    "meets the dashed records-read line.",
                ),
                Panel(
                    "Finalized lists by outcome",
                    (
                        Query(
                            f"sum by (relevance, outcome) (rate(streameval_lists_total[{RATE}]))",
                            "{{relevance}} {{outcome}}",
                        ),
                    ),
                    width=6,
                    unit="none",
                    stacked=True,
                ),
                Panel(
                    "Late and unmatched events",
                    (
                        Query(
                            f"sum by (type) (rate(streameval_late_events_total[{RATE}]))",
                            "late {{type}}",
                        ),
                        Query(
                            f"sum(rate(streameval_unmatched_clicks_total[{RATE}]))",
                            "unmatched clicks",
                        ),
                        Query(
                            f"sum by (type) (rate(streameval_duplicate_events_total[{RATE}]))",
                            "duplicate {{type}}",
                        ),
                    ),
                    width=12,
                    unit="none",
                    description="Late: arrived behind the watermark. Unmatched: a click for an "
                    "unknown list. A rise of either usually means a producer's clock or keys.",
                ),
                Panel(
                    "Invalid records by reason",
                    (
                        Query(
                            f"sum by (reason) (rate(streameval_invalid_events_total[{RATE}]))",
                            "{{reason}}",
                        ),
                        Query("job:streameval_invalid_events:ratio_rate5m", "share {{job}}"),
                    ),
                    width=12,
                    unit="none",
                    overrides=(
                        _override(
                            "byRegexp",
                            "share.*",
                            {"unit": "percentunit", "custom.axisPlacement": "right"},
                        ),
                    ),
                ),
            ),
        ),
        Row(
            "Event time and lag",
            (
                Panel(
                    "Watermark and horizon lag behind the wall clock",
                    (
                        Query(
                            "time() - streameval_watermark_timestamp_seconds",
                            "watermark {{instance}}",
                        ),
                        Query(
                            "time() - streameval_evaluation_horizon_timestamp_seconds",
                            "horizon {{instance}}",
                        ),
                    ),
                    width=8,
                    unit="s",
                    description="Horizon = watermark - attribution window: the windows are "
                    "reported as of the horizon, where all their lists are final.",
                ),
                Panel(
                    "Consumer lag per topic",
                    (Query("topic:streameval_consumer_lag:sum", "{{topic}}"),),
                    width=8,
                    unit="none",
                ),
                Panel(
                    "Consumer lag per partition",
                    (
                        Query(
                            "streameval_consumer_lag",
                            "{{topic}}/{{partition}} {{instance}}",
                        ),
                    ),
                    width=8,
                    unit="none",
                ),
                Panel(
                    "Open lists and judgments held",
                    (
                        Query(
                            "sum by (instance) (streameval_open_lists)", "open lists {{instance}}"
                        ),
                        Query("sum by (instance) (streameval_judgments)", "judgments {{instance}}"),
                    ),
                    width=16,
                    unit="none",
                ),
                Panel(
                    "Build",
                    (Query("streameval_build_info", "{{version}} {{instance}}"),),
                    width=8,
                    kind="stat",
                    unit="none",
                    extra={
                        "options": {
                            "reduceOptions": {
                                "calcs": ["lastNotNull"],
                                "fields": "",
                                "values": False,
                            },
                            "colorMode": "none",
                            "graphMode": "none",
                            "textMode": "name",
                            "justifyMode": "auto",
                            "orientation": "auto",
                        }
                    },
                ),
            ),
        ),
    )


def _layout(all_rows: tuple[Row, ...]) -> list[Json]:
    panels: list[Json] = []
    panel_id = 1
    y = 0
    for row in all_rows:
        panels.append(
            {
                "id": panel_id,
                "type": "row",
                "title": row.title,
                "collapsed": False,
                "panels": [],
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
            }
        )
        panel_id += 1
        y += 1
        x = 0
        line_height = 0
        for panel in row.panels:
            if x + panel.width > 24:
                x, y, line_height = 0, y + line_height, 0
            panels.append(_panel_json(panel, panel_id, x, y))
            panel_id += 1
            x += panel.width
            line_height = max(line_height, panel.height)
        y += line_height
    return panels


def dashboard() -> Json:
    return {
        "uid": DASHBOARD_UID,
        "title": "streameval: live search quality",
        "description": "Live NDCG@k per experiment arm from the search event stream (streameval).",
        "tags": ["streameval", "search", "ndcg"],
        "timezone": "browser",
        "editable": False,
        "graphTooltip": 1,
        "refresh": "30s",
        "time": {"from": "now-3h", "to": "now"},
        "schemaVersion": 39,
        "version": 1,
        "links": [],
        "annotations": {"list": []},
        "templating": {
            "list": [
                _variable("k", "k", default="10", multi=False, sort=3),
                _variable("window", "window", default="5m", multi=False, sort=1),
                _variable("relevance", "relevance", default="implicit", multi=False, sort=1),
                _variable("ranker", "ranker", default="", multi=True, sort=1),
                _variable("arm", "arm", default="", multi=True, sort=1),
            ]
        },
        "panels": _layout(rows()),
    }


def render() -> str:
    return json.dumps(dashboard(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
