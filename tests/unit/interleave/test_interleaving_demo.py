"""The interleaving mode of the simulator and the demo, and the status page's preference rows."""

from __future__ import annotations

import json
import math
import random

from streameval.config import load_settings
from streameval.export.history import History
from streameval.export.status import Z95, status_payload
from streameval.runtime.demo import Demo, no_pacing
from streameval.sim import SimConfig, traffic
from streameval.sim.behaviour import Shown
from streameval.sim.interleaving import team_draft
from streameval.snapshot import InterleavingRow, PairTestRow, Snapshot

START_MS = 1_700_000_000_000


def test_team_draft_alternates_fairly_and_skips_shared_docs() -> None:
    a = Shown(("1", "2", "3", "4"), (3, 2, 1, 0))
    b = Shown(("2", "5", "1", "6"), (2, 3, 3, 0))
    merged, teams = team_draft(a, b, ("A", "B"), 4, random.Random(0))
    assert len(set(merged.doc_ids)) == 4  # no doc twice
    # each round gives each team one pick: after 4 results, 2 each
    assert sorted(teams) == ["A", "A", "B", "B"]
    for doc, team in zip(merged.doc_ids, teams, strict=True):
        source = a if team == "A" else b
        assert doc in source.doc_ids  # a team only contributes its own docs
    # grades follow the docs
    grade = dict(zip(a.doc_ids + b.doc_ids, a.grades + b.grades, strict=True))
    assert merged.grades == tuple(grade[d] for d in merged.doc_ids)


def test_team_draft_first_pick_is_a_fair_coin() -> None:
    a, b = Shown(("1", "2"), (0, 0)), Shown(("3", "4"), (0, 0))
    rng = random.Random(1)
    first_a = sum(team_draft(a, b, ("A", "B"), 2, rng)[1][0] == "A" for _ in range(2000))
    # binomial(2000, 1/2): sd 22.4; 4 sd either side
    assert abs(first_a - 1000) < 90


def test_simulator_interleaving_mode_names_both_rankers() -> None:
    config = SimConfig(seed=3, interleaving=True, duration_ms=5_000)
    impressions = [json.loads(r.raw) for r in traffic(config, START_MS) if r.kind == "impression"]
    assert impressions
    for imp in impressions:
        teams = {item["team"] for item in imp["results"]}
        assert teams == {config.control.name, config.treatment.name}
        assert imp["labels"] == {"arm": "interleaved"}


def test_demo_interleaving_mode_sees_the_regressed_treatment_lose() -> None:
    """30 min of interleaved traffic at 20/s, the treatment regressed by 30 % from the start:
    the treatment's preference over control in the 1h window is negative beyond its band, and
    the detector alarms for the (treatment, control) pair only."""
    sim = SimConfig(seed=5, rate=20.0, duration_ms=30 * 60_000, interleaving=True,
                    regression_at_ms=0, regression_size=0.3)  # fmt: skip
    demo = Demo(load_settings(), sim, start_ms=START_MS)
    snapshot = demo.run(no_pacing)
    rows = {(r.window, r.ranker, r.opponent): r for r in snapshot.interleaving}
    treat, ctrl = sim.treatment.name, sim.control.name
    row = rows["1h", treat, ctrl]
    assert row.preference is not None and row.stderr is not None
    assert row.preference + Z95 * row.stderr < 0
    alarms = {(t.ranker, t.opponent) for t in snapshot.interleaving_tests if t.alarm}
    assert alarms == {(treat, ctrl)}
    payload = demo.status()["interleaving"]
    entry = next(e for e in payload if e["window"] == "1h" and e["ranker"] == treat)
    assert entry["alarm"] is True and entry["high"] < 0


def test_status_payload_interleaving_band() -> None:
    # wins 6, losses 2, ties 2: n 10, preference 0.4; squares sum 8:
    # var = (8 − 10·0.16)/9 = 0.71111, stderr = sqrt(0.071111) = 0.266667
    snap = Snapshot(
        segment_labels=("ranker", "arm"),
        windows=("5m",),
        ks=(10,),
        interleaving=(InterleavingRow("5m", "a", "b", 6, 2, 2),),
        interleaving_tests=(PairTestRow("a", "b", 6, 2, -1.0, 4.6, None),),
    )
    (entry,) = status_payload(snap, History())["interleaving"]
    assert entry["preference"] == 0.4
    assert math.isclose(entry["stderr"], math.sqrt(0.64 / 9))
    assert math.isclose(entry["low"], 0.4 - Z95 * math.sqrt(0.64 / 9))
    assert math.isclose(entry["high"], min(1.0, 0.4 + Z95 * math.sqrt(0.64 / 9)))
    assert entry["alarm"] is False
