from streameval.events.models import Judgment
from streameval.join import JudgmentStore, SegmentCapper


def j(doc: str, grade: float, ts: int, judge: str = "", query: str = "q") -> Judgment:
    return Judgment(
        type="judgment", query_id=query, doc_id=doc, grade=grade, timestamp=ts, judge=judge
    )


def test_mean_over_judges_of_their_latest_grade() -> None:
    store = JudgmentStore()
    assert store.apply(j("a", 3, 10, "ann"))
    assert store.apply(j("a", 0, 20, "ann"))  # ann changed her mind
    assert store.apply(j("a", 2, 5, "ann"))  # older than her latest: ignored
    assert store.apply(j("a", 1, 0, "bob"))
    assert not store.apply(j("a", 1, 0, "bob"))  # the same record again
    assert store.grades("q") == {"a": 0.5}  # mean(0, 1)
    assert len(store) == 2


def test_pool_is_sorted_and_invalidated_on_change() -> None:
    store = JudgmentStore()
    store.apply(j("a", 1, 0))
    store.apply(j("b", 3, 0))
    assert store.pool("q") == [3, 1]
    store.apply(j("c", 2, 0))
    assert store.pool("q") == [3, 2, 1]
    assert store.pool("unknown") == []
    assert store.grades("unknown") == {}


def test_segment_capper_shares_and_caps() -> None:
    cap = SegmentCapper(("ranker", "arm"), max_segments=2)
    assert cap.segment_of({"ranker": "a", "arm": "x", "locale": "fr"}) == ("a", "x")
    assert cap.segment_of({"ranker": "b"}) == ("b", "")
    assert cap.segment_of({"ranker": "c", "arm": "x"}) == ("__other__", "__other__")
    assert cap.segment_of({"ranker": "a", "arm": "x"}) == ("a", "x")
    assert len(cap) == 2
