"""``streameval demo``: simulated traffic through the pipeline, on /metrics and a status page."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from streameval import gc_policy

if TYPE_CHECKING:
    from streameval.config import MetricsSettings

DEFAULT_SPEED = 60.0
DEFAULT_RATE = 20.0
DEFAULT_REGRESSION_AT_MS = 600_000  # 10 event minutes: 10 wall seconds at the default speed
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9724


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from streameval.sim.arguments import add_traffic_arguments, positive

    p = sub.add_parser(
        "demo",
        help="the pipeline fed by an in-process traffic simulator: no Kafka needed",
        description=(
            "Simulated search traffic (an A/B test of two rankers, a click model, explicit "
            "judgments) through the same pipeline as the daemon, in accelerated event time, "
            "with a ranking regression of the treatment arm part-way. Serves /metrics and a "
            "live status page. Stop with Ctrl-C."
        ),
    )
    p.add_argument(
        "--speed",
        type=positive,
        default=DEFAULT_SPEED,
        help=f"event seconds per wall second (default {DEFAULT_SPEED:g}: one wall second is "
        "one event minute)",
    )
    p.add_argument(
        "--host",
        help=f"address to serve on (default {DEFAULT_HOST}, this machine only — unlike the "
        "daemon's metrics.host 0.0.0.0 — unless metrics.host is set in the --config file or "
        "STREAMEVAL_METRICS__HOST; use 0.0.0.0 to expose the demo)",
    )
    p.add_argument(
        "--port",
        type=int,
        help=f"port to serve on (default {DEFAULT_PORT}, unless metrics.port is set in the "
        "--config file or STREAMEVAL_METRICS__PORT; 0 picks a free one)",
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        help="TOML configuration: its evaluation and metrics sections (host, port, TLS, basic "
        "auth) apply; STREAMEVAL_* environment variables too",
    )
    add_traffic_arguments(p, rate=DEFAULT_RATE, regression_at=DEFAULT_REGRESSION_AT_MS)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import signal
    import threading
    import time

    from streameval import alarms
    from streameval.config import load_settings
    from streameval.durations import format_duration
    from streameval.report import snapshot_table
    from streameval.runtime.demo import Demo, DemoTick, wall_pacer
    from streameval.sim.arguments import sim_config

    settings = load_settings(args.config)
    gc_policy.tune()  # a large live heap: see streameval.gc_policy
    alarms.show_on_stderr()  # the regression's alarm as it starts and clears
    sim = sim_config(args)
    # The only clock read: where event time starts. On a bucket boundary, so that every run with
    # the same seed and settings shows the same numbers (windows are made of aligned buckets).
    now_ms = int(time.time() * 1000)
    start_ms = now_ms - now_ms % settings.evaluation.bucket
    demo = Demo(settings, sim, start_ms=start_ms)
    stop = threading.Event()
    host, port = serve_address(settings.metrics, args.host, args.port)
    server = demo.server(host, port)
    server.start()
    url = f"{server.scheme}://{_url_host(host)}:{server.port}"
    sim = demo.sim
    print(
        f"streameval demo: {sim.rate:g} impressions per event second at {args.speed:g}x "
        f"event time; control {sim.control.name} vs treatment {sim.treatment.name} "
        f"({sim.treatment_share:.0%} of requests)",
        flush=True,
    )
    regress_ms = None
    if sim.regression_at_ms is not None:
        regress_ms = start_ms + sim.regression_at_ms
        wall = sim.regression_at_ms / 1000 / args.speed
        print(
            f"the treatment regresses at event time +{format_duration(sim.regression_at_ms)} "
            f"(in {wall:.0f} s; expected NDCG@k drop {sim.regression_size:.0%})",
            flush=True,
        )

    def request_stop(signum: int, frame: object) -> None:
        stop.set()

    # before the line that says Ctrl-C stops it: a signal right after it stops cleanly too
    previous = {s: signal.signal(s, request_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    print(f"status page: {url}/   metrics: {url}/metrics   (Ctrl-C to stop)", flush=True)

    def on_tick(tick: DemoTick) -> None:
        nonlocal regress_ms
        if regress_ms is not None and tick.event_ms >= regress_ms:
            regress_ms = None
            lag = settings.evaluation.attribution_window + settings.evaluation.allowed_lateness
            print(
                f"event time +{format_duration(tick.event_ms - start_ms)}: the treatment "
                f"ranker regresses now; the windows show it once the evaluation horizon "
                f"({format_duration(lag)} behind) passes it",
                flush=True,
            )

    try:
        last = demo.run(wall_pacer(start_ms, args.speed, stop), on_tick=on_tick)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        server.stop()
    if not stop.is_set():
        print(snapshot_table(last))
    read = last.intake.records_read
    print(f"streameval demo: stopped after {read} records", flush=True)
    return 0


def serve_address(metrics: MetricsSettings, host: str | None, port: int | None) -> tuple[str, int]:
    """Where the demo serves: a flag wins; else ``metrics.host`` / ``metrics.port`` when the
    configuration (file or environment) sets them; else the demo's own defaults, which differ
    from the daemon's (this machine only: a demo is not a service)."""
    configured = metrics.model_fields_set
    if host is None:
        host = metrics.host if "host" in configured else DEFAULT_HOST
    if port is None:
        port = metrics.port if "port" in configured else DEFAULT_PORT
    return host, port


def _url_host(host: str) -> str:
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host
