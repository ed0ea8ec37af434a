"""The simulated stream: determinism, order, rates, the click model and the judgments.

Statistical checks compare with the model's own expectation, computed by hand below, with a
tolerance of at least 4 standard deviations; the stream is seeded, so the result never changes
from run to run, and the tolerance is what keeps the check honest rather than tuned to a seed.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter, defaultdict
from dataclasses import replace

import pytest

from streameval.errors import ConfigError
from streameval.sim import JUDGMENT_KEY_SEPARATOR, Ranker, SimConfig, catalogue_of, traffic
from tests.unit.sim.helpers import START_MS, decoded

SMALL = SimConfig(queries=200, candidates=20, rate=20.0, duration_ms=120_000)


def test_same_seed_same_stream_other_seed_other_stream() -> None:
    first = list(itertools.islice(traffic(SMALL, START_MS), 6000))
    again = list(itertools.islice(traffic(SMALL, START_MS), 6000))
    other = list(itertools.islice(traffic(replace(SMALL, seed=7), START_MS), 6000))
    assert first == again
    assert [r.raw for r in first] != [r.raw for r in other]


def test_records_come_in_event_time_order_and_carry_their_own_time() -> None:
    records = list(traffic(SMALL, START_MS))
    times = [r.time_ms for r in records]
    assert times == sorted(times)
    assert times[0] == START_MS
    for kind in ("impression", "click", "judgment"):
        rows = [r for r in records if r.kind == kind]
        assert rows, kind
        assert all(decoded([r], kind)[0]["timestamp"] == r.time_ms for r in rows[:500])


def test_is_lazy_an_endless_stream_yields_its_first_records() -> None:
    endless = traffic(replace(SMALL, duration_ms=None), START_MS)
    head = list(itertools.islice(endless, 10_000))
    assert len(head) == 10_000
    assert head[-1].kind in {"impression", "click", "judgment"}


def test_impression_rate_and_treatment_split() -> None:
    # Poisson arrivals at 40/s over 150 s: 6000 expected, sd sqrt(6000) = 77; split 0.3 over
    # ~6000 requests: sd sqrt(.3 * .7 / 6000) = 0.006.
    config = replace(SMALL, rate=40.0, duration_ms=150_000, treatment_share=0.3)
    impressions = decoded(traffic(config, START_MS), "impression")
    assert abs(len(impressions) - 6000) < 4 * 77
    arms = Counter(i["labels"]["arm"] for i in impressions)
    assert abs(arms["treatment"] / len(impressions) - 0.3) < 4 * 0.006
    rankers = {(i["labels"]["arm"], i["labels"]["ranker"]) for i in impressions}
    assert rankers == {("control", "bm25-v1"), ("treatment", "ltr-v2")}
    assert all(START_MS <= i["timestamp"] < START_MS + 150_000 for i in impressions)
    assert all(len(i["results"]) == 10 == len(set(i["results"])) for i in impressions)


def test_queries_follow_zipf_popularity() -> None:
    # With exponent 1 over 200 queries, P(rank 1) = 1 / H(200) = 1 / 5.878 = 0.170 and
    # P(rank 2) = 0.085; over ~2400 impressions sd(rank 1 share) = sqrt(.17 * .83 / 2400) = 0.0077.
    impressions = decoded(traffic(SMALL, START_MS), "impression")
    counts = Counter(i["query_id"] for i in impressions)
    harmonic = sum(1 / r for r in range(1, 201))
    assert abs(counts["q00000"] / len(impressions) - 1 / harmonic) < 4 * 0.0077
    assert counts["q00000"] > counts["q00001"] > counts["q00009"]


def test_clicks_follow_their_impression_within_the_attribution_window() -> None:
    records = list(traffic(SMALL, START_MS))
    shown = {i["request_id"]: i for i in decoded(records, "impression")}
    interactions = decoded(records, "click")
    assert len(interactions) > len(shown) / 2
    limit = SMALL.max_interaction_delay_ms
    for event in interactions:
        impression = shown[event["request_id"]]
        delay = event["timestamp"] - impression["timestamp"]
        assert 0 < delay <= limit
        assert impression["results"][event["position"] - 1] == event["doc_id"]
    actions = Counter(e["action"] for e in interactions)
    assert set(actions) == {"click", "dwell", "add_to_cart", "purchase"}
    # a purchase always comes with the add_to_cart before it
    assert actions["purchase"] <= actions["add_to_cart"]
    assert len({e["event_id"] for e in interactions}) == len(interactions)


def test_position_bias_ctr_at_rank_1_over_rank_5_is_the_examination_ratio() -> None:
    # Rankers that ignore relevance (huge noise) put every grade at every rank alike, so the CTR
    # per rank is P(examine i) * E[P(click | grade)] = (1 / i) * (.55*.02 + .25*.15 + .12*.4
    # + .08*.7) = 0.1525 / i: rank 1 0.1525, rank 5 0.0305. Over n ~ 7200 impressions the sd
    # of the rank-1 CTR is sqrt(.1525 * .8475 / 7200) = 0.0042, of rank 5 0.0020.
    config = replace(
        SMALL,
        rate=60.0,
        control=Ranker("random-a", 1e6),
        treatment=Ranker("random-b", 1e6),
    )
    records = list(traffic(config, START_MS))
    n = len(decoded(records, "impression"))
    clicks = Counter(e["position"] for e in decoded(records, "click") if e["action"] == "click")
    ctr = {rank: clicks[rank] / n for rank in range(1, 11)}
    assert abs(ctr[1] - 0.1525) < 4 * 0.0042
    assert abs(ctr[5] - 0.0305) < 4 * 0.0020
    assert ctr[1] > ctr[3] > ctr[5] > ctr[10]


def test_better_documents_get_more_clicks_longer_dwell_and_the_purchases() -> None:
    config = replace(SMALL, rate=60.0)
    records = list(traffic(config, START_MS))
    catalogue = catalogue_of(config)
    grade_of = {d: g for q in catalogue.queries for d, g in zip(q.doc_ids, q.grades, strict=True)}
    dwell: dict[int, list[int]] = defaultdict(list)
    purchases: Counter[int] = Counter()
    for event in decoded(records, "click"):
        grade = grade_of[event["doc_id"]]
        if event["action"] == "dwell":
            dwell[grade].append(event["dwell_ms"])
        elif event["action"] == "purchase":
            purchases[grade] += 1
    medians = [statistics.median(dwell[g]) for g in range(4)]
    assert medians == sorted(medians)
    # log-normal around the configured medians (5 s, 15 s, 40 s, 80 s): within 20 %
    for median, want in zip(medians, config.dwell_median_ms, strict=True):
        assert abs(median / want - 1) < 0.2
    assert purchases[0] == 0
    assert purchases[3] > purchases[1]


def test_judgments_at_the_start_cover_the_configured_share_exactly() -> None:
    config = replace(SMALL, judged_share=0.3, rater_noise=0.0, judgment_rate=0.0)
    records = list(traffic(config, START_MS))
    judgments = [r for r in records if r.kind == "judgment"]
    assert all(r.time_ms == START_MS for r in judgments)
    assert records[: len(judgments)] == judgments  # before any impression
    catalogue = catalogue_of(config)
    per_query = Counter(j["query_id"] for j in decoded(judgments, "judgment"))
    # round(0.3 * 20) = 6 of the 20 candidates of each of the 200 queries: 1200 pairs
    assert len(judgments) == 1200
    assert set(per_query.values()) == {6}
    truth = {
        (q.query_id, d): g
        for q in catalogue.queries
        for d, g in zip(q.doc_ids, q.grades, strict=True)
    }
    for record, judgment in zip(judgments, decoded(judgments, "judgment"), strict=True):
        assert judgment["grade"] == truth[judgment["query_id"], judgment["doc_id"]]
        assert record.key == judgment["query_id"] + JUDGMENT_KEY_SEPARATOR + judgment["doc_id"]


def test_rater_noise_moves_the_configured_share_of_grades_by_one() -> None:
    # 50 % of 200 * 20 pairs = 2000 judgments, noise 0.2: sd of the share sqrt(.2*.8/2000) = .009
    config = replace(SMALL, judged_share=0.5, rater_noise=0.2, judgment_rate=0.0)
    catalogue = catalogue_of(config)
    truth = {
        (q.query_id, d): g
        for q in catalogue.queries
        for d, g in zip(q.doc_ids, q.grades, strict=True)
    }
    judgments = decoded(traffic(config, START_MS), "judgment")
    off = [j["grade"] - truth[j["query_id"], j["doc_id"]] for j in judgments]
    assert set(off) == {-1, 0, 1}
    assert abs(sum(1 for d in off if d) / len(off) - 0.2) < 4 * 0.009
    assert all(0 <= j["grade"] <= 3 for j in judgments)


def test_later_judgments_trickle_in_for_pairs_not_judged_yet() -> None:
    # 2 per event second over 120 s: 240 expected, Poisson sd 15.5
    config = replace(SMALL, judged_share=0.5, judgment_rate=2.0)
    judgments = [r for r in traffic(config, START_MS) if r.kind == "judgment"]
    first = {r.key for r in judgments if r.time_ms == START_MS}
    later = [r for r in judgments if r.time_ms > START_MS]
    assert len(first) == 2000
    assert abs(len(later) - 240) < 4 * 15.5
    keys = [r.key for r in later]
    assert len(set(keys)) == len(keys)
    assert not first.intersection(keys)


def test_noise_records_are_duplicates_or_truncated_json() -> None:
    # noise 0.1 on ~2400 impressions + their clicks: half exact repeats, half invalid JSON
    config = replace(SMALL, noise_share=0.1)
    clean = [r for r in traffic(replace(config, noise_share=0.0), START_MS) if r.kind != "judgment"]
    noisy = [r for r in traffic(config, START_MS) if r.kind != "judgment"]
    extra = len(noisy) - len(clean)
    assert abs(extra / len(clean) - 0.1) < 4 * math.sqrt(0.1 * 0.9 / len(clean))
    invalid = 0
    for record in noisy:
        try:
            decoded([record], record.kind)
        except ValueError:
            invalid += 1
    duplicates = extra - invalid
    assert invalid > 0
    assert duplicates > 0
    assert abs(invalid / extra - 0.5) < 4 * math.sqrt(0.25 / extra)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("rate", 0.0),
        ("rate", math.nan),
        ("queries", 1),
        ("page_size", 30),
        ("treatment_share", 1.5),
        ("regression_size", -0.1),
        ("judged_share", math.nan),
        ("grade_weights", (0.0, 0.0, 0.0, 0.0)),
        ("click_given_grade", (0.1, 0.2, 0.3)),
        ("regression_at_ms", -1),
        ("duration_ms", -5),
    ],
)
def test_a_wrong_parameter_is_a_config_error_naming_it(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=field):
        replace(SMALL, **{field: value})


def test_rankers_need_distinct_names_and_a_non_negative_noise() -> None:
    with pytest.raises(ConfigError, match="different names"):
        SimConfig(control=Ranker("a"), treatment=Ranker("a"))
    with pytest.raises(ConfigError, match="noise"):
        Ranker("a", -1.0)


def test_an_interleaving_share_serves_that_share_interleaved_and_splits_the_rest() -> None:
    import json

    from streameval.sim import SimConfig, traffic

    config = SimConfig(
        seed=3, rate=50.0, duration_ms=120_000, interleaving=True, interleaving_share=0.25
    )
    arms = [
        json.loads(r.raw)["labels"]["arm"] for r in traffic(config, 0) if r.kind == "impression"
    ]
    interleaved = arms.count("interleaved") / len(arms)
    # 6,000 requests, each interleaved with probability 1/4: within 4 standard deviations
    # (sqrt(0.25 * 0.75 / 6000) = 0.0056)
    assert abs(interleaved - 0.25) < 4 * 0.0056
    assert {"control", "treatment"} <= set(arms)
