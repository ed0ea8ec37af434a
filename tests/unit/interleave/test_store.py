"""The interleaving consumer in the pipeline: windows per ordered pair, the since-start counter,
the detector, and independence from the moments at which the horizon moves."""

from __future__ import annotations

import json
import math
import random
from typing import Any

from streameval.engine import Pipeline
from streameval.interleave.detector import log_mixture_ratio
from streameval.interleave.store import InterleavingStore
from streameval.score.credit import OTHER_TEAM, TeamCap, list_outcomes
from streameval.values import Interleaved, ScoredList
from streameval.windows import WindowSpec
from tests.unit.pipeline_helpers import click, settings


def ilv(rid: str, ts: int, docs: list[tuple[str, str | None]], **extra: Any) -> bytes:
    results = [{"doc_id": d, "team": t} for d, t in docs]
    rec = {"type": "impression", "request_id": rid, "timestamp": ts, "results": results}
    rec.update(extra)
    return json.dumps(rec).encode()


def _run(records: list[bytes], **overrides: Any) -> Pipeline:
    pipeline = Pipeline(settings(**overrides))
    for raw in records:
        pipeline.offer(raw)
    pipeline.finish()
    return pipeline


AB = [("a", "A"), ("b", "B"), ("c", "A"), ("d", "B")]


def test_two_teams_in_one_window() -> None:
    records = [
        ilv("r1", 1_000, AB), click("r1", "a", 1_500),  # A wins
        ilv("r2", 2_000, AB), click("r2", "b", 2_500),  # B wins
        ilv("r3", 3_000, AB), click("r3", "c", 3_100), click("r3", "d", 3_200),  # tie 1-1
        ilv("r4", 4_000, AB), click("r4", "a", 4_100), click("r4", "c", 4_200),  # A wins 2-0
        ilv("r5", 5_000, AB),  # no click: not in lists, counted no_click
        ilv("r6", 6_000, AB), click("r6", "a", 6_100), click("r6", "a", 6_200),  # A, once
    ]  # fmt: skip
    snap = _run(records).snapshot()
    rows = {(r.window, r.ranker, r.opponent): r for r in snap.interleaving}
    a_b = rows["1m", "A", "B"]
    # A: wins r1 r4 r6 = 3, losses r2 = 1, ties r3 = 1 -> lists 5, preference (3-1)/5 = 0.4
    assert (a_b.wins, a_b.losses, a_b.ties, a_b.lists) == (3, 1, 1, 5)
    assert a_b.preference == 0.4
    # per-list values +1 +1 +1 −1 0: mean 0.4, squares sum 4, var = (4 − 5·0.16)/4 = 0.8,
    # stderr = sqrt(0.8/5) = 0.4
    assert a_b.stderr is not None and math.isclose(a_b.stderr, 0.4)
    b_a = rows["1m", "B", "A"]
    assert (b_a.wins, b_a.losses, b_a.ties) == (1, 3, 1)
    assert snap.interleaving_outcomes == {
        ("A", "B", "win"): 3,
        ("A", "B", "loss"): 1,
        ("A", "B", "tie"): 1,
        ("A", "B", "no_click"): 1,
        ("B", "A", "win"): 1,
        ("B", "A", "loss"): 3,
        ("B", "A", "tie"): 1,
        ("B", "A", "no_click"): 1,
    }
    # the detector saw 3 wins and 1 loss for A (1 and 3 for B)
    tests = {(t.ranker, t.opponent): t for t in snap.interleaving_tests}
    assert tests["A", "B"].statistic == log_mixture_ratio(3, 1, 0.03)  # the default scale
    assert tests["B", "A"].statistic == log_mixture_ratio(1, 3, 0.03)
    assert tests["A", "B"].threshold == math.log(100)  # alpha 0.01


def test_interleaved_lists_are_scored_for_ndcg_under_their_own_segment() -> None:
    plain = {"type": "impression", "request_id": "p", "timestamp": 1_000, "results": ["a", "b"]}
    plain["labels"] = {"ranker": "A", "arm": "control"}
    records = [ilv("r1", 1_000, AB), json.dumps(plain).encode()]
    records += [click("r1", "b", 1_500), click("p", "a", 1_600)]
    snap = _run(records).snapshot()
    implicit_k1 = {
        r.segment: r.ndcg.mean
        for r in snap.ndcg
        if r.window == "1m" and r.relevance == "implicit" and r.k == 1
    }
    # interleaved: click on "b" at rank 2 -> NDCG@1 = 0; plain list: click at rank 1 -> 1
    assert implicit_k1 == {("interleaved", ""): 0.0, ("A", "control"): 1.0}


def test_three_teams_multileaving() -> None:
    docs = [("a", "A"), ("b", "B"), ("c", "C")]
    records = [
        ilv("r1", 1_000, docs), click("r1", "a", 1_100),  # A > B = C (tie at 0)
        ilv("r2", 2_000, docs), click("r2", "c", 2_100), click("r2", "b", 2_200),  # B = C > A
    ]  # fmt: skip
    snap = _run(records).snapshot()
    rows = {(r.ranker, r.opponent): r for r in snap.interleaving if r.window == "1m"}
    assert len(rows) == 6
    assert (rows["A", "B"].wins, rows["A", "B"].losses, rows["A", "B"].ties) == (1, 1, 0)
    assert (rows["B", "C"].wins, rows["B", "C"].losses, rows["B", "C"].ties) == (0, 0, 2)
    assert (rows["C", "A"].wins, rows["C", "A"].losses) == (1, 1)


def test_windows_and_the_detector_do_not_depend_on_when_advance_is_called() -> None:
    """Feed the same finalized lists once with an advance after every list and once with one
    advance at the end: the rows and the tests are the same."""
    rng = random.Random(3)
    specs = [WindowSpec(60_000, 10_000), WindowSpec(300_000, 10_000)]
    cap = TeamCap(100)
    lists = []
    for i in range(400):
        clicked = frozenset(d for d in "abcd" if rng.random() < 0.3)
        il = Interleaved(("a", "b", "c", "d"), ("A", "B", "A", "B"), clicked, {})
        il = il._replace(outcomes=cap.outcomes(list_outcomes(il, "clicks")))
        lists.append(
            ScoredList(f"r{i}", "q", i * 700, {}, ("interleaved", ""), (), bool(clicked), None,
                       bool(clicked), il)
        )  # fmt: skip
    eager = InterleavingStore(settings().interleaving, specs)
    lazy = InterleavingStore(settings().interleaving, specs)
    for scored in lists:
        eager.add(scored)
        eager.advance(scored.timestamp - 1)  # the horizon trails the lists
        lazy.add(scored)
    end = 400 * 700 + 10_000
    eager.advance(end)
    lazy.advance(end)
    assert eager.rows(end) == lazy.rows(end)
    assert eager.tests() == lazy.tests()
    assert eager.outcomes_total() == lazy.outcomes_total()
    assert eager.rows(end)  # something was counted


def test_team_names_are_capped() -> None:
    """Through the pipeline (the scorer caps names): A and B kept, C and D fold into __other__;
    (__other__, __other__) compares nothing named and is dropped."""
    docs = [("a", "A"), ("b", "B"), ("c", "C"), ("d", "D")]
    records = [ilv("r1", 1_000, docs), click("r1", "a", 1_500)]
    snap = _run(records, interleaving={"max_teams": 2}).snapshot()
    pairs = {(r.ranker, r.opponent) for r in snap.interleaving if r.window == "1m"}
    assert pairs == {
        ("A", "B"), ("B", "A"), ("A", OTHER_TEAM), (OTHER_TEAM, "A"),
        ("B", OTHER_TEAM), (OTHER_TEAM, "B"),
    }  # fmt: skip
    # A vs __other__ twice (C and D): counted twice in the same list
    a_other = next(r for r in snap.interleaving if (r.window, r.ranker, r.opponent) == (
        "1m", "A", OTHER_TEAM))  # fmt: skip
    assert a_other.wins == 2


def test_a_list_without_teams_is_ignored() -> None:
    plain = {"type": "impression", "request_id": "p", "timestamp": 1_000, "results": ["a", "b"]}
    snap = _run([json.dumps(plain).encode(), click("p", "a", 1_200)]).snapshot()
    assert snap.interleaving == ()
    assert snap.interleaving_outcomes == {}
    assert snap.interleaving_tests == ()


def test_re_read_lists_are_not_counted_again_since_start() -> None:
    pipeline = Pipeline(settings())
    pipeline.restore_source("s", 200_000, 10**9)  # everything up to a far horizon was counted
    pipeline.add_source("s")
    pipeline.offer(ilv("r1", 1_000, AB), "s", 0)
    pipeline.offer(click("r1", "a", 1_500), "s", 1)
    pipeline.finish()
    snap = pipeline.snapshot()
    assert snap.interleaving_outcomes == {}
    assert {(r.ranker, r.wins) for r in snap.interleaving if r.window == "1m"} == {
        ("A", 1),
        ("B", 0),
    }
