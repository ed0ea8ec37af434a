"""Interleaving figures through the window state changelog (DESIGN §6): a restart that loads the
persisted buckets and re-reads only what open lists need reports the interleaving windows of an
uninterrupted run; the bucket value format carries the counts, to the count."""

from __future__ import annotations

import json
import random

from streameval.engine import Pipeline
from streameval.windows.persisted import BadState, decode_bucket, encode_bucket
from streameval.windows.store import Bucket
from tests.unit.pipeline_helpers import click, settings
from tests.unit.test_pipeline_persist import SETTINGS, SOURCES, feed, merge_sources


def interleaved_log(seed: int, minutes: int = 20) -> list[tuple[str, bytes]]:
    """Like the NDCG persistence test's log, with team-draft lists of A and B (B clicked more)."""
    rng = random.Random(seed)
    per_source: dict[str, list[tuple[int, bytes]]] = {s: [] for s in SOURCES}
    docs = [f"d{i}" for i in range(12)]
    for i in range(minutes * 60 // 2):
        source = SOURCES[i % 2]
        ts = i * 2_000 + rng.randint(0, 1_500)
        rid = f"r{i}"
        shown = rng.sample(docs, 6)
        results = [{"doc_id": d, "team": "AB"[j % 2]} for j, d in enumerate(shown)]
        rec = {"type": "impression", "request_id": rid, "timestamp": ts, "results": results}
        per_source[source].append((ts, json.dumps(rec).encode()))
        for j, d in enumerate(shown):
            if rng.random() < (0.3 if j % 2 else 0.15):
                c = ts + rng.randint(100, 70_000)
                per_source[source].append((c, click(rid, d, c)))
    return merge_sources(per_source, rng)


def _pipeline() -> Pipeline:
    p = Pipeline(settings(**SETTINGS), persist=True)
    for source in SOURCES:
        p.add_source(source)
    return p


def test_a_restart_from_the_state_topic_reports_the_uninterrupted_interleaving_windows() -> None:
    log = interleaved_log(3)
    cut = len(log) * 9 // 10
    reference = _pipeline()
    feed(reference, log)
    for source in SOURCES:
        reference.set_idle(source)

    first = _pipeline()
    feed(first, log[:cut])
    before, complete = first.unpersisted_buckets()
    assert before is not None and complete
    state = {(src, start): encode_bucket(bucket) for src, start, bucket in complete}
    assert any(b'"i":' in raw for raw in state.values())  # the counts are in the records
    first.mark_persisted(before)
    commit = first.commit_offsets()
    checkpoint = {s: (*first.counted_through(s), first.persisted_before(s)) for s in SOURCES}

    again = _pipeline()
    for source in SOURCES:
        again.restore_source(source, *checkpoint[source])
    for (_, start), raw in sorted(state.items()):
        bucket = decode_bucket(raw)
        assert not isinstance(bucket, BadState)
        again.load_bucket(start, bucket)
    feed(again, log, start=commit)
    for source in SOURCES:
        again.set_idle(source)

    expected = reference.snapshot().interleaving
    assert expected  # the 1m and 5m windows have interleaved lists
    assert again.snapshot().interleaving == expected
    # and the lists re-read for buckets in the state were not counted again
    for row in expected:
        assert row.lists > 0


def test_bucket_value_format_round_trips_interleaving_counts() -> None:
    bucket = Bucket()
    bucket.interleaving[("A", "B")] = [3, 1, 2, 4]
    bucket.interleaving[("B", "A")] = [1, 3, 2, 4]
    back = decode_bucket(encode_bucket(bucket))
    assert not isinstance(back, BadState)
    assert back.interleaving == bucket.interleaving
    # a bucket without interleaved lists writes no "i" (the format of the NDCG-only buckets)
    assert b'"i"' not in encode_bucket(Bucket())
    for bad in ([["A", "B", [1, 2, 3]]], [["A", "B", [1, 2, 3, -1]]], [["A", 5, [1, 2, 3, 4]]]):
        raw = json.dumps({"v": 1, "n": [], "c": [], "e": [], "i": bad}).encode()
        assert isinstance(decode_bucket(raw), BadState), bad
