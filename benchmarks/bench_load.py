"""Load: twice the design rate, live through a real broker, and two floods that must stay capped.

    .venv/bin/python benchmarks/bench_load.py [--seconds 90] [--quick] [--json FILE]
        [--only sustained,segments,flood] [--factor 2]

**Design rate: 4,000 records/s per instance** (impressions, clicks and the rest, as read from
Kafka). That is about a quarter of what one ``streameval run`` reads at full speed on this 2-core
machine (``daemon``: ~18,000 records/s catching up a backlog), so at twice its design rate an
instance still has room for bursts, a rebuild after a rebalance and the scrapes. This benchmark
checks that margin. Three parts, each in a process of its own (a clean RSS):

1. ``load.rate``, ``load.lag_slope``, ``load.lag``, ``load.rss_drift``: the broker is
   ``KAFKA_BOOTSTRAP_SERVERS``, else one started with ``scripts/kafka-broker``. Fresh topics as
   ``daemon`` makes them; the simulator's initial judgments are produced, ``streameval run`` starts,
   and once it is ready a producer process sends the simulator's traffic (~2.5 interactions per
   impression, 1 % noise, no judgment trickle) at a constant **2 × 4,000 = 8,000 records/s** of wall
   time (record i at i / 8,000 s) for ``--seconds`` (90; 30 with ``--quick``), with ``streameval
   simulate``'s send loop and confluent-kafka's producer when it is installed (the producer process
   then takes ~20 % of a core, ~65 % with kafka-python's producer, and it shares the two cores with
   the daemon and the broker). Event time runs 20× faster than wall time (~115 impressions per event
   second), so the state reaches its steady size (~57k open lists) in ~40 s, within the first half
   of the run (the warm-up). For that the daemon runs with windows 1m and 5m (the 1h window would
   take 3 minutes to fill) and an allowed lateness of 200 s: 10 s of *wall* time, as the default is
   at 1×; with 10 s of event time the ordinary jitter between partitions at a live tail (a fraction
   of a second) would make records late that are in time at 1×. Every 2 s: the brokers' end offsets,
   the daemon's /metrics (``streameval_records_read_total``, ``streameval_consumer_lag``), its RSS
   (VmRSS) and CPU time. Backlog = Σ end offsets − records read, the end offsets asked just after
   the daemon published a new snapshot (it does once a second). Over the second half: the arrival
   rate at the broker (``load.rate``, ≥ 95 % of the rate asked), the least-squares slope of the
   backlog (``load.lag_slope``, ≤ 1 % of the rate: a daemon that cannot keep up shows its deficit
   here), the median of the daemon's own ``streameval_consumer_lag`` in seconds of arrivals
   (``load.lag``, ≤ 1 s), the RSS drift (``load.rss_drift``, the median of the last three samples
   against the first three, ≤ 5 %; no target with ``--quick``, whose 15 s warm-up ends before the
   state is full).
2. ``load.segments*`` (the pipeline, no broker): 100,000 impressions (50,000 with ``--quick``),
   each with a new ``ranker`` label value, 12.5 per event second (2.2 h: the second half is past
   the 1h window); ``max_segments`` is the default 100. Every 5 % a scrape (``generate_latest``):
   the distinct (ranker, arm) combinations in it (≤ 100 + ``__other__``), its size against the
   largest scrape of the same traffic spread over exactly 100 real segments (ratio ≤ 1), and the
   RSS drift over the second half (≤ 5 %).
3. ``load.flood*`` (the pipeline, no broker): 1,000,000 impressions that never get a click
   (300,000 with ``--quick``), ``max_open_lists`` 100,000 (30,000): the first 10 % at 50 per
   event second (lists finalize in the ordinary way), then 500 per event second (150), 1.5× the
   cap per attribution window, so the cap binds and the oldest lists are evicted. Open lists at
   every sample ≤ the cap (``load.flood.open_lists``); at the end evicted = accepted − open −
   finalized per relevance source and read = accepted + invalid + duplicate + late + unmatched
   + pending (``load.flood.unaccounted``, the sum of both differences: 0); RSS drift over the
   second half (``load.flood.rss_drift``, ≤ 5 %). The request ids of evicted lists are
   remembered like those of finalized ones, until the watermark is two attribution windows past
   them (to tell a late click from an unmatched one), and at most ``max_open_lists`` of them: a
   flood costs at most the cap in lists plus the cap in ids. ``load.flood.burst`` (no target,
   not with ``--quick``) is what each costs: RSS growth per evicted list when 300,000
   impressions arrive within 100 s of event time.
"""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _common import (
    SIM_START_MS,
    Result,
    Target,
    results_table,
    rss_bytes,
    sim_records,
    suite_parser,
    write_json,
)
from bench_daemon import PARTITIONS, Topics, broker, free_port, spawn_daemon

#: records/s one instance is designed for (a quarter of its measured capacity, ~18k/s)
DESIGN_RATE = 4_000
#: the load the benchmark applies, as a multiple of the design rate (issue 7)
LOAD_FACTOR = 2.0
#: RSS growth after warm-up, at most, in percent (as ``soak``)
DRIFT_TARGET = 5.0
#: backlog growth, at most, as a share of the arrival rate (1 %: 80 records/s at 8,000/s)
LAG_SLOPE_SHARE = 0.01
#: arrival rate reached, at least, as a share of the rate asked
RATE_SHARE = 0.95
#: the median of the daemon's streameval_consumer_lag, at most, in seconds of arrivals
LAG_SECONDS = 1.0
SAMPLE_S = 2.0
#: event seconds per wall second in the sustained part: fast enough for the state to reach its
#: steady size within the warm-up (see STEADY_EVENT_S)
EVENT_SPEED = 20.0
#: records per simulated impression: ~2.5 interactions each, plus 1 % noise records
RECORDS_PER_IMPRESSION = 3.5
#: the allowed lateness, scaled with the speed: 10 s (the default) of *wall* time, as at 1×. With
#: the default 10 s of event time (0.5 s of wall time at 20×), the partitions' ordinary
#: read-to-read jitter at a live tail makes records late that would be in time at 1×.
LATENESS = f"{10 * EVENT_SPEED:.0f}s"
#: event seconds after which the sustained part's state has its steady size: the finalized-id
#: memory covers impressions from newest − lateness − 2 × attribution window (5 min) on
STEADY_EVENT_S = 10 * EVENT_SPEED + 2 * 300 + 10
#: the daemon's windows in the sustained part: the 1h window would need 3 minutes at 20× to
#: fill (its per-record cost is the 5m window's; its memory, buckets per segment, is soak's)
WINDOWS = ("1m", "5m")
SOURCE = "input"
JUDGMENTS = "judgments"
_INTAKE = {
    "streameval_records_read_total": "read",
    "streameval_events_total": "accepted",
    "streameval_invalid_events_total": "invalid",
    "streameval_late_events_total": "late",
    "streameval_duplicate_events_total": "duplicate",
    "streameval_unmatched_clicks_total": "unmatched",
    "streameval_pending_clicks": "pending",
}
_ARM = re.compile(rb'[{,]arm="([^"]*)"')
_RANKER = re.compile(rb'[{,]ranker="([^"]*)"')


# --- helpers ----------------------------------------------------------------------------------


def slope(points: list[tuple[float, float]]) -> float:
    """The least-squares slope of (x, y) points."""
    n = len(points)
    if n < 2:
        return float("nan")
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else float("nan")


def drift_percent(values: list[float], ends: int = 3) -> float:
    """Median of the last ``ends`` values against the median of the first ``ends``, in %."""
    first = statistics.median(values[:ends])
    last = statistics.median(values[-ends:])
    return 100.0 * (last - first) / first


def proc_status(pid: int, field: str) -> int:
    """A kB field of /proc/<pid>/status (VmRSS, VmHWM), in bytes."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU time of the whole machine so far, in clock ticks (/proc/stat)."""
    with open("/proc/stat") as fh:
        ticks = [float(v) for v in fh.readline().split()[1:]]
    idle = ticks[3] + ticks[4]  # idle + iowait
    return sum(ticks) - idle, sum(ticks)


def impression_pool(seed: int) -> tuple[list[dict[str, Any]], list[bytes]]:
    """Simulated impressions (as dicts, to be re-stamped) and the initial judgment records."""
    pool: list[dict[str, Any]] = []
    judgments: list[bytes] = []
    for record in sim_records(25_000, seed=seed):
        if record.kind == "impression":  # type: ignore[attr-defined]
            pool.append(json.loads(record.raw))  # type: ignore[attr-defined]
        elif record.kind == "judgment":  # type: ignore[attr-defined]
            judgments.append(record.raw)  # type: ignore[attr-defined]
    return pool, judgments


def impressions(
    pool: list[dict[str, Any]], n: int, per_s: float, *, rankers: int = 0, calm: int = 0
) -> Iterator[bytes]:
    """``n`` impressions re-stamped from ``pool``: a new request id each, ``per_s`` per second
    of event time (the first ``calm`` at a tenth of that); with ``rankers`` the ``ranker``
    label cycles through that many values."""
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    size = len(pool)
    for i in range(n):
        obj = pool[i % size]
        obj["request_id"] = obj["event_id"] = f"load-{i:09d}"
        slow = min(i, calm) * 10 + max(0, i - calm)  # in 1 / per_s seconds
        obj["timestamp"] = SIM_START_MS + int(slow * 1000 / per_s)
        if rankers:
            obj["labels"] = {**obj["labels"], "ranker": f"ranker-{i % rankers:07d}"}
        yield dumps(obj).encode()


def run_child(part: str, *args: str) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__)), "--child", part, *args]
    child = subprocess.run(command, check=True, capture_output=True, text=True)
    data: dict[str, Any] = json.loads(child.stdout)
    return data


# --- 1. sustained load through the broker -------------------------------------------------------


class LoadDaemon:
    """``streameval run`` as a subprocess with the default evaluation settings."""

    def __init__(self, bootstrap: str, topics: Topics, log: Path) -> None:
        self.port = free_port()
        self.log = log
        self._log = log.open("wb")
        self.proc = spawn_daemon(
            bootstrap,
            topics,
            f"bench-load-{uuid.uuid4().hex[:10]}",
            port=self.port,
            log=self._log,
            settings={
                "STREAMEVAL_EVALUATION__WINDOWS": json.dumps(WINDOWS),
                "STREAMEVAL_EVALUATION__ALLOWED_LATENESS": LATENESS,
            },
        )

    def scrape(self) -> str:
        url = f"http://127.0.0.1:{self.port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            return str(response.read().decode())

    def intake(self) -> dict[str, float]:
        """The intake counters by outcome (and event type), from one scrape."""
        from prometheus_client.parser import text_string_to_metric_families

        out: dict[str, float] = {}
        for family in text_string_to_metric_families(self.scrape()):
            for sample in family.samples:
                if sample.name in _INTAKE:
                    key = _INTAKE[sample.name]
                    detail = sample.labels.get("type") or sample.labels.get("reason")
                    out[f"{key}/{detail}" if detail else key] = sample.value
        return out

    def metrics(self) -> dict[str, float]:
        """records read, consumer lag (Σ over partitions), open lists, evicted lists."""
        text = self.scrape()
        out = {"records_read": 0.0, "consumer_lag": 0.0, "open_lists": 0.0, "evicted": 0.0}
        for line in text.splitlines():
            if line.startswith("streameval_records_read_total "):
                out["records_read"] = float(line.split()[-1])
            elif line.startswith("streameval_consumer_lag{"):
                out["consumer_lag"] += float(line.split()[-1])
            elif line.startswith("streameval_open_lists "):
                out["open_lists"] = float(line.split()[-1])
            elif line.startswith("streameval_lists_total{") and 'outcome="evicted"' in line:
                out["evicted"] += float(line.split()[-1])
        return out

    def wait_ready(self, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the daemon exited with {self.proc.returncode}: {self.tail()}")
            if "caught up: ready" in self.log.read_text(errors="replace"):
                return
            time.sleep(0.1)
        raise RuntimeError(f"the daemon did not get ready: {self.tail()}")

    def tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-15:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def produce_judgments(bootstrap: str, topics: Topics, seed: int) -> int:
    """The simulator's initial judgments (its first records), before the daemon starts."""
    from kafka import KafkaProducer

    from streameval.sim import SimConfig, traffic

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20)
    n = 0
    for record in traffic(SimConfig(seed=seed, judgment_rate=0.0), SIM_START_MS):
        if record.kind != "judgment":
            break
        producer.send(
            topics.judgments, value=record.raw, key=record.key.encode(), timestamp_ms=record.time_ms
        )
        n += 1
    producer.flush()
    producer.close()
    return n


class Librdkafka:
    """confluent-kafka's Producer behind kafka-python's ``send``/``flush``/``close``: at 8,000
    records/s the producer process then takes ~20 % of a core (most of it the simulator), not
    ~65 %, and leaves the shared cores to the daemon."""

    def __init__(self, bootstrap: str) -> None:
        from confluent_kafka import Producer

        # murmur2: the partitioner of kafka-python and the Java client (`streameval simulate`)
        config = {"bootstrap.servers": bootstrap, "linger.ms": 20, "partitioner": "murmur2_random"}
        self._producer = Producer(config)
        self._n = 0

    def send(self, topic: str, *, value: bytes, key: bytes, timestamp_ms: int) -> None:
        while True:
            try:
                self._producer.produce(topic, value=value, key=key, timestamp=timestamp_ms)
                break
            except BufferError:  # the local queue is full: let deliveries drain it
                self._producer.poll(0.05)
        self._n += 1
        if self._n % 1000 == 0:
            self._producer.poll(0)  # serve delivery reports

    def flush(self) -> None:
        if self._producer.flush(60):
            raise RuntimeError("records left undelivered")

    def close(self) -> None:
        pass


def producer_main(bootstrap: str, topics: Topics, rate: float, seconds: float, seed: int) -> None:
    """The producer process: simulated traffic (the initial judgments skipped) at ``rate``
    records/s of wall time for ``seconds``, through ``streameval simulate``'s own send loop."""
    from streameval.commands.simulate import produce
    from streameval.sim import SimConfig, traffic

    sim_rate = rate / (RECORDS_PER_IMPRESSION * EVENT_SPEED)
    config = SimConfig(seed=seed, rate=sim_rate, noise_share=0.01, judgment_rate=0.0)
    records = (r for r in traffic(config, SIM_START_MS) if r.kind != "judgment")
    routes: dict[str, str | None] = {
        "impression": topics.impressions,
        "click": topics.clicks,
        "judgment": topics.judgments,
    }
    producer: Any
    try:
        producer, client = Librdkafka(bootstrap), "confluent-kafka"
    except ImportError:
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20)
        client = "kafka-python"
    sent = 0
    behind = 0.0  # the furthest the producer fell behind its schedule, in seconds
    origin = time.monotonic()
    last_event_ms = SIM_START_MS

    def pace(event_ms: int) -> bool:
        """Record ``sent`` goes out at origin + sent / rate (a constant rate of wall time)."""
        nonlocal sent, behind, last_event_ms
        due = origin + sent / rate
        now = time.monotonic()
        if due - now > 0.002:
            time.sleep(due - now)
        elif now - due > behind:
            behind = now - due
        if due - origin >= seconds:
            return False
        sent += 1
        last_event_ms = event_ms
        return True

    counts = produce(producer, records, routes, pace)
    producer.flush()
    elapsed = time.monotonic() - origin
    producer.close()
    cpu = time.process_time()
    print(
        json.dumps(
            {
                "client": client,
                "sent": sum(counts.values()),
                "by_topic": counts,
                "seconds": elapsed,
                "cpu_seconds": cpu,
                "behind_max_s": behind,
                "event_seconds": (last_event_ms - SIM_START_MS) / 1000,
                "impressions_per_event_s": sim_rate,
            }
        )
    )


def start_producer(
    bootstrap: str, topics: Topics, rate: float, seconds: float, seed: int
) -> subprocess.Popen[str]:
    names = [topics.impressions, topics.clicks, topics.judgments, topics.dlq]
    command = [sys.executable, str(Path(__file__)), "--child", "producer"]
    command += ["--bootstrap", bootstrap, "--topics", json.dumps(names)]
    command += ["--rate", str(rate), "--seconds", str(seconds), "--seed", str(seed)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)


class Offsets:
    """Σ of the log end offsets of the stream and judgment partitions (no group joined)."""

    def __init__(self, bootstrap: str, topics: Topics) -> None:
        from kafka import KafkaConsumer, TopicPartition

        self._consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        self._partitions = [
            TopicPartition(t, p)
            for t in (topics.impressions, topics.clicks)
            for p in range(PARTITIONS)
        ] + [TopicPartition(topics.judgments, 0)]

    def total(self) -> int:
        return int(sum(self._consumer.end_offsets(self._partitions).values()))

    def close(self) -> None:
        self._consumer.close()


def fresh_metrics(daemon: LoadDaemon) -> dict[str, float]:
    """The daemon's /metrics just after it published a new snapshot (records read moved; at most
    ~1.2 s of waiting). /metrics shows the snapshot the daemon publishes once a second: read at a
    random moment, its count is up to a second (8,000 records) old, and that age drifts slowly
    against a 2 s sampling period, a sawtooth that biases a slope."""
    deadline = time.monotonic() + 1.2
    first = m = daemon.metrics()
    while m["records_read"] == first["records_read"] and time.monotonic() < deadline:
        time.sleep(0.02)
        m = daemon.metrics()
    return m


def sample(daemon: LoadDaemon, offsets: Offsets, start: float) -> dict[str, float]:
    """One sample: the daemon's /metrics (fresh), the brokers' end offsets, RSS and CPU time."""
    pid = daemon.proc.pid
    m = fresh_metrics(daemon)
    ends = offsets.total()
    t = time.monotonic() - start
    busy, total = machine_cpu()
    s = {
        "t": t,
        "end_offsets": ends,
        "backlog": ends - m["records_read"],
        "rss": proc_status(pid, "VmRSS"),
        "cpu": cpu_seconds(pid),
        "machine_busy": busy,
        "machine_total": total,
        **m,
    }
    print(
        f"{t:6.1f} s  end {ends:>9,}  read {m['records_read']:>11,.0f}  "
        f"backlog {s['backlog']:>7,.0f}  lag metric {m['consumer_lag']:>7,.0f}  "
        f"rss {s['rss'] / 2**20:6.1f} MiB  open {m['open_lists']:,.0f}",
        flush=True,
    )
    return s


def drain_seconds(daemon: LoadDaemon, offsets: Offsets, timeout_s: float = 60) -> float:
    """Once the producer stopped: how long the daemon takes to read every record."""
    stopped = time.monotonic()
    ends = offsets.total()
    while time.monotonic() - stopped < timeout_s:
        if daemon.metrics()["records_read"] >= ends:
            return time.monotonic() - stopped
        time.sleep(0.1)
    return float("nan")


def sustained(
    bootstrap: str, rate: float, seconds: float, seed: int, workdir: Path
) -> dict[str, Any]:
    topics = Topics.fresh()
    topics.create(bootstrap)
    daemon: LoadDaemon | None = None
    producer: subprocess.Popen[str] | None = None
    offsets = Offsets(bootstrap, topics)
    try:
        judgments = produce_judgments(bootstrap, topics, seed)
        daemon = LoadDaemon(bootstrap, topics, workdir / "daemon.log")
        daemon.wait_ready()
        print(f"daemon ready ({judgments} judgments read); producing {rate:,.0f} records/s")
        producer = start_producer(bootstrap, topics, rate, seconds, seed)
        start = next_at = time.monotonic()
        samples: list[dict[str, float]] = []
        while True:
            if daemon.proc.poll() is not None:
                raise RuntimeError(f"the daemon exited: {daemon.tail()}")
            next_at += SAMPLE_S
            time.sleep(max(0.0, next_at - time.monotonic()))
            samples.append(sample(daemon, offsets, start))
            if producer.poll() is not None and samples[-1]["t"] >= seconds:
                break
        out, _ = producer.communicate(timeout=60)
        if producer.returncode != 0:
            raise RuntimeError(f"the producer failed with {producer.returncode}")
        produced = json.loads(out.strip().splitlines()[-1])
        print(f"producer: {produced}")
        drain_s = drain_seconds(daemon, offsets)
        time.sleep(1.5)  # a snapshot published after the last record
        return {
            "intake": daemon.intake(),
            "rate": rate,
            "seconds": seconds,
            "judgments": judgments,
            "producer": produced,
            "samples": samples,
            "drain_seconds": drain_s,
            "peak_rss": proc_status(daemon.proc.pid, "VmHWM"),
        }
    finally:
        if producer is not None and producer.poll() is None:
            producer.kill()
            producer.wait()
        if daemon is not None:
            daemon.stop()
        offsets.close()
        topics.delete(bootstrap)


def sustained_results(data: dict[str, Any]) -> list[Result]:
    rate = data["rate"]
    samples = data["samples"]
    half = data["seconds"] / 2
    # the producer starts after the first sample's clock and runs `seconds` of its own
    measured = [s for s in samples if half <= s["t"] <= data["seconds"]]
    if len(measured) < 4:
        raise RuntimeError("too few samples after the warm-up")
    first, last = measured[0], measured[-1]
    span = last["t"] - first["t"]
    arrival = (last["end_offsets"] - first["end_offsets"]) / span
    read_rate = (last["records_read"] - first["records_read"]) / span
    lag_slope = slope([(s["t"], s["backlog"]) for s in measured])
    backlogs = [s["backlog"] for s in measured]
    lag_metric = [s["consumer_lag"] for s in measured]
    rss = [float(s["rss"]) for s in measured]
    drift = drift_percent(rss)
    cpu = (last["cpu"] - first["cpu"]) / span
    busy = (last["machine_busy"] - first["machine_busy"]) / (
        last["machine_total"] - first["machine_total"]
    )
    intake = data["intake"]
    read = intake.get("read", 0.0)
    late = sum(v for k, v in intake.items() if k.startswith("late/"))
    unmatched = intake.get("unmatched", 0.0)
    produced = data["producer"]
    speed = produced["event_seconds"] / produced["seconds"]
    steady = half * speed >= STEADY_EVENT_S
    mib = 2**20
    conditions = (
        f"second half of {data['seconds']:.0f} s at {rate:,.0f} records/s asked "
        f"({rate / DESIGN_RATE:g} × the design rate {DESIGN_RATE:,}/s)"
    )
    return [
        Result(
            "load.rate",
            arrival,
            "records/s",
            baseline=rate,
            baseline_name="asked",
            target=Target(RATE_SHARE),
            note=f"arrival rate at the broker (Σ end offsets), {conditions}; the producer sent "
            f"{produced['sent']:,} records in {produced['seconds']:.1f} s (at most "
            f"{produced['behind_max_s']:.2f} s behind its schedule), "
            f"{produced['event_seconds'] / 3600:.1f} h of event time; the daemon read "
            f"{read_rate:,.0f}/s at {100 * cpu:.0f} % of a core, the machine's {os.cpu_count()} "
            f"cores {100 * busy:.0f} % busy; of {read:,.0f} records read "
            f"{100 * late / read if read else 0:.2f} % late, "
            f"{100 * unmatched / read if read else 0:.2f} % unmatched",
        ),
        Result(
            "load.lag_slope",
            lag_slope,
            "records/s",
            target=Target(LAG_SLOPE_SHARE * rate, at_most=True, on="measured"),
            note=f"growth of the backlog (Σ end offsets − records read), least squares over "
            f"{len(measured)} samples (each just after the daemon published a snapshot), "
            f"median {statistics.median(backlogs):,.0f}, max "
            f"{max(backlogs):,.0f}; {conditions}; drained {data['drain_seconds']:.1f} s after "
            f"the producer stopped",
        ),
        Result(
            "load.lag",
            statistics.median(lag_metric) / rate,
            "s",
            target=Target(LAG_SECONDS, at_most=True, on="measured"),
            note=f"median of the daemon's streameval_consumer_lag (Σ over partitions, measured "
            f"by the daemon every 5 s) {statistics.median(lag_metric):,.0f} records, max "
            f"{max(lag_metric):,.0f}, in seconds of arrivals; {conditions}",
        ),
        Result(
            "load.rss_drift",
            drift,
            "%",
            # with --quick the warm-up ends before the state has its steady size: no target
            target=Target(DRIFT_TARGET, at_most=True, on="measured") if steady else None,
            note=f"daemon VmRSS {statistics.median(rss[:3]) / mib:.1f} -> "
            f"{statistics.median(rss[-3:]) / mib:.1f} MiB (largest {max(rss) / mib:.1f}, peak "
            f"{data['peak_rss'] / mib:.1f}), medians of the first and last three samples, "
            f"{conditions}; ~{first['open_lists']:,.0f} open lists"
            + ("" if steady else "; the state was still filling (quick run): no target"),
        ),
    ]


# --- 2. a flood of distinct segment values ------------------------------------------------------


def segment_combinations(text: bytes) -> set[tuple[bytes, bytes]]:
    """The distinct (ranker, arm) label values of the samples of a scrape that carry them."""
    combos = set()
    for line in text.splitlines():
        ranker, arm = _RANKER.search(line), _ARM.search(line)
        if ranker is not None and arm is not None:
            combos.add((ranker.group(1), arm.group(1)))
    return combos


def scrape_sizes(
    pool: list[dict[str, Any]],
    judgments: list[bytes],
    n: int,
    per_s: float,
    *,
    rankers: int,
    scrapes: int = 20,
) -> Iterator[tuple[int, bytes, Any]]:
    """Feed ``n`` impressions (ranker cycling through ``rankers`` values) to a fresh pipeline;
    ``scrapes`` times, evenly: (impressions so far, a scrape, the pipeline)."""
    from prometheus_client import CollectorRegistry, generate_latest

    from streameval.config import EvaluationSettings
    from streameval.engine import Pipeline
    from streameval.export.collector import SnapshotCollector

    pipeline = Pipeline(EvaluationSettings())
    pipeline.add_source(SOURCE)
    for raw in judgments:
        pipeline.offer(raw, JUDGMENTS)
    registry = CollectorRegistry()
    registry.register(SnapshotCollector(pipeline.snapshot, version="bench"))
    every = max(1, n // scrapes)
    for offset, raw in enumerate(impressions(pool, n, per_s, rankers=rankers)):
        pipeline.offer(raw, SOURCE, offset)
        if (offset + 1) % every == 0:
            yield offset + 1, generate_latest(registry), pipeline


def segments_child(n: int, per_s: float, seed: int) -> dict[str, Any]:
    from streameval.config import EvaluationSettings

    pool, judgments = impression_pool(seed)
    cap = EvaluationSettings().max_segments
    samples: list[dict[str, float]] = []
    # the flood: a new ranker value on every impression
    for done, text, pipeline in scrape_sizes(pool, judgments, n, per_s, rankers=n):
        samples.append(
            {
                "impressions": done,
                "event_s": done / per_s,
                "scrape_bytes": len(text),
                "segments": len(segment_combinations(text)),
                "open_lists": pipeline.snapshot().open_lists,
                "rss": rss_bytes(),
            }
        )
    # the comparison: the same traffic with exactly max_segments ranker values, every one of
    # them in every window (a legitimate deployment at the cap)
    at_cap = [
        len(text)
        for _, text, _ in scrape_sizes(pool, judgments, n, per_s, rankers=cap // 2, scrapes=4)
    ]
    return {
        "impressions": n,
        "per_s": per_s,
        "max_segments": cap,
        "samples": samples,
        "at_cap_scrape_bytes": at_cap,
    }


def segments_results(data: dict[str, Any]) -> list[Result]:
    samples = data["samples"]
    cap = data["max_segments"]
    second = samples[len(samples) // 2 :]
    rss = [float(s["rss"]) for s in second]
    drift = drift_percent(rss)
    largest = max(s["segments"] for s in samples)
    mib = 2**20
    what = (
        f"{data['impressions']:,} impressions, each with a new ranker value, "
        f"{data['per_s']:g}/event s ({samples[-1]['event_s'] / 3600:.1f} h), max_segments {cap}"
    )
    return [
        Result(
            "load.segments",
            largest,
            "segments",
            target=Target(cap + 1, at_most=True, on="measured"),
            note=f"most distinct (ranker, arm) combinations in any scrape ({len(samples)} "
            f"scrapes, one every 5 %): the cap plus the __other__ bucket at most; {what}",
        ),
        Result(
            "load.segments.scrape_bytes",
            max(s["scrape_bytes"] for s in samples),
            "B",
            baseline=max(data["at_cap_scrape_bytes"]),
            baseline_name=f"{cap} real segments",
            target=Target(1.0, at_most=True),
            note=f"largest scrape (generate_latest) of the flood against the largest of the "
            f"same traffic spread over exactly {cap} segments (50 rankers × 2 arms, all of "
            f"them in every window); {what}",
        ),
        Result(
            "load.segments.rss_drift",
            drift,
            "%",
            target=Target(DRIFT_TARGET, at_most=True, on="measured"),
            note=f"RSS {statistics.median(rss[:3]) / mib:.1f} -> "
            f"{statistics.median(rss[-3:]) / mib:.1f} MiB over the second half "
            f"({second[0]['event_s'] / 3600:.1f}-{second[-1]['event_s'] / 3600:.1f} h of event "
            f"time{', past the 1h window' if second[0]['event_s'] > 3600 else ''}); {what}",
        ),
    ]


# --- 3. a flood of impressions that never get a click ---------------------------------------------


def flood_child(n: int, per_s: float, cap: int, seed: int, calm: int) -> dict[str, Any]:
    from streameval.config import EvaluationSettings
    from streameval.engine import Pipeline

    pool, judgments = impression_pool(seed)
    pipeline = Pipeline(EvaluationSettings(max_open_lists=cap))
    pipeline.add_source(SOURCE)
    for raw in judgments:
        pipeline.offer(raw, JUDGMENTS)
    every = max(1, n // 20)
    samples: list[dict[str, float]] = []
    max_open = 0
    start = time.perf_counter()
    for offset, raw in enumerate(impressions(pool, n, per_s, calm=calm)):
        pipeline.offer(raw, SOURCE, offset)
        if (offset + 1) % every == 0:
            snap = pipeline.snapshot()
            max_open = max(max_open, snap.open_lists)
            samples.append(
                {
                    "impressions": offset + 1,
                    "open_lists": snap.open_lists,
                    "evicted": snap.lists_total.get(("implicit", "evicted"), 0),
                    "rss": rss_bytes(),
                }
            )
    seconds = time.perf_counter() - start
    snap = pipeline.snapshot()
    intake = snap.intake
    by_outcome = {f"{r}/{o}": c for (r, o), c in snap.lists_total.items()}
    return {
        "impressions": n,
        "per_s": per_s,
        "calm": calm,
        "cap": cap,
        "seconds": seconds,
        "samples": samples,
        "max_open_lists": max_open,
        "open_lists": snap.open_lists,
        "accepted_impressions": intake.accepted.get("impression", 0),
        "lists_total": by_outcome,
        "records_read": intake.records_read,
        "accounted": intake.accounted,
    }


def flood_results(data: dict[str, Any], burst: dict[str, Any] | None) -> list[Result]:
    cap = data["cap"]
    totals = data["lists_total"]
    accepted = data["accepted_impressions"]
    results = []
    unaccounted = 0
    details = []
    for relevance in ("implicit", "judged"):
        evicted = totals.get(f"{relevance}/evicted", 0)
        finalized = sum(
            c
            for key, c in totals.items()
            if key.startswith(relevance + "/") and key != f"{relevance}/evicted"
        )
        expected = accepted - data["open_lists"] - finalized
        unaccounted += abs(evicted - expected)
        details.append(f"{relevance}: {evicted:,} evicted, {finalized:,} finalized")
    unaccounted += abs(data["records_read"] - data["accounted"])
    samples = data["samples"]
    second = samples[len(samples) // 2 :]
    rss = [float(s["rss"]) for s in second]
    mib = 2**20
    what = (
        f"{data['impressions']:,} impressions without clicks, the first {data['calm']:,} at "
        f"{data['per_s'] / 10:g}/event s, the rest at {data['per_s']:g}/event s, "
        f"max_open_lists {cap:,}"
    )
    results.append(
        Result(
            "load.flood.open_lists",
            data["max_open_lists"],
            "lists",
            target=Target(cap, at_most=True, on="measured"),
            note=f"most open lists at any of {len(samples)} samples (one every 5 %); {what}",
        )
    )
    results.append(
        Result(
            "load.flood.unaccounted",
            unaccounted,
            "",
            target=Target(0, at_most=True, on="measured"),
            note=f"|evicted − (accepted − open − finalized)| per relevance source + |read − "
            f"(accepted + invalid + duplicate + late + unmatched + pending)|: "
            f"{accepted:,} accepted, {data['open_lists']:,} open, {'; '.join(details)}; "
            f"{data['records_read']:,} read",
        )
    )
    results.append(
        Result(
            "load.flood.rss_drift",
            drift_percent(rss),
            "%",
            target=Target(DRIFT_TARGET, at_most=True, on="measured"),
            note=f"RSS {statistics.median(rss[:3]) / mib:.1f} -> "
            f"{statistics.median(rss[-3:]) / mib:.1f} MiB over the second half; {what} "
            f"({data['impressions'] / data['seconds']:,.0f} impressions/s)",
        )
    )
    if burst is not None:
        b = burst["samples"]
        at_cap = next(s for s in b if s["open_lists"] >= burst["cap"])
        grown = (b[-1]["rss"] - at_cap["rss"]) / (b[-1]["evicted"] - at_cap["evicted"])
        results.append(
            Result(
                "load.flood.burst",
                grown,
                "B/evicted",
                note=f"RSS growth per evicted list when {burst['impressions']:,} impressions "
                f"arrive within one attribution window ({burst['per_s']:g}/event s, "
                f"max_open_lists {burst['cap']:,}): evicted request ids are remembered ~2 "
                f"attribution windows of event time, at most max_open_lists of them; "
                f"RSS {at_cap['rss'] / mib:.1f} -> "
                f"{b[-1]['rss'] / mib:.1f} MiB",
            )
        )
    return results


# --- main -----------------------------------------------------------------------------------------

PARTS = ("sustained", "segments", "flood")


def run_segments(quick: bool, seed: int, details: dict[str, Any]) -> list[Result]:
    n = 50_000 if quick else 100_000
    t0 = time.monotonic()
    data = run_child("segments", "--n", str(n), "--per-s", "12.5", "--seed", str(seed))
    print(f"segments: {time.monotonic() - t0:.0f} s")
    details["segments"] = data
    return segments_results(data)


def run_flood(quick: bool, seed: int, details: dict[str, Any]) -> list[Result]:
    n, per_s, cap = (300_000, 150.0, 30_000) if quick else (1_000_000, 500.0, 100_000)
    t0 = time.monotonic()
    # the first 10 % at a tenth of the rate: lists finalized in the ordinary way before the flood
    args = ["--n", str(n), "--per-s", str(per_s), "--cap", str(cap), "--calm", str(n // 10)]
    data = run_child("flood", *args, "--seed", str(seed))
    details["flood"] = data
    burst = None
    if not quick:
        # 300k impressions in 100 s of event time: all of them within one attribution window
        args = ["--n", "300000", "--per-s", "3000", "--cap", "100000", "--seed", str(seed)]
        burst = details["flood.burst"] = run_child("flood", *args)
    print(f"flood: {time.monotonic() - t0:.0f} s")
    return flood_results(data, burst)


def run_sustained(
    rate: float, seconds: float, seed: int, keep_logs: Path | None, details: dict[str, Any]
) -> list[Result]:
    t0 = time.monotonic()
    with broker() as bootstrap, tempfile.TemporaryDirectory() as tmp:
        print(f"broker {bootstrap} ({time.monotonic() - t0:.0f} s)")
        try:
            data = sustained(bootstrap, rate, seconds, seed, Path(tmp))
        finally:
            if keep_logs is not None:
                keep_logs.mkdir(parents=True, exist_ok=True)
                for log in Path(tmp).glob("*.log"):
                    (keep_logs / log.name).write_bytes(log.read_bytes())
    print(f"sustained: {time.monotonic() - t0:.0f} s")
    details["sustained"] = data
    return sustained_results(data)


def main() -> int:
    parser = suite_parser(__doc__.splitlines()[0] if __doc__ else "", repeats=1)
    parser.add_argument("--seconds", type=float, default=None, help="sustained load, wall s")
    parser.add_argument(
        "--factor", type=float, default=LOAD_FACTOR, help="load as a multiple of the design rate"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", default=",".join(PARTS), help="some of: " + ", ".join(PARTS))
    parser.add_argument("--keep-logs", type=Path, default=None, help="copy the daemon log here")
    # internal: the parts that run in a process of their own
    parser.add_argument("--child", choices=("producer", "segments", "flood"), default=None)
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--topics", default=None)
    parser.add_argument("--rate", type=float, default=None)
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--per-s", type=float, default=None)
    parser.add_argument("--cap", type=int, default=None)
    parser.add_argument("--calm", type=int, default=0)
    args = parser.parse_args()

    if args.child == "producer":
        names = json.loads(args.topics)
        producer_main(args.bootstrap, Topics(*names), args.rate, args.seconds, args.seed)
        return 0
    if args.child == "segments":
        print(json.dumps(segments_child(args.n, args.per_s, args.seed)))
        return 0
    if args.child == "flood":
        print(json.dumps(flood_child(args.n, args.per_s, args.cap, args.seed, args.calm)))
        return 0

    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    if unknown := set(parts) - set(PARTS):
        raise SystemExit(f"unknown part {sorted(unknown)}; known: {', '.join(PARTS)}")
    seconds = args.seconds or (30.0 if args.quick else 90.0)
    rate = args.factor * DESIGN_RATE
    details: dict[str, Any] = {"design_rate": DESIGN_RATE, "factor": args.factor}
    results: list[Result] = []
    if "segments" in parts:
        results += run_segments(args.quick, args.seed, details)
    if "flood" in parts:
        results += run_flood(args.quick, args.seed, details)
    if "sustained" in parts:
        results += run_sustained(rate, seconds, args.seed, args.keep_logs, details)
    print(results_table(results))
    write_json(
        args.json, {"benchmark": "load", **details, "results": [r.as_dict() for r in results]}
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
