"""A generated corpus of hostile records, each with the outcome the contract promises for it.

Every record knows where it must end: ``reason`` (one of the decoder's invalid reasons: counted
by that reason and dead-lettered with it) or, for records that are valid but strange, ``outcome``
(``unmatched`` for clicks whose request ids only *look* like real ones, or ``late`` when the
daemon reads one behind the watermark, ``accepted`` for
impressions and judgments that live in their own segment or query, so they cannot touch the
real traffic's figures). :func:`mix` scatters the corpus through a clean log; valid noise takes
the event time of the clean record it follows, so it never runs ahead of its partition.

Decisions (DESIGN §2 "bad input never crashes and never disappears"):

- Far-past and far-future *valid* timestamps are not in the mixed corpus: they are valid events
  that move (or fall behind) the watermark, so their effect depends on when they are read. The
  hostile test produces them in phases of their own with exact expectations: a far-past
  impression is ``late``, and so is a far-past click of an unknown list (read behind the
  watermark: DESIGN §3); a far-future event
  is accepted and pulls the watermark (and horizon) with it, after which in-time events are
  counted late, never lost.
- Out-of-range timestamps (before 1970, after 9999, 1e30, garbage strings) are ``schema``.
- 100k-result lists stay under the size cap and are ``schema`` (over 1000 results); 10 MB
  records are ``too_large`` (the topics need ``max.message.bytes`` raised: :data:`TOPIC_CONFIG`).
- Unicode confusables of real request ids (Cyrillic letters, full-width forms, zero-width and
  bidi controls) are different ids: ``unmatched``, never joined to the real list. Judgments use
  Cyrillic look-alikes of real query texts (NFKC does not fold them, unlike full-width forms).
- Records carry user ids and query texts in extra fields and in non-segment labels: none of it
  may reach a label on /metrics (:attr:`Corpus.identifiers` lists what to look for).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: topic settings for records up to 16 MiB (a producer needs ``max_request_size`` as large)
MAX_BYTES = 16 * 1024 * 1024
TOPIC_CONFIG = {"max.message.bytes": str(MAX_BYTES)}
BIG_BYTES = 10 * 1024 * 1024

#: the segment of valid hostile impressions (real traffic has ranker r-control / r-treatment)
NOISE_SEGMENT = {"ranker": "noise", "arm": "noise"}


#: a row of a log to produce: (topic role, key, value, partition or None)
Row = tuple[str, bytes | None, bytes | None, int | None]


@dataclass(frozen=True)
class Hostile:
    role: str  # "impressions" | "clicks" | "judgments"
    key: bytes | None
    value: bytes | None
    kind: str  # the corpus category, for failure messages
    reason: str | None = None  # invalid: the reason it must be counted and dead-lettered with
    outcome: str | None = None  # valid: "accepted" | "unmatched"
    event: str | None = None  # valid: the event type it is counted under
    field: str | None = None  # mapping: the record's field the dead letter must name


@dataclass
class Corpus:
    records: list[Hostile] = field(default_factory=list)
    #: query texts, doc ids, user ids and request ids the corpus carries (for the label scan)
    identifiers: set[str] = field(default_factory=set)

    def invalid_by_reason(self) -> Counter[str]:
        return Counter(r.reason for r in self.records if r.reason is not None)

    def valid(self, outcome: str, event: str) -> int:
        return sum(1 for r in self.records if r.outcome == outcome and r.event == event)


# --- building blocks --------------------------------------------------------------------------

_CONFUSE = {
    "e": "\u0435",  # Cyrillic small ie
    "q": "\u051b",  # Cyrillic small qa
    "r": "\u0433",  # Cyrillic small ghe (looks like r in many fonts)
    "0": "\u041e",  # Cyrillic capital O
    "1": "\u0399",  # Greek capital iota
}


def _confusable(text: str, rng: random.Random) -> str:
    """A string that looks like ``text`` but is not equal to it (nor under NFKC)."""
    style = rng.randrange(5)
    if style == 0:  # one Latin letter swapped for a Cyrillic or Greek look-alike
        spots = [i for i, ch in enumerate(text) if ch in _CONFUSE]
        if spots:
            i = rng.choice(spots)
            return text[:i] + _CONFUSE[text[i]] + text[i + 1 :]
        return text + "\u200b"
    if style == 1:  # full-width forms (NFKC would fold them: ids are not normalized)
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)
    if style == 2:  # zero-width joiner inside
        return text[:2] + "\u200d" + text[2:]
    if style == 3:  # bidi override (renders reversed)
        return "\u202e" + text
    return text + "\u0301"  # a combining accent on the last character


def _dump(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode()


def _impression(rid: str, ts: int, **extra: Any) -> dict[str, Any]:
    return {"type": "impression", "request_id": rid, "timestamp": ts, "results": ["d1", "d2"]} | (
        extra
    )


def _click(rid: str, ts: int, **extra: Any) -> dict[str, Any]:
    return {"type": "click", "request_id": rid, "doc_id": "d1", "timestamp": ts} | extra


def _judgment(ts: int, **extra: Any) -> dict[str, Any]:
    return {"type": "judgment", "query": "query 1", "doc_id": "d1", "grade": 1, "timestamp": ts} | (
        extra
    )


# --- the generators: (rng, ts, n) -> one record ------------------------------------------------

Gen = Callable[[random.Random, int, int], Hostile]


def _bad_encoding(rng: random.Random, ts: int, n: int) -> Hostile:
    rid = f"hostile-enc-{n}"
    body = _dump(_impression(rid, ts)) if n % 2 else _dump(_click(rid, ts))
    bad = rng.choice([b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xe2\x82", b"\x80", b"\xf8\x88"])
    at = body.index(rid.encode()) + rng.randrange(len(rid))
    if n % 7 == 0:  # a Latin-1 producer
        body = json.dumps(_click(rid, ts, action="caf\u00e9"), ensure_ascii=False).encode("latin-1")
        return Hostile("clicks", rid.encode(), body, "latin-1", reason="bad_encoding")
    role = "impressions" if n % 2 else "clicks"
    return Hostile(role, rid.encode(), body[:at] + bad + body[at:], "invalid utf-8", "bad_encoding")


def _bad_json(rng: random.Random, ts: int, n: int) -> Hostile:
    rid = f"hostile-json-{n}"
    body = _dump(_click(rid, ts))
    choice = n % 10
    value: bytes | None
    if choice == 0:
        value = body[: rng.randrange(1, len(body) - 1)]  # truncated
        kind = "truncated"
    elif choice == 1:
        value, kind = body + b"garbage", "trailing garbage"
    elif choice == 2:
        value, kind = body + body, "two objects"
    elif choice == 3:
        value, kind = b"", "empty"
    elif choice == 4:
        value, kind = b" \t ", "white space"
    elif choice == 5:
        depth = 100_000 if (n // 10) % 40 == 0 else rng.choice([300, 5_000])
        value, kind = b"[" * depth + b"]" * depth, f"nested {depth}"
    elif choice == 6:
        value, kind = body.replace(b'"', b"'"), "single quotes"
    elif choice == 7:
        value, kind = body.replace(b"hostile", b"\\ud800hostile", 1), "lone surrogate escape"
    elif choice == 8:
        # a null value, read as an empty record (not on the compacted judgment topic, where a
        # tombstone would delete a judgment by its key: see the report)
        value, kind = None, "tombstone"
        return Hostile(("clicks", "impressions")[n % 2], rid.encode(), value, kind, "bad_json")
    else:
        depth = 250
        nested = b'{"a":' * depth + b"1" + b"}" * depth
        value = body[:-1] + b', "x": ' + nested + b"}"
        kind = "event nested too deep"
    role = ("clicks", "impressions", "judgments")[n % 3]
    return Hostile(role, rid.encode(), value, kind, reason="bad_json")


def _schema(rng: random.Random, ts: int, n: int) -> Hostile:
    rid = f"hostile-schema-{n}"
    user = f"user-hostile-{n}"
    choice = n % 24
    role = "impressions"
    rec: Any
    if choice == 0:
        rec, kind = _impression(rid, ts, results="d1 d2"), "results as a string"
    elif choice == 1:
        rec, kind = _impression(n, ts), "numeric request id"  # type: ignore[arg-type]
    elif choice == 2:
        count = 100_000 if (n // 24) % 60 == 0 else 1001  # a few 100k lists (~800 kB each)
        rec, kind = (
            _impression(rid, ts, results=[f"d{i}" for i in range(count)]),
            f"{count} results",
        )
    elif choice == 3:
        rec, kind = _impression("", ts), "empty request id"
    elif choice == 4:
        long = "r" * rng.choice([257, 300, 1000, 10_000, 10_000, 100_000])
        rec, kind = _impression(long, ts), f"request id of {len(long)}"
    elif choice == 5:
        rec, kind = _impression(rid, ts, results=[""]), "empty doc id"
    elif choice == 6:
        rec, kind = _impression(rid, -1), "negative timestamp"
    elif choice == 7:
        rec, kind = _impression(rid, "10000-01-01T00:00:00Z"), "year 10000"
    elif choice == 8:
        rec, kind = _impression(rid, 10**30), "timestamp 1e30"
    elif choice == 9:
        rec, kind = _impression(rid, "0000-01-01T00:00:00Z"), "year 0"
    elif choice == 10:
        rec, kind = _impression(rid, "next tuesday"), "timestamp text"
    elif choice == 11:
        rec, kind = _impression(rid, ts, labels={f"k{i}": "v" for i in range(40)}), "40 labels"
    elif choice == 12:
        rec, kind = _impression(rid, ts, labels={"ranker": 7, "user": user}), "label not a string"
    elif choice == 13:
        role, kind = "judgments", "NaN grade"
        raw = _dump(_judgment(ts, doc_id=rid)).replace(b'"grade": 1', b'"grade": NaN')
        return Hostile(role, rid.encode(), raw, kind, reason="schema")
    elif choice == 14:
        role, kind = "judgments", "Infinity grade"
        inf = rng.choice([b"Infinity", b"-Infinity", b"1e999"])
        raw = _dump(_judgment(ts, doc_id=rid)).replace(b'"grade": 1', b'"grade": ' + inf)
        return Hostile(role, rid.encode(), raw, kind, reason="schema")
    elif choice == 15:
        role = "judgments"
        rec, kind = _judgment(ts, doc_id=rid, grade=rng.choice([1e308, -1e300, 10**400])), "huge"
    elif choice == 16:
        role = "judgments"
        rec, kind = _judgment(ts, doc_id=rid, grade="3"), "grade as a string"
    elif choice == 17:
        role = "judgments"
        rec, kind = _judgment(ts, query=" \u3000 \t", doc_id=rid), "blank query"
    elif choice == 18:
        role = "clicks"
        rec, kind = _click(rid, ts, dwell_ms=10**20, user_id=user), "huge dwell"
    elif choice == 19:
        role = "clicks"
        rec, kind = _click(rid, ts, position=0), "position 0"
    elif choice == 20:
        role = "clicks"
        rec, kind = {"type": "click", "request_id": rid, "timestamp": ts}, "no doc id"
    elif choice == 21:
        role = "clicks"
        rec = rng.choice([[1, 2, 3], 42, "click", None, True])
        kind = "not an object"
    elif choice == 22:
        role = "clicks"
        rec, kind = {"query_id": rid, "query_response_hit_ids": [], "timestamp": ts}, "UBI empty"
    else:
        role = "clicks"
        rec, kind = _click(rid, ts, action="x" * 101), "action too long"
    return Hostile(role, rid.encode(), _dump(rec), kind, reason="schema")


def _unknown_type(rng: random.Random, ts: int, n: int) -> Hostile:
    rid = f"hostile-type-{n}"
    tag = rng.choice(["IMPRESSION", "purchase", "", 5, None, {"nested": 1}, "impression "])
    rec = _click(rid, ts) | {"type": tag}
    return Hostile("clicks", rid.encode(), _dump(rec), f"type {tag!r}", reason="unknown_type")


def _too_large(rng: random.Random, ts: int, n: int) -> Hostile:
    rid = f"hostile-big-{n}"
    size = BIG_BYTES if n % 4 == 0 else 1_048_577 + rng.randrange(1000)
    rec = _impression(rid, ts, padding="")
    raw = _dump(rec)
    raw = raw.replace(b'"padding": ""', b'"padding": "' + b"x" * (size - len(raw)) + b'"')
    role = ("impressions", "clicks", "judgments")[n % 3]
    return Hostile(role, rid.encode(), raw, f"{len(raw)} bytes", reason="too_large")


# --- valid noise ----------------------------------------------------------------------------


def _confusable_click(rng: random.Random, ts: int, n: int, real_rid: str) -> Hostile:
    rid = _confusable(real_rid, rng)
    rec = _click(rid, ts, user_id=f"user-confusable-{n}")
    return Hostile(
        "clicks", rid.encode(), _dump(rec), "confusable id", outcome="unmatched", event="click"
    )


def _noise_impression(rng: random.Random, ts: int, n: int) -> Hostile:
    rid = f"hostile-imp-{n}-\u0440\u0435q"
    query = f"hostile query {n} \u2603 \u202e"
    labels = NOISE_SEGMENT | {"user_id": f"user-noise-{n}", "query_text": query, "doc": f"hd-{n}"}
    docs = [f"hostile-doc-{n}-{i}\u00e9" for i in range(rng.randrange(1, 20))]
    rec = _impression(rid, ts, results=docs, query=query, labels=labels, user=f"user-imp-{n}")
    return Hostile(
        "impressions",
        rid.encode(),
        _dump(rec),
        "noise impression",
        outcome="accepted",
        event="impression",
    )


def _noise_judgment(rng: random.Random, ts: int, n: int, real_query: str) -> Hostile:
    query = real_query.replace("e", "\u0435").replace("q", "\u051b")
    rec = _judgment(
        ts, query=query, doc_id=f"hostile-jdoc-{n}", grade=rng.choice([0, 3]), judge=f"j-{n}"
    )
    key = f"{query}\x1f{n}"
    return Hostile(
        "judgments",
        key.encode(),
        _dump(rec),
        "confusable query",
        outcome="accepted",
        event="judgment",
    )


_INVALID: list[tuple[Gen, int]] = [
    (_bad_encoding, 20),
    (_bad_json, 25),
    (_schema, 40),
    (_unknown_type, 10),
]


def decoded(rows: list[Row]) -> list[dict[str, Any] | None]:
    """The clean rows' values as JSON (None for a row that is not a JSON object)."""
    out: list[dict[str, Any] | None] = []
    for _, _, raw, _ in rows:
        try:
            value = json.loads(raw or b"")
        except ValueError:
            value = None
        out.append(value if isinstance(value, dict) else None)
    return out


def build(
    seed: int,
    n: int,
    clean: list[dict[str, Any] | None],
    *,
    big: int = 3,
    oversized: int = 5,
) -> list[tuple[int, Hostile]]:
    """``n`` hostile records, each with the index of the clean row it follows. ``clean`` is
    :func:`decoded` of the clean rows, in log order; ``big`` records of 10 MB and ``oversized``
    just over 1 MiB are part of the ``n``.

    A valid hostile record takes the time of the latest clean *impression* at or before its
    place: impressions are in time order in the log, so it never runs ahead of a partition (a
    record ahead would move the watermark and make the clean records after it late)."""
    rng = random.Random(seed)
    out: list[tuple[int, Hostile]] = []
    records = [rec for rec in clean if rec is not None]
    times: list[int] = []
    latest = min(rec["timestamp"] for rec in records)
    for rec in clean:
        if rec is not None and rec.get("type") == "impression":
            latest = rec["timestamp"]
        times.append(latest)
    rids = [rec["request_id"] for rec in records if "request_id" in rec]
    queries = sorted({rec["query"] for rec in records if "query" in rec})
    gens, weights = zip(*_INVALID, strict=True)
    for i in range(n):
        at = rng.randrange(len(clean))
        ts = times[at]
        if i < big:
            rec = _too_large(rng, ts, 4 * i)
        elif i < big + oversized:
            rec = _too_large(rng, ts, 4 * i + 1)
        else:
            roll = rng.random()
            if roll < 0.06:
                rec = _confusable_click(rng, ts, i, rng.choice(rids))
            elif roll < 0.08:
                rec = _noise_impression(rng, ts, i)
            elif roll < 0.10:
                rec = _noise_judgment(rng, ts, i, rng.choice(queries))
            else:
                rec = rng.choices(gens, weights)[0](rng, ts, i)
        out.append((at, rec))
    return out


def identifiers(records: list[Hostile], clean: list[dict[str, Any] | None]) -> set[str]:
    """Every query text, doc id, user id and request id carried by the records (clean and
    hostile) that a label must never show."""
    found: set[str] = set()

    def walk(obj: Any, key: str = "") -> None:
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk(v, k)
        elif isinstance(obj, list):
            for v in obj:
                walk(v, key)
        elif isinstance(obj, str) and key in {
            "request_id",
            "doc_id",
            "results",
            "query",
            "query_id",
            "user_id",
            "user",
            "query_text",
            "doc",
        }:
            found.add(obj)

    for rec in clean:
        walk(rec)
    for h in records:
        if h.value is None or len(h.value) > 1_048_576:
            continue
        try:
            walk(json.loads(h.value))
        except (ValueError, RecursionError):
            continue
    return found


def mix(clean: list[Row], hostile: list[tuple[int, Hostile]]) -> list[tuple[Row, Hostile | None]]:
    """The clean rows (role, key, value, partition) with each hostile record placed after the
    clean row it names; each row with its hostile record (None for clean ones)."""
    after: dict[int, list[Hostile]] = {}
    for at, h in hostile:
        after.setdefault(at, []).append(h)
    out: list[tuple[Row, Hostile | None]] = []
    for i, row in enumerate(clean):
        out.append((row, None))
        for h in after.get(i, ()):
            out.append(((h.role, h.key, h.value, None), h))
    return out


# --- a mapped format: the Segment-like shape of docs/input-formats.md (fixtures/input/segment.toml)


def _seg(event: str, ts: int, **props: Any) -> dict[str, Any]:
    iso = f"{_iso(ts)}"
    return {"type": "track", "event": event, "timestamp": iso, "properties": props}


def _iso(ts: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ts / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _mapped(rng: random.Random, ts: int, n: int) -> Hostile:
    """A Segment-like record that does not map, with the field it must be refused for."""
    rid = f"hostile-seg-{n}"
    choice = n % 20
    role = "clicks"
    good_products = [{"product_id": "d1"}, {"product_id": "d2"}]
    rec: Any
    if choice == 0:
        rec, field, kind = (
            _seg("Product Clicked", ts, product_id="d1"),
            "/properties/search_id",
            "no request id",
        )
    elif choice == 1:
        role, field, kind = "impressions", "/properties/products", "no results"
        rec = _seg("Products Searched", ts, search_id=rid)
    elif choice == 2:
        role, field, kind = "impressions", "/properties/products", "results not an array"
        rec = _seg("Products Searched", ts, search_id=rid, products="d1 d2")
    elif choice == 3:
        role, field = "impressions", "/properties/products"
        count = rng.choice([1001, 5000])
        kind = f"{count} results"
        rec = _seg(
            "Products Searched",
            ts,
            search_id=rid,
            products=[{"product_id": f"d{i}"} for i in range(count)],
        )
    elif choice == 4:
        role, field, kind = "impressions", "/properties/products/1", "result without an id"
        rec = _seg(
            "Products Searched", ts, search_id=rid, products=[{"product_id": "d1"}, {"sku": "d2"}]
        )
    elif choice == 5:
        role, field, kind = "impressions", "/properties/products/0", "result id an object"
        rec = _seg("Products Searched", ts, search_id=rid, products=[{"product_id": {"id": 1}}])
    elif choice == 6:
        field, kind = "/properties/search_id", "request id too long"
        rec = _seg(
            "Product Clicked", ts, search_id="r" * rng.choice([257, 10_000]), product_id="d1"
        )
    elif choice == 7:
        field, kind = "/timestamp", "timestamp not RFC 3339"
        rec = _seg("Product Clicked", ts, search_id=rid, product_id="d1")
        rec["timestamp"] = rng.choice(["next tuesday", ts, "10000-01-01T00:00:00Z", None, [1]])
    elif choice == 8:
        role, field, kind = "judgments", "/properties/rating", "rating as a string"
        rec = _seg("Product Rated", ts, query="query 1", product_id=rid, rating="3")
    elif choice == 9:
        role, field, kind = "judgments", "/properties/rating", "huge rating"
        rec = _seg(
            "Product Rated", ts, query="query 1", product_id=rid, rating=rng.choice([1e308, -1e300])
        )
    elif choice == 10:
        rec = _seg("x", ts, search_id=rid, product_id="d1")
        rec["event"] = rng.choice([None, ["Product Clicked"], 7])
        if rec["event"] is not None:  # not a type value the mapping reads
            return Hostile(role, rid.encode(), _dump(rec), "event name", reason="unknown_type")
        del rec["event"]
        field, kind = "/event", "no event name"
    elif choice == 11:
        field, kind = "", "not an object"
        rec = rng.choice([[1, 2, 3], 42, "Product Clicked", None, True])
    elif choice == 12:
        role, field, kind = "impressions", "/context/traits/ranker", "label an object"
        rec = _seg("Products Searched", ts, search_id=rid, products=good_products)
        rec["context"] = {"traits": {"ranker": {"name": "x"}}}
    elif choice == 13:
        role, field, kind = "impressions", "/properties/experiment_arm", "label too long"
        rec = _seg(
            "Products Searched", ts, search_id=rid, products=good_products, experiment_arm="a" * 300
        )
    elif choice == 14:
        field, kind = "/properties/view_ms", "negative dwell"
        rec = _seg("Product Viewed", ts, search_id=rid, product_id="d1", view_ms=-5)
    elif choice == 15:
        role, field, kind = "judgments", "/properties/product_id", "no doc id"
        rec = _seg("Product Rated", ts, query="query 1", rating=2)
    elif choice == 16:  # an event the mapping does not read: another event of the topic
        rec = _seg(
            rng.choice(["Page Viewed", "product clicked", "Product Clicked "]), ts, search_id=rid
        )
        return Hostile(role, rid.encode(), _dump(rec), "other event", reason="unknown_type")
    elif choice == 17:
        raw = _dump(_seg("Product Rated", ts, query="q", product_id=rid, rating=1))
        raw = raw.replace(
            b'"rating": 1', b'"rating": ' + rng.choice([b"NaN", b"Infinity", b"-Infinity"])
        )
        # JSON5-ish numbers parse, and the grade refuses them: named like any bad grade
        return Hostile(
            "judgments",
            rid.encode(),
            raw,
            "NaN rating",
            reason="mapping",
            field="/properties/rating",
        )
    elif choice == 18:
        depth = rng.choice([300, 5_000, 100_000])
        raw = b'{"event": "Product Clicked", "properties": ' + b"[" * depth + b"]" * depth + b"}"
        return Hostile(role, rid.encode(), raw, f"nested {depth}", reason="bad_json")
    else:
        raw = _dump(_seg("Product Clicked", ts, search_id=rid, product_id="d1"))
        at = raw.index(rid.encode()) + 3
        return Hostile(
            role,
            rid.encode(),
            raw[:at] + b"\xff\xfe" + raw[at:],
            "invalid utf-8",
            reason="bad_encoding",
        )
    return Hostile(role, rid.encode(), _dump(rec), kind, reason="mapping", field=field)


def build_mapped(
    seed: int, n: int, clean: list[dict[str, Any] | None]
) -> list[tuple[int, Hostile]]:
    """``n`` Segment-like records that do not map (or are not JSON, or too large: two of just
    over 1 MiB), each with the index of the clean row it follows (``clean``: :func:`decoded`
    of the clean *native* rows, for the event times)."""
    rng = random.Random(seed)
    times: list[int] = []
    latest = min(rec["timestamp"] for rec in clean if rec is not None)
    for rec in clean:
        if rec is not None and rec.get("type") == "impression":
            latest = rec["timestamp"]
        times.append(latest)
    out: list[tuple[int, Hostile]] = []
    for i in range(n):
        at = rng.randrange(len(clean))
        if i < 2:
            rid = f"hostile-seg-big-{i}"
            rec = _seg(
                "Product Clicked", times[at], search_id=rid, product_id="d1", pad="x" * 1_048_600
            )
            h = Hostile("clicks", rid.encode(), _dump(rec), "over 1 MiB", reason="too_large")
        else:
            h = _mapped(rng, times[at], i)
        out.append((at, h))
    return out
