"""The simulated stream: raw records in event-time order, generated lazily.

:func:`traffic` is a generator: deterministic given ``config.seed`` and ``start_ms``, reading no
clock, holding only the catalogue and the interactions not yet due (a heap of a few minutes of
traffic). Records come out in non-decreasing event time:

1. at ``start_ms``, the judgments of ``judged_share`` of every query's candidates;
2. impressions, Poisson at ``rate`` per event second, each for a Zipf-drawn query, served by the
   control or the treatment ranker (``treatment_share`` of requests), degraded after
   ``regression_at_ms`` when served by the treatment; with ``interleaving``, every request is
   served one team-draft interleaved page of both rankings instead (arm ``interleaved``);
3. their interactions (click, dwell, add_to_cart, purchase), seconds to minutes later;
4. a trickle of judgments of pairs not judged yet (``judgment_rate`` per event second);
   with ``llm_judge``, an LLM judge's grades of the pairs judged at the start, then its
   re-grades of them (``llm_rate`` per event second, drifting by ``llm_drift`` per hour);
5. optionally noise records (duplicates, invalid JSON) right after an impression or click.

Independent random streams (catalogue, arrivals, rankers, regression, clicks, judgments, noise)
are derived from the seed, so switching the regression on changes nothing before it.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
import random
from collections.abc import Iterator

from streameval.sim import records
from streameval.sim.behaviour import Shown, degrade, interactions, rank
from streameval.sim.catalogue import Catalogue, build_catalogue
from streameval.sim.config import GRADES, SimConfig
from streameval.sim.interleaving import team_draft
from streameval.sim.records import SimRecord

CONTROL = "control"
TREATMENT = "treatment"
INTERLEAVED = "interleaved"


def _rng(config: SimConfig, stream: str) -> random.Random:
    return random.Random(f"streameval-sim:{config.seed}:{stream}")


def catalogue_of(config: SimConfig) -> Catalogue:
    """The catalogue :func:`traffic` uses for ``config`` (same seed, same catalogue)."""
    return build_catalogue(config, _rng(config, "catalogue"))


def rater_grade(true_grade: int, noise: float, rng: random.Random) -> int:
    """The true grade, or with probability ``noise`` one off (within 0..3)."""
    if rng.random() >= noise:
        return true_grade
    step = rng.choice((-1, 1))
    if not 0 <= true_grade + step < GRADES:
        step = -step
    return true_grade + step


def _judgment(
    catalogue: Catalogue, pair: tuple[int, int], config: SimConfig, rng: random.Random, time_ms: int
) -> SimRecord:
    q, c = pair
    query = catalogue.queries[q]
    doc = query.doc_ids[c]
    grade = rater_grade(query.grades[c], config.rater_noise, rng)
    judge = f"rater-{rng.randrange(config.raters) + 1}"
    raw = records.judgment(query.query_id, doc, grade, judge, time_ms)
    return SimRecord(time_ms, "judgment", records.judgment_key(query.query_id, doc), raw)


def llm_grade(true_grade: int, config: SimConfig, elapsed_ms: float, rng: random.Random) -> int:
    """The LLM judge's grade ``elapsed_ms`` after the start: a rater's (``llm_noise``) shifted
    by ``llm_drift`` per hour (the fractional part rounding up with its probability), within
    0..3."""
    grade = rater_grade(true_grade, config.llm_noise, rng)
    bias = config.llm_drift * elapsed_ms / 3_600_000.0
    shift = math.floor(bias)
    if rng.random() < bias - shift:
        shift += 1
    return min(max(grade + shift, 0), GRADES - 1)


def _llm_judgments(config: SimConfig, start_ms: int) -> Iterator[SimRecord]:
    """The LLM judge's records (``llm_judge``; a random stream of its own): its grades of the
    pairs the raters judge at the start, at the start, then a re-grade of one of them every
    Exp(``llm_rate``) seconds until the end."""
    catalogue = catalogue_of(config)
    # the same split as _events makes (its first use of the same stream)
    pairs, _ = _split_judged(catalogue, config, _rng(config, "judgments"))
    rng = _rng(config, "llm")
    judge = f"llm:{config.llm_judge}"
    end = math.inf if config.duration_ms is None else start_ms + config.duration_ms

    def judgment(pair: tuple[int, int], time_ms: int) -> SimRecord:
        query = catalogue.queries[pair[0]]
        doc = query.doc_ids[pair[1]]
        grade = llm_grade(query.grades[pair[1]], config, time_ms - start_ms, rng)
        raw = records.judgment(query.query_id, doc, grade, judge, time_ms)
        return SimRecord(time_ms, "judgment", records.judgment_key(query.query_id, doc), raw)

    for pair in pairs:
        yield judgment(pair, start_ms)
    t = _next(float(start_ms), config.llm_rate if pairs else 0.0, rng)
    while t < end:
        yield judgment(pairs[rng.randrange(len(pairs))], int(t))
        t = _next(t, config.llm_rate, rng)


def _split_judged(
    catalogue: Catalogue, config: SimConfig, rng: random.Random
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(pairs judged at the start, the others in the order the trickle judges them)."""
    per_query = round(config.judged_share * config.candidates)
    first: list[tuple[int, int]] = []
    later: list[tuple[int, int]] = []
    for q in range(len(catalogue.queries)):
        chosen = set(rng.sample(range(config.candidates), per_query))
        for c in range(config.candidates):
            (first if c in chosen else later).append((q, c))
    rng.shuffle(later)
    later.reverse()  # popped from the end
    return first, later


def _next(t: float, rate: float, rng: random.Random) -> float:
    return t + rng.expovariate(rate) * 1000.0 if rate > 0 else math.inf


class DailyMix:
    """The query mix of a day (``daily_amplitude``): the catalogue split at the median count of
    relevant (grade ≥ 2) candidates; the richer half's popularity swings with
    ``1 + a·sin(2π·(t/day + phase))``, the other half's against it. Within a half, queries keep
    their Zipf popularity."""

    def __init__(self, catalogue: Catalogue, config: SimConfig, start_ms: int) -> None:
        self._config = config
        self._start = start_ms
        rich_counts = [sum(g >= 2 for g in q.grades) for q in catalogue.queries]
        median = sorted(rich_counts)[len(rich_counts) // 2]
        self.rich = tuple(c > median for c in rich_counts)
        self._halves: list[tuple[list[int], list[float], float]] = []
        for want in (True, False):
            members = [i for i, r in enumerate(self.rich) if r is want]
            weights = [catalogue.popularity(i) for i in members]
            total = sum(weights)
            cumulative = list(itertools.accumulate(w / total for w in weights)) if total else []
            self._halves.append((members, cumulative, total))

    def swing(self, now_ms: float) -> float:
        """``a·sin(2π·(t/day + phase))`` at ``now_ms``."""
        c = self._config
        turn = (now_ms - self._start) / c.day_ms + c.daily_phase
        return c.daily_amplitude * math.sin(2.0 * math.pi * turn)

    def pick(self, now_ms: float, rng: random.Random) -> int:
        """A query index drawn from the mix at ``now_ms``."""
        swing = self.swing(now_ms)
        (rich, rich_cum, rich_w), (poor, poor_cum, poor_w) = self._halves
        p_rich = rich_w * (1 + swing) / (rich_w * (1 + swing) + poor_w * (1 - swing))
        members, cumulative = (rich, rich_cum) if rng.random() < p_rich else (poor, poor_cum)
        i = bisect.bisect_right(cumulative, rng.random())
        return members[min(i, len(members) - 1)]


def traffic(config: SimConfig, start_ms: int) -> Iterator[SimRecord]:
    """The simulated stream from ``start_ms`` (epoch milliseconds, event time)."""
    stream = _events(config, start_ms)
    if config.llm_judge:  # merged in by event time (on a tie, the other records first)
        stream = heapq.merge(stream, _llm_judgments(config, start_ms), key=lambda r: r.time_ms)
    if config.noise_share <= 0:
        return stream
    return _with_noise(stream, config.noise_share, _rng(config, "noise"))


def _events(config: SimConfig, start_ms: int) -> Iterator[SimRecord]:
    catalogue = catalogue_of(config)
    judge_rng = _rng(config, "judgments")
    arrivals = _rng(config, "arrivals")
    rankers = _rng(config, "rankers")
    regression = _rng(config, "regression")
    clicks = _rng(config, "clicks")
    prefix = format(_rng(config, f"ids:{start_ms}").getrandbits(32), "08x")

    first, later = _split_judged(catalogue, config, judge_rng)
    for pair in first:
        yield _judgment(catalogue, pair, config, judge_rng, start_ms)

    end = math.inf if config.duration_ms is None else start_ms + config.duration_ms
    regress_from = (
        math.inf if config.regression_at_ms is None else start_ms + config.regression_at_ms
    )
    labels = {
        CONTROL: {"ranker": config.control.name, "arm": CONTROL},
        TREATMENT: {"ranker": config.treatment.name, "arm": TREATMENT},
        INTERLEAVED: {"arm": INTERLEAVED},
    }
    if config.single_ranker:
        labels[CONTROL] = {"ranker": config.control.name}
    mix = DailyMix(catalogue, config, start_ms) if config.daily_amplitude > 0 else None
    drafts = _rng(config, "interleaving")
    pending: list[tuple[int, int, SimRecord]] = []  # (time, sequence, record): a min-heap
    seq = 0
    imp_t = _next(float(start_ms), config.rate, arrivals)
    jud_t = _next(float(start_ms), config.judgment_rate if later else 0.0, judge_rng)
    n = 0
    while True:
        t = min(imp_t, jud_t)
        if t >= end:
            break
        now = int(t)
        while pending and pending[0][0] <= now:
            yield heapq.heappop(pending)[2]
        if jud_t <= imp_t:
            yield _judgment(catalogue, later.pop(), config, judge_rng, now)
            jud_t = _next(jud_t, config.judgment_rate if later else 0.0, judge_rng)
            continue
        imp_t = _next(imp_t, config.rate, arrivals)
        q = catalogue.pick(arrivals.random()) if mix is None else mix.pick(t, arrivals)
        arm = _arm(config, arrivals)
        query = catalogue.queries[q]
        arm, shown, teams = _serve(
            config, catalogue, q, arm, regressed=now >= regress_from,
            rankers=rankers, regression=regression, drafts=drafts,
        )  # fmt: skip
        request_id = f"{prefix}-{n:08d}"
        n += 1
        raw = records.impression(
            request_id,
            now,
            query_id=query.query_id,
            query=query.text,
            doc_ids=shown.doc_ids,
            labels=labels[arm],
            teams=teams,
        )
        yield SimRecord(now, "impression", request_id, raw)
        for j, act in enumerate(interactions(shown, config, clicks)):
            at = now + act.delay_ms
            raw = records.interaction(
                request_id,
                at,
                event_id=f"{request_id}.{j}",
                doc_id=act.doc_id,
                position=act.position,
                action=act.action,
                dwell_ms=act.dwell_ms,
            )
            heapq.heappush(pending, (at, seq, SimRecord(at, "click", request_id, raw)))
            seq += 1
    while pending:
        yield heapq.heappop(pending)[2]


def _arm(config: SimConfig, rng: random.Random) -> str:
    """The arm serving the next request (always the control's ranker with ``single_ranker``)."""
    if config.single_ranker:
        return CONTROL
    return TREATMENT if rng.random() < config.treatment_share else CONTROL


def _serve(
    config: SimConfig,
    catalogue: Catalogue,
    q: int,
    arm: str,
    *,
    regressed: bool,
    rankers: random.Random,
    regression: random.Random,
    drafts: random.Random,
) -> tuple[str, Shown, tuple[str, ...] | None]:
    """The page served for query ``q``: (arm, page, team per result or None).

    A/B split: the arm's ranking (the treatment's degraded once regressed; with
    ``single_ranker``, the one ranker's). Interleaving: one team-draft page of both rankings, the
    treatment's degraded exactly as its own page would be.
    """
    query = catalogue.queries[q]
    if (
        config.single_ranker
        or not config.interleaving
        or (config.interleaving_share < 1.0 and drafts.random() >= config.interleaving_share)
    ):
        ranker = config.treatment if arm == TREATMENT else config.control
        shown = rank(query, ranker.noise, config.page_size, rankers)
        regressed_arm = CONTROL if config.single_ranker else TREATMENT
        if arm == regressed_arm and regressed:
            shown = degrade(shown, config.regression_size, q, catalogue, regression)
        return arm, shown, None
    control = rank(query, config.control.noise, config.page_size, rankers)
    treatment = rank(query, config.treatment.noise, config.page_size, rankers)
    if regressed:
        treatment = degrade(treatment, config.regression_size, q, catalogue, regression)
    names = (config.control.name, config.treatment.name)
    shown, teams = team_draft(control, treatment, names, config.page_size, drafts)
    return INTERLEAVED, shown, teams


def _with_noise(
    stream: Iterator[SimRecord], share: float, rng: random.Random
) -> Iterator[SimRecord]:
    for record in stream:
        yield record
        if record.kind == "judgment" or rng.random() >= share:
            continue
        if rng.random() < 0.5:
            yield record  # redelivered: an exact duplicate
        else:
            yield record._replace(raw=record.raw[: len(record.raw) // 2])  # truncated JSON
