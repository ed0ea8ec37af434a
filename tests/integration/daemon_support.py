"""Shared pieces of the daemon's integration tests: a known log, the daemon as a process,
its /metrics, and the replay of what the broker holds."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from streameval.config import Settings

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
PARTITIONS = 4


#: (partitions, topic configs) of each role; the judgments are a compacted table (DESIGN)
_TOPIC_SPECS: dict[str, tuple[int, dict[str, str]]] = {
    "impressions": (PARTITIONS, {}),
    "clicks": (PARTITIONS, {}),
    "judgments": (1, {"cleanup.policy": "compact"}),
    "dlq": (1, {}),
}


@dataclass
class Topics:
    impressions: str
    clicks: str
    judgments: str
    dlq: str
    #: the window state topic: the daemon creates it (compacted) on its first start
    state: str = field(default_factory=lambda: f"state-{uuid.uuid4().hex}")

    @classmethod
    def made_by(
        cls, topic_factory: Callable[..., str], data_config: Mapping[str, str] | None = None
    ) -> Topics:
        """The four topics through the session's ``topic_factory`` (uuid names, deleted
        afterwards). ``data_config`` is added to the impression, click and judgment topics'
        configs; the dead-letter topic keeps the broker's defaults."""
        extra = dict(data_config or {})
        return cls(
            **{
                role: topic_factory(
                    partitions, prefix=role, config=config if role == "dlq" else config | extra
                )
                for role, (partitions, config) in _TOPIC_SPECS.items()
            }
        )

    @classmethod
    def created_on(cls, bootstrap: str, **client: Any) -> Topics:
        """The four topics, uuid-named, on a broker of a test's own (``client``: kafka-python
        connection settings, e.g. SASL); they go with that broker."""
        names = {role: f"{role}-{uuid.uuid4().hex}" for role in _TOPIC_SPECS}
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, **client)
        admin.create_topics(
            {
                names[role]: {"num_partitions": p, "replication_factor": 1, "configs": c}
                for role, (p, c) in _TOPIC_SPECS.items()
            },
            wait_for_metadata=True,
        )
        admin.close()
        return cls(**names)

    def env(self, bootstrap: str, group: str, port: int) -> dict[str, str]:
        return {
            "STREAMEVAL_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
            "STREAMEVAL_KAFKA__GROUP_ID": group,
            "STREAMEVAL_KAFKA__TOPICS": json.dumps([self.impressions, self.clicks]),
            "STREAMEVAL_KAFKA__JUDGMENT_TOPICS": json.dumps([self.judgments]),
            "STREAMEVAL_KAFKA__DLQ_TOPIC": self.dlq,
            "STREAMEVAL_KAFKA__STATE_TOPIC": self.state,
            "STREAMEVAL_KAFKA__COMMIT_INTERVAL": "1s",
            "STREAMEVAL_KAFKA__SESSION_TIMEOUT": "6s",
            "STREAMEVAL_METRICS__HOST": "127.0.0.1",
            "STREAMEVAL_METRICS__PORT": str(port),
        }


@dataclass
class Log:
    """Records to produce: (topic role, key, value, partition or None)."""

    records: list[tuple[str, bytes | None, bytes, int | None]] = field(default_factory=list)

    def add(self, role: str, key: str | None, value: dict[str, Any] | bytes) -> None:
        raw = value if isinstance(value, bytes) else json.dumps(value).encode()
        self.records.append((role, None if key is None else key.encode(), raw, None))


#: the consumer clients of `kafka.consumer`: the tests of the daemon's promises run with both
CONSUMERS = ("kafka-python", "confluent-kafka")


def consumer_env(consumer: str) -> dict[str, str]:
    return {"STREAMEVAL_KAFKA__CONSUMER": consumer}


def make_log(
    seed: int,
    requests: int,
    start_ms: int = T0,
    span_ms: int = 20 * 60_000,
    *,
    judgments: bool = True,
) -> Log:
    """A small, varied log: two arms, clicks, dwell, purchases, judgments (unless
    ``judgments`` is false), a few bad records."""
    rng = random.Random(seed)
    log = Log()
    queries = [f"query {i}" for i in range(12)]
    docs = [f"d{i}" for i in range(40)]
    for q in queries:
        for d in rng.sample(docs, 8):
            grade = rng.randint(0, 3)  # drawn either way: the same requests follow
            if judgments:
                log.add(
                    "judgments",
                    f"{q}\x1f{d}",
                    {
                        "type": "judgment",
                        "query": q,
                        "doc_id": d,
                        "grade": grade,
                        "timestamp": start_ms - 1,
                    },
                )
    for i in range(requests):
        rid = f"req-{seed}-{i}"
        ts = start_ms + int(i * span_ms / requests)
        arm = "control" if i % 2 else "treatment"
        results = rng.sample(docs, 10)
        log.add(
            "impressions",
            rid,
            {
                "type": "impression",
                "request_id": rid,
                "timestamp": ts,
                "query": rng.choice(queries),
                "results": results,
                "labels": {"ranker": f"r-{arm}", "arm": arm},
            },
        )
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
            pos = min(int(rng.expovariate(0.4)), 9)
            action = rng.choice(["click", "click", "click", "dwell", "purchase"])
            ev: dict[str, Any] = {
                "type": "click",
                "request_id": rid,
                "doc_id": results[pos],
                "timestamp": ts + rng.randint(500, 120_000),
                "action": action,
            }
            if action == "dwell":
                ev["dwell_ms"] = rng.choice([5_000, 45_000])
            log.add("clicks", rid, ev)
        if i % 97 == 5:
            log.add("clicks", rid, b'{"type": "click", "request_id": ')  # broken JSON
        if i % 89 == 7:
            log.add(
                "clicks",
                rid,
                {
                    "type": "click",
                    "request_id": rid,
                    "doc_id": results[0],
                    "timestamp": ts + 1_000,
                    "event_id": f"dup-{rid}",
                },
            )
            log.add(
                "clicks",
                rid,
                {
                    "type": "click",
                    "request_id": rid,
                    "doc_id": results[0],
                    "timestamp": ts + 1_000,
                    "event_id": f"dup-{rid}",
                },
            )
    return log


def sentinels(log: Log, at_ms: int) -> None:
    """One impression per partition of both topics at ``at_ms``: moves every partition's
    watermark past the real traffic, as live traffic would."""
    for p in range(PARTITIONS):
        for role in ("impressions", "clicks"):
            rec: dict[str, Any]
            if role == "impressions":
                rec = {
                    "type": "impression",
                    "request_id": f"sentinel-{p}",
                    "timestamp": at_ms,
                    "results": ["x"],
                    "labels": {"ranker": "sentinel", "arm": "sentinel"},
                }
            else:
                rec = {
                    "type": "click",
                    "request_id": f"sentinel-{p}",
                    "doc_id": "x",
                    "timestamp": at_ms,
                }
            log.records.append((role, f"sentinel-{p}".encode(), json.dumps(rec).encode(), p))


def produce(bootstrap: str, topics: Topics, log: Log, **client: Any) -> None:
    """The log's records, in order (``client``: kafka-python connection settings), every one
    acknowledged. A flush does not raise for records the broker refused: a broker restarted a
    moment ago refused them (its partitions not led yet) and the records were silently missing,
    which looked like a daemon that stopped reading. Refused records are sent again, in order,
    for up to 30 s (they then land after the ones that were taken)."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, **client)
    pending = list(log.records)
    deadline = time.monotonic() + 30
    try:
        while pending:
            futures = [
                producer.send(getattr(topics, role), key=key, value=value, partition=partition)
                for role, key, value, partition in pending
            ]
            producer.flush()
            outcomes = zip(pending, futures, strict=True)
            refused = [(r, f.exception) for r, f in outcomes if f.failed()]
            if refused and time.monotonic() > deadline:
                raise AssertionError(f"{len(refused)} records refused, e.g. {refused[0][1]!r}")
            pending = [r for r, _ in refused]
            if pending:
                time.sleep(0.5)
    finally:
        producer.close()


def read_all(bootstrap: str, topic: str) -> list[Any]:
    """Every record of ``topic`` now, from its start (kafka-python ``ConsumerRecord``s)."""
    consumer = KafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=5_000
    )
    try:
        return list(consumer)
    finally:
        consumer.close()


def dump_partitions(
    bootstrap: str,
    topics: Topics,
    directory: Path,
    convert: Callable[[bytes], bytes] | None = None,
    **client: Any,
) -> list[Path]:
    """Each partition of the judgment, impression and click topics as one JSON-lines file, in
    offset order: exactly what the daemon reads, for `streameval replay` (``convert``: each
    value's line instead of the value, e.g. the native record a foreign one was made from;
    ``client``: kafka-python connection settings)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, **client)
    paths: list[Path] = []
    for topic in (topics.judgments, topics.impressions, topics.clicks):
        parts = sorted(consumer.partitions_for_topic(topic) or ())
        for p in parts:
            tp = TopicPartition(topic, p)
            consumer.assign([tp])
            consumer.seek_to_beginning(tp)
            end = consumer.end_offsets([tp])[tp]
            lines: list[bytes] = []
            while consumer.position(tp) < end:
                for recs in consumer.poll(timeout_ms=500).values():
                    lines.extend(r.value if convert is None else convert(r.value) for r in recs)
            path = directory / f"{topic}-{p}.jsonl"
            path.write_bytes(b"".join(v.replace(b"\n", b" ") + b"\n" for v in lines))
            paths.append(path)
    consumer.close()
    return paths


def replay_json(paths: list[Path], config: Path | None = None) -> dict[str, Any]:
    """`streameval replay --no-finish --output json` of ``paths`` (``config``: a TOML file, e.g.
    the ``[input]`` of a mapped format)."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "streameval.cli",
            "replay",
            "--no-finish",
            "--output",
            "json",
            *([] if config is None else ["--config", str(config)]),
            *map(str, paths),
        ],
        check=True,
        capture_output=True,
        env=_clean_env(),
        timeout=120,
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def in_process_settings(bootstrap: str, topics: Topics, group: str, **kafka: Any) -> Settings:
    """The settings of a daemon run in the test's own process (``Daemon(settings).run``) on
    ``topics``, metrics on a free loopback port; ``kafka``: more ``[kafka]`` keys."""
    return Settings(
        kafka={
            "bootstrap_servers": bootstrap,
            "group_id": group,
            "topics": [topics.impressions, topics.clicks],
            "judgment_topics": [topics.judgments],
            "dlq_topic": topics.dlq,
            "state_topic": topics.state,
            **kafka,
        },
        metrics={"host": "127.0.0.1", "port": 0},
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("STREAMEVAL_")}


#: the daemon, with the Kafka client's rebalance steps in its log (what a failure reports)
DAEMON_COMMAND = [sys.executable, "-m", "streameval.cli", "run", "--log-level", "INFO"]
DAEMON_COMMAND += ["--client-log-level", "INFO"]


class DaemonProcess:
    #: the daemons of the running test still alive (a failure reports on all of them)
    live: ClassVar[weakref.WeakSet[DaemonProcess]] = weakref.WeakSet()

    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        self.port = int(env["STREAMEVAL_METRICS__PORT"])
        self.log_path = log_path
        self._log = log_path.open("ab")
        self.proc = subprocess.Popen(
            DAEMON_COMMAND,
            env={**_clean_env(), **env},
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        DaemonProcess.live.add(self)

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
        except OSError:
            return 0, ""

    def metrics(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        status, text = self.get("/metrics")
        if status != 200:
            return {}
        out = {}
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
        return out

    def log_tail(self, lines: int = 30) -> str:
        """The daemon's own log lines (not the tracebacks' indented lines), for failure messages."""
        text = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join([ln for ln in text if ln[:4].isdigit()][-lines:])

    def wait_for(
        self, predicate: Any, timeout_s: float = 120, what: str = "", *, ready: bool = False
    ) -> dict[Any, float]:
        """Poll /metrics until ``predicate(metrics)`` holds (and /readyz is 200 if ``ready``)."""
        deadline = time.monotonic() + timeout_s
        metrics: dict[Any, float] = {}
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"daemon exited with {self.proc.returncode} ({what})\n{self.log_tail()}"
                )
            metrics = self.metrics()
            if metrics and predicate(metrics) and (not ready or self.get("/readyz")[0] == 200):
                return metrics
            time.sleep(0.25)
        progress = {
            n: v
            for (n, labels), v in metrics.items()
            if n.startswith(("streameval_records_read", "streameval_evaluation_horizon"))
            or n.startswith(("streameval_events_total", "streameval_open_lists", "streameval_wat"))
        }
        raise AssertionError(
            f"timed out waiting for {what}; last figures: {progress}\n{self.log_tail()}"
            + self.post_mortem()
            + "".join(
                d.post_mortem() for d in list(DaemonProcess.live) if d is not self and d.running
            )
        )

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def post_mortem(self) -> str:
        """For a wait in vain: this daemon's longer log tail and its threads' stacks (py-spy),
        so that a hang in CI says where each daemon of the test was (another one may be the
        one holding a rebalance up)."""
        if self.proc.poll() is not None:
            return f"\n--- {self.log_path.name}: exited {self.proc.returncode}"
        spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        try:
            done = subprocess.run(
                [spy, "dump", "--pid", str(self.proc.pid)],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            stacks = done.stdout + done.stderr
        except (OSError, subprocess.TimeoutExpired) as exc:
            stacks = f"(no stacks: {exc})"
        return f"\n--- {self.log_path.name}, log:\n{self.log_tail(80)}\n--- stacks:\n{stacks}"

    def wait_caught_up(
        self, horizon_s: float, what: str, partitions: int = 2 * PARTITIONS
    ) -> dict[Any, float]:
        """Until the daemon holds ``partitions`` partitions (one lag series each: a killed
        member stays in the group until its session times out), has reached the evaluation
        horizon ``horizon_s`` and is ready."""
        return self.wait_for(
            lambda m: (
                value(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
                and sum(1 for _ in samples(m, "streameval_consumer_lag")) == partitions
            ),
            what=what,
            ready=True,
        )

    def terminate(self, timeout_s: float = 30) -> int:
        """SIGTERM, and the exit code; a daemon still running after ``timeout_s`` fails the test
        with its log tail and stacks (where its shutdown hangs), and is killed."""
        self.proc.terminate()
        try:
            code = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            diagnosis = self.post_mortem()
            self.kill()
            # the daemon's own dump of its threads (faulthandler, 20 s after the signal: see
            # streameval.commands.run.stop_handler), in case py-spy could not attach: the lines
            # the log tail above leaves out (no timestamp), not the log lines a second time
            dumped = [
                ln
                for ln in self.log_path.read_text(errors="replace").splitlines()[-400:]
                if not ln[:4].isdigit()
            ]
            raise AssertionError(
                f"{self.log_path.name}: still running {timeout_s:g} s after SIGTERM"
                + diagnosis
                + "\n--- the log's other lines (tracebacks, the faulthandler's stacks):\n"
                + "\n".join(dumped[-120:])
            ) from None
        self._log.close()
        return code

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        self._log.close()


def value(metrics: dict[Any, float], name: str, **labels: str) -> float | None:
    return metrics.get((name, tuple(sorted(labels.items()))))


def samples(metrics: dict[Any, float], name: str) -> Iterator[tuple[dict[str, str], float]]:
    for (n, labels), v in metrics.items():
        if n == name:
            yield dict(labels), v


def window_labels(row: dict[str, Any]) -> dict[str, str]:
    """The /metrics labels of one row of `replay --output json`'s windows."""
    return {"k": str(row["k"]), "window": row["window"], "relevance": row["relevance"]} | row[
        "segment"
    ]


def intake_figures(metrics: dict[Any, float]) -> dict[str, float]:
    """The daemon's intake outcomes, for a failure message: where its records went."""
    names = (
        "streameval_records_read_total",
        "streameval_events_total",
        "streameval_invalid_events_total",
        "streameval_late_events_total",
        "streameval_duplicate_events_total",
        "streameval_unmatched_clicks_total",
        "streameval_evaluation_horizon_timestamp_seconds",
        "streameval_watermark_timestamp_seconds",
    )
    return {f"{n}{dict(labels) or ''}": v for (n, labels), v in metrics.items() if n in names and v}


def assert_windows_match(
    metrics: dict[Any, float], expected: dict[str, Any], *, extra_segment: str | None = None
) -> int:
    """Every window figure the daemon exports equals replay's, row for row, and it exports no
    other row — except rows whose segment labels all equal ``extra_segment`` (traffic that
    replay was not given); returns the number of replay's rows."""
    for row in expected["windows"]:
        labels = window_labels(row)
        got = value(metrics, "streameval_window_lists", **labels)
        assert got == row["lists"], (
            f"{labels}: the daemon has {got} lists, replay {row['lists']}; the daemon's intake: "
            f"{intake_figures(metrics)}; replay's: {expected.get('intake')}"
        )
        assert value(metrics, "streameval_window_ndcg_sum", **labels) == pytest.approx(
            row["ndcg_sum"], rel=1e-9, abs=1e-12
        ), labels
        if row["ndcg"] is not None:
            assert value(metrics, "streameval_ndcg", **labels) == pytest.approx(
                row["ndcg"], rel=1e-9
            ), labels
        if row["judged_coverage"] is not None:
            assert value(metrics, "streameval_judged_coverage", **labels) == pytest.approx(
                row["judged_coverage"], rel=1e-9
            ), labels
        seg = {"window": row["window"], **row["segment"]}
        if row["click_through_rate"] is not None:
            assert value(metrics, "streameval_click_through_rate", **seg) == pytest.approx(
                row["click_through_rate"], rel=1e-9
            ), seg
            assert value(metrics, "streameval_mrr", **seg) == pytest.approx(row["mrr"], rel=1e-9)
    wanted = {tuple(sorted(window_labels(row).items())) for row in expected["windows"]}
    for labels, _ in samples(metrics, "streameval_window_lists"):
        if tuple(sorted(labels.items())) not in wanted:
            segment = {v for k, v in labels.items() if k not in ("k", "window", "relevance")}
            assert extra_segment is not None and segment == {extra_segment}, labels
    return len(wanted)


@contextlib.contextmanager
def stopped_at_exit(*daemons: DaemonProcess) -> Iterator[None]:
    """Whatever happens inside, no daemon of ``daemons`` outlives the block (one still running
    is killed: a test that failed half-way leaves no member in the group)."""
    try:
        yield
    finally:
        for d in daemons:
            if d.proc.poll() is None:
                d.kill()


def restore_third(
    bootstrap: str,
    topics: Topics,
    group: str,
    env: dict[str, str],
    tmp_path: Path,
    *,
    done: Callable[[dict[Any, float]], bool],
) -> dict[Any, float]:
    """A third daemon of ``group``, started once the others have stopped: waits until ``done``
    holds, checks that it restored the group's detector snapshot, stops it; its last figures."""
    log = tmp_path / "c.log"
    c = DaemonProcess(topics.env(bootstrap, group, free_port()) | env, log)
    with stopped_at_exit(c):
        metrics = c.wait_for(done, what="daemon c to restore the group's state", ready=True)
        assert "restored the group's state" in log.read_text()
        assert c.terminate() == 0
    return metrics
