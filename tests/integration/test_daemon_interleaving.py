"""`streameval run` against the real broker, for an interleaved log: its interleaving figures,
counters and detector equal `streameval replay`'s for the same log (DESIGN §10)."""

from __future__ import annotations

import math
import random
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import TopicFactory
from tests.integration.daemon_support import (
    CONSUMERS,
    PARTITIONS,
    T0,
    DaemonProcess,
    Log,
    Topics,
    assert_windows_match,
    consumer_env,
    dump_partitions,
    free_port,
    produce,
    replay_json,
    restore_third,
    samples,
    sentinels,
    stopped_at_exit,
    value,
)

pytestmark = pytest.mark.kafka


@pytest.fixture
def topics(topic_factory: TopicFactory) -> Topics:
    return Topics.made_by(topic_factory)


def interleaved_log(seed: int, requests: int, span_ms: int = 20 * 60_000) -> Log:
    """Team-draft lists of "old" and "new" (every fifth a three-team list with "alt"); users
    click a "new" result with probability 0.5 and any other with 0.15, so "old" loses."""
    rng = random.Random(seed)
    log = Log()
    docs = [f"d{i}" for i in range(60)]
    for i in range(requests):
        rid = f"ilv-{seed}-{i}"
        ts = T0 + int(i * span_ms / requests)
        teams = ["old", "new", "alt"] if i % 5 == 0 else ["old", "new"]
        shown = rng.sample(docs, 8)
        results = [{"doc_id": d, "team": teams[j % len(teams)]} for j, d in enumerate(shown)]
        if i % 7 == 3:
            results.append({"doc_id": shown[0], "team": "old"})  # a repeated doc
            results.append({"doc_id": "untagged"})  # a result without a team
        log.add(
            "impressions",
            rid,
            {"type": "impression", "request_id": rid, "timestamp": ts,
             "query": f"q{i % 9}", "results": results},
        )  # fmt: skip
        for j, item in enumerate(results):
            p = 0.5 if item.get("team") == "new" else 0.15
            if rng.random() < p:
                click = {"type": "click", "request_id": rid, "doc_id": item["doc_id"],
                         "timestamp": ts + 1_000 + 100 * j, "event_id": f"{rid}.{j}"}  # fmt: skip
                log.add("clicks", rid, click)
                if j % 4 == 0:
                    log.add("clicks", rid, click)  # redelivered: a duplicate
    return log


def test_daemon_interleaving_equals_replay(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path
) -> None:
    log = interleaved_log(5, 300)
    sentinels(log, T0 + 30 * 60_000)
    produce(kafka_bootstrap, topics, log)
    expected = replay_json(dump_partitions(kafka_bootstrap, topics, tmp_path))
    rows = expected["interleaving"]
    assert {(r["ranker"], r["opponent"]) for r in rows} == {
        (a, b) for a in ("old", "new", "alt") for b in ("old", "new", "alt") if a != b
    }
    detection = {(d["segment"]["ranker"], d["segment"]["opponent"]): d for d in
                 expected["detection"] if d["detector"] == "interleaving"}  # fmt: skip
    assert detection["old", "new"]["alarm"] is True  # the log is built for "old" to lose
    assert detection["new", "old"]["alarm"] is False
    total = len(log.records)
    horizon_s = expected["horizon_ms"] / 1000
    env = topics.env(kafka_bootstrap, f"g-{uuid.uuid4().hex}", free_port())
    daemon = DaemonProcess(env, tmp_path / "daemon.log")
    try:
        # with the state topic the test runs on the group's buckets: fed once a commit has
        # written every partition's progress past them (a commit interval after the horizon)
        metrics: dict[Any, float] = daemon.wait_for(
            lambda m: (
                value(m, "streameval_records_read_total") == total
                and value(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
                and len(_pair_tests(m)) == len(detection)
                and all(
                    _pair_tests(m)[p][0] == pytest.approx(d["statistic"], rel=1e-12)
                    for p, d in detection.items()
                )
            ),
            what="the daemon to read the whole log, be ready and test the group's lists",
            ready=True,
        )
        assert_windows_match(metrics, expected)  # the interleaved lists' NDCG, as usual
        for row in rows:
            labels = {"window": row["window"], "ranker": row["ranker"],
                      "opponent": row["opponent"]}  # fmt: skip
            assert value(metrics, "streameval_interleaving_lists", **labels) == row["lists"]
            assert value(metrics, "streameval_interleaving_wins", **labels) == row["wins"]
            assert value(metrics, "streameval_interleaving_ties", **labels) == row["ties"]
            assert value(metrics, "streameval_interleaving_preference", **labels) == (
                pytest.approx(row["preference"], rel=1e-12)
            )
            assert value(metrics, "streameval_interleaving_preference_stderr", **labels) == (
                pytest.approx(row["stderr"], rel=1e-12)
            )
        exported = {tuple(sorted(lbl.items())) for lbl, _ in
                    samples(metrics, "streameval_interleaving_lists")}  # fmt: skip
        assert len(exported) == len(rows)
        for (ranker, opponent), d in detection.items():
            labels = {"detector": "interleaving", "ranker": ranker, "opponent": opponent}
            assert value(metrics, "streameval_regression_statistic", **labels) == (
                pytest.approx(d["statistic"], rel=1e-12)
            )
            assert value(metrics, "streameval_regression_threshold", **labels) == math.log(100)
            assert value(metrics, "streameval_regression_alarm", **labels) == float(d["alarm"])
        # the since-start counter: one outcome per list and ordered pair; the 1h window holds
        # every list of the log, so its wins, losses and ties are the counter's
        outcomes = {(lbl["ranker"], lbl["opponent"], lbl["outcome"]): v for lbl, v in
                    samples(metrics, "streameval_interleaving_outcomes_total")}  # fmt: skip
        for row in rows:
            if row["window"] != "1h":
                continue
            key = (row["ranker"], row["opponent"])
            assert outcomes.get((*key, "win"), 0) == row["wins"]
            assert outcomes.get((*key, "loss"), 0) == row["losses"]
            assert outcomes.get((*key, "tie"), 0) == row["ties"]
        assert daemon.terminate() == 0
    finally:
        if daemon.proc.poll() is None:
            daemon.kill()


def _pair_tests(metrics: dict[Any, float]) -> dict[tuple[str, str], tuple[float, float]]:
    """Per ordered pair: the interleaving detector's statistic and alarm, as exported."""
    alarm = {
        (lbl["ranker"], lbl["opponent"]): v
        for lbl, v in samples(metrics, "streameval_regression_alarm")
        if lbl.get("detector") == "interleaving"
    }
    return {
        (lbl["ranker"], lbl["opponent"]): (v, alarm[lbl["ranker"], lbl["opponent"]])
        for lbl, v in samples(metrics, "streameval_regression_statistic")
        if lbl.get("detector") == "interleaving"
    }


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_two_daemons_of_a_group_run_the_interleaving_test_on_the_groups_lists(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path, consumer: str
) -> None:
    """DESIGN §10 with the state topic: two daemons holding half of the partitions each export
    the test of the whole log (replay's, to the bit), not each the test of its half; a third
    started after both stopped restores it from the group's snapshot."""
    log = interleaved_log(11, 600)
    # lateness as in the group detection test: a hand-over re-reads partitions in any order
    sentinels(log, T0 + 45 * 60_000)
    produce(kafka_bootstrap, topics, log)
    config = tmp_path / "lateness.toml"
    config.write_text('[evaluation]\nallowed_lateness = "15m"\n')
    expected = replay_json(dump_partitions(kafka_bootstrap, topics, tmp_path), config)
    want = {
        (d["segment"]["ranker"], d["segment"]["opponent"]): (d["statistic"], float(d["alarm"]))
        for d in expected["detection"]
        if d["detector"] == "interleaving"
    }
    assert want["old", "new"][1] == 1.0 and want["new", "old"][1] == 0.0
    horizon_s = expected["horizon_ms"] / 1000
    group = f"g-{uuid.uuid4().hex}"
    env = consumer_env(consumer) | {"STREAMEVAL_EVALUATION__ALLOWED_LATENESS": "15m"}

    def tested(m: dict[Any, float]) -> bool:
        tests = _pair_tests(m)
        return (
            value(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
            and set(tests) == set(want)
            and all(tests[p][0] == pytest.approx(want[p][0], rel=1e-12) for p in want)
        )

    def settled(m: dict[Any, float]) -> bool:  # and the partitions split between the two
        return len(list(samples(m, "streameval_consumer_lag"))) == PARTITIONS and tested(m)

    a = DaemonProcess(topics.env(kafka_bootstrap, group, free_port()) | env, tmp_path / "a.log")
    b = DaemonProcess(topics.env(kafka_bootstrap, group, free_port()) | env, tmp_path / "b.log")
    with stopped_at_exit(a, b):
        mb = b.wait_for(settled, what="daemon b: half the partitions, replay's test", ready=True)
        ma = a.wait_for(settled, what="daemon a: half the partitions, replay's test", ready=True)
        for m in (ma, mb):
            tests = _pair_tests(m)
            assert {p: t[1] for p, t in tests.items()} == {p: w[1] for p, w in want.items()}
        # each instance's windows stay its own part (the sum across instances is the group's)
        for m in (ma, mb):
            held = sum(v for _, v in samples(m, "streameval_interleaving_lists"))
            assert held > 0
        assert a.terminate() == 0
        assert b.terminate() == 0
    mc = restore_third(kafka_bootstrap, topics, group, env, tmp_path, done=tested)
    assert _pair_tests(mc) == _pair_tests(ma)
