"""Builders of raw event records for pipeline tests (event time in ms)."""

from __future__ import annotations

import json
from typing import Any

from streameval.config import EvaluationSettings


def settings(**overrides: Any) -> EvaluationSettings:
    base: dict[str, Any] = {
        "ks": (1, 3),
        "attribution_window": 60_000,
        "allowed_lateness": 0,
        "windows": (60_000, 300_000),
        "bucket": 10_000,
    }
    base.update(overrides)
    return EvaluationSettings(**base)


def imp(rid: str, ts: int, results: list[str], query: str = "q", **extra: Any) -> bytes:
    rec = {"type": "impression", "request_id": rid, "timestamp": ts, "results": results}
    rec["query"] = query
    rec.update(extra)
    return json.dumps(rec).encode()


def click(rid: str, doc: str, ts: int, **extra: Any) -> bytes:
    rec = {"type": "click", "request_id": rid, "doc_id": doc, "timestamp": ts}
    rec.update(extra)
    return json.dumps(rec).encode()


def judgment(query: str, doc: str, grade: float, ts: int = 0, **extra: Any) -> bytes:
    rec = {"type": "judgment", "query": query, "doc_id": doc, "grade": grade, "timestamp": ts}
    rec.update(extra)
    return json.dumps(rec).encode()
