"""How long after a ranking regression the shipped alert rules fire, and that they stay quiet
without one: the simulator through the pipeline in event time, the shipped rules evaluated by
promtool. With ``--sequential``: the same for the daemon's sequential detectors (DESIGN §9).

    .venv/bin/python benchmarks/detection.py --sequential [--queries 5000] [--runs 20]
        [--days 7] [--samples 16] [--amplitude 0.6] [--warmup 2h] [--observe 40m]
        [--worse-noise 1.45] [--json FILE]

``--sequential`` simulates at the level of scored lists (``benchmarks/_detect_sim.py``: pages
served, degraded, clicked and scored by the real simulator and pipeline, then drawn per 10 s
bucket from the simulator's mix with its daily cycle and fed to the real detectors), because days
of traffic through the full pipeline would take hours here. It prints the median delay from the
drop to the alarm over ``--runs`` seeded runs (A/B for ``vs_control``, single ranker for
``vs_baseline``; the drop at a random phase of the daily cycle), and the false alarms of every
watched series over ``--days`` of A/A and of single-ranker traffic beside Lorden's bound.

    .venv/bin/python benchmarks/detection.py [--rate 50] [--size 0.03] [--before 30m]
        [--after 2h] [--null 2h] [--seed 7] [--json FILE]

Two runs of the same seeded traffic (an A/B test of two equally good rankers): one where the
treatment regresses ``--before`` after the start (its expected judged NDCG@k drops by ``--size``,
relative), one without a regression. Each is driven through :class:`~streameval.runtime.demo.Demo`
(the pipeline) with one tick per scrape interval (15 s of event time); at every tick the snapshot is
formatted exactly as /metrics formats it (``format_snapshot``) and the window statistics
(``streameval_window_lists``, ``streameval_window_ndcg_sum``,
``streameval_window_ndcg_sum_squares``) become a promtool rule-test input series, sample i at
i·15 s (a series that disappears gets a staleness marker, as a real scrape would write).
promtool then evaluates deploy/prometheus/rules/*.yml every 15 s — the real recording rules and
the real alert expressions and ``for:`` — and the test asks for
``ALERTS{alertname=~"StreamevalNdcgBelow.*"}`` at every step (one expected-empty query per step:
promtool prints what it got, which is the pending/firing state of every alert).

Reported per alert and label set that fired after the regression: when the condition of that
episode first held ("true after") and when the alert fired ("fires after": the condition held for
``for:``), in event time after the regression; when that episode ended ("until", "end" = still
firing when the run ended) and the share of the evaluations from its first firing to the end at
which it was firing. And for the quiet parts (the run without regression, and the regressed run
before the regression): alerts that fired (false alarms) and pending blips (condition true for
less than ``for:``).
Event time stands for wall time here: a daemon keeping up with its input has its event time a few
seconds behind the wall clock, and ``for:`` counts wall time.

What bounds detection: the windows are reported as of the evaluation horizon, which trails the
newest event by the attribution window plus the allowed lateness (5m10s by default), so no
window holds a post-regression list before then; the 5m window is wholly post-regression 5 min
later; the alert then needs ``for: 5m``. Rule groups run in a fixed order (recording groups
first); a live Prometheus may run the alert group before the recording groups of the same
evaluation, adding up to one evaluation interval (15 s).

``StreamevalNdcgBelowBaseline`` needs 6 h of history before it can fire (``offset 6h`` guard) and
a drop beyond 5 % of its baseline; pass ``--before 6h30m`` (slow: ~8 h of traffic per run) to
judge it, with ``--size`` above 0.05.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from streameval import __version__
from streameval.config import Settings, load_settings
from streameval.durations import format_duration, parse_duration
from streameval.export import names
from streameval.export.collector import format_snapshot
from streameval.runtime.demo import Demo, DemoTick
from streameval.sim import SimConfig

ROOT = Path(__file__).resolve().parents[1]
RULE_FILES = (
    ROOT / "deploy" / "prometheus" / "rules" / "recording.yml",
    ROOT / "deploy" / "prometheus" / "rules" / "alerts.yml",
)
ALERTS = ("StreamevalNdcgBelowControl", "StreamevalNdcgBelowBaseline")
#: the exported series the NDCG rules are built from (everything else is left out: faster)
INPUTS = frozenset({names.WINDOW_LISTS, names.WINDOW_NDCG_SUM, names.WINDOW_NDCG_SUM_SQUARES})
JOB = "streameval"
INSTANCE = "sim:9724"
START_MS = 1_700_000_000_000  # on a bucket boundary
SCRAPE_MS = 15_000  # deploy/prometheus/prometheus.yml: scrape_interval = evaluation_interval

Labels = tuple[tuple[str, str], ...]  # sorted (name, value) pairs, __name__ included


class DetectionError(RuntimeError):
    """promtool failed in a way that is not the expected-empty ALERTS queries."""


# --- traffic -> the series a scrape would see -------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scrapes:
    """Exported samples at every scrape: ``steps[i]`` is the scrape at ``i * scrape_ms`` of event
    time after the start (step 0: before any record, nothing exported)."""

    scrape_ms: int
    steps: tuple[Mapping[Labels, float], ...]


def scrape(
    settings: Settings,
    sim: SimConfig,
    duration_ms: int,
    *,
    scrape_ms: int = SCRAPE_MS,
    metrics: frozenset[str] = INPUTS,
) -> Scrapes:
    """Drive ``sim`` through the pipeline for ``duration_ms`` of event time, one tick per scrape,
    and keep the samples of ``metrics`` that /metrics would serve at each tick."""
    demo = Demo(settings, sim, start_ms=START_MS, tick_ms=scrape_ms)
    end = START_MS + duration_ms
    steps: list[Mapping[Labels, float]] = [{}]
    extra = (("instance", INSTANCE), ("job", JOB))

    def on_tick(tick: DemoTick) -> None:
        samples: dict[Labels, float] = {}
        for family in format_snapshot(tick.snapshot, version=__version__):
            for sample in family.samples:
                if sample.name in metrics:
                    pairs = (("__name__", sample.name), *sample.labels.items(), *extra)
                    samples[tuple(sorted(pairs))] = float(sample.value)
        steps.append(samples)

    demo.run(lambda event_ms: event_ms < end, on_tick=on_tick)
    return Scrapes(scrape_ms, tuple(steps))


def series_selector(labels: Labels) -> str:
    pairs = dict(labels)
    name = pairs.pop("__name__")
    inner = ", ".join(f'{k}="{_escape(v)}"' for k, v in sorted(pairs.items()))
    return f"{name}{{{inner}}}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def series_values(scrapes: Scrapes, labels: Labels) -> str:
    """promtool's values notation: one token per step, ``_`` for no sample, ``stale`` for the
    first scrape that misses a series it had (Prometheus writes a staleness marker then)."""
    tokens: list[str] = []
    present = False
    for step in scrapes.steps:
        value = step.get(labels)
        if value is not None:
            tokens.append(repr(value))
        else:
            tokens.append("stale" if present else "_")
        present = value is not None
    return " ".join(tokens)


# --- the rule test ----------------------------------------------------------------------------


def group_order(rule_files: Sequence[Path] = RULE_FILES) -> list[str]:
    """Group names, recording-only groups first (the order a live Prometheus converges to)."""
    groups = [g for path in rule_files for g in yaml.safe_load(path.read_text())["groups"]]
    recording = [g["name"] for g in groups if all("record" in r for r in g["rules"])]
    return recording + [g["name"] for g in groups if g["name"] not in recording]


def alerts_query(alerts: Sequence[str] = ALERTS) -> str:
    return f'ALERTS{{alertname=~"{"|".join(alerts)}"}}'


def rule_test(scrapes: Scrapes, rule_files: Sequence[Path] = RULE_FILES) -> dict[str, object]:
    """A promtool rule-test file: the scrapes as input series, the ALERTS query at every step."""
    interval = f"{scrapes.scrape_ms // 1000}s"
    if scrapes.scrape_ms % 1000:
        raise ValueError(f"scrape interval must be whole seconds, got {scrapes.scrape_ms} ms")
    keys = sorted({key for step in scrapes.steps for key in step})
    seconds = scrapes.scrape_ms // 1000
    return {
        "rule_files": [str(path) for path in rule_files],
        "evaluation_interval": interval,
        "group_eval_order": group_order(rule_files),
        "tests": [
            {
                "name": "detection",
                "interval": interval,
                "input_series": [
                    {"series": series_selector(key), "values": series_values(scrapes, key)}
                    for key in keys
                ],
                "promql_expr_test": [
                    {"expr": alerts_query(), "eval_time": f"{i * seconds}s", "exp_samples": []}
                    for i in range(len(scrapes.steps))
                ],
            }
        ],
    }


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        raise DetectionError("promtool not found (scripts/install-test-deps installs it)")
    return path


#: ALERTS state at each evaluation (seconds after the start) by label set (alertname included,
#: __name__ and alertstate not): "pending" or "firing"
Timeline = dict[int, dict[Labels, str]]


def evaluate(
    scrapes: Scrapes, *, rule_files: Sequence[Path] = RULE_FILES, timeout_s: float = 600.0
) -> Timeline:
    """Run promtool over the scrapes with the rules (default: this checkout's); the ALERTS
    timeline."""
    with tempfile.TemporaryDirectory(prefix="streameval-detection-") as tmp:
        path = Path(tmp) / "detection_test.yml"
        path.write_text(
            yaml.safe_dump(rule_test(scrapes, rule_files), sort_keys=False, width=1 << 30)
        )
        result = subprocess.run(
            [promtool(), "test", "rules", str(path)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    return parse_failures(result.returncode, result.stdout + result.stderr)


_DURATION = re.compile(r"(\d+)(ms|y|w|d|h|m|s)")
_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
_HEADER = re.compile(r'^\s*expr: "(?P<expr>(?:\\.|[^"\\])*)", time: (?P<time>\w+),\s*$')
_GOT = re.compile(r"^\s*got: (?P<samples>.*)$")
_SAMPLE = re.compile(r"\{(?P<labels>(?:[^{}\"]|\"(?:\\.|[^\"\\])*\")*)\} (?P<value>\S+?)(?:,|$)")
_LABEL = re.compile(r'(\w+)="((?:\\.|[^"\\])*)"')


def parse_duration_s(text: str) -> int:
    """Seconds of a Prometheus duration as promtool prints it ("1h5m30s", "0s")."""
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise DetectionError(f"cannot read the duration {text!r}")
    return round(sum(int(n) * _UNIT_S[u] for n, u in parts))


def parse_failures(returncode: int, output: str) -> Timeline:
    """The ALERTS timeline out of promtool's report on the expected-empty queries.

    promtool passes (status 0) when no query returned anything: no alert was ever pending. Any
    failure that is not one of those queries (a rule that does not load, a bad input series) is
    a :class:`DetectionError`, with promtool's output.
    """
    timeline: Timeline = {}
    if returncode == 0:
        return timeline
    if "FAILED:" not in output:
        raise DetectionError(f"promtool failed before testing:\n{output}")
    wanted = alerts_query().replace('"', '\\"')
    when: int | None = None
    for line in output.splitlines():
        header = _HEADER.match(line)
        if header:
            if header["expr"] != wanted:
                raise DetectionError(f"unexpected failure: {line.strip()}\n{output}")
            when = parse_duration_s(header["time"])
            continue
        got = _GOT.match(line)
        if got and when is not None:
            states = timeline.setdefault(when, {})
            for sample in _SAMPLE.finditer(got["samples"]):
                pairs = dict(_LABEL.findall(sample["labels"]))
                state = pairs.pop("alertstate")
                pairs.pop("__name__", None)
                states[tuple(sorted(pairs.items()))] = state
            when = None
        elif line.strip().startswith("alertname:"):
            raise DetectionError(f"unexpected alert-rule failure: {line.strip()}\n{output}")
    if not timeline:
        raise DetectionError(f"promtool failed but reported no ALERTS:\n{output}")
    return timeline


# --- episodes and the detection summary -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Episode:
    """One uninterrupted stretch of an alert (pending, then maybe firing), in seconds after the
    start: ``start`` is the first evaluation where the condition held."""

    labels: Labels
    start_s: int
    firing_s: int | None
    end_s: int  # last evaluation where it was still pending or firing

    def label(self, name: str) -> str:
        return dict(self.labels).get(name, "")


def episodes(timeline: Timeline, step_s: int) -> list[Episode]:
    """Every alert episode, ordered by start; a gap of one evaluation ends an episode."""
    found: list[Episode] = []
    open_: dict[Labels, tuple[int, int | None, int]] = {}
    for when in sorted(timeline):
        for labels, state in timeline[when].items():
            start, firing, last = open_.get(labels, (when, None, when))
            if last < when - step_s:  # it stopped in between: a new episode
                found.append(Episode(labels, start, firing, last))
                start, firing = when, None
            if state == "firing" and firing is None:
                firing = when
            open_[labels] = (start, firing, when)
    found.extend(Episode(lb, s, f, e) for lb, (s, f, e) in open_.items())
    return sorted(found, key=lambda e: (e.start_s, e.labels))


@dataclass(frozen=True, slots=True)
class Detection:
    """A label set's first episode that fired after the regression, and how steadily it fired
    from then on (``firing_share``: share of the evaluations from its first firing to the end
    of the run at which it was firing; below 1 the alert resolved and fired again)."""

    episode: Episode
    regression_s: int
    firing_share: float

    @property
    def true_after_s(self) -> int:
        return self.episode.start_s - self.regression_s

    @property
    def fires_after_s(self) -> int:
        firing = self.episode.firing_s
        if firing is None:
            raise DetectionError("a detection is an episode that fired")
        return firing - self.regression_s

    @property
    def until_s(self) -> int:
        return self.episode.end_s - self.regression_s


def detections(
    found: Sequence[Episode], regression_s: int, *, end_s: int, step_s: int
) -> list[Detection]:
    """Per label set, the first episode firing at or after the regression, by firing time."""
    first: dict[Labels, Episode] = {}
    for ep in found:
        fired = ep.firing_s is not None and ep.firing_s >= regression_s
        if fired and ep.labels not in first:
            first[ep.labels] = ep
    out = []
    for labels, ep in first.items():
        since = ep.firing_s if ep.firing_s is not None else end_s
        firing = sum(
            (e.end_s - e.firing_s) // step_s + 1
            for e in found
            if e.labels == labels and e.firing_s is not None and e.firing_s >= since
        )
        out.append(Detection(ep, regression_s, firing / ((end_s - since) // step_s + 1)))
    return sorted(out, key=lambda d: (d.fires_after_s, d.episode.labels))


@dataclass(frozen=True, slots=True)
class Quiet:
    """What the alerts did while nothing was wrong: episodes that fired (false alarms) and
    episodes whose condition held for less than ``for:`` (pending blips, never fired)."""

    span_s: int
    fired: tuple[Episode, ...]
    blips: tuple[Episode, ...]

    @staticmethod
    def of(found: Iterable[Episode], span_s: int, *, inclusive: bool) -> Quiet:
        """The episodes that fired or began within the first ``span_s`` seconds (the evaluation
        at ``span_s`` itself included when ``inclusive``)."""

        def within(t: int) -> bool:
            return t <= span_s if inclusive else t < span_s

        found = list(found)
        fired = tuple(e for e in found if e.firing_s is not None and within(e.firing_s))
        blips = tuple(e for e in found if e.firing_s is None and within(e.start_s))
        return Quiet(span_s, fired, blips)

    def describe(self, what: str) -> list[str]:
        longest = max((e.end_s - e.start_s for e in self.blips), default=0)
        lines = [
            f"{what} ({_fmt(self.span_s)}): {len(self.fired)} alerts fired; "
            f"{len(self.blips)} pending blips (condition true < for:, longest "
            f"{_fmt(longest + SCRAPE_MS // 1000) if self.blips else '-'})"
        ]
        lines.extend(
            f"  FIRED {_describe_labels(e)} from {_fmt(e.start_s)}, firing {_fmt(e.firing_s)} "
            f"to {_fmt(e.end_s)}"
            for e in self.fired
        )
        return lines


def _describe_labels(ep: Episode) -> str:
    return (
        f"{ep.label('alertname').removeprefix('Streameval')} k={ep.label('k')} "
        f"{ep.label('window')} {ep.label('relevance')} {ep.label('ranker')}/{ep.label('arm')}"
    )


# --- the command ------------------------------------------------------------------------------


def _fmt(seconds: int | None) -> str:
    return "-" if seconds is None else format_duration(seconds * 1000)


def _after(seconds: int) -> str:
    """Signed time relative to the regression: "+5m", or "-30s" for an episode that began
    before it (noise) and only fired after."""
    return ("-" if seconds < 0 else "+") + format_duration(abs(seconds) * 1000)


def table(found: Sequence[Detection], end_s: int) -> str:
    rows = [
        (
            "alert",
            "k",
            "window",
            "relevance",
            "segment",
            "true after",
            "fires after",
            "until",
            "firing",
        )
    ]
    for d in found:
        ep = d.episode
        rows.append(
            (
                ep.label("alertname").removeprefix("Streameval"),
                ep.label("k"),
                ep.label("window"),
                ep.label("relevance"),
                f"{ep.label('ranker')}/{ep.label('arm')}",
                _after(d.true_after_s),
                _after(d.fires_after_s),
                "end" if ep.end_s >= end_s else _after(d.until_s),
                f"{d.firing_share:.0%}",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )


@dataclass(frozen=True, slots=True)
class Outcome:
    """Both runs, summarized."""

    regression_s: int
    end_s: int
    detections: tuple[Detection, ...]
    before: Quiet  # the regression run before the regression
    null: Quiet  # the run without regression, all of it

    def report(self) -> str:
        lines = [table(self.detections, self.end_s)] if self.detections else ["nothing fired"]
        if self.detections:
            first = self.detections[0]
            lines.append(
                f"first alert fires {_after(first.fires_after_s)} after the regression "
                f"({_describe_labels(first.episode)}; condition true from "
                f"{_after(first.true_after_s)})"
            )
        lines += self.before.describe("regression run, before the regression")
        lines += self.null.describe("run without regression")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, object]:
        def episode(e: Episode) -> dict[str, object]:
            return {
                "labels": dict(e.labels),
                "start_s": e.start_s,
                "firing_s": e.firing_s,
                "end_s": e.end_s,
            }

        return {
            "regression_s": self.regression_s,
            "end_s": self.end_s,
            "detections": [
                {
                    "labels": dict(d.episode.labels),
                    "true_after_s": d.true_after_s,
                    "fires_after_s": d.fires_after_s,
                    "until_s": d.until_s,
                    "firing_share": d.firing_share,
                }
                for d in self.detections
            ],
            "before": {
                "fired": [episode(e) for e in self.before.fired],
                "blips": len(self.before.blips),
            },
            "null": {
                "span_s": self.null.span_s,
                "fired": [episode(e) for e in self.null.fired],
                "blips": len(self.null.blips),
            },
        }


def measure(
    settings: Settings,
    sim: SimConfig,
    *,
    regression_at_ms: int,
    size: float,
    after_ms: int,
    null_ms: int,
    rule_files: Sequence[Path] = RULE_FILES,
    log: bool = False,
) -> Outcome:
    """Run ``sim`` with the treatment regressing by ``size`` at ``regression_at_ms`` (observed
    ``after_ms`` longer) and without a regression for ``null_ms``; evaluate the rules on both."""
    step_s = SCRAPE_MS // 1000
    regressed = replace(sim, regression_at_ms=regression_at_ms, regression_size=size)
    runs = {
        "regression": (regressed, regression_at_ms + after_ms),
        "none": (replace(sim, regression_at_ms=None), null_ms),
    }
    found: dict[str, list[Episode]] = {}
    for name, (config, duration_ms) in runs.items():
        began = time.perf_counter()
        scrapes = scrape(settings, config, duration_ms)
        simulated = time.perf_counter() - began
        found[name] = episodes(evaluate(scrapes, rule_files=rule_files), step_s)
        if log:
            print(
                f"{name}: {format_duration(duration_ms)} of event time, {len(scrapes.steps)} "
                f"scrapes of {len({k for s in scrapes.steps for k in s})} series; pipeline "
                f"{simulated:.0f} s, promtool {time.perf_counter() - began - simulated:.0f} s",
                file=sys.stderr,
            )
    regression_s = regression_at_ms // 1000
    return Outcome(
        regression_s=regression_s,
        end_s=(regression_at_ms + after_ms) // 1000,
        detections=tuple(
            detections(
                found["regression"],
                regression_s,
                end_s=(regression_at_ms + after_ms) // 1000,
                step_s=step_s,
            )
        ),
        before=Quiet.of(found["regression"], regression_s, inclusive=False),
        null=Quiet.of(found["none"], null_ms // 1000, inclusive=True),
    )


# --- the sequential detectors (DESIGN §9), list-level -------------------------------------------


def sequential(args: argparse.Namespace) -> dict[str, object]:
    """Detection delays (medians over ``--runs`` seeds) and false alarms over ``--days`` of A/A
    and of single-ranker traffic, both with the daily cycle; printed, and returned."""
    from _detect_sim import build_pools, median, simulate

    from streameval.detect import DetectionSpec

    settings = load_settings()
    spec = DetectionSpec.from_settings(settings)
    assert spec is not None
    sim = SimConfig(rate=args.rate, queries=args.queries, seed=args.seed)
    began = time.perf_counter()
    noise = sim.control.noise
    variants = ((noise, 0.0), (noise, args.size), (args.worse_noise, 0.0))
    pools = build_pools(sim, args.samples, variants)
    for name, pool in (("judged", pools.judged), ("implicit", pools.implicit)):
        served, degraded, worse = (float(np.nanmean(pool[v])) for v in range(3))
        print(
            f"pools: {name} NDCG@10 {served:.4f} as served, {degraded:.4f} degraded "
            f"({degraded / served - 1:+.2%}), {worse:.4f} with ranker noise {args.worse_noise:g} "
            f"({worse / served - 1:+.2%}); {args.samples} pages per query, {args.queries} queries"
        )
    print(f"pools built in {time.perf_counter() - began:.0f} s", file=sys.stderr)
    regression_ms = args.warmup
    out: dict[str, object] = {}
    worse = f"noisier ranker ({args.worse_noise:g})"
    cases = (
        ("vs_control judged", True, 1, ("vs_control", "judged", "ltr"), 6 * 60),
        ("vs_control implicit", True, 1, ("vs_control", "implicit", "ltr"), 11 * 60),
        ("vs_baseline judged, single ranker", False, 1, ("vs_baseline", "judged", "bm25"), 20 * 60),
        (
            "vs_baseline implicit, single ranker",
            False,
            1,
            ("vs_baseline", "implicit", "bm25"),
            None,
        ),
        (f"vs_control implicit, {worse}", True, 2, ("vs_control", "implicit", "ltr"), 11 * 60),
        (f"vs_control judged, {worse}", True, 2, ("vs_control", "judged", "ltr"), None),
    )
    delays: dict[str, list[float | None]] = {c[0]: [] for c in cases}
    quiet_before = 0
    began = time.perf_counter()
    for seed in range(args.runs):
        phase = random.Random(seed).random()
        for ab, variant in ((True, 1), (False, 1), (True, 2)):
            run = simulate(
                pools, rate=args.rate, duration_ms=regression_ms + args.observe, seed=seed,
                ab=ab, amplitude=args.amplitude, phase=phase, regression_at_ms=regression_ms,
                settings=settings, variant=variant,
            )  # fmt: skip
            quiet_before += sum(t < regression_ms for ts in run.alarms.values() for t in ts)
            for name, case_ab, case_variant, key, _ in cases:
                if (case_ab, case_variant) == (ab, variant):
                    t = run.first_after(key, regression_ms)
                    delays[name].append(None if t is None else (t - regression_ms) / 1000)
    print(f"delay runs in {time.perf_counter() - began:.0f} s", file=sys.stderr)
    print(
        f"\n{args.size:.0%} relative drop of judged NDCG@10 at {args.rate:g} queries/s, daily "
        f"cycle ±{args.amplitude:.0%} of the mix; median of {args.runs} seeded runs, event time "
        f"from the drop to the alarm becoming visible (bucket end + lateness, + attribution "
        f"window for implicit)"
    )
    rows = []
    for name, _, _, _, target in cases:
        got = median(delays[name])
        missed = sum(d is None for d in delays[name])
        shown = "never" if got is None else format_duration(round(got) * 1000)
        goal = "-" if target is None else f"<= {format_duration(target * 1000)}"
        met = "-" if target is None else ("yes" if got is not None and got <= target else "no")
        rows.append((name, shown, f"{missed}/{args.runs}", goal, met))
        out[name] = {"median_s": got, "missed": missed, "target_s": target, "runs": delays[name]}
    print(_table(("detector", "median delay", "missed", "target", "met?"), rows))
    print(f"alarms before the drop in those runs: {quiet_before}")
    if args.days > 0:
        out.update(_false_alarms(args, pools, settings))
    return out


def _false_alarms(args: argparse.Namespace, pools: Any, settings: Settings) -> dict[str, object]:
    """``--days`` of A/A and of single-ranker traffic (daily cycle on), every alarm counted."""
    from _detect_sim import simulate

    from streameval.detect import DetectionSpec

    spec = DetectionSpec.from_settings(settings)
    assert spec is not None
    out: dict[str, object] = {}
    h = spec.threshold
    days = args.days
    period_days = spec.false_alarm_every_ms / 86_400_000
    began = time.perf_counter()
    fa_rows = []
    for name, ab in (("A/A test", True), ("single ranker", False)):
        run = simulate(
            pools, rate=args.rate, duration_ms=days * 86_400_000, seed=1000 + ab,
            ab=ab, amplitude=args.amplitude, phase=0.0, regression_at_ms=None, settings=settings,
        )  # fmt: skip
        alarms = sum(len(ts) for ts in run.alarms.values())
        series = len(run.series)
        series_days = series * days
        bound = series_days / period_days
        fa_rows.append(
            (
                name,
                f"{days} d x {series} series",
                str(alarms),
                f"{alarms / series_days * 30:.3f}",
                f"<= 1 per {period_days:g} d (expected <= {bound:.2f} here)",
            )
        )
        out[f"false alarms {name}"] = {"days": days, "series": series, "alarms": alarms}
    print(f"false-alarm runs in {time.perf_counter() - began:.0f} s", file=sys.stderr)
    print(
        f"\nfalse alarms (no regression, daily cycle on): threshold h = {h:.2f} = "
        f"ln({period_days:g} d / 10 s buckets); Lorden (1971): average run length to a false "
        f"alarm >= e^h buckets = {period_days:g} days per series, for exact likelihood-ratio "
        f"increments"
    )
    print(_table(("traffic", "simulated", "alarms", "per series per 30 d", "guarantee"), fa_rows))
    return out


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="the sequential detectors instead of the alert rules (list-level simulation)",
    )
    parser.add_argument("--runs", type=int, default=20, help="seeded runs per delay (sequential)")
    parser.add_argument("--days", type=int, default=7, help="days of each false-alarm run")
    parser.add_argument("--samples", type=int, default=16, help="pages per query in the pools")
    parser.add_argument("--amplitude", type=float, default=0.6, help="daily swing of the mix")
    parser.add_argument(
        "--worse-noise",
        type=float,
        default=1.45,
        help="a second regression: the treatment's ranker noise (1.0 served); 1.45 drops "
        "implicit NDCG@10 by ~3 %%",
    )
    parser.add_argument("--warmup", type=parse_duration, default="2h", help="before the drop")
    parser.add_argument("--observe", type=parse_duration, default="40m", help="after the drop")
    parser.add_argument("--rate", type=float, default=50.0, help="queries (impressions) per s")
    parser.add_argument("--size", type=float, default=0.03, help="relative NDCG@k drop")
    parser.add_argument("--before", type=parse_duration, default="30m", help="before it")
    parser.add_argument("--after", type=parse_duration, default="2h", help="observed after it")
    parser.add_argument("--null", type=parse_duration, default="2h", help="run without it")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--queries", type=int, default=1000, help="distinct queries (Zipf)")
    parser.add_argument("--json", type=Path, default=None, help="also write results to FILE")
    args = parser.parse_args(argv)
    if args.sequential:
        result = sequential(args)
        if args.json is not None:
            args.json.write_text(json.dumps(result, indent=2) + "\n")
        return 0

    outcome = measure(
        load_settings(),
        SimConfig(rate=args.rate, queries=args.queries, seed=args.seed),
        regression_at_ms=args.before,
        size=args.size,
        after_ms=args.after,
        null_ms=args.null,
        log=True,
    )
    print(
        f"treatment NDCG@k -{args.size:.0%} at +{format_duration(args.before)}, "
        f"{args.rate:g} queries/s, seed {args.seed}; event time after the regression; scrape "
        f"and rule evaluation every {SCRAPE_MS // 1000} s; shipped rules via promtool"
    )
    print(outcome.report())
    if args.json is not None:
        payload = {"args": {k: str(v) for k, v in vars(args).items()}, **outcome.as_dict()}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
