"""Credit and outcomes of one interleaved list: pure functions (DESIGN §10).

Team-draft interleaving (Radlinski, Kurup & Joachims 2008) shows one list merged from two
rankers, each result labelled with the ranker (team) that contributed it; team-draft
multileaving (Schuth et al. 2014) does the same with more than two. Once the list is final:

* each team's *credit* is the sum, over the results it contributed, of what the user gave them:
  1 per clicked result (``credit = "clicks"``) or the result's implicit grade (``"grades"``,
  DESIGN §3). A doc shown twice counts only at its first position (and for that position's
  team); a result without a team earns nothing for anyone; a doc clicked twice, or a click
  redelivered, counts once (the join has already dropped duplicate events, and credit is per
  result, not per click);
* each pair of teams shown in the list gets an *outcome*: ``win`` for the team with more credit
  (``loss`` for the other), ``tie`` when both have the same, and ``no_click`` for every pair
  when no team earned anything (no interaction, or interactions only on results without a
  team): such lists say nothing about the rankers and stay out of ``lists``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from streameval.values import Interleaved

WIN = "win"
LOSS = "loss"
TIE = "tie"
NO_CLICK = "no_click"
#: every ``outcome`` label value of ``streameval_interleaving_outcomes_total``
OUTCOMES = (WIN, LOSS, TIE, NO_CLICK)

_ONE: Mapping[str, float] = {}


def team_credit(
    doc_ids: Sequence[str], teams: Sequence[str | None], credit_of: Mapping[str, float]
) -> dict[str, float]:
    """Credit per team shown (a team whose results earned nothing is present with 0.0).

    ``credit_of``: what each doc earned (absent: 0). A doc counts at its first position only.
    """
    seen: set[str] = set()
    credit: dict[str, float] = {}
    for doc, team in zip(doc_ids, teams, strict=True):
        if doc in seen:
            continue
        seen.add(doc)
        if team is None:
            continue
        credit[team] = credit.get(team, 0.0) + credit_of.get(doc, 0.0)
    return credit


def credit_of(interleaved: Interleaved, mode: str) -> Mapping[str, float]:
    """What each doc earned: 1 per clicked doc (``"clicks"``) or its grade (``"grades"``)."""
    if mode == "grades":
        return interleaved.grades
    return dict.fromkeys(interleaved.clicked, 1.0)


def pair_outcomes(credit: Mapping[str, float]) -> list[tuple[str, str, str]]:
    """``(ranker, opponent, outcome)`` for every ordered pair of distinct teams shown, from the
    ranker's side (so a win appears once as ``win`` and once, reversed, as ``loss``)."""
    teams = sorted(credit)
    credited = any(value != 0.0 for value in credit.values())
    out: list[tuple[str, str, str]] = []
    for i, a in enumerate(teams):
        for b in teams[i + 1 :]:
            if not credited:
                out.append((a, b, NO_CLICK))
                out.append((b, a, NO_CLICK))
            elif credit[a] > credit[b]:
                out.append((a, b, WIN))
                out.append((b, a, LOSS))
            elif credit[a] < credit[b]:
                out.append((a, b, LOSS))
                out.append((b, a, WIN))
            else:
                out.append((a, b, TIE))
                out.append((b, a, TIE))
    return out


def list_outcomes(interleaved: Interleaved, mode: str) -> list[tuple[str, str, str]]:
    """The outcomes of one finalized interleaved list (see the module doc)."""
    credit = team_credit(interleaved.doc_ids, interleaved.teams, credit_of(interleaved, mode))
    return pair_outcomes(credit)


OTHER_TEAM = "__other__"


class TeamCap:
    """Team names come from traffic: the first ``max_teams`` are kept, later ones fold into
    ``__other__`` (a pair of two folded teams compares nothing named and is dropped)."""

    __slots__ = ("_max", "_teams")

    def __init__(self, max_teams: int) -> None:
        self._max = max_teams
        self._teams: set[str] = set()

    def __call__(self, team: str) -> str:
        if team in self._teams:
            return team
        if len(self._teams) >= self._max:
            return OTHER_TEAM
        self._teams.add(team)
        return team

    def outcomes(self, pairs: list[tuple[str, str, str]]) -> tuple[tuple[str, str, str], ...]:
        capped = ((self(a), self(b), outcome) for a, b, outcome in pairs)
        return tuple(o for o in capped if o[0] != o[1])
