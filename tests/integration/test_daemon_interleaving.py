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
    T0,
    DaemonProcess,
    Log,
    Topics,
    assert_windows_match,
    dump_partitions,
    free_port,
    produce,
    replay_json,
    samples,
    sentinels,
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
        metrics: dict[Any, float] = daemon.wait_for(
            lambda m: (
                value(m, "streameval_records_read_total") == total
                and value(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
            ),
            what="the daemon to read the whole log and be ready",
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
