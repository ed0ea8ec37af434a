"""Team-draft interleaving of two served pages (Radlinski, Kurup & Joachims 2008).

Rounds: the team with fewer picks so far picks next (a fair coin when both have as many); a
team picks its highest-ranked document not already in the merged list. Each merged result keeps
the name of the team that picked it. Pure: a function of its inputs and a seeded ``Random``.
"""

from __future__ import annotations

import random

from streameval.sim.behaviour import Shown


def team_draft(
    first: Shown,
    second: Shown,
    names: tuple[str, str],
    page_size: int,
    rng: random.Random,
) -> tuple[Shown, tuple[str, ...]]:
    """The merged page (at most ``page_size`` results) and the team of each of its results."""
    grade = dict(zip(first.doc_ids, first.grades, strict=True))
    grade.update(zip(second.doc_ids, second.grades, strict=True))
    lists = (first.doc_ids, second.doc_ids)
    cursor = [0, 0]
    picks = [0, 0]
    merged: list[str] = []
    teams: list[str] = []
    seen: set[str] = set()
    while len(merged) < page_size:
        if picks[0] != picks[1]:
            order = (0, 1) if picks[0] < picks[1] else (1, 0)
        else:
            order = (0, 1) if rng.random() < 0.5 else (1, 0)
        for team in order:
            ids = lists[team]
            while cursor[team] < len(ids) and ids[cursor[team]] in seen:
                cursor[team] += 1
            if cursor[team] < len(ids):
                break
        else:
            break  # both exhausted
        doc = lists[team][cursor[team]]
        seen.add(doc)
        merged.append(doc)
        teams.append(names[team])
        picks[team] += 1
    return Shown(tuple(merged), tuple(grade[d] for d in merged)), tuple(teams)
