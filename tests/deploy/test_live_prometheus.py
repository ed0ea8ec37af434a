"""A real Prometheus server scraping a live streameval, with this checkout's rules.

The source is :class:`~streameval.runtime.demo.Demo` (the simulator through the pipeline, in
process): ten event minutes unpaced, so the windows hold lists from the first scrape, then one event
minute per wall second while Prometheus scrapes every second. Once the dashboard's rate() queries
have data the driver stops; the last snapshot stays served, so after one more scrape and rule
evaluation the daemon's own figures and the recorded ones describe the same instant and must agree.

Checked against the running server (HTTP API): the target is up; every metric the daemon exposes
is queryable; every dashboard query returns data for every real value of the single-valued
template variables (the multi-valued ranker/arm at Grafana's "All"; the panel repeated per arm
at each real arm) except the consumer-lag ones (``KAFKA_ONLY``); the recorded NDCG mean and
standard error equal the daemon's ``streameval_ndcg`` / ``streameval_ndcg_stderr`` label for
label. And every metric name the rules and the dashboard select appears in the live /metrics.

Prometheus scrapes through a small recording proxy (:class:`Recorder`), which passes each scrape
through unchanged and notes what Prometheus asked for and what the daemon answered: Prometheus
must have negotiated OpenMetrics (DESIGN §5), gzip included, and its OpenMetrics parser must have
taken every scrape (the target is up, with no scrape error).
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as parse_openmetrics,
)
from prometheus_client.parser import text_string_to_metric_families

from streameval.config import load_settings
from streameval.export import names
from streameval.runtime.demo import Demo, wall_pacer
from streameval.sim import SimConfig
from tests.deploy.deployfiles import (
    DashboardQuery,
    dashboard,
    dashboard_queries,
    panels,
    prometheus_config,
    prometheus_or_skip,
    query_variables,
    referenced_metric_names,
    substitute,
    variables_used,
)

pytestmark = pytest.mark.prometheus

#: Exported by `streameval run` only: the demo reads no Kafka topic, so it has no consumer lag.
KAFKA_ONLY = frozenset({names.CONSUMER_LAG})
#: Dashboard panels that need consumer lag (KAFKA_ONLY): no data against the demo, by design.
KAFKA_ONLY_PANELS = frozenset({"Consumer lag per topic", "Consumer lag per partition"})

WARM_MS = 10 * 60_000  # unpaced: horizon = newest event - 5m10s, so windows have lists at once
SPEED = 60.0  # then one event minute per wall second
DEADLINE_S = 45.0  # for every wait together: the whole module stays under a minute
TOLERANCE = 1e-9


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Scrape:
    accept: str
    accept_encoding: str
    status: int
    content_type: str
    content_encoding: str
    body: bytes  # as sent (compressed when content_encoding says so)


class Recorder(ThreadingHTTPServer):
    """An HTTP proxy on 127.0.0.1 in front of the demo's /metrics that keeps every exchange."""

    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.scrapes: list[Scrape] = []
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _RecordingHandler)

    def recorded(self) -> list[Scrape]:
        with self.lock:
            return list(self.scrapes)


class _RecordingHandler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        server = self.server
        assert isinstance(server, Recorder)
        forwarded = {
            key: value
            for key in ("Accept", "Accept-Encoding", "User-Agent")
            if (value := self.headers.get(key)) is not None
        }
        request = urllib.request.Request(server.upstream + self.path, headers=forwarded)
        with urllib.request.urlopen(request, timeout=10) as response:
            body, status, headers = response.read(), response.status, response.headers
        scrape = Scrape(
            accept=self.headers.get("Accept", ""),
            accept_encoding=self.headers.get("Accept-Encoding", ""),
            status=status,
            content_type=headers.get("Content-Type", ""),
            content_encoding=headers.get("Content-Encoding", ""),
            body=body,
        )
        with server.lock:
            server.scrapes.append(scrape)
        self.send_response(status)
        self.send_header("Content-Type", scrape.content_type)
        if scrape.content_encoding:
            self.send_header("Content-Encoding", scrape.content_encoding)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@dataclass
class Live:
    prometheus: str  # base URL of the Prometheus server
    metrics_url: str  # the demo's /metrics
    target: str  # host:port as Prometheus labels it (instance): the recorder's
    demo: Demo
    deadline: float
    recorder: Recorder

    def api(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.prometheus}{path}?{query}", timeout=10) as response:
            body = json.loads(response.read())
        if body.get("status") != "success":
            raise AssertionError(f"{path} {params}: {body}")
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        data = self.api("/api/v1/query", query=expr)
        if data["resultType"] != "vector":
            return [{"metric": {}, "value": data["result"]}]
        result: list[dict[str, Any]] = data["result"]
        return result

    def wait_for(self, what: str, condition: Any) -> None:
        """Poll `condition()` every 0.2 s until true; fail at the module's deadline."""
        while not condition():
            if time.monotonic() > self.deadline:
                pytest.fail(f"timed out waiting for {what}")
            time.sleep(0.2)


def _start_prometheus(tmp: Path, target: str) -> tuple[subprocess.Popen[bytes], str, Path]:
    config = tmp / "prometheus.yml"
    config.write_text(prometheus_config([target], scrape_interval="1s"))
    port = _free_port()
    log = tmp / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                prometheus_or_skip(),
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return proc, f"http://127.0.0.1:{port}", log


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    prometheus_or_skip()
    tmp = tmp_path_factory.mktemp("prometheus")
    # the position-bias row needs the propensity estimated: on, with little evidence asked of
    # each position (the demo's traffic is light)
    settings = load_settings(propensity={"enabled": True, "min_clicks": 5, "refresh_lists": 500})
    # a third of the requests interleaved (DESIGN §10), the rest an A/B split, an LLM judge beside
    # the raters (DESIGN §12): every family the rules and the dashboard name has samples
    sim = SimConfig(
        rate=20.0,
        queries=300,
        candidates=20,
        noise_share=0.02,
        seed=2,
        interleaving=True,
        interleaving_share=1 / 3,
        llm_judge="gpt-4o",  # a second judge family: the Judges row and its alert have samples
    )
    now_ms = int(time.time() * 1000)
    start_ms = now_ms - now_ms % settings.evaluation.bucket - WARM_MS
    demo = Demo(settings, sim, start_ms=start_ms)
    stop = threading.Event()
    paced = wall_pacer(start_ms + WARM_MS, SPEED, stop)

    def pace(event_ms: int) -> bool:
        return not stop.is_set() and (event_ms < start_ms + WARM_MS or paced(event_ms))

    driver = threading.Thread(target=demo.run, args=(pace,), name="demo-driver", daemon=True)
    server = demo.server("127.0.0.1", 0)
    server.start()
    proc: subprocess.Popen[bytes] | None = None
    recorder = Recorder(f"http://127.0.0.1:{server.port}")
    proxy = threading.Thread(target=recorder.serve_forever, name="recorder", daemon=True)
    proxy.start()
    try:
        driver.start()
        target = f"127.0.0.1:{recorder.server_address[1]}"
        proc, base, log = _start_prometheus(tmp, target)
        live = Live(
            base,
            f"http://127.0.0.1:{server.port}/metrics",
            target,
            demo,
            time.monotonic() + DEADLINE_S,
            recorder,
        )
        live.wait_for("prometheus ready", lambda: _ready(base, proc, log))
        # Enough scrapes for every rate()/[1m] and for the rules: the slowest dashboard figures
        # are the rates of recorded series, which need two evaluations with data.
        # And scrapes of a moving endpoint: the horizon seen at three values at least. The rates
        # alone can be ready after two scrapes of a moving horizon when Prometheus starts late
        # (a loaded machine), which left test_the_demo_moved_while_prometheus_scraped to luck.
        moved = f'changes({names.HORIZON}{{instance="{target}"}}[5m]) >= 2'
        live.wait_for(
            "recorded rates, and the horizon moving under the scrapes",
            lambda: (
                bool(live.query("segment:streameval_lists_scored:rate5m > 0"))
                and bool(live.query("job:streameval_invalid_events:ratio_rate5m"))
                and bool(live.query(moved))
            ),
        )
        stop.set()
        driver.join(timeout=30)
        if driver.is_alive():
            pytest.fail("the demo driver did not stop")
        frozen = time.time()
        # From here the snapshot is fixed: wait for a scrape that started after the freeze, then
        # for an evaluation of the rule groups after that scrape.
        live.wait_for("a scrape of the frozen snapshot", lambda: _last_scrape(live) > frozen)
        scraped = _last_scrape(live)
        live.wait_for("rules evaluated after it", lambda: _last_evaluation(live) > scraped)
        yield live
    finally:
        stop.set()
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        recorder.shutdown()
        recorder.server_close()
        server.stop()
        driver.join(timeout=30)


def _ready(base: str, proc: subprocess.Popen[bytes], log: Path) -> bool:
    if proc.poll() is not None:
        pytest.fail(f"prometheus exited with {proc.returncode}:\n{log.read_text()}")
    try:
        with urllib.request.urlopen(f"{base}/-/ready", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _rfc3339(text: str) -> float:
    """Unix seconds of a Prometheus API time, "2024-01-01T00:00:00.123456789Z" (nanoseconds)."""
    head, _, frac = text.rstrip("Z").partition(".")
    whole = datetime.strptime(head, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp()
    return whole + (float(f"0.{frac}") if frac else 0.0)


def _last_scrape(live: Live) -> float:
    targets = live.api("/api/v1/targets", state="active")["activeTargets"]
    ours = [t for t in targets if t["labels"]["instance"] == live.target]
    return max((_rfc3339(t["lastScrape"]) for t in ours), default=0.0)


def _last_evaluation(live: Live) -> float:
    """The oldest last evaluation over every rule group (all must have run since)."""
    groups = live.api("/api/v1/rules")["groups"]
    return min(_rfc3339(g["lastEvaluation"]) for g in groups)


def _live_samples(live: Live) -> list[tuple[str, dict[str, str], float]]:
    with urllib.request.urlopen(live.metrics_url, timeout=10) as response:
        text = response.read().decode()
    return [
        (sample.name, dict(sample.labels), sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    ]


def _by_labels(result: list[dict[str, Any]], keys: tuple[str, ...]) -> dict[tuple[str, ...], float]:
    return {tuple(row["metric"][key] for key in keys): float(row["value"][1]) for row in result}


# --- the checks ------------------------------------------------------------------------------


def test_the_target_is_up(live: Live) -> None:
    result = live.query(f'up{{job="streameval", instance="{live.target}"}}')
    assert [float(row["value"][1]) for row in result] == [1.0]


def test_prometheus_negotiated_openmetrics(live: Live) -> None:
    scrapes = live.recorder.recorded()
    assert len(scrapes) >= 2
    for scrape in scrapes:
        # Prometheus asks for OpenMetrics 1.0 first and for gzip; the daemon answered so.
        assert scrape.accept.startswith("application/openmetrics-text"), scrape.accept
        assert "gzip" in scrape.accept_encoding
        assert scrape.status == 200
        assert scrape.content_type.startswith("application/openmetrics-text; version=1.0.0")
        assert scrape.content_encoding == "gzip"
    # What Prometheus got is valid OpenMetrics (prometheus_client's strict parser) ...
    last = gzip.decompress(scrapes[-1].body).decode()
    families = {f.name for f in parse_openmetrics(last)}
    assert {names.WINDOW_NDCG_SUM, names.NDCG_SUM_TOTAL.removesuffix("_total")} <= families
    # ... and Prometheus' own parser took every scrape: no error on the target.
    targets = live.api("/api/v1/targets", state="active")["activeTargets"]
    [ours] = [t for t in targets if t["labels"]["instance"] == live.target]
    assert ours["health"] == "up" and ours["lastError"] == ""


def test_every_exposed_metric_is_queryable(live: Live) -> None:
    exposed = {name for name, _, _ in _live_samples(live)}
    assert names.NDCG in exposed and names.RECORDS_READ_TOTAL in exposed
    missing = sorted(
        name
        for name in exposed
        if not live.query(f'{name}{{job="streameval", instance="{live.target}"}}')
    )
    assert not missing, f"exposed on /metrics but not in Prometheus: {missing}"


def test_every_referenced_metric_is_on_the_live_endpoint(live: Live) -> None:
    exposed = {name for name, _, _ in _live_samples(live)}
    referenced = referenced_metric_names()
    assert {names.WINDOW_NDCG_SUM, names.WINDOW_LISTS, names.RECORDS_READ_TOTAL} <= referenced
    assert not (referenced - KAFKA_ONLY) - exposed
    # the exception is real: the demo indeed exports no consumer lag (else drop it from the list)
    assert not KAFKA_ONLY & exposed
    assert referenced >= KAFKA_ONLY


def _label_values(live: Live, label: str) -> list[str]:
    values: list[str] = live.api(f"/api/v1/label/{label}/values", **{"match[]": names.WINDOW_LISTS})
    return values


def _panel_id(query: DashboardQuery) -> int:
    return int(query.where.split()[1])  # "panel 7 'title' target B"


def _selections(live: Live) -> Iterator[tuple[Mapping[str, str], DashboardQuery]]:
    """(variable values, query) pairs as Grafana would run them.

    Single-valued k, window, relevance: every real value, every combination. Multi-valued
    ranker and arm: "All" (their allValue `.*`, the dashboard's default), except in a panel
    repeated by a variable, where Grafana runs the panel once per real value of it.
    """
    board = dashboard()
    variables = {v["name"]: v for v in query_variables(board)}
    single = [name for name, v in variables.items() if not v.get("multi")]
    every = {name: v.get("allValue") or ".*" for name, v in variables.items() if v.get("multi")}
    repeat = {p["id"]: p.get("repeat") for p in panels(board)}
    # the real values of what is run value by value (the namespace, "All" by default, has none
    # here: the demo's series carry no namespace label, as under docker compose)
    real = {name: _label_values(live, name) for name in {*single, *filter(None, repeat.values())}}
    assert all(real.values()), real
    fixed = {"__rate_interval": "1m", "__interval": "1s", "__range": "1h"}
    for combo in itertools.product(*(real[name] for name in single)):
        chosen = dict(zip(single, combo, strict=True)) | every | fixed
        for query in dashboard_queries(board):
            by = repeat.get(_panel_id(query))
            if by is None:
                yield chosen, query
            else:
                for value in real[by]:
                    yield chosen | {by: value}, query


def test_every_dashboard_query_returns_data(live: Live) -> None:
    titles = {p["id"]: p["title"] for p in panels(dashboard())}
    empty: dict[str, set[str]] = {}
    seen: set[tuple[str, str]] = set()
    for values, query in _selections(live):
        expr = substitute(query.expr, values)
        if (query.where, expr) in seen:
            continue  # a query that does not use the variable that changed
        seen.add((query.where, expr))
        if not live.query(expr):
            used = variables_used(query.expr)
            shown = {k: v for k, v in values.items() if k in used}
            empty.setdefault(titles[_panel_id(query)], set()).add(f"{query.where} {shown}")
    # 4 k x 3 windows x 5 relevance sources, ~40 queries each, deduplicated where no variable
    # changes the query
    assert len(seen) >= 200
    unexpected = {title: rows for title, rows in empty.items() if title not in KAFKA_ONLY_PANELS}
    assert not unexpected, "\n".join(sorted(r for rows in unexpected.values() for r in rows))
    # and the exceptions are exactly the consumer-lag panels (nothing else silently skipped)
    assert set(empty) == KAFKA_ONLY_PANELS


def test_recorded_ndcg_equals_the_daemon_figures(live: Live) -> None:
    keys = ("k", "window", "relevance", "ranker", "arm")
    selector = f'{{job="streameval", instance="{live.target}"}}'
    own = _by_labels(live.query(names.NDCG + selector), keys)
    recorded = _by_labels(live.query('segment:streameval_ndcg:mean{job="streameval"}'), keys)
    # every (k, window, relevance) for both arms and the interleaved lists' own segment; the
    # relevance sources: implicit, judged, implicit_debiased (propensity on) and, with two judge
    # families, judged:<family> each
    sources = {"implicit", "judged", "implicit_debiased", "judged:human", "judged:llm:gpt-4o"}
    assert {labels[2] for labels in own} == sources
    assert len(own) == 4 * 3 * len(sources) * 3
    assert set(recorded) == set(own)
    for labels, value in own.items():
        assert abs(recorded[labels] - value) <= TOLERANCE, (labels, recorded[labels], value)
    # and those are the figures of the snapshot being served (the driver has stopped)
    served = {
        tuple(labels[key] for key in keys): value
        for name, labels, value in _live_samples(live)
        if name == names.NDCG
    }
    assert served == own

    own_se = _by_labels(live.query(names.NDCG_STDERR + selector), keys)
    recorded_se = _by_labels(live.query('segment:streameval_ndcg:stderr{job="streameval"}'), keys)
    assert set(recorded_se) == set(own_se) == set(own)
    for labels, value in own_se.items():
        assert math.isclose(recorded_se[labels], value, rel_tol=1e-9, abs_tol=TOLERANCE), labels


def test_the_demo_moved_while_prometheus_scraped(live: Live) -> None:
    # not a frozen endpoint: the horizon took several values during the scrapes
    result = live.query(f'changes({names.HORIZON}{{instance="{live.target}"}}[5m])')
    assert result and float(result[0]["value"][1]) >= 2
