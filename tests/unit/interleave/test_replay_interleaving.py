"""`streameval replay --output json` over an interleaved log: the "interleaving" rows of DESIGN
§7, against counts the test makes itself from the events (a brute force independent of the
pipeline: no windows, no credit module)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from streameval.cli import main

T0 = 1_700_000_000_000


def _log(rng: random.Random) -> tuple[list[dict[str, Any]], dict[tuple[str, str], list[int]]]:
    """Events in time order, and per ordered pair [wins, losses, ties, no_click] counted here:
    credit = number of distinct clicked docs a team contributed (first position only)."""
    events: list[dict[str, Any]] = []
    counts: dict[tuple[str, str], list[int]] = {}
    for i in range(150):
        ts = T0 + i * 2_000  # 300 s of impressions: all in the 1h window
        teams = ("x", "y", "z") if i % 3 == 0 else ("x", "y")
        docs = [f"d{(i + j) % 17}" for j in range(6)]
        results = [{"doc_id": d, "team": teams[j % len(teams)]} for j, d in enumerate(docs)]
        rid = f"r{i}"
        events.append({"type": "impression", "request_id": rid, "timestamp": ts,
                       "results": results})  # fmt: skip
        clicked = {d for d in docs if rng.random() < 0.2}
        for n, d in enumerate(sorted(clicked)):
            events.append({"type": "click", "request_id": rid, "doc_id": d,
                           "timestamp": ts + 500 + n})  # fmt: skip
        credit = dict.fromkeys(teams, 0)
        owner: dict[str, str] = {}
        for j, d in enumerate(docs):
            owner.setdefault(d, teams[j % len(teams)])
        for d in clicked:
            credit[owner[d]] += 1
        any_credit = sum(credit.values()) > 0
        for a in teams:
            for b in teams:
                if a == b:
                    continue
                c = counts.setdefault((a, b), [0, 0, 0, 0])
                if not any_credit:
                    c[3] += 1
                elif credit[a] > credit[b]:
                    c[0] += 1
                elif credit[a] < credit[b]:
                    c[1] += 1
                else:
                    c[2] += 1
    events.sort(key=lambda e: e["timestamp"])
    return events, counts


def test_replay_json_interleaving_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events, counts = _log(random.Random(11))
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert main(["replay", "--output", "json", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = [r for r in out["interleaving"] if r["window"] == "1h"]
    assert {(r["ranker"], r["opponent"]) for r in rows} == set(counts)
    for row in rows:
        assert list(row) == ["window", "ranker", "opponent", "lists", "wins", "losses", "ties",
                             "preference", "stderr"]  # fmt: skip
        wins, losses, ties, _ = counts[row["ranker"], row["opponent"]]
        n = wins + losses + ties
        assert (row["wins"], row["losses"], row["ties"], row["lists"]) == (wins, losses, ties, n)
        mean = (wins - losses) / n
        assert row["preference"] == pytest.approx(mean)
        # per list +1, -1, 0: sample variance around the mean, stderr = sd / sqrt(n)
        values = [1.0] * wins + [-1.0] * losses + [0.0] * ties
        var = sum((v - mean) ** 2 for v in values) / (n - 1)
        assert row["stderr"] == pytest.approx((var / n) ** 0.5)
    detection = [d for d in out["detection"] if d["detector"] == "interleaving"]
    assert {(d["segment"]["ranker"], d["segment"]["opponent"]) for d in detection} == set(counts)
    for d in detection:
        assert set(d) == {"detector", "k", "relevance", "segment", "statistic", "threshold",
                          "alarm", "first_alarm"}  # fmt: skip
        assert d["alarm"] == (d["statistic"] >= d["threshold"])


def test_replay_json_without_interleaved_lists_has_no_interleaving_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.jsonl"
    imp = {"type": "impression", "request_id": "r", "timestamp": T0, "results": ["a"]}
    path.write_text(json.dumps(imp) + "\n")
    assert main(["replay", "--output", "json", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "interleaving" not in out and "detection" not in out
