"""Raw event records of DESIGN §2 (native JSON, UTF-8 bytes) and their Kafka keys."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

#: between query_id and doc_id in a judgment's Kafka key (ASCII unit separator: in no id)
JUDGMENT_KEY_SEPARATOR = "\x1f"

Kind = Literal["impression", "click", "judgment"]


class SimRecord(NamedTuple):
    """One record of the simulated stream.

    ``kind`` says which stream it belongs to (impressions, clicks, judgments); a noise record
    (duplicate or invalid) has the kind of the stream it was injected into. ``key`` is the Kafka
    key: the request_id for impressions and clicks, ``query_id + "\\x1f" + doc_id`` for judgments.
    """

    time_ms: int
    kind: Kind
    key: str
    raw: bytes


def _dumps(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def impression(
    request_id: str,
    time_ms: int,
    *,
    query_id: str,
    query: str,
    doc_ids: Sequence[str],
    labels: Mapping[str, str],
    teams: Sequence[str] | None = None,
) -> bytes:
    results: list[Any] = list(doc_ids)
    if teams is not None:  # interleaved: each result names the ranker that contributed it
        results = [{"doc_id": d, "team": t} for d, t in zip(doc_ids, teams, strict=True)]
    return _dumps(
        {
            "type": "impression",
            "request_id": request_id,
            "event_id": request_id,
            "timestamp": time_ms,
            "query": query,
            "query_id": query_id,
            "results": results,
            "labels": dict(labels),
        }
    )


def interaction(
    request_id: str,
    time_ms: int,
    *,
    event_id: str,
    doc_id: str,
    position: int,
    action: str,
    dwell_ms: int | None,
) -> bytes:
    obj: dict[str, Any] = {
        "type": "click",
        "request_id": request_id,
        "event_id": event_id,
        "timestamp": time_ms,
        "doc_id": doc_id,
        "position": position,
        "action": action,
    }
    if dwell_ms is not None:
        obj["dwell_ms"] = dwell_ms
    return _dumps(obj)


def judgment(query_id: str, doc_id: str, grade: int, judge: str, time_ms: int) -> bytes:
    return _dumps(
        {
            "type": "judgment",
            "query_id": query_id,
            "doc_id": doc_id,
            "grade": grade,
            "judge": judge,
            "timestamp": time_ms,
        }
    )


def judgment_key(query_id: str, doc_id: str) -> str:
    return f"{query_id}{JUDGMENT_KEY_SEPARATOR}{doc_id}"
