"""The window state changelog through the pipeline, without a broker (DESIGN §6).

A run persists its complete buckets (through the state topic's value format) and commits; a new
pipeline restores them, re-reads only from the committed offsets, and must report the windows an
uninterrupted run reports, while re-reading far less than the longest window."""

from __future__ import annotations

import random
from typing import Any

import pytest

from streameval.engine import Pipeline
from streameval.windows.persisted import BadState, decode_bucket, encode_bucket
from tests.unit.pipeline_helpers import click, imp, judgment, settings

SOURCES = ("t/0", "t/1")
#: 1m and 5m windows of 10 s buckets, a 60 s attribution window (pipeline_helpers.settings)
SETTINGS: dict[str, Any] = {"allowed_lateness": 5_000}


def make_log(seed: int, minutes: int = 20) -> list[tuple[str, bytes]]:
    """(source, record) in the order read: each source in event-time order give or take 3 s
    (within the allowed lateness), clicks within the attribution window and some after it; the
    sources interleaved."""
    rng = random.Random(seed)
    per_source: dict[str, list[tuple[int, bytes]]] = {s: [] for s in SOURCES}
    docs = [f"d{i}" for i in range(12)]
    for i in range(minutes * 60 // 2):
        source = SOURCES[i % 2]
        ts = i * 2_000 + rng.randint(0, 1_500)
        rid = f"r{i}"
        results = rng.sample(docs, 5)
        arm = rng.choice(["control", "treatment"])
        per_source[source].append(
            (ts, imp(rid, ts, results, query=f"q{i % 4}", labels={"arm": arm}))
        )
        for _ in range(rng.choice([0, 1, 1, 2])):
            c = ts + rng.randint(100, 70_000)
            per_source[source].append((c, click(rid, rng.choice(results), c)))
    return merge_sources(per_source, rng)


def merge_sources(
    per_source: dict[str, list[tuple[int, bytes]]], rng: random.Random
) -> list[tuple[str, bytes]]:
    """(source, record) in the order read: each source in event-time order give or take 3 s,
    the sources interleaved."""
    log: list[tuple[str, bytes]] = []
    streams = {
        s: sorted(recs, key=lambda r: r[0] + rng.randint(0, 3_000))
        for s, recs in per_source.items()
    }
    while any(streams.values()):
        for s in SOURCES:
            if streams[s]:
                log.append((s, streams[s].pop(0)[1]))
    return log


def feed(p: Pipeline, log: list[tuple[str, bytes]], start: dict[str, int] | None = None) -> None:
    """Offer every record of ``log`` whose per-source offset is at or after ``start``."""
    offsets = dict.fromkeys(SOURCES, 0)
    for source, raw in log:
        offset = offsets[source]
        offsets[source] += 1
        if start is None or offset >= start[source]:
            p.offer(raw, source, offset)


def pipeline(**kw: Any) -> Pipeline:
    p = Pipeline(settings(**SETTINGS), **kw)
    for q in range(4):
        for d in range(12):
            p.offer(judgment(f"q{q}", f"d{d}", (q + d) % 4), "judgments")
    for source in SOURCES:
        p.add_source(source)
    return p


def windows(p: Pipeline) -> dict[tuple[Any, ...], tuple[int, float, float]]:
    return {
        (r.window, r.relevance, r.segment, r.k): (r.ndcg.n, r.ndcg.total, r.ndcg.total_sq)
        for r in p.snapshot().ndcg
    }


# seed 5 re-reads an impression of a bucket that is already in the state (out of order by less
# than the lateness): it must not be folded twice
@pytest.mark.parametrize("seed", [1, 2, 5])
def test_a_restart_from_the_state_topic_reports_the_uninterrupted_windows(seed: int) -> None:
    log = make_log(seed)
    # the crash, right after a commit, 2 minutes before the end of the log: the 5m window at
    # the end covers both the buckets loaded from the state and those re-read
    cut = len(log) * 9 // 10

    reference = pipeline(persist=True)
    feed(reference, log)
    for source in SOURCES:
        reference.set_idle(source)

    first = pipeline(persist=True)
    feed(first, log[:cut])
    state: dict[tuple[str, int], bytes] = {}
    before, complete = first.unpersisted_buckets()
    assert before is not None and complete
    for source, start, bucket in complete:
        state[(source, start)] = encode_bucket(bucket)  # through the topic's value format
    first.mark_persisted(before)
    commit = first.commit_offsets()
    checkpoint = {s: (*first.counted_through(s), first.persisted_before(s)) for s in SOURCES}

    again = pipeline(persist=True)
    for source in SOURCES:
        horizon, position, persisted = checkpoint[source]
        assert persisted == before
        again.restore_source(source, horizon, position, persisted)
    for (_, start), raw in sorted(state.items()):
        bucket = decode_bucket(raw)
        assert not isinstance(bucket, BadState)
        again.load_bucket(start, bucket)
    # before anything is re-read, the windows are those of the crashed run at its commit
    assert again.horizon == first.horizon
    assert windows(again).keys() == windows(first).keys()
    for key, (n, total, total_sq) in windows(first).items():
        assert windows(again)[key] == (n, pytest.approx(total), pytest.approx(total_sq))
    feed(again, log, start=commit)
    for source in SOURCES:
        again.set_idle(source)

    expected = windows(reference)
    got = windows(again)
    assert got.keys() == expected.keys()
    for key, (n, total, total_sq) in expected.items():
        assert got[key] == (n, pytest.approx(total, rel=1e-12), pytest.approx(total_sq)), key
    # nothing counted twice: the crashed run's intake and the restarted one's add up
    merged = first.snapshot().intake.records_read + again.snapshot().intake.records_read
    judgments = 48  # offered again by the new process (the judgment topics are re-read)
    assert merged - judgments == reference.snapshot().intake.records_read

    # the re-read: only what open lists need (the attribution window, the lateness and the
    # bucket the horizon is in), not the longest window that a run without the state re-reads
    reread = sum(sum(1 for s, _ in log[:cut] if s == src) - commit[src] for src in SOURCES)
    without = pipeline()
    feed(without, log[:cut])
    full = without.commit_offsets()
    reread_without = sum(sum(1 for s, _ in log[:cut] if s == src) - full[src] for src in SOURCES)
    # records per minute ≈ 30 impressions + 30 clicks; 60 s + 5 s + 10 s ≈ 75 s of event time
    assert 0 < reread < 2 * 75 / 60 * 60
    assert reread_without > 3 * reread


def test_mark_persisted_never_moves_a_source_back_and_keeps_incomplete_buckets() -> None:
    p = pipeline(persist=True)
    feed(p, make_log(5, minutes=4))
    before, complete = p.unpersisted_buckets()
    assert before is not None
    assert all(start < before for _, start, _ in complete)
    p.mark_persisted(before)
    assert p.unpersisted_buckets()[1] == []  # written buckets are dropped
    p.restore_source("t/0", None, 0, before + 60_000)  # a checkpoint further ahead
    p.mark_persisted(before)
    assert p.persisted_before("t/0") == before + 60_000
    assert p.persisted_before("t/1") == before


def test_without_persistence_nothing_is_kept_for_the_state_topic() -> None:
    p = pipeline()
    feed(p, make_log(6, minutes=4))
    assert p.unpersisted_buckets() == (None, [])
    assert p.persisted_before("t/0") is None


def test_a_list_re_read_for_a_bucket_in_the_state_is_not_folded_again() -> None:
    p = Pipeline(settings(allowed_lateness=10_000), persist=True)
    p.add_source("s0")
    # the checkpoint: buckets before 100 s are in the state topic (loaded: none here)
    p.restore_source("s0", 100_000, 0, 100_000)
    p.offer(imp("after", 104_000, ["a"]), "s0", 0)
    p.offer(click("after", "a", 105_000), "s0", 1)
    p.offer(imp("in-state", 95_000, ["a"]), "s0", 2)  # within the lateness: accepted
    p.offer(click("in-state", "a", 106_000), "s0", 3)
    p.offer(imp("far", 400_000, ["a"]), "s0", 4)  # finalizes both
    assert p.snapshot().intake.accepted == {"impression": 3, "click": 2}
    lists = {r.window: r.ndcg.n for r in p.snapshot().ndcg if r.relevance == "implicit"}
    # the 5m window as of horizon 330 s covers [30 s, 330 s): only the list of 104 s counts
    assert p.horizon == 400_000 - 10_000 - 60_000
    assert lists == {"5m": 1}
    _, complete = p.unpersisted_buckets()
    assert [start for _, start, _ in complete] == [100_000]  # nothing written for 90 s again
