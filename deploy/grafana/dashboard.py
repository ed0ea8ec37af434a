"""Generate deploy/grafana/dashboards/streameval.json, the streameval Grafana dashboard.

Built with Grafana Labs' typed dashboard builders (``grafana-foundation-sdk``, the release for the
Grafana of docker-compose.yml; a test dependency, not a runtime one: ``pip install -e '.[test]'``).
The JSON is committed (Grafana provisions it from the file); this script is its source. After
editing, regenerate:

    python deploy/grafana/dashboard.py > deploy/grafana/dashboards/streameval.json

tests/deploy checks that the committed JSON is this script's output and that every query parses
and uses only metrics streameval exports or recording rules define.

The dashboard is a sequence of rows, one function per row (``ROWS`` at the bottom): a row
function returns a :class:`Section`, its title and its panels, built with :func:`timeseries`,
:func:`stat` and :func:`query` (uniform defaults: datasource, line style, legend, reduce
options), then refined with the SDK's own builder methods (``.decimals(3)``, ``.min(0)``, an
override ...). To add a row, write its function and add it to ``ROWS``: panel ids and grid
positions follow from the order (panels flow left to right, a new line when a line's widths reach
24; keep every line's widths summing to 24).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from grafana_foundation_sdk.builders import common as common_builders
from grafana_foundation_sdk.builders import dashboard as dashboard_builders
from grafana_foundation_sdk.builders import prometheus, stat, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common
from grafana_foundation_sdk.models import dashboard as model

#: No datasource uid is hard-coded: every panel and query variable asks the `datasource`
#: variable, so the dashboard works in any Grafana (docker-compose's provisioning, the Helm
#: chart's sidecar ConfigMap, a UI import). The variable's default is the `__inputs` placeholder
#: below: the UI import replaces it with the datasource the user picks; where nothing replaces it
#: (file provisioning) Grafana falls back to the first Prometheus datasource.
DATASOURCE_VARIABLE = "datasource"
DATASOURCE = model.DataSourceRef(type_val="prometheus", uid="${" + DATASOURCE_VARIABLE + "}")
DATASOURCE_INPUT = "DS_PROMETHEUS"
DASHBOARD_UID = "streameval"
#: The Grafana the SDK release is for (pyproject pins it): `__requires` of the import format.
GRAFANA_VERSION = "11.3.0"

# Label matchers shared by the panels (Grafana template variables). Every selector carries the
# job: one Prometheus may scrape several deployments (staging and production, or one per
# namespace under the Prometheus Operator, whose PodMonitor job is "<namespace>/<name>").
JOB = 'job="$job"'
SEG = f'{JOB}, ranker=~"$ranker", arm=~"$arm"'
WIN = f'k="$k", window="$window", relevance="$relevance", {SEG}'
RATE = "$__rate_interval"
#: The segment series of the recording rules.
NDCG = "segment:streameval_ndcg"

Panel = timeseries.Panel | stat.Panel
P = TypeVar("P", timeseries.Panel, stat.Panel)


@dataclass(frozen=True)
class Section:
    """One dashboard row: its title and its panels, left to right."""

    title: str
    panels: Sequence[Panel]


# --- building blocks ---------------------------------------------------------------------------


def query(expr: str, legend: str) -> prometheus.Dataquery:
    """A range query on the provisioned Prometheus (refIds are set per panel, A, B, ...)."""
    return prometheus.Dataquery().datasource(DATASOURCE).expr(expr).legend_format(legend).range()


def thresholds(*steps: tuple[float | None, str]) -> dashboard_builders.ThresholdsConfig:
    """Absolute thresholds; the first step's value is None (the base colour)."""
    steps = steps or ((None, "green"),)
    return (
        dashboard_builders.ThresholdsConfig()
        .mode(model.ThresholdsMode.ABSOLUTE)
        .steps([model.Threshold(value=value, color=color) for value, color in steps])
    )


def _common(
    panel: P, title: str, queries: Sequence[prometheus.Dataquery], width: int, height: int
) -> P:
    """Title, queries (refIds A, B, ...), the datasource, size, default thresholds."""
    return (
        panel.title(title)
        .datasource(DATASOURCE)
        .span(width)
        .height(height)
        .thresholds(thresholds())
        .targets([q.ref_id(chr(ord("A") + i)) for i, q in enumerate(queries)])
    )


def timeseries_panel(
    title: str,
    *queries: prometheus.Dataquery,
    width: int,
    height: int = 8,
    unit: str = "short",
    description: str = "",
    stacked: bool = False,
) -> timeseries.Panel:
    """Lines of width 2 without points; a multi-series tooltip; stacked areas when asked."""
    panel = _common(timeseries.Panel(), title, queries, width, height)
    panel = panel.description(description).unit(unit)
    stacking = common.StackingMode.NORMAL if stacked else common.StackingMode.NONE
    return (
        panel.draw_style(common.GraphDrawStyle.LINE)
        .line_width(2)
        .fill_opacity(25 if stacked else 0)
        .show_points(common.VisibilityMode.NEVER)
        .span_nulls(False)
        .stacking(common_builders.StackingConfig().mode(stacking).group("A"))
        .thresholds_style(
            common_builders.GraphThresholdsStyleConfig().mode(common.GraphThresholdsStyleMode.OFF)
        )
        .legend(
            common_builders.VizLegendOptions()
            .display_mode(common.LegendDisplayMode.LIST)
            .placement(common.LegendPlacement.BOTTOM)
            .show_legend(True)
        )
        .tooltip(
            common_builders.VizTooltipOptions()
            .mode(common.TooltipDisplayMode.MULTI)
            .sort(common.SortOrder.DESCENDING)
        )
    )


def stat_panel(
    title: str,
    *queries: prometheus.Dataquery,
    width: int,
    height: int = 8,
    unit: str = "short",
    description: str = "",
) -> stat.Panel:
    """The last value, coloured by the thresholds, with a sparkline."""
    panel = _common(stat.Panel(), title, queries, width, height)
    panel = panel.description(description).unit(unit)
    return (
        panel.color_scheme(dashboard_builders.FieldColor().mode(model.FieldColorModeId.THRESHOLDS))
        .reduce_options(
            common_builders.ReduceDataOptions().calcs(["lastNotNull"]).fields("").values(False)
        )
        .color_mode(common.BigValueColorMode.VALUE)
        .graph_mode(common.BigValueGraphMode.AREA)
        .text_mode(common.BigValueTextMode.VALUE_AND_NAME)
        .justify_mode(common.BigValueJustifyMode.AUTO)
        .orientation(common.VizOrientation.AUTO)
    )


def prop(key: str, value: Any) -> model.DynamicConfigValue:
    """One property of a field override."""
    return model.DynamicConfigValue(id_val=key, value=value)


DASHED = common_builders.LineStyle().fill("dash").dash([4, 4]).build()


def ci_dashed(panel: P) -> P:
    """The 95 % band of the overview panels: the series named "... ci95 ..." dashed and thin."""
    return panel.override_by_regexp(
        ".*ci95.*", [prop("custom.lineStyle", DASHED), prop("custom.lineWidth", 1)]
    )


def ci_band(panel: timeseries.Panel) -> timeseries.Panel:
    """In the per-arm panels, where the series names are fixed: a filled band."""
    return panel.override_by_name(
        "ci95 high",
        [
            prop("custom.fillBelowTo", "ci95 low"),
            prop("custom.fillOpacity", 20),
            prop("custom.lineWidth", 0),
        ],
    ).override_by_name("ci95 low", [prop("custom.lineWidth", 0)])


def variable(name: str, *, default: str, multi: bool, sort: model.VariableSort) -> Any:
    """A query variable over the values of one label of streameval_window_lists (of $job)."""
    current = (
        model.VariableOption(selected=True, text=["All"], value=["$__all"])
        if multi
        else model.VariableOption(selected=True, text=default, value=default)
    )
    built = (
        dashboard_builders.QueryVariable(name)
        .label(name)
        .datasource(DATASOURCE)
        .query(
            {
                "query": f"label_values(streameval_window_lists{{{JOB}}}, {name})",
                "refId": f"var-{name}",
            }
        )
        .refresh(model.VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(sort)
        .multi(multi)
        .include_all(multi)
        .current(current)
        .options([])
        .hide(model.VariableHide.DONT_HIDE)
    )
    return built.all_value(".*") if multi else built


# --- the rows ----------------------------------------------------------------------------------


def now_row() -> Section:
    arm_mean = (
        f'arm:streameval_ndcg:mean{{{JOB}, k="$k", window="$window", relevance="$relevance", '
    )
    return Section(
        "Now",
        (
            stat_panel(
                "NDCG@$k per arm ($window, $relevance)",
                query(arm_mean + 'arm=~"$arm"}', "{{arm}}"),
                width=8,
                height=5,
                description="Pooled over instances and rankers; the evaluation horizon lags "
                "the wall clock by the attribution window.",
            ).decimals(3),
            stat_panel(
                "Δ NDCG@$k vs control",
                query(
                    f'{NDCG}:delta_vs_control{{k="$k", window="$window", '
                    f'relevance="$relevance", {SEG}}}',
                    "{{ranker}}/{{arm}}",
                ),
                width=6,
                height=5,
                description="Red below -0.01, the minimum effect of StreamevalNdcgBelowControl.",
            )
            .decimals(3)
            .thresholds(thresholds((None, "red"), (-0.01, "green"))),
            stat_panel(
                "Lists scored / s",
                query(
                    f"sum(segment:streameval_lists_scored:rate5m"
                    f'{{{JOB}, k="$k", relevance="$relevance"}})',
                    "lists/s",
                ),
                width=4,
                height=5,
                unit="none",
            ).decimals(1),
            stat_panel(
                "Invalid share",
                query(f"job:streameval_invalid_events:ratio_rate5m{{{JOB}}}", "{{job}}"),
                width=3,
                height=5,
                unit="percentunit",
            )
            .decimals(1)
            .thresholds(thresholds((None, "green"), (0.05, "red"))),
            stat_panel(
                "Horizon lag",
                query(
                    f"time() - min(streameval_evaluation_horizon_timestamp_seconds{{{JOB}}})",
                    "horizon",
                ),
                width=3,
                height=5,
                unit="s",
                description="Wall clock minus the oldest instance's evaluation horizon: "
                "about attribution window + allowed lateness when healthy.",
            ).thresholds(thresholds((None, "green"), (900, "orange"), (1800, "red"))),
        ),
    )


def ranking_quality_row() -> Section:
    arm = f'{JOB}, k="$k", window="$window", relevance="$relevance", arm="$arm"'
    delta = f"{NDCG}:delta_vs_control{{{WIN}}}"
    return Section(
        "Ranking quality",
        (
            ci_dashed(
                timeseries_panel(
                    "NDCG@$k by segment, 95 % CI dashed ($window window, $relevance)",
                    query(f"{NDCG}:mean{{{WIN}}}", "{{ranker}}/{{arm}}"),
                    query(f"{NDCG}:ci95_low{{{WIN}}}", "{{ranker}}/{{arm}} ci95 low"),
                    query(f"{NDCG}:ci95_high{{{WIN}}}", "{{ranker}}/{{arm}} ci95 high"),
                    width=16,
                    height=9,
                    description="Mean NDCG@k over the window as of the evaluation horizon, "
                    "pooled exactly over instances; dashed: mean ± 1.96·stderr.",
                ).decimals(3)
            ),
            ci_dashed(
                timeseries_panel(
                    "Δ NDCG@$k vs control, 95 % CI",
                    query(delta, "{{ranker}}/{{arm}}"),
                    query(
                        f"{delta} - {NDCG}:delta_vs_control_ci95{{{WIN}}}",
                        "{{ranker}}/{{arm}} ci95 low",
                    ),
                    query(
                        f"{delta} + {NDCG}:delta_vs_control_ci95{{{WIN}}}",
                        "{{ranker}}/{{arm}} ci95 high",
                    ),
                    width=8,
                    height=9,
                    description="Non-control segment minus the pooled control arm. The alert "
                    "fires when the whole band is below 0 and below -0.01 for 5 minutes.",
                )
                .decimals(3)
                .thresholds(thresholds((None, "red"), (-0.01, "transparent")))
                .thresholds_style(
                    common_builders.GraphThresholdsStyleConfig().mode(
                        common.GraphThresholdsStyleMode.LINE
                    )
                )
            ),
            timeseries_panel(
                "NDCG@$k over the last hour of processing, from the cumulative counters",
                query(
                    f'{NDCG}:mean_rate1h{{k="$k", relevance="$relevance", {SEG}}}',
                    "{{ranker}}/{{arm}}",
                ),
                width=24,
                height=7,
                description="rate(ndcg_sum_total) / rate(lists_scored_total) over 1h: "
                "processing time, not event time, but cheap over weeks and unaffected by "
                "restarts. Use it for long ranges; the windows above for the live read-out.",
            ).decimals(3),
            ci_band(
                timeseries_panel(
                    "NDCG@$k, arm $arm, 95 % CI band",
                    query(f"arm:streameval_ndcg:mean{{{arm}}}", "mean"),
                    query(
                        f"arm:streameval_ndcg:mean{{{arm}}} - 1.96 * "
                        f"arm:streameval_ndcg:stderr{{{arm}}}",
                        "ci95 low",
                    ),
                    query(
                        f"arm:streameval_ndcg:mean{{{arm}}} + 1.96 * "
                        f"arm:streameval_ndcg:stderr{{{arm}}}",
                        "ci95 high",
                    ),
                    width=12,
                )
                .decimals(3)
                .repeat("arm")
                .repeat_direction("h")
                .max_per_row(4)
            ),
        ),
    )


def judged_vs_implicit_row() -> Section:
    return Section(
        "Judged vs implicit",
        (
            timeseries_panel(
                "NDCG@$k, judged and implicit ($window)",
                query(
                    f'{NDCG}:mean{{k="$k", window="$window", {SEG}}}',
                    "{{relevance}} {{ranker}}/{{arm}}",
                ),
                width=10,
                description="Implicit grades come from clicks, judged ones from explicit "
                "judgments; a change in only one of them points at the signal, not the ranker.",
            ).decimals(3),
            timeseries_panel(
                "Judged coverage@$k",
                query(
                    f'segment:streameval_judged_coverage:mean{{k="$k", window="$window", '
                    f'relevance="judged", {SEG}}}',
                    "{{ranker}}/{{arm}}",
                ),
                width=7,
                unit="percentunit",
                description="Share of the top-k docs that have a judgment; unjudged docs "
                "count 0, so judged NDCG is a lower bound when coverage is low.",
            )
            .min(0)
            .max(1),
            timeseries_panel(
                "Lists in the $window window",
                query(f"segment:streameval_window_lists:sum{{{WIN}}}", "{{ranker}}/{{arm}}"),
                width=7,
                description="The n behind every mean and CI above; alerts need 200 per side.",
            ),
        ),
    )


def engagement_row() -> Section:
    by_window = f'window="$window", {SEG}'
    return Section(
        "Engagement",
        (
            timeseries_panel(
                "Click-through rate ($window)",
                query(
                    f"segment:streameval_click_through_rate:ratio{{{by_window}}}",
                    "{{ranker}}/{{arm}}",
                ),
                width=8,
                unit="percentunit",
            ),
            timeseries_panel(
                "MRR of the first click ($window)",
                query(f"segment:streameval_mrr:mean{{{by_window}}}", "{{ranker}}/{{arm}}"),
                width=8,
            ).decimals(3),
            timeseries_panel(
                "Zero-click rate ($window)",
                query(
                    f"segment:streameval_zero_click_rate:ratio{{{by_window}}}",
                    "{{ranker}}/{{arm}}",
                ),
                width=8,
                unit="percentunit",
            ),
        ),
    )


def throughput_and_intake_row() -> Section:
    def rate(metric: str, by: str = "") -> str:
        grouping = f"sum by ({by}) " if by else "sum"
        return f"{grouping}(rate({metric}{{{JOB}}}[{RATE}]))"

    return Section(
        "Throughput and intake",
        (
            timeseries_panel(
                "Lists scored per second",
                query(
                    f'segment:streameval_lists_scored:rate5m{{k="$k", {SEG}}}',
                    "{{relevance}} {{ranker}}/{{arm}}",
                ),
                width=8,
                unit="none",
            ),
            timeseries_panel(
                "Intake outcomes (records/s, stacked)",
                query(rate("streameval_events_total", "type"), "accepted {{type}}"),
                query(rate("streameval_invalid_events_total", "reason"), "invalid {{reason}}"),
                query(rate("streameval_duplicate_events_total", "type"), "duplicate {{type}}"),
                query(rate("streameval_late_events_total", "type"), "late {{type}}"),
                query(rate("streameval_unmatched_clicks_total"), "unmatched click"),
                query(rate("streameval_records_read_total"), "records read"),
                width=10,
                unit="none",
                stacked=True,
                description="Every record read lands in exactly one outcome, so the stack "
                "meets the dashed records-read line.",
            ).override_by_name(
                "records read",
                [
                    prop(
                        "custom.stacking",
                        common_builders.StackingConfig()
                        .mode(common.StackingMode.NONE)
                        .group("A")
                        .build(),
                    ),
                    prop("custom.fillOpacity", 0),
                    prop("custom.lineStyle", DASHED),
                    prop(
                        "color",
                        dashboard_builders.FieldColor()
                        .mode(model.FieldColorModeId.FIXED)
                        .fixed_color("text")
                        .build(),
                    ),
                ],
            ),
            timeseries_panel(
                "Finalized lists by outcome",
                query(
                    rate("streameval_lists_total", "relevance, outcome"),
                    "{{relevance}} {{outcome}}",
                ),
                width=6,
                unit="none",
                stacked=True,
            ),
            timeseries_panel(
                "Late and unmatched events",
                query(rate("streameval_late_events_total", "type"), "late {{type}}"),
                query(rate("streameval_unmatched_clicks_total"), "unmatched clicks"),
                query(rate("streameval_duplicate_events_total", "type"), "duplicate {{type}}"),
                width=12,
                unit="none",
                description="Late: arrived behind the watermark. Unmatched: a click for an "
                "unknown list. A rise of either usually means a producer's clock or keys.",
            ),
            timeseries_panel(
                "Invalid records by reason",
                query(rate("streameval_invalid_events_total", "reason"), "{{reason}}"),
                query(f"job:streameval_invalid_events:ratio_rate5m{{{JOB}}}", "share {{job}}"),
                query(rate("streameval_dead_letters_failed_total"), "dead letters not written"),
                width=12,
                unit="none",
                description="Invalid records go to the dead-letter topic with the reason in a "
                "header. 'dead letters not written': ones the topic refused or did not take in "
                "time (each named in the daemon's log; alert StreamevalDeadLettersFailing).",
            ).override_by_regexp(
                "share.*",
                [prop("unit", "percentunit"), prop("custom.axisPlacement", "right")],
            ),
        ),
    )


def event_time_and_lag_row() -> Section:
    return Section(
        "Event time and lag",
        (
            timeseries_panel(
                "Watermark and horizon lag behind the wall clock",
                query(
                    f"time() - streameval_watermark_timestamp_seconds{{{JOB}}}",
                    "watermark {{instance}}",
                ),
                query(
                    f"time() - streameval_evaluation_horizon_timestamp_seconds{{{JOB}}}",
                    "horizon {{instance}}",
                ),
                width=8,
                unit="s",
                description="Horizon = watermark - attribution window: the windows are "
                "reported as of the horizon, where all their lists are final.",
            ),
            timeseries_panel(
                "Consumer lag per topic",
                query(f"topic:streameval_consumer_lag:sum{{{JOB}}}", "{{topic}}"),
                width=8,
                unit="none",
            ),
            timeseries_panel(
                "Consumer lag per partition",
                query(f"streameval_consumer_lag{{{JOB}}}", "{{topic}}/{{partition}} {{instance}}"),
                width=8,
                unit="none",
            ),
            timeseries_panel(
                "Open lists and judgments held",
                query(
                    f"sum by (instance) (streameval_open_lists{{{JOB}}})",
                    "open lists {{instance}}",
                ),
                query(
                    f"sum by (instance) (streameval_judgments{{{JOB}}})", "judgments {{instance}}"
                ),
                width=16,
                unit="none",
            ),
            stat_panel(
                "Build",
                query(f"streameval_build_info{{{JOB}}}", "{{version}} {{instance}}"),
                width=8,
                unit="none",
            )
            .color_mode(common.BigValueColorMode.NONE)
            .graph_mode(common.BigValueGraphMode.NONE)
            .text_mode(common.BigValueTextMode.NAME),
        ),
    )


def regression_detection_row() -> Section:
    """DESIGN §9: what pages. Each detector series' CUSUM statistic against its threshold, the
    estimated shift of NDCG@k with its 95 % band, and which series are in alarm."""
    # every watched k (detection.ks, default 10), whatever the dashboard's $k says
    series = "detector, k, relevance, ranker, arm"
    watched = SEG
    return Section(
        "Regression detection",
        (
            ci_dashed(
                timeseries_panel(
                    "Detector statistic vs threshold",
                    query(
                        f"max by ({series}) (streameval_regression_statistic{{{watched}}})",
                        "{{detector}} {{relevance}}@{{k}} {{ranker}}/{{arm}}",
                    ),
                    query(
                        f"max by (detector) (streameval_regression_threshold{{{JOB}}})",
                        "ci95 threshold {{detector}}",
                    ),
                    width=9,
                    description="A one-sided CUSUM per series (docs/detection.md): "
                    "it pages when the statistic reaches the dashed threshold, which gives one "
                    "false alarm per 30 days per series on average.",
                )
            ),
            ci_dashed(
                timeseries_panel(
                    "Estimated shift of the watched NDCG@k, 95 % band",
                    query(
                        f"max by ({series}) (streameval_regression_shift{{{watched}}})",
                        "{{detector}} {{relevance}}@{{k}} {{ranker}}/{{arm}}",
                    ),
                    query(
                        f"max by ({series}) (streameval_regression_shift{{{watched}}}) - 1.96 * "
                        f"max by ({series}) (streameval_regression_shift_stderr{{{watched}}})",
                        "ci95 low {{detector}} {{relevance}}@{{k}} {{ranker}}/{{arm}}",
                    ),
                    query(
                        f"max by ({series}) (streameval_regression_shift{{{watched}}}) + 1.96 * "
                        f"max by ({series}) (streameval_regression_shift_stderr{{{watched}}})",
                        "ci95 high {{detector}} {{relevance}}@{{k}} {{ranker}}/{{arm}}",
                    ),
                    width=9,
                    description="The drop the detector estimates (negative: worse than its "
                    "reference), with mean ± 1.96 standard errors.",
                ).decimals(4)
            ),
            stat_panel(
                "Series in alarm",
                query(
                    f"max by ({series}) (streameval_regression_alarm{{{SEG}}})",
                    "{{detector}} {{relevance}}@{{k}} {{ranker}}/{{arm}}",
                ),
                width=6,
                unit="none",
            ).thresholds(thresholds((None, "green"), (1, "red"))),
        ),
    )


def interleaving_row() -> Section:
    """DESIGN §10: team-draft interleaving, per ordered pair of rankers."""
    pair = f'{JOB}, window="$window"'
    return Section(
        "Interleaving",
        (
            ci_dashed(
                timeseries_panel(
                    "Interleaving preference ($window), 95 % band",
                    query(
                        f"pair:streameval_interleaving_preference:mean{{{pair}}}",
                        "{{ranker}} vs {{opponent}}",
                    ),
                    query(
                        f"pair:streameval_interleaving_preference:ci95_low{{{pair}}}",
                        "ci95 low {{ranker}} vs {{opponent}}",
                    ),
                    query(
                        f"pair:streameval_interleaving_preference:ci95_high{{{pair}}}",
                        "ci95 high {{ranker}} vs {{opponent}}",
                    ),
                    width=12,
                    description="(wins - losses) / lists in [-1, 1]: below 0 the ranker's "
                    "results get less credit than its opponent's on the same pages.",
                )
                .min(-1)
                .max(1)
                .decimals(3)
            ),
            timeseries_panel(
                "Interleaving outcomes per second",
                query(
                    "sum by (ranker, opponent, outcome) "
                    f"(rate(streameval_interleaving_outcomes_total{{{JOB}}}[5m]))",
                    "{{ranker}} vs {{opponent}}: {{outcome}}",
                ),
                width=12,
                unit="none",
                stacked=True,
            ),
        ),
    )


def sample_ratio_row() -> Section:
    """DESIGN §12: the A/B's split of lists between its arms against the expected one, and the
    always-valid sample-ratio test's statistic against its threshold (docs/srm.md)."""
    return Section(
        "Sample-ratio mismatch",
        (
            ci_dashed(
                timeseries_panel(
                    "Observed vs expected share of lists per arm",
                    query(
                        f"max by (arm) (streameval_srm_observed_share{{{JOB}}})",
                        "{{arm}} observed",
                    ),
                    query(
                        f"max by (arm) (streameval_srm_expected_share{{{JOB}}})",
                        "ci95 expected {{arm}}",
                    ),
                    width=9,
                    unit="percentunit",
                    description="Each arm's share of the lists since the test began (solid) "
                    "and the share it should have (dashed, srm.expected or equal shares).",
                ).decimals(4)
            ),
            ci_dashed(
                timeseries_panel(
                    "Sample-ratio statistic vs threshold",
                    query(f"max(streameval_srm_statistic{{{JOB}}})", "log Bayes factor"),
                    query(f"max(streameval_srm_threshold{{{JOB}}})", "ci95 threshold"),
                    width=9,
                    description="The Dirichlet-multinomial Bayes factor of the lists per arm "
                    "against the expected split (Lindon & Malek 2022): it warns when it reaches "
                    "the dashed log(1/alpha); false alarm at most alpha over the whole run.",
                )
            ),
            stat_panel(
                "Sample-ratio mismatch",
                query(f"max(streameval_srm_alarm{{{JOB}}})", "SRM alarm"),
                width=6,
                unit="none",
                description="1 while the split is off: every comparison of the arms, "
                "vs_control's included, rests on a broken split.",
            ).thresholds(thresholds((None, "green"), (1, "orange"))),
        ),
    )


def judges_row() -> Section:
    """DESIGN §12: judged NDCG per judge family, the agreement between families, freshness of
    the judgments and judged coverage of head and tail queries (docs/judges.md)."""
    fam = f'{JOB}, k="$k", window="$window", relevance=~"judged.*", {SEG}'
    return Section(
        "Judges",
        (
            timeseries_panel(
                "Judge agreement (Krippendorff's alpha, interval)",
                query(
                    f'max without (instance) (streameval_judge_agreement{{{JOB}, window!="all"}})',
                    "{{family}} vs {{other}} ({{window}})",
                ),
                query(f"max by (job) (streameval_judge_agreement_floor{{{JOB}}})", "floor"),
                width=8,
                unit="none",
                description="Agreement of two judge families over the (query, doc) pairs both "
                "graded within the window of judgment time: 1 perfect, 0 chance. Below the "
                "floor with enough pairs, StreamevalJudgeAgreementLow fires.",
            )
            .decimals(3)
            .max(1),
            timeseries_panel(
                "Judged NDCG@$k per judge family ($window)",
                query(
                    f"sum by (relevance) (streameval_window_ndcg_sum{{{fam}}}) "
                    f"/ sum by (relevance) (streameval_window_lists{{{fam}}})",
                    "{{relevance}}",
                ),
                width=8,
                description="relevance=judged is every judge's mean grade; judged:<family> "
                "each family's own (present once two families have graded).",
            ).decimals(3),
            timeseries_panel(
                "Stale judgments and head/tail coverage@$k ($window)",
                query(
                    f'sum(streameval_judgment_stale_docs{{{JOB}, window="$window"}}) '
                    f'/ sum(streameval_judgment_judged_docs{{{JOB}, window="$window"}})',
                    "stale share",
                ),
                query(
                    "sum by (query_class) (streameval_judged_coverage_by_query_class"
                    f'{{{JOB}, k="$k", window="$window"}} * on (instance, query_class) '
                    f'streameval_query_class_lists{{{JOB}, k="$k", window="$window"}}) '
                    "/ sum by (query_class) (streameval_query_class_lists"
                    f'{{{JOB}, k="$k", window="$window"}})',
                    "judged coverage, {{query_class}} queries",
                ),
                width=8,
                unit="percentunit",
                description="Stale: judged docs in the top k whose newest grade is older than "
                "judges.max_age. Head: the judges.head_queries most frequent queries.",
            )
            .min(0)
            .max(1),
        ),
    )


def position_bias_row() -> Section:
    """DESIGN §12: the examination propensity per position ([propensity] enabled; the
    implicit_debiased figures are in every NDCG panel as a relevance source)."""
    return Section(
        "Position bias",
        (
            timeseries_panel(
                "Examination propensity by position, 95 % band",
                query(
                    f"avg by (position) (streameval_examination_propensity{{{JOB}}})",
                    "position {{position}}",
                ),
                query(
                    f"avg by (position) (streameval_examination_propensity{{{JOB}}}) - 1.96 * "
                    f"avg by (position) (streameval_examination_propensity_stderr{{{JOB}}})",
                    "ci95 low {{position}}",
                ),
                query(
                    f"avg by (position) (streameval_examination_propensity{{{JOB}}}) + 1.96 * "
                    f"avg by (position) (streameval_examination_propensity_stderr{{{JOB}}})",
                    "ci95 high {{position}}",
                ),
                width=12,
                unit="percentunit",
                description="How often a result at each position is examined, relative to "
                "position 1, estimated from the same (query, doc) shown at different positions "
                "(intervention harvesting). implicit_debiased divides each click's grade by it "
                "(clipped at propensity.clip). Averaged over instances: each estimates from "
                "its own partitions.",
            )
            .min(0)
            .decimals(3),
            timeseries_panel(
                "Clicks harvested per position",
                query(
                    f"sum by (position) (streameval_propensity_harvested_clicks{{{JOB}}})",
                    "position {{position}}",
                ),
                width=6,
                description="The evidence behind each position's estimate: clicks on (query, "
                "doc) pairs also shown at other positions. Below propensity.min_clicks at a "
                "position, implicit_debiased scores no list.",
            ),
            timeseries_panel(
                "Estimator table",
                query(f"sum(streameval_propensity_entries{{{JOB}}})", "(query, doc) entries"),
                query(
                    f"sum(rate(streameval_propensity_dropped_total{{{JOB}}}[{RATE}]))",
                    "results not recorded /s (table full)",
                ),
                width=6,
            ),
        ),
    )


#: The dashboard, top to bottom.
ROWS: tuple[Callable[[], Section], ...] = (
    now_row,
    ranking_quality_row,
    regression_detection_row,
    sample_ratio_row,
    interleaving_row,
    judges_row,
    judged_vs_implicit_row,
    position_bias_row,
    engagement_row,
    throughput_and_intake_row,
    event_time_and_lag_row,
)


# --- the dashboard -----------------------------------------------------------------------------


NUMERIC = model.VariableSort.NUMERICAL_ASC
ALPHABETIC = model.VariableSort.ALPHABETICAL_ASC


def datasource_variable() -> dashboard_builders.DatasourceVariable:
    """The Prometheus to read: any datasource of type prometheus, defaulting to the one the UI
    import's `__inputs` asks for (see DATASOURCE)."""
    placeholder = "${" + DATASOURCE_INPUT + "}"
    return (
        dashboard_builders.DatasourceVariable(DATASOURCE_VARIABLE)
        .label("Data source")
        .type("prometheus")
        .current(model.VariableOption(selected=True, text=placeholder, value=placeholder))
        .regex("")
        .multi(False)
        .include_all(False)
        .hide(model.VariableHide.DONT_HIDE)
    )


def deployment_variable(name: str, selector: str, *, include_all: bool) -> Any:
    """`namespace` or `job`: which deployment's series, read from streameval_build_info (every
    instance exports it from its start). `namespace` is "All" by default and matches series
    without the label too (docker-compose has none); `job` is one job, the first by default."""
    current = (
        model.VariableOption(selected=True, text=["All"], value=["$__all"])
        if include_all
        else model.VariableOption(selected=False, text="", value="")
    )
    built = (
        dashboard_builders.QueryVariable(name)
        .label(name)
        .datasource(DATASOURCE)
        .query({"query": f"label_values(streameval_build_info{selector}, {name})", "refId": name})
        .refresh(model.VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(ALPHABETIC)
        .multi(include_all)
        .include_all(include_all)
        .current(current)
        .options([])
        .hide(model.VariableHide.DONT_HIDE)
    )
    return built.all_value(".*") if include_all else built


def dashboard(rows: Sequence[Callable[[], Section]] = ROWS) -> dashboard_builders.Dashboard:
    board = (
        dashboard_builders.Dashboard("streameval: live search quality")
        .uid(DASHBOARD_UID)
        .description("Live NDCG@k per experiment arm from the search event stream (streameval).")
        .tags(["streameval", "search", "ndcg"])
        .timezone("browser")
        .readonly()
        .tooltip(model.DashboardCursorSync.CROSSHAIR)
        .refresh("30s")
        .time("now-3h", "now")
        .version(1)
        .links([])
        .annotations([])
        .variables(
            [
                datasource_variable(),
                deployment_variable("namespace", "", include_all=True),
                deployment_variable("job", '{namespace=~"$namespace"}', include_all=False),
                variable("k", default="10", multi=False, sort=NUMERIC),
                variable("window", default="5m", multi=False, sort=ALPHABETIC),
                variable("relevance", default="implicit", multi=False, sort=ALPHABETIC),
                variable("ranker", default="", multi=True, sort=ALPHABETIC),
                variable("arm", default="", multi=True, sort=ALPHABETIC),
            ]
        )
    )
    panel_id = 0
    for row in rows:
        section = row()
        panel_id += 1
        board.with_row(dashboard_builders.Row(section.title).id(panel_id))
        for panel in section.panels:
            panel_id += 1
            board.with_panel(panel.id(panel_id))
    return board


def import_header() -> dict[str, Any]:
    """`__inputs` and `__requires`, as Grafana's "Export for sharing externally" writes them:
    the UI import asks for the datasource of each input and replaces its placeholder. Not part
    of the dashboard schema (the SDK has no model for them): added to the built JSON."""
    return {
        "__inputs": [
            {
                "name": DATASOURCE_INPUT,
                "label": "Prometheus",
                "description": "The Prometheus that scrapes streameval and evaluates its "
                "recording rules (deploy/prometheus/rules, or the Helm chart's PrometheusRule)",
                "type": "datasource",
                "pluginId": "prometheus",
                "pluginName": "Prometheus",
            }
        ],
        "__requires": [
            {"type": "grafana", "id": "grafana", "name": "Grafana", "version": GRAFANA_VERSION},
            {"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"},
            {"type": "panel", "id": "stat", "name": "Stat", "version": ""},
            {"type": "panel", "id": "timeseries", "name": "Time series", "version": ""},
        ],
    }


def render() -> str:
    built = json.loads(json.dumps(dashboard().build(), cls=JSONEncoder))
    return json.dumps(import_header() | built, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
