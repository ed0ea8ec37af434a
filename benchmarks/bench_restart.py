"""Restart after SIGKILL: wall time to ``/readyz`` 200 with the window state changelog (DESIGN §6,
``kafka.state_topic``) and without it (``""``: the longest window re-read), in the same run, with
both consumer clients.

    .venv/bin/python benchmarks/bench_restart.py [--quick] [--records N] [--rate R] [--json FILE]
    .venv/bin/python benchmarks/bench_restart.py --membership [--quick] [--repeats 5] ...

``--membership``: instead of the state topic on and off, a crashed instance restarted AT ONCE
(no wait for the dead member's session) with static group membership (``kafka.group_instance_id``),
without it, and a graceful restart, with the state topic and the default 45 s session timeout:
see ``_restart_membership.py``. Rows ``restart.static``, ``restart.static.over_graceful`` and
``restart.crash`` (``.confluent`` for confluent-kafka).

Steps (the broker is ``KAFKA_BOOTSTRAP_SERVERS``, else one started for the run, as ``daemon``):

1. Fresh uuid-named topics (``bench_daemon.Topics``: 4 + 4 stream partitions, judgments, a
   dead-letter topic) and a uuid-named state topic per client (every instance reads the whole
   state topic, other groups' records too). ``--records`` simulated records at ``--rate``
   impressions per event second (~3.5 stream records each), i.e. ~73 minutes of event time: more
   than the longest window (1h) + attribution window (5 min) + lateness (10 s), so that without
   the state topic the commit trails the log end by the longest window and not by the whole log.
   Default windows (1m, 5m, 1h), attribution window (5 min), lateness (10 s), bucket (10 s).
2. Four consumer groups: (kafka-python, state topic), (kafka-python, ``""``), (confluent-kafka,
   state topic), (confluent-kafka, ``""``), one client per group (confluent-kafka 2.16 misreads
   commit metadata written by kafka-python: garbage past its end, or a UnicodeDecodeError that
   stops the daemon; confluentinc/librdkafka#4649). In each, a daemon reads the whole log,
   commits for a few seconds with nothing arriving, and is SIGKILLed. Its window gauges are kept,
   and the committed backlog: Σ (log end − committed offset) over the stream partitions, in
   records and in event time (Kafka timestamps of the committed record and of the last one).
3. ``--repeats`` restarts per group (default 3; 1 with ``--quick``), the groups in turn; each
   restarted daemon is SIGKILLed again at its 200, and with nothing arriving its commits leave
   the same backlog, so every restart of a group re-reads the same records. The rows take each
   group's median restart (single restarts of one log varied by up to ±15 % here, e.g. 27.0 to
   39.2 s for nine kafka-python restarts of one log). Before each, the dead member's session
   (``kafka.session_timeout`` = 6 s) is waited out (the group is ``Empty``; by then it always
   is), so the time measured holds no session timeout: it is a clean hand-over (a restart while
   the dead member is still in the group waits up to the session timeout on top). Measured:
   wall time from spawning the process to the first ``/readyz`` 200 (polled every 100 ms), and,
   from the daemon's log, the re-read ("assigned … rebuilding state" to "caught up: ready").
   At the 200 the window gauges must equal the killed daemon's (else the benchmark fails).
4. The design rate (4,000 records/s per instance) over the same event time would hold
   ``span × 4,000`` records between the commit and the log end (span: the committed backlog's
   event time, mean over the partitions). With the state topic that is ~1.28M records, and the
   log ends with them: after the sparse part comes a tail of ``--tail-minutes`` × 60 × 4,000
   records at the design rate (the same population, from a second after the sparse part's last
   record; its first ~4 event minutes ramp up as the clicks start), so the state-on restart
   re-reads the design rate's record count and its time is MEASURED. Without the state topic
   that would be ~15.7M records, too many to produce here, so that figure is extrapolated (and
   so is the state-on one with ``--quick``, which has no tail):
   ``design_s = (wall_s − reread_s) + span_s × 4,000 ÷ rate`` with ``rate`` the client's re-read
   rate measured without the state topic (its records ÷ its re-read seconds: the larger re-read,
   the better estimate of the per-record cost). ``wall_s − reread_s`` is the fixed part (process
   start, judgments, state topic read and bucket load, group join), which does not grow with
   the rate. Target (issue 12): ≤ 30 s with the state topic.
"""

from __future__ import annotations

import json
import signal
import statistics
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from _common import Result, Target, suite_parser, write_json
from bench_daemon import (
    _LOG_TIME,
    SESSION_TIMEOUT,
    Daemon,
    Topics,
    broker,
    committed_offsets,
    have_confluent,
    produce,
    wait_committed,
)
from bench_load import DESIGN_RATE

#: wall seconds from restart to /readyz 200 with the state topic, at most (issue 12)
RESTART_TARGET_S = 30.0
#: the committed backlog with the state topic, at most, in minutes of event time: attribution
#: window (5 min) + lateness (10 s) + one bucket (10 s), and one more bucket of slack
BACKLOG_TARGET_MIN = 5.5
#: impressions per event second that make the design rate's stream records per second once
#: the clicks have ramped up: 3.55 per impression (at 1,013/s the backlog held 1,134,986
#: records over 315.9 s, 3,593/s; at 4,000 / 3.55 the tail's last 315.9 s hold 3,998/s)
TAIL_RATE = DESIGN_RATE / 3.55
#: the gauges a restart must give back as the killed daemon showed them
WINDOW_FAMILIES = (
    "streameval_window_lists",
    "streameval_window_ndcg_sum",
    "streameval_judged_coverage",
    "streameval_engagement_lists",
    "streameval_evaluation_horizon_timestamp_seconds",
)


@dataclass(frozen=True)
class Backlog:
    """What a restart re-reads: the records between the commit and the log end."""

    records: int
    #: event time between the committed record and the last one, mean and max over partitions
    span_s: float
    max_span_s: float


@dataclass(frozen=True)
class Restart:
    consumer: str
    state: bool
    backlog: Backlog
    #: spawn → first /readyz 200
    wall_s: float
    #: "assigned … rebuilding state" → "caught up: ready" (the daemon's log)
    reread_s: float
    #: spawn → "read N state records" (None without the state topic)
    state_read_s: float | None
    state_records: int | None


def windows(daemon: Daemon) -> dict[str, float]:
    """The window gauges on the daemon's /metrics, by sample line."""
    answer = daemon.get("/metrics")
    if answer is None or answer[0] != 200:
        raise RuntimeError(f"no /metrics: {daemon.tail()}")
    out: dict[str, float] = {}
    # each family by its whole name: a prefix would take in others too
    # (streameval_judged_coverage_by_query_class, the judge tracker's, which the state topic
    # does not hold: a restart rebuilds it from the re-read lists only, with either engine)
    names = tuple(f"{family}{end}" for family in WINDOW_FAMILIES for end in ("{", " "))
    for line in answer[1].splitlines():
        if line.startswith(names):
            name, _, v = line.rpartition(" ")
            out[name] = float(v)
    return out


def same_windows(got: dict[str, float], want: dict[str, float]) -> bool:
    return got.keys() == want.keys() and all(
        abs(got[k] - v) <= 1e-9 * max(1.0, abs(v)) for k, v in want.items()
    )


def backlog_of(bootstrap: str, topics: Topics, group: str) -> Backlog:
    """The group's committed backlog, in records and in event time (Kafka timestamps)."""
    from kafka import KafkaConsumer

    ends, committed = committed_offsets(bootstrap, topics, group)
    spans: list[float] = []
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        for tp, offset in committed.items():
            start = offset or 0
            if start >= ends[tp]:
                spans.append(0.0)
                continue
            first = _timestamp_at(consumer, tp, start)
            last = _timestamp_at(consumer, tp, ends[tp] - 1)
            spans.append((last - first) / 1000)
    finally:
        consumer.close()
    records = sum(ends[tp] - (offset or 0) for tp, offset in committed.items())
    return Backlog(records, statistics.fmean(spans), max(spans))


def _timestamp_at(consumer: Any, tp: Any, offset: int) -> int:
    consumer.assign([tp])
    consumer.seek(tp, offset)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for record in consumer.poll(timeout_ms=500, max_records=1).get(tp, []):
            return int(record.timestamp)
    raise RuntimeError(f"no record at {tp} offset {offset}")


def wait_empty(bootstrap: str, group: str, timeout_s: float = 60) -> float:
    """Wait until the group has no member (a SIGKILLed one leaves when its session times out);
    the seconds waited."""
    from kafka import KafkaAdminClient

    start = time.monotonic()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        while time.monotonic() - start < timeout_s:
            info = admin.describe_groups([group])[group]
            if not info["members"] and info["group_state"] in ("Empty", "Dead"):
                return time.monotonic() - start
            time.sleep(0.2)
    finally:
        admin.close()
    raise RuntimeError(f"group {group} still has members after {timeout_s} s")


#: how often /readyz is asked: each request is a thread in the daemon, and at 50 ms the
#: requests took ~2.6 % of a restart's samples (py-spy); 100 ms halves that for ≤ 0.1 s of
#: resolution (a Kubernetes readiness probe asks every few seconds)
READY_POLL_S = 0.1


def wait_ready(daemon: Daemon, timeout_s: float = 600) -> float:
    """Poll /readyz every :data:`READY_POLL_S`; the wall clock (time.time) of the first 200."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        answer = daemon.get("/readyz")
        if answer is not None and answer[0] == 200:
            return time.time()
        if daemon.proc.poll() is not None:
            raise RuntimeError(f"the daemon exited with {daemon.proc.returncode}: {daemon.tail()}")
        time.sleep(READY_POLL_S)
    raise RuntimeError(f"the daemon was not ready in {timeout_s} s: {daemon.tail()}")


def state_read(log: Path) -> tuple[float, int] | None:
    """(wall clock, count) of the daemon's "read N state records" line."""
    for line in log.read_text(errors="replace").splitlines():
        m = _LOG_TIME.match(line)
        if m is not None and " state records from " in line:
            at = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
            return at, int(line.split(" read ", 1)[1].split()[0])
    return None


class Spawning(Protocol):
    """What :func:`spawn` needs of a benchmark's group (``runs`` counts its daemons)."""

    bootstrap: str
    topics: Topics
    name: str
    consumer: str
    settings: dict[str, str]
    workdir: Path
    runs: int


def spawn(group: Spawning) -> Daemon:
    """The group's next daemon, its log numbered after the earlier ones."""
    group.runs += 1
    log = group.workdir / f"{group.name}-{group.runs}.log"
    return Daemon(
        group.bootstrap,
        group.topics,
        group.name,
        log,
        consumer=group.consumer,
        extra=group.settings,
    )


def settled_windows(daemon: Daemon, bootstrap: str, topics: Topics, name: str) -> dict[str, float]:
    """The daemon's window gauges once it has committed with nothing arriving (a restart must
    bring back exactly these); an error when it exports none."""
    wait_committed(bootstrap, topics, name)
    time.sleep(3)  # several commits (interval 1 s) of the caught-up state
    got = windows(daemon)
    if not any(k.startswith("streameval_window_lists") for k in got):
        raise RuntimeError(f"{name}: no window gauges once settled")
    return got


class Group:
    """One consumer group and client, restarted again and again: the window gauges and
    committed backlog its last SIGKILLed daemon left. One client per group: confluent-kafka
    2.16 misreads commit metadata that kafka-python wrote (see the benchmarks README)."""

    def __init__(
        self, bootstrap: str, topics: Topics, consumer: str, state_topic: str, workdir: Path
    ) -> None:
        self.bootstrap = bootstrap
        self.topics = topics
        self.consumer = consumer
        self.state = bool(state_topic)
        self.settings = {"STREAMEVAL_KAFKA__STATE_TOPIC": state_topic}
        self.name = (
            f"bench-restart-{consumer}-{'state' if state_topic else 'none'}-{uuid.uuid4().hex[:8]}"
        )
        self.workdir = workdir
        self.runs = 0
        self.want: dict[str, float] = {}
        self.backlog = Backlog(0, 0.0, 0.0)

    def _spawn(self) -> Daemon:
        return spawn(self)

    def _settle_and_kill(self, daemon: Daemon) -> None:
        """Let it commit with nothing arriving, keep its windows and backlog, SIGKILL it."""
        try:
            self.want = settled_windows(daemon, self.bootstrap, self.topics, self.name)
            self.backlog = backlog_of(self.bootstrap, self.topics, self.name)
        finally:
            daemon.stop(signal.SIGKILL)

    def first(self, total: int) -> None:
        daemon = self._spawn()
        try:
            daemon.wait_records(total)
            wait_ready(daemon)
        except BaseException:
            daemon.stop(signal.SIGKILL)
            raise
        self._settle_and_kill(daemon)
        print(f"{self.name}: first run read {total:,} records; {self.backlog}")

    def restart(self) -> Restart:
        waited = wait_empty(self.bootstrap, self.name)
        # what this restart re-reads (the first time: what the first daemon left; then what the
        # last restart's commits left, the same when nothing arrived in between)
        backlog = self.backlog
        if self.runs > 1:
            backlog = backlog_of(self.bootstrap, self.topics, self.name)
        spawned = time.time()
        daemon = self._spawn()
        try:
            ready = wait_ready(daemon)
            got = windows(daemon)
            reread_s = daemon.catch_up_seconds()
        except BaseException:
            daemon.stop(signal.SIGKILL)
            raise
        if not same_windows(got, self.want):
            daemon.stop(signal.SIGKILL)
            diff = sorted(set(got.items()) ^ set(self.want.items()))[:4]
            raise RuntimeError(f"{self.name}: windows differ at ready: {diff}")
        read = state_read(daemon.log)
        daemon.stop(signal.SIGKILL)
        result = Restart(
            self.consumer,
            self.state,
            backlog,
            ready - spawned,
            reread_s,
            None if read is None else read[0] - spawned,
            None if read is None else read[1],
        )
        print(f"restart after {waited:.1f} s of session wait: {result}")
        return result


def run(
    bootstrap: str,
    n: int,
    rate: float,
    seed: int,
    workdir: Path,
    *,
    tail_min: float,
    repeats: int = 1,
) -> dict[str, Any]:
    topics = Topics.fresh()
    topics.create(bootstrap)
    # a state topic per group: every instance reads the whole topic, other groups' records too
    state_topics: list[str] = []
    try:
        t0 = time.perf_counter()
        sent, last_ms = produce(bootstrap, topics, n, seed, rate=rate)
        print(f"produced {sent} in {time.perf_counter() - t0:.1f} s")
        tail = 0
        if tail_min > 0:
            # the design rate's tail: the same population (seed), its own request ids, from a
            # second after the sparse part's last record (nothing of it arrives late)
            tail = int(DESIGN_RATE * tail_min * 60)
            t0 = time.perf_counter()
            tail_sent, _ = produce(
                bootstrap, topics, tail, seed, rate=TAIL_RATE, start_ms=last_ms + 1_000
            )
            for topic, count in tail_sent.items():
                sent[topic] = sent.get(topic, 0) + count
            print(f"produced a design-rate tail {tail_sent} in {time.perf_counter() - t0:.1f} s")
        n += tail
        clients = ["kafka-python"] + (["confluent-kafka"] if have_confluent() else [])
        for client in clients:
            state_topics.append(f"bench-state-{client}-{uuid.uuid4().hex[:10]}")
        groups = [
            Group(bootstrap, topics, client, state, workdir)
            for client, state_topic in zip(clients, state_topics, strict=True)
            for state in (state_topic, "")
        ]
        for group in groups:
            group.first(n)
        # the same restart again and again, the groups in turn: nothing arrives, so each one
        # re-reads the same backlog (its commit again trails the log end by the same event time)
        restarts = [group.restart() for _ in range(repeats) for group in groups]
        return {
            "records": n,
            "rate": rate,
            "tail_records": tail,
            "sent": sent,
            "session_timeout": SESSION_TIMEOUT,
            "repeats": repeats,
            "restarts": [asdict(r) for r in restarts],
        }
    finally:
        topics.delete(bootstrap)
        _delete_topics(bootstrap, state_topics)


def _delete_topics(bootstrap: str, topics: list[str]) -> None:
    from kafka import KafkaAdminClient

    if not topics:
        return
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.delete_topics(topics)
    except Exception as exc:  # best effort, as Topics.delete (never created when unused)
        print(f"could not delete {topics}: {exc}")
    finally:
        admin.close()


def design_seconds(r: dict[str, Any], rate: float) -> float:
    """The restart's wall time at the design rate: its fixed part + the design-rate re-read."""
    return float(r["wall_s"] - r["reread_s"] + r["backlog"]["span_s"] * DESIGN_RATE / rate)


def needed_rate(r: dict[str, Any]) -> str:
    """The re-read rate at which the restart would take the target's 30 s at the design rate."""
    left = RESTART_TARGET_S - (r["wall_s"] - r["reread_s"])
    if left <= 0:
        return "no rate: the fixed part alone takes longer, so no"
    return f"{r['backlog']['span_s'] * DESIGN_RATE / left:,.0f}"


def against_off(
    name: str, measured: float, unit: str, off: float, *, note: str, target: Target | None = None
) -> Result:
    """A row whose baseline is the same figure without the state topic."""
    return Result(
        name,
        measured,
        unit,
        baseline=off,
        baseline_name="state topic off",
        target=target,
        note=note,
    )


def _median_of(r: dict[str, Any]) -> str:
    walls = r.get("walls", [r["wall_s"]])
    if len(walls) == 1:
        return "one restart per group"
    return f"the median of {len(walls)} restarts per group (state on: {walls} s)"


def restart_row(name: str, on_s: float, off_s: float, note: str) -> Result:
    """A ``restart`` row: seconds to /readyz 200 with the state topic, against without it."""
    target = Target(RESTART_TARGET_S, at_most=True, on="measured")
    return against_off(name, on_s, "s", off_s, target=target, note=note)


def measured_row(
    name: str, client: str, on: dict[str, Any], off: dict[str, Any], *, rate: float, data: Any
) -> Result:
    """The restart with the state topic, measured on a log that ends at the design rate (its
    re-read holds the design rate's record count); without it, extrapolated (15.7M records)."""
    on_rate = on["backlog"]["records"] / on["reread_s"]
    return restart_row(
        name,
        on["wall_s"],
        design_seconds(off, rate),
        f"{client}, MEASURED at the design rate: the log ends with {data['tail_records']:,}"
        f" records at {DESIGN_RATE:,}/s; {_median_of(on)}; state on: spawn → /readyz 200 in "
        f"{on['wall_s']:.1f} s, "
        f"re-reading {on['backlog']['records']:,} records ({on['backlog']['span_s'] / 60:.2f} "
        f"min of event time) in {on['reread_s']:.1f} s ({on_rate:,.0f}/s), fixed part "
        f"{on['wall_s'] - on['reread_s']:.1f} s ({on['state_records']} state records read by "
        f"{on['state_read_s']:.1f} s); windows equal the killed daemon's at the 200. State off "
        f"EXTRAPOLATED (1h window at the design rate: "
        f"{off['backlog']['span_s'] * DESIGN_RATE:,.0f} records): "
        f"({off['wall_s']:.1f} − {off['reread_s']:.1f}) + {off['backlog']['span_s']:.0f} s × "
        f"{DESIGN_RATE:,} ÷ {rate:,.0f}/s (its measured re-read of "
        f"{off['backlog']['records']:,} records); the dead member's session "
        f"({data['session_timeout']}) waited out before the restart",
    )


def median_restart(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The restart whose wall time is the median (the lower middle one of an even count), with
    every run's wall time beside it (``walls``)."""
    ordered = sorted(runs, key=lambda r: r["wall_s"])
    middle = ordered[(len(ordered) - 1) // 2]
    return {**middle, "walls": [round(r["wall_s"], 1) for r in runs]}


def results(data: dict[str, Any]) -> list[Result]:
    rows: list[Result] = []
    grouped: dict[tuple[str, bool], list[dict[str, Any]]] = {}
    for r in data["restarts"]:
        grouped.setdefault((r["consumer"], r["state"]), []).append(r)
    by = {key: median_restart(runs) for key, runs in grouped.items()}
    for client in dict.fromkeys(r["consumer"] for r in data["restarts"]):
        on, off = by[(client, True)], by[(client, False)]
        rate = off["backlog"]["records"] / off["reread_s"]
        on_design, off_design = design_seconds(on, rate), design_seconds(off, rate)
        suffix = "" if client == "kafka-python" else ".confluent"
        if data.get("tail_records"):
            rows.append(measured_row(f"restart{suffix}", client, on, off, rate=rate, data=data))
            continue
        rows.append(
            restart_row(
                f"restart{suffix}",
                on_design,
                off_design,
                f"{client}, EXTRAPOLATED to {DESIGN_RATE:,} records/s: (wall − re-read) + "
                f"backlog span × {DESIGN_RATE:,} ÷ re-read rate; state on: ({on['wall_s']:.1f} − "
                f"{on['reread_s']:.1f}) + {on['backlog']['span_s']:.0f} s × {DESIGN_RATE:,} ÷ "
                f"{rate:,.0f}/s = {on_design:.1f} s; off: ({off['wall_s']:.1f} − "
                f"{off['reread_s']:.1f}) + {off['backlog']['span_s']:.0f} s × {DESIGN_RATE:,} ÷ "
                f"{rate:,.0f}/s = {off_design:.0f} s (re-read rate: the state-off run's "
                f"{off['backlog']['records']:,} records ÷ {off['reread_s']:.1f} s; 30 s would "
                f"need {needed_rate(on)} records/s; with the state-on run's own re-read rate, "
                f"{on['backlog']['records'] / on['reread_s']:,.0f}/s over "
                f"{on['backlog']['records']:,} records: "
                f"{design_seconds(on, on['backlog']['records'] / on['reread_s']):.1f} s); "
                "the dead member's session "
                f"({data['session_timeout']}) waited out before the restart",
            )
        )
        rows.append(
            against_off(
                f"restart{suffix}.measured",
                on["wall_s"],
                "s",
                off["wall_s"],
                note=f"{client}, measured on this log ({data['rate']:g} impressions/s): spawn → "
                f"/readyz 200; state on: re-read {on['backlog']['records']:,} records in "
                f"{on['reread_s']:.2f} s ({on['backlog']['records'] / on['reread_s']:,.0f}/s), "
                f"{on['state_records']} state records read by {on['state_read_s']:.1f} s after "
                f"the spawn, fixed part {on['wall_s'] - on['reread_s']:.1f} s; off: re-read "
                f"{off['backlog']['records']:,} in {off['reread_s']:.2f} s, fixed part "
                f"{off['wall_s'] - off['reread_s']:.1f} s; windows equal the killed daemon's "
                "at the 200",
            )
        )
    first_on = by[("kafka-python", True)]["backlog"]
    first_off = by[("kafka-python", False)]["backlog"]
    rows.append(
        against_off(
            "restart.backlog",
            first_on["span_s"] / 60,
            "min",
            first_off["span_s"] / 60,
            target=Target(BACKLOG_TARGET_MIN, at_most=True, on="measured"),
            note=f"event time between the committed record and the log end (mean over the "
            f"partitions; max {first_on['max_span_s'] / 60:.2f} and "
            f"{first_off['max_span_s'] / 60:.2f} min): {first_on['records']:,} and "
            f"{first_off['records']:,} records here, "
            f"{first_on['span_s'] * DESIGN_RATE:,.0f} and {first_off['span_s'] * DESIGN_RATE:,.0f}"
            f" at {DESIGN_RATE:,} records/s",
        )
    )
    return rows


def main() -> int:
    parser = suite_parser(__doc__.splitlines()[0] if __doc__ else "", repeats=3)
    parser.add_argument("--records", type=int, default=None, help="simulated records produced")
    parser.add_argument("--rate", type=float, default=None, help="impressions per event second")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--tail-minutes",
        type=float,
        default=None,
        help="the log ends with DESIGN_RATE x 60 x this many records at the design rate "
        "(default 9, 0 with --quick; the first 4 event minutes ramp up as clicks arrive), so "
        "that the state-on restart re-reads the design rate's record count, measured",
    )
    parser.add_argument("--keep-logs", type=Path, default=None, help="copy the daemon logs here")
    parser.add_argument(
        "--membership",
        action="store_true",
        help="restart at once after a SIGKILL with kafka.group_instance_id, without it, and "
        "after a SIGTERM (state topic on, session timeout 45 s), instead of state on/off",
    )
    parser.add_argument(
        "--crash-repeats",
        type=int,
        default=None,
        help="with --membership: restarts of the crash without the id (each waits ~45 s for "
        "the dead member's session; default: --repeats)",
    )
    parser.add_argument(
        "--modes",
        default="static,crash,graceful",
        help="with --membership: which of static, crash, graceful (comma-separated)",
    )
    parser.add_argument(
        "--clients",
        default=None,
        help="with --membership: kafka-python and/or confluent-kafka (comma-separated; "
        "default: both, when confluent-kafka is installed)",
    )
    args = parser.parse_args()
    # ~73 minutes of event time either way (~3.95 records per impression, judgments included)
    rate = args.rate or (5.0 if args.quick else 20.0)
    n = args.records or int(rate * 3.95 * 73 * 60)
    tail_min = (0.0 if args.quick else 9.0) if args.tail_minutes is None else args.tail_minutes
    repeats = 1 if args.quick and not args.membership else args.repeats
    study = results
    with broker() as bootstrap, tempfile.TemporaryDirectory() as tmp:
        print(f"broker {bootstrap}")
        try:
            if args.membership:
                import _restart_membership as membership

                study = membership.results
                data = membership.run(
                    bootstrap,
                    n,
                    rate,
                    args.seed,
                    Path(tmp),
                    tail_min=tail_min,
                    repeats=repeats,
                    crash_repeats=args.crash_repeats or repeats,
                    modes=tuple(args.modes.split(",")),
                    clients=None if args.clients is None else tuple(args.clients.split(",")),
                )
            else:
                data = run(
                    bootstrap, n, rate, args.seed, Path(tmp), tail_min=tail_min, repeats=repeats
                )
        finally:
            if args.keep_logs is not None:
                args.keep_logs.mkdir(parents=True, exist_ok=True)
                for log in Path(tmp).glob("*.log"):
                    (args.keep_logs / log.name).write_bytes(log.read_bytes())
    rows = study(data)
    print(json.dumps(data["restarts"], indent=1))
    for row in rows:
        print(f"{row.name}: {row.measured:.2f} {row.unit} (met: {row.met}) - {row.note}")
    write_json(args.json, {"benchmark": "restart", **data, "results": [r.as_dict() for r in rows]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
