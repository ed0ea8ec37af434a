"""Interleaved impressions in each format that serves them today (DESIGN §10), built from the
formats' documented shapes, and read through the decoder, the join and the credit."""

from __future__ import annotations

import json

from streameval.engine import Pipeline
from streameval.events.decode import Invalid, decode
from streameval.events.models import Click, Impression
from tests.unit.pipeline_helpers import settings


def _impression(raw: bytes) -> Impression:
    event = decode(raw)
    assert isinstance(event, Impression), event
    return event


def test_native_results_carry_their_team() -> None:
    raw = json.dumps(
        {
            "type": "impression",
            "request_id": "r1",
            "timestamp": 1_000,
            "results": [
                {"doc_id": "a", "team": "bm25"},
                {"doc_id": "b", "score": 2.5, "team": "ltr"},
                "c",  # a plain id: no team
                {"doc_id": "d", "team": None},  # null: no team
            ],
        }
    ).encode()
    event = _impression(raw)
    assert event.doc_ids == ("a", "b", "c", "d")
    assert event.teams == ("bm25", "ltr", None, None)


def test_a_list_without_any_team_is_not_interleaved() -> None:
    for results in (["a", "b"], [{"doc_id": "a"}, {"doc_id": "b", "team": None}]):
        raw = json.dumps(
            {"type": "impression", "request_id": "r", "timestamp": 1, "results": results}
        ).encode()
        assert _impression(raw).teams is None


def test_a_team_that_is_not_a_string_is_invalid() -> None:
    for team in (5, "", "x" * 257, ["a"]):
        raw = json.dumps(
            {
                "type": "impression",
                "request_id": "r",
                "timestamp": 1,
                "results": [{"doc_id": "a", "team": team}],
            }
        ).encode()
        event = decode(raw)
        assert isinstance(event, Invalid) and event.reason == "schema", (team, event)


# Solr's reference guide (Learning To Rank, "Running a Rerank Query Interleaving Two Models"):
# with fl=id,score,[interleaving] each doc of response.docs names the model that picked it.
SOLR_RESPONSE = {
    "responseHeader": {
        "status": 0,
        "QTime": 0,
        "params": {
            "q": "test",
            "fl": "id,score,[interleaving]",
            "rq": "{!ltr model=myModelA model=myModelB reRankDocs=100}",
        },
    },
    "response": {
        "numFound": 2,
        "start": 0,
        "maxScore": 1.0005897,
        "docs": [
            {"id": "GB18030TEST", "score": 1.0005897, "[interleaving]": "myModelB"},
            {"id": "UTF8TEST", "score": 0.79656565, "[interleaving]": "myModelA"},
        ],
    },
}


def test_solr_docs_with_the_interleaving_transformer_are_results() -> None:
    raw = json.dumps(
        {
            "type": "impression",
            "request_id": "solr-1",
            "timestamp": "2025-05-01T10:00:00Z",
            "query": SOLR_RESPONSE["responseHeader"]["params"]["q"],  # type: ignore[index]
            "results": SOLR_RESPONSE["response"]["docs"],  # type: ignore[index]
        }
    ).encode()
    event = _impression(raw)
    assert event.doc_ids == ("GB18030TEST", "UTF8TEST")
    assert event.teams == ("myModelB", "myModelA")


def test_solr_original_ranking_is_a_team_like_any_other() -> None:
    docs = [
        {"id": "1", "[interleaving]": "_OriginalRanking_"},
        {"id": "2", "[interleaving]": "myModel"},
    ]
    raw = json.dumps(
        {"type": "impression", "request_id": "s", "timestamp": 1, "results": docs}
    ).encode()
    assert _impression(raw).teams == ("_OriginalRanking_", "myModel")


# OpenSearch Search Relevance Workbench: POST _plugins/_search_relevance/ab_tests/{id}/_search
# answers {"test_id", "interleaved", "hits": [{"_index", "_id", "_score", "_source",
# "_search_configuration_id"}]} (ABTestSearchResponse / ABTestSearchTransportAction.mapHit); the
# application logs it with the UBI query_id and time of the search.
SRW_QUERY = {
    "query_id": "5e3f6c1a-ubi-query-id",
    "timestamp": "2025-05-01T10:00:00.000Z",
    "user_query": "Red  Shoes",
    "test_id": "shoes-ltr-vs-bm25",
    "interleaved": True,
    "hits": [
        {
            "_index": "ecommerce",
            "_id": "B07X1",
            "_score": 12.5,
            "_source": {"title": "red shoe"},
            "_search_configuration_id": "uuid-config-a",
        },
        {
            "_index": "ecommerce",
            "_id": "B07X2",
            "_score": 0.93,
            "_source": {"title": "shoe"},
            "_search_configuration_id": "uuid-config-b",
        },
        {
            "_index": "ecommerce",
            "_id": "B07X3",
            "_score": 0.91,
            "_source": {},
            "_search_configuration_id": "uuid-config-b",
        },
    ],
}
# The UBI click SRW's dashboards write (register_click): event_attributes.object.id (not
# object_id), object.search_configuration_uuid, position.ordinal, ab_test_id; plus the query_id
# of the search, which the application must add to join it.
SRW_CLICK = {
    "timestamp": "2025-05-01T10:00:05.000Z",
    "action_name": "click",
    "query_id": "5e3f6c1a-ubi-query-id",
    "event_attributes": {
        "object": {"id": "B07X2", "search_configuration_uuid": "uuid-config-b"},
        "position": {"ordinal": 2},
        "ab_test_id": "shoes-ltr-vs-bm25",
    },
}


def test_srw_ab_search_response_is_an_interleaved_impression() -> None:
    event = _impression(json.dumps(SRW_QUERY).encode())
    assert event.request_id == "5e3f6c1a-ubi-query-id"
    assert event.query_id == "red shoes"  # the normalized user_query
    assert event.doc_ids == ("B07X1", "B07X2", "B07X3")
    assert event.teams == ("uuid-config-a", "uuid-config-b", "uuid-config-b")
    assert event.labels == {"ab_test_id": "shoes-ltr-vs-bm25"}


def test_srw_click_reads_object_id_from_object_id_or_id() -> None:
    event = decode(json.dumps(SRW_CLICK).encode())
    assert isinstance(event, Click)
    assert (event.request_id, event.doc_id, event.action) == (
        "5e3f6c1a-ubi-query-id",
        "B07X2",
        "click",
    )
    without_query = {k: v for k, v in SRW_CLICK.items() if k != "query_id"}
    refused = decode(json.dumps(without_query).encode())
    assert isinstance(refused, Invalid) and refused.reason == "schema"
    assert "query_id" in refused.detail


def test_srw_query_and_click_give_config_b_the_win() -> None:
    pipeline = Pipeline(settings())
    pipeline.offer(json.dumps(SRW_QUERY).encode())
    pipeline.offer(json.dumps(SRW_CLICK).encode())
    pipeline.finish()
    rows = {(r.window, r.ranker, r.opponent): r for r in pipeline.snapshot().interleaving}
    row = rows["1m", "uuid-config-b", "uuid-config-a"]
    assert (row.wins, row.losses, row.ties) == (1, 0, 0)


def test_solr_impression_and_native_clicks_give_the_clicked_model_the_win() -> None:
    pipeline = Pipeline(settings())
    imp = {
        "type": "impression",
        "request_id": "solr-1",
        "timestamp": 1_000,
        "results": SOLR_RESPONSE["response"]["docs"],  # type: ignore[index]
    }
    pipeline.offer(json.dumps(imp).encode())
    click = {"type": "click", "request_id": "solr-1", "doc_id": "UTF8TEST", "timestamp": 2_000}
    pipeline.offer(json.dumps(click).encode())
    pipeline.finish()
    rows = {(r.ranker, r.opponent): r for r in pipeline.snapshot().interleaving}
    assert rows["myModelA", "myModelB"].wins == 1
    assert rows["myModelB", "myModelA"].losses == 1


def test_an_input_key_cannot_set_the_teams() -> None:
    """``teams`` is filled from the result items only: a ``teams`` key (which populate_by_name
    would read) or ``"\\u0000teams"`` (its alias) is ignored like any unknown key, whatever its
    value; it once set teams of another length than the results, or refused the record."""
    for key in ("teams", "\x00teams"):
        for value in (["A"], ["A", "B", "C"], 5, "x"):
            raw = json.dumps(
                {
                    "type": "impression",
                    "request_id": "r1",
                    "timestamp": 1_000,
                    "results": ["a", {"doc_id": "b", "team": "T"}],
                    key: value,
                }
            ).encode()
            assert _impression(raw).teams == (None, "T"), (key, value)
            plain = json.loads(raw)
            plain["results"] = ["a", "b"]
            assert _impression(json.dumps(plain).encode()).teams is None, (key, value)
