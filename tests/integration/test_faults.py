"""Faults against the real broker: the broker stopped and restarted under a running daemon, a
topic missing at start, and two daemons sharing one group (partial sufficient statistics that
sum to the whole, and a SIGTERM that hands one's partitions to the other without loss).

The restart test runs a broker of its own (scripts/kafka-broker in its own data dir: stopped and
started again there, it keeps its ports and its data), so the session's broker is not disturbed.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient

from tests.integration.conftest import (
    BROKER_SCRIPT,
    START_TIMEOUT_S,
    STOP_TIMEOUT_S,
    TopicFactory,
    _broker_env,
    _broker_script,
    _unavailable,
)
from tests.integration.daemon_support import (
    CONSUMERS,
    PARTITIONS,
    T0,
    DaemonProcess,
    Log,
    Topics,
    _clean_env,
    assert_windows_match,
    consumer_env,
    dump_partitions,
    free_port,
    make_log,
    produce,
    samples,
    sentinels,
    value,
    window_labels,
)

pytestmark = pytest.mark.kafka


def _num(metrics: dict[Any, float], name: str, **labels: str) -> float:
    v = value(metrics, name, **labels)
    return -1.0 if v is None else v


def _identity(metrics: dict[Any, float]) -> int:
    """records read == the sum of the outcomes, clicks still waiting for their impression
    included (`streameval_pending_clicks`); returns read."""
    read = int(_num(metrics, "streameval_records_read_total"))
    outcomes = sum(
        v
        for name in (
            "streameval_events_total",
            "streameval_invalid_events_total",
            "streameval_late_events_total",
            "streameval_duplicate_events_total",
        )
        for _, v in samples(metrics, name)
    ) + _num(metrics, "streameval_unmatched_clicks_total")
    outcomes += _num(metrics, "streameval_pending_clicks")
    assert read == outcomes
    return read


def _ends(bootstrap: str, topics: Topics) -> dict[str, int]:
    """Records in each data topic (for a failure's message)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        out = {}
        for topic in (topics.impressions, topics.clicks):
            tps = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
            out[topic] = sum(consumer.end_offsets(tps).values())
        return out
    finally:
        consumer.close()


def _replay(paths: list[Path], env: dict[str, str]) -> dict[str, Any]:
    """``replay_json`` with settings from the environment."""
    out = subprocess.run(
        [sys.executable, "-m", "streameval.cli", "replay", "--no-finish", "--output", "json"]
        + [str(p) for p in paths],
        check=True,
        capture_output=True,
        env={**_clean_env(), **env},
        timeout=120,
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


LATENESS = {"STREAMEVAL_EVALUATION__ALLOWED_LATENESS": "15m"}
#: a log line of a Kafka client (kafka-python, librdkafka, confluent-kafka's error callback)
_CLIENT_LINE = re.compile(
    r"^\S+ \S+ (ERROR|WARNING) (kafka\.|streameval\.kafka\.(librdkafka|confluent_stream))"
)


# --- a broker of our own, stopped and started again -------------------------------------------


class OwnBroker:
    def __init__(self, data_dir: Path) -> None:
        self._env = _broker_env(data_dir)
        self.bootstrap = ""

    def start(self) -> str:
        done = _broker_script("start", self._env, START_TIMEOUT_S)
        lines = done.stdout.split()
        if done.returncode != 0 or not lines:
            _unavailable(f"{BROKER_SCRIPT} start exited {done.returncode}: {done.stderr[-2000:]}")
        if self.bootstrap:
            assert lines[-1] == self.bootstrap  # same data dir: same ports
        self.bootstrap = lines[-1]
        return self.bootstrap

    def stop(self) -> None:
        _broker_script("stop", self._env, STOP_TIMEOUT_S)

    @property
    def pid(self) -> int:
        return int((Path(self._env["STREAMEVAL_KAFKA_DATA_DIR"]) / "broker.pid").read_text())


@pytest.fixture
def own_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnBroker]:
    broker = OwnBroker(tmp_path_factory.mktemp("own-broker"))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def _wait_ready(daemon: DaemonProcess, want: int, timeout_s: float) -> list[int]:
    """/readyz until it answers ``want``; returns what it answered on the way."""
    seen = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert daemon.proc.poll() is None, daemon.log_tail()
        status = daemon.get("/readyz")[0]
        seen.append(status)
        if status == want:
            return seen
        time.sleep(0.25)
    raise AssertionError(f"/readyz never answered {want}: {sorted(set(seen))}\n{daemon.log_tail()}")


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_the_daemon_rides_out_a_broker_restart(
    own_broker: OwnBroker, tmp_path: Path, consumer: str
) -> None:
    bootstrap = own_broker.bootstrap
    topics = Topics.created_on(bootstrap)
    first = make_log(4, 300, span_ms=15 * 60_000)
    produce(bootstrap, topics, first)
    env = (
        topics.env(bootstrap, f"g-{uuid.uuid4().hex}", free_port())
        | LATENESS
        | consumer_env(consumer)
    )
    daemon = DaemonProcess(env, tmp_path / "daemon.log")
    try:
        daemon.wait_for(
            lambda m: _num(m, "streameval_records_read_total") == len(first.records),
            what="the first part",
            ready=True,
        )
        own_broker.stop()
        # the outage: the daemon stays up, serves /metrics, and says it is not ready
        _wait_ready(daemon, 503, timeout_s=90)
        assert daemon.get("/healthz")[0] == 200
        assert daemon.metrics()  # the last figures are still served
        time.sleep(8)  # longer than the session timeout (6 s): nothing ticks while it is down
        assert daemon.proc.poll() is None, daemon.log_tail()
        assert daemon.get("/readyz")[0] == 503

        own_broker.start()  # same data dir, same ports
        back = time.monotonic()
        _wait_ready(daemon, 200, timeout_s=120)  # back in touch by itself
        print(f"ready {time.monotonic() - back:.1f} s after the broker's start returned")

        # A burst squeezes ten minutes of event time into milliseconds: one partition's records
        # may be read before another's, so the allowed lateness (15m here, for the daemon and
        # replay alike) covers the burst. Judgments are left out of it: judgments that arrive
        # later apply only to lists finalized later (DESIGN §6), while replay has them all.
        second = make_log(5, 300, start_ms=T0 + 18 * 60_000, span_ms=10 * 60_000)
        second.records = [r for r in second.records if r[0] != "judgments"]
        produce(bootstrap, topics, second)
        print("end offsets after the second part:", _ends(bootstrap, topics))
        n = len(first.records) + len(second.records)
        daemon.wait_for(
            lambda m: _num(m, "streameval_records_read_total") == n,
            timeout_s=180,
            what="the second part",
        )
        tail = Log()  # then move every partition's watermark past the traffic
        sentinels(tail, T0 + 60 * 60_000)
        produce(bootstrap, topics, tail)
        second.records.extend(tail.records)
        expected = _replay(dump_partitions(bootstrap, topics, tmp_path), LATENESS)
        total = len(first.records) + len(second.records)
        horizon_s = expected["horizon_ms"] / 1000
        metrics = daemon.wait_for(
            lambda m: (
                _num(m, "streameval_records_read_total") == total
                and _num(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
            ),
            timeout_s=180,
            what="the daemon to reconnect and read the rest",
            ready=True,
        )
        # nothing lost, nothing counted twice
        assert _identity(metrics) == total == expected["intake"]["read"]
        late = sum(v for _, v in samples(metrics, "streameval_late_events_total"))
        unmatched = _num(metrics, "streameval_unmatched_clicks_total")
        assert (late, unmatched) == (expected["intake"]["late"], expected["intake"]["unmatched"])
        assert (
            assert_windows_match(metrics, expected) >= 16
        )  # the 1h window, by k, relevance and arm
        assert {
            lbl["reason"]: int(v)
            for lbl, v in samples(metrics, "streameval_invalid_events_total")
            if v
        } == expected["intake"]["invalid"]
        # the clients' complaints during the outage (a failed reconnect every ~50 ms: 151 lines
        # with kafka-python, 795 with confluent-kafka, without the limit) are held to one of a
        # kind per 30 s
        client_lines = [
            line
            for line in daemon.log_path.read_text(errors="replace").splitlines()
            if _CLIENT_LINE.match(line)
        ]
        assert 0 < len(client_lines) <= 60, "\n".join(client_lines[-20:])
        assert daemon.terminate() == 0
    finally:
        if daemon.proc.poll() is None:
            daemon.kill()


@pytest.mark.parametrize("commit", ["revocation", "periodic"])
def test_a_commit_waits_a_bounded_time(
    own_broker: OwnBroker, monkeypatch: pytest.MonkeyPatch, commit: str
) -> None:
    """A commit that no broker answers gives up within its bound. ``revocation``: kafka-python
    awaits the revoke listener inside the join, with no bound of its own, so its commit must
    give up within REVOKE_COMMIT_TIMEOUT_MS (else ``poll`` would not return and the whole group
    would wait in its rebalance). ``periodic``: the loop's own commit, within COMMIT_TIMEOUT_MS
    (else the loop stalls through an outage and past the broker's return). Here the broker is
    frozen (SIGSTOP): its connections stay open and silent, and kafka-python's own request
    timeout (30 s) is what an unbounded wait would get."""
    from kafka import TopicPartition
    from kafka.errors import KafkaTimeoutError

    from streameval.kafka import stream as stream_module
    from streameval.kafka.checkpoint import Checkpoint
    from streameval.kafka.stream import EventStream

    bootstrap = own_broker.bootstrap
    topics = Topics.created_on(bootstrap)
    stream = EventStream(
        [topics.impressions, topics.clicks],
        group_id=f"g-{uuid.uuid4().hex}",
        client={"bootstrap_servers": bootstrap},
        auto_offset_reset="earliest",
        on_revoke=lambda partitions, lost: {},
        session_timeout_ms=30_000,
    )
    try:
        deadline = time.monotonic() + 60
        while stream.take_assignment() is None:
            assert time.monotonic() < deadline, "no assignment"
            stream.poll(200)
        monkeypatch.setattr(stream_module, "REVOKE_COMMIT_TIMEOUT_MS", 2_000)
        monkeypatch.setattr(stream_module, "COMMIT_TIMEOUT_MS", 2_000)
        offsets = {TopicPartition(topics.impressions, 0): (0, Checkpoint(None, 0))}
        os.kill(own_broker.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(KafkaTimeoutError):
                if commit == "revocation":  # as the listener does it, on the client's I/O loop
                    stream.consumer._net.run(stream._commit_bounded, offsets)
                else:
                    stream.commit(offsets)
            waited = time.monotonic() - started
        finally:
            os.kill(own_broker.pid, signal.SIGCONT)
        assert 1.5 < waited < 10, waited
    finally:
        stream.close()


# --- a topic missing at start -------------------------------------------------------------------


@pytest.mark.parametrize("missing", ["topics", "judgment_topics"])
def test_a_missing_topic_stops_the_start_with_a_clear_message(
    kafka_bootstrap: str, topic_factory: TopicFactory, missing: str
) -> None:
    absent = f"absent-{uuid.uuid4().hex}"
    present = topic_factory(1, prefix="present")
    env = {
        **_clean_env(),
        "STREAMEVAL_KAFKA__BOOTSTRAP_SERVERS": kafka_bootstrap,
        "STREAMEVAL_KAFKA__GROUP_ID": f"g-{uuid.uuid4().hex}",
        "STREAMEVAL_KAFKA__TOPICS": f'["{absent if missing == "topics" else present}"]',
        "STREAMEVAL_KAFKA__JUDGMENT_TOPICS": f'["{absent if missing != "topics" else present}"]',
        "STREAMEVAL_KAFKA__DLQ_TOPIC": "",
        "STREAMEVAL_METRICS__HOST": "127.0.0.1",
        "STREAMEVAL_METRICS__PORT": str(free_port()),
    }
    done = subprocess.run(
        [sys.executable, "-m", "streameval.cli", "run"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("streameval: error:"), done.stderr[-2000:]
    assert absent in last and " not exist" in last
    assert "Traceback" not in done.stderr
    # and the topic was not created by asking for it
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        assert absent not in admin.list_topics()
    finally:
        admin.close()


# --- two daemons in one group -----------------------------------------------------------------


def _summed(daemons: list[dict[Any, float]], name: str, labels: dict[str, str]) -> float:
    return sum(value(m, name, **labels) or 0.0 for m in daemons)


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_two_daemons_split_the_work_exactly_and_hand_over_on_sigterm(
    kafka_bootstrap: str, topic_factory: TopicFactory, tmp_path: Path, consumer: str
) -> None:
    """With either client: co-partitioned (kafka-python: our assignor; librdkafka: its range
    assignor over equal partition counts), and a revocation commits before the partitions
    move, so every record is counted once across the two lives."""
    topics = Topics.made_by(topic_factory)
    log = make_log(6, 400)
    sentinels(log, T0 + 30 * 60_000)
    produce(kafka_bootstrap, topics, log)
    expected = _replay(dump_partitions(kafka_bootstrap, topics, tmp_path), LATENESS)
    horizon_s = expected["horizon_ms"] / 1000
    group = f"g-{uuid.uuid4().hex}"
    # The hand-over re-reads a few minutes and is caught up at once; the next traffic then comes
    # as a burst (ten minutes of event time in milliseconds), whose partitions may be read in any
    # order: the allowed lateness (15m, for the daemons and replay alike) covers that, as in the
    # broker-restart test
    env = consumer_env(consumer) | LATENESS
    a = DaemonProcess(topics.env(kafka_bootstrap, group, free_port()) | env, tmp_path / "a.log")
    b = DaemonProcess(topics.env(kafka_bootstrap, group, free_port()) | env, tmp_path / "b.log")
    daemons = [a, b]
    try:

        def settled(m: dict[Any, float]) -> bool:
            return (
                _num(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
                and len(list(samples(m, "streameval_consumer_lag"))) == PARTITIONS
            )

        # each holds half of the partitions (impressions i and clicks i together)
        ma = a.wait_for(settled, what="daemon a to hold 2+2 partitions", ready=True)
        mb = b.wait_for(settled, what="daemon b to hold 2+2 partitions", ready=True)
        ma = a.wait_for(settled, what="daemon a, still", ready=True)
        lag_a = {
            (lbl["topic"], lbl["partition"]) for lbl, _ in samples(ma, "streameval_consumer_lag")
        }
        lag_b = {
            (lbl["topic"], lbl["partition"]) for lbl, _ in samples(mb, "streameval_consumer_lag")
        }
        assert not lag_a & lag_b
        for held in (lag_a, lag_b):  # partition i of both topics in one member
            imps = {p for t, p in held if t == topics.impressions}
            assert imps == {p for t, p in held if t == topics.clicks}
            assert len(imps) == PARTITIONS // 2
        both = [ma, mb]
        rows = 0
        for row in expected["windows"]:
            labels = window_labels(row)
            lists = _summed(both, "streameval_window_lists", labels)
            assert lists == row["lists"], labels
            assert _summed(both, "streameval_window_ndcg_sum", labels) == pytest.approx(
                row["ndcg_sum"], rel=1e-9, abs=1e-12
            )
            if lists:  # the recording rules' sum()/sum(): the pooled mean over both
                pooled = _summed(both, "streameval_window_ndcg_sum", labels) / lists
                assert row["ndcg"] is not None
                assert pooled == pytest.approx(row["ndcg"], rel=1e-9)
            for m in both:  # each alone is partial
                own = value(m, "streameval_window_lists", **labels) or 0
                assert own <= row["lists"]
            rows += 1
        assert rows > 20
        assert all(sum(v for _, v in samples(m, "streameval_window_lists")) > 0 for m in both)
        read_a, read_b = _identity(ma), _identity(mb)
        judgments = expected["intake"]["accepted_by_type"]["judgment"]
        # judgments are read by both (a global table); the streams are split
        assert read_a + read_b == expected["intake"]["read"] + judgments

        # SIGTERM one: the other takes its partitions over and rebuilds their windows from Kafka
        assert a.terminate() == 0
        more = make_log(7, 200, start_ms=T0 + 30 * 60_000 + 1, span_ms=10 * 60_000)
        # no new judgments: a judgment applies to lists finalized after it is read, so whether
        # the survivor's rebuild re-finalizes a list before or after reading a new grade would
        # be a race (replay reads every judgment before finalizing anything)
        more.records = [r for r in more.records if r[0] != "judgments"]
        produce(kafka_bootstrap, topics, more)
        # the traffic first, read in full; then the sentinels that move every partition's
        # watermark past it (in one burst with them, a partition whose fetch comes a poll later
        # would find the others' sentinels already 30 minutes ahead: later than any lateness)
        so_far = _replay(dump_partitions(kafka_bootstrap, topics, tmp_path), LATENESS)
        b.wait_for(
            lambda m: read_a + _identity(m) == so_far["intake"]["read"] + judgments,
            what="daemon b to take over and read the new traffic",
        )
        tail = Log()
        sentinels(tail, T0 + 60 * 60_000)  # the horizon (- 15m - 5m) past the new traffic
        produce(kafka_bootstrap, topics, tail)
        expected = _replay(dump_partitions(kafka_bootstrap, topics, tmp_path), LATENESS)
        horizon_s = expected["horizon_ms"] / 1000
        mb = b.wait_for(
            lambda m: (
                _num(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
                and len(list(samples(m, "streameval_consumer_lag"))) == 2 * PARTITIONS
            ),
            what="daemon b to take over and catch up",
            ready=True,
        )
        assert assert_windows_match(mb, expected) > 20
        # every record counted once across the two lives: a's share up to its SIGTERM, b's rest
        assert read_a + _identity(mb) == expected["intake"]["read"] + judgments
        assert b.terminate() == 0
    finally:
        for d in daemons:
            if d.proc.poll() is None:
                d.kill()


def test_sigkill_at_random_points_while_traffic_arrives_changes_no_window(
    kafka_bootstrap: str, topic_factory: TopicFactory, tmp_path: Path
) -> None:
    """A long run: the log arrives in paced slices while the daemon is SIGKILLed three times at
    seeded-random moments (before or after a commit, mid-batch or idle); a fourth run then
    catches up. Its windows equal replay's over the whole log: nothing lost, nothing counted
    twice in a window, whatever the kill interrupted."""
    rng = random.Random(20261126)
    topics = Topics.made_by(topic_factory)
    log = make_log(21, 1_200, span_ms=40 * 60_000)
    slices = [log.records[i : i + 150] for i in range(0, len(log.records), 150)]
    produced = threading.Event()

    def arrive() -> None:  # the traffic keeps coming while daemons live and die
        for part in slices:
            produce(kafka_bootstrap, topics, Log(part))
            time.sleep(0.3)
        produced.set()

    producer = threading.Thread(target=arrive, daemon=True)
    producer.start()
    # The slices arrive while the daemons read, so a partition caught up with its end (idle: it
    # does not hold the watermark back) gets its next records after the others moved on; with
    # the default lateness those are late, and counted so, however the kills fall (measured:
    # 99 impressions in one run). The allowed lateness (15m, for the daemons and replay alike)
    # covers that, as in the other tests whose traffic arrives while partitions are read.
    env = topics.env(kafka_bootstrap, f"g-{uuid.uuid4().hex}", free_port()) | LATENESS
    kills = []
    for run in range(3):
        daemon = DaemonProcess(env, tmp_path / f"daemon-{run}.log")
        # once it holds every partition (the killed run before it leaves the group only when
        # its session times out), a random moment later
        metrics = daemon.wait_for(
            lambda m: sum(1 for _ in samples(m, "streameval_consumer_lag")) == 2 * PARTITIONS,
            what=f"run {run} to hold every partition",
        )
        time.sleep(rng.uniform(0.0, 2.5))
        kills.append(int(_num(daemon.metrics() or metrics, "streameval_records_read_total")))
        daemon.kill()
        daemon.proc.wait(timeout=10)
    producer.join(timeout=120)
    assert produced.is_set()
    rest = Log()
    sentinels(rest, T0 + 60 * 60_000)
    produce(kafka_bootstrap, topics, rest)
    expected = _replay(dump_partitions(kafka_bootstrap, topics, tmp_path), LATENESS)
    horizon_s = expected["horizon_ms"] / 1000
    daemon = DaemonProcess(env, tmp_path / "daemon-last.log")
    try:
        metrics = daemon.wait_caught_up(horizon_s, "the last run to hold everything and catch up")
        assert assert_windows_match(metrics, expected) > 10
        _identity(metrics)
        print("records read by each killed run:", kills)
        assert len(kills) == 3 and all(k > 0 for k in kills), kills
        assert daemon.terminate() == 0
    finally:
        if daemon.proc.poll() is None:
            daemon.kill()
