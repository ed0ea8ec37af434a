"""The judge tracker per finalized list and per judgment change: Python vs native (issue 32).

    .venv/bin/python benchmarks/bench_judge_tracker.py [--lists 100000] [--repeats 5] [--quick]

``JudgeTracker.fold`` (streameval/judges/tracker.py) runs for every finalized list and its
listener ``_changed`` for every judgment change; ``streameval._native.JudgeTrackerCore``
(native/src/judges/) does the same over the native ``JudgmentTable``. Rows:

* ``judges.native``: µs per ``fold`` of the native tracker, called from Python once per list (the
  query id, time, doc ids and the judged coverage read from Python objects in the call), against
  ``JudgeTracker.fold`` on the same lists (OpenList stand-ins and ScoredLists built beforehand);
* ``judges.native.changed``: µs per listener call, ``changed`` against ``_changed``.

The stream: lists over 2,000 queries (Zipf-like, s = 1.1, so that a head forms) spread over
``--hours`` of impression time (the head decided once per minute), 10 results from each query's
30 candidates, ks 1, 3, 5, 10; half of the candidates graded by a rater and by ``llm:sim`` (two
families: shared pairs), a quarter of the queries' grades older than ``max_age`` (stale docs
looked up). Before timing, both trackers' snapshot figures (freshness, head/tail coverage,
agreement) and head sets are checked equal. Process CPU time, medians of interleaved repeats;
each repeat starts from fresh trackers (their judgments replayed outside the timing).
"""

from __future__ import annotations

import gc
import random
import statistics
import sys
from collections.abc import Callable
from typing import Any, NamedTuple, cast

from _common import TIMERS, Result, benchmark_parser, write_json

from streameval import native
from streameval.config import EvaluationSettings, JudgesSettings
from streameval.durations import format_duration
from streameval.events.models import Judgment
from streameval.join.judgments import JudgmentStore
from streameval.join.open_lists import OpenList
from streameval.judges.tracker import JudgeTracker
from streameval.score.lists import ListScorer
from streameval.values import JUDGED, SCORED, ScoredList, SourceScore
from streameval.windows.spec import WindowSpec

KS = (1, 3, 5, 10)
QUERIES = 2_000
CANDIDATES = 30
START_MS = 1_700_000_000_000
DAY_MS = 86_400_000
WINDOWS = (300_000, 3_600_000)
BUCKET_MS = 60_000


class _List(NamedTuple):
    query_id: str
    timestamp: int
    doc_ids: tuple[str, ...]
    counted_before: bool


def make_stream(
    n: int, hours: float, seed: int
) -> tuple[list[tuple[str, str, str, int, float]], list[tuple[_List, tuple[float, ...]]]]:
    """(judgments (query, doc, judge, time, grade), lists with their judged coverage@k)."""
    rng = random.Random(seed)
    weights = [1 / (i + 1) ** 1.1 for i in range(QUERIES)]
    judgments: list[tuple[str, str, str, int, float]] = []
    judged: dict[str, set[str]] = {}
    for q in range(QUERIES):
        query = f"q{q}"
        # a quarter of the queries were graded long ago: their docs are stale
        at = START_MS - (40 * DAY_MS if q % 4 == 0 else DAY_MS)
        docs = rng.sample(range(CANDIDATES), CANDIDATES // 2)
        judged[query] = {f"d{d}" for d in docs}
        for d in docs:
            grade = float(rng.randint(0, 3))
            judgments.append((query, f"d{d}", "rater", at, grade))
            llm = min(3.0, max(0.0, grade + rng.choice((-1.0, 0.0, 0.0, 1.0))))
            judgments.append((query, f"d{d}", "llm:sim", at + 1, llm))
    span = int(hours * 3_600_000)
    lists: list[tuple[_List, tuple[float, ...]]] = []
    for i, q in enumerate(rng.choices(range(QUERIES), weights, k=n)):
        query = f"q{q}"
        docs = tuple(f"d{d}" for d in rng.sample(range(CANDIDATES), 10))
        hits = [doc in judged[query] for doc in docs]
        coverage = tuple(sum(hits[:k]) / k for k in KS)
        lists.append((_List(query, START_MS + i * span // n, docs, False), coverage))
    return judgments, lists


class Contenders:
    """The same judgments and lists for the Python tracker and the native one."""

    def __init__(self, judgments: list[tuple[str, str, str, int, float]], lists: Any) -> None:
        from streameval import _native

        self._native = _native
        self.settings = JudgesSettings()
        self.evaluation = EvaluationSettings(ks=KS, windows=WINDOWS, bucket=BUCKET_MS)
        self.specs = [WindowSpec(w, BUCKET_MS) for w in WINDOWS]
        self.store = JudgmentStore()
        self.table = _native.JudgmentTable(1_000)
        for q, d, judge, ts, grade in judgments:
            j = Judgment.model_construct(
                query_id=q, doc_id=d, judge=judge, timestamp=ts, grade=grade
            )
            self.store.apply(j)
            self.table.store_apply(q, d, judge, grade, ts)
        self.pairs = list(dict.fromkeys((q, d) for q, d, *_ in judgments))
        zeros = (0.0,) * len(KS)
        self.scored = [
            (
                cast(OpenList, lst),
                ScoredList(
                    "r",
                    lst.query_id,
                    lst.timestamp,
                    {},
                    (),
                    (SourceScore(JUDGED, SCORED, KS, zeros, zeros, zeros, cov),),
                    False,
                    None,
                    False,
                ),
            )
            for lst, cov in lists
        ]
        self.native_lists = [(lst.query_id, lst.timestamp, lst.doc_ids, cov) for lst, cov in lists]

    def python_tracker(self) -> JudgeTracker:
        return JudgeTracker(self.settings, self.store, ListScorer(self.evaluation), self.specs, KS)

    def native_tracker(self) -> Any:
        settings = self.settings
        return self._native.JudgeTrackerCore(
            list(settings.families),
            settings.max_families,
            [(format_duration(w), w) for w in settings.agreement_windows],
            settings.max_age,
            settings.head_queries,
            [(s.name, s.size_ms) for s in self.specs],
            BUCKET_MS,
            list(KS),
        )

    def python_changed(self, tracker: JudgeTracker) -> None:
        changed = tracker._changed
        for q, d in self.pairs:
            changed(q, d)

    def native_changed(self, tracker: Any) -> None:
        changed, table = tracker.changed, self.table
        for q, d in self.pairs:
            changed(table, q, d)

    def python_fold(self, tracker: JudgeTracker) -> None:
        fold = tracker.fold
        for lst, s in self.scored:
            fold(lst, s, True)

    def native_fold(self, tracker: Any) -> None:
        fold, table = tracker.fold, self.table
        for q, ts, docs, cov in self.native_lists:
            fold(table, q, ts, docs, False, cov, True)

    def agree(self, horizon: int) -> str | None:
        """Both trackers fed everything: a summary line when their figures and heads are
        equal; None when they differ (what differs said on stderr)."""
        py, nat = self.python_tracker(), self.native_tracker()
        self.python_changed(py)
        self.native_changed(nat)
        self.python_fold(py)
        self.native_fold(nat)
        view = py.view(horizon)
        freshness, coverage = nat.view(horizon)
        checks = {
            "freshness": freshness
            == [(r.window, r.judged_docs, r.stale_docs) for r in view.freshness],
            "coverage": coverage
            == [
                (r.window, r.query_class, r.k, r.lists, r.coverage_sum)
                for r in view.coverage_by_class
            ],
            "agreement": nat.agreement()
            == [(r.window, r.family, r.other, r.pairs, r.alpha) for r in view.agreement],
            "head": nat.head() == sorted(py._head),
        }
        wrong = [name for name, ok in checks.items() if not ok]
        if wrong:
            print(f"differ: {', '.join(wrong)}", file=sys.stderr)
            return None
        stale = sum(r.stale_docs for r in view.freshness)
        return f"head of {len(nat.head())} queries, {stale} stale docs in the windows"

    def time(self, repeats: int, timer: Callable[[], float]) -> dict[str, float]:
        """Median seconds per contender, interleaved; each repeat on fresh trackers (a fold's
        trackers first told of the judgments, untimed)."""
        contenders: list[tuple[str, Callable[[], Any], Callable[[Any], None], bool]] = [
            ("python.changed", self.python_tracker, self.python_changed, False),
            ("native.changed", self.native_tracker, self.native_changed, False),
            ("python.fold", self.python_tracker, self.python_fold, True),
            ("native.fold", self.native_tracker, self.native_fold, True),
        ]
        times: dict[str, list[float]] = {name: [] for name, *_ in contenders}
        for _ in range(repeats):
            for name, make, work, fold in contenders:
                tracker = make()
                if fold:
                    python = name.startswith("python")
                    (self.python_changed if python else self.native_changed)(tracker)
                start = timer()
                work(tracker)
                times[name].append(timer() - start)
        return {name: statistics.median(t) for name, t in times.items()}


def main() -> int:
    parser = benchmark_parser(__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--lists", type=int, default=None, help="lists (default 100,000)")
    parser.add_argument("--hours", type=float, default=2.0, help="impression time spanned")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="30,000 lists, 3 repeats")
    args = parser.parse_args()
    if args.lists is None:
        args.lists = 30_000 if args.quick else 100_000
    if args.quick:
        args.repeats = min(args.repeats, 3)
    if not native.available():
        print(f"no rows: the native module is missing ({native.unavailable_reason()})")
        write_json(args.json, {"benchmark": "judge_tracker", "results": []})
        return 0

    judgments, lists = make_stream(args.lists, args.hours, args.seed)
    contenders = Contenders(judgments, lists)
    summary = contenders.agree(lists[-1][0].timestamp + BUCKET_MS)
    if summary is None:
        print("MISMATCH: the native tracker disagrees with JudgeTracker", file=sys.stderr)
        return 1
    pairs = len(contenders.pairs)
    print(f"{args.lists} lists, {pairs} judged pairs, {summary}; figures equal")
    gc.collect()
    gc.freeze()
    seconds = contenders.time(args.repeats, TIMERS[args.timer])
    per_list = {k: seconds[k] * 1e6 / args.lists for k in ("python.fold", "native.fold")}
    per_change = {k: seconds[k] * 1e6 / pairs for k in ("python.changed", "native.changed")}
    print(f"timer: {args.timer}, median of {args.repeats} interleaved repeats")
    for name, value in [*per_list.items(), *per_change.items()]:
        print(f"{name:16} {value:8.3f} µs")
    fold_ratio = per_list["python.fold"] / per_list["native.fold"]
    changed_ratio = per_change["python.changed"] / per_change["native.changed"]
    print(f"fold: native {fold_ratio:.1f}x faster; listener: {changed_ratio:.1f}x")
    results = [
        Result(
            "judges.native",
            per_list["native.fold"],
            "µs/list",
            baseline=per_list["python.fold"],
            baseline_name="JudgeTracker.fold",
            note=f"JudgeTrackerCore.fold called from Python per list vs JudgeTracker.fold, "
            f"{args.lists} lists, ks={KS}, figures checked equal; median of {args.repeats} "
            f"({args.timer} time); {fold_ratio:.1f}x faster",
        ),
        Result(
            "judges.native.changed",
            per_change["native.changed"],
            "µs/change",
            baseline=per_change["python.changed"],
            baseline_name="JudgeTracker._changed",
            note=f"the listener per (query, doc) change, {pairs} pairs of two families; "
            f"{changed_ratio:.1f}x faster",
        ),
    ]
    write_json(
        args.json,
        {
            "benchmark": "judge_tracker",
            "results": [r.as_dict() for r in results],
            "lists": args.lists,
            "repeats": args.repeats,
            "timer": args.timer,
            "seconds": seconds,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
