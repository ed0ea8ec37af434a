"""Throughput of streameval's Scorer against pytrec_eval on the same random ranked lists.

    .venv/bin/python benchmarks/bench_scoring.py [--lists 100000] [--repeats 5] [--quick]
        [--json FILE]

Every list has 10-50 docs with integer grades 0-3; NDCG at k = 1, 3, 5, 10 (linear gain,
log2 discount, the judged docs of the query as ideal: trec_eval's ndcg_cut). Rows:

* ``pytrec_eval``: ``RelevanceEvaluator.evaluate(run)`` only (qrels, run and the evaluator
  built beforehand). This is the baseline of the ratio.
* ``pytrec_eval+build``: also building the qrels/run dicts and the evaluator, for honesty.
* ``streameval``: ``Scorer.score(grades, pool)`` per list, grades already in rank order.
* ``streameval+join``: also ``grades_in_rank_order(doc_ids, qrels)`` per list, i.e. starting
  from the same doc-id input pytrec_eval gets.
* ``scoring.native``: the native batch scorer (``streameval._native.GradeBatch.score``, Rust,
  the GIL released while it computes) over the same lists, read into Rust memory once before
  timing, as pytrec_eval's evaluator holds its qrels: NDCG@k per list as tuples (None where the
  ideal DCG is 0), as the native engine would hand them out (issue 32's target: >= 10x).
* ``scoring.native+read``: ``streameval._native.score_batch(lists)``, the same with the Python
  lists read in every call (3M Python ints per 100k lists).

Before timing, every NDCG of both is compared (max abs difference printed; must be < 1e-9), and
the native NDCGs must equal the Python Scorer's bit for bit. Without the native module the
native rows are left out (with a notice).
"""

from __future__ import annotations

import gc
import random
import sys
from collections.abc import Callable

import pytrec_eval
from _common import (
    TIMERS,
    Result,
    Target,
    measure_interleaved,
    ratio_table,
    suite_parser,
    write_json,
)

from streameval import native
from streameval.score import MetricSpec, Scorer, grades_in_rank_order

KS = (1, 3, 5, 10)
#: lists/s of Scorer.score over lists/s of pytrec_eval's evaluate (issue 6)
TARGET = 2.0
#: lists/s of the native batch scorer over pytrec_eval's (issue 32)
NATIVE_TARGET = 10.0
MEASURE = "ndcg_cut." + ",".join(map(str, KS))
DOC_IDS = [f"d{i}" for i in range(50)]


def make_lists(n: int, seed: int) -> list[list[int]]:
    """Grades in rank order of ``n`` lists of 10-50 docs (doc i of a list is DOC_IDS[i])."""
    rng = random.Random(seed)
    return [[rng.randint(0, 3) for _ in range(rng.randint(10, 50))] for _ in range(n)]


def build_qrels(lists: list[list[int]]) -> dict[str, dict[str, int]]:
    return {f"q{q}": dict(zip(DOC_IDS, grades, strict=False)) for q, grades in enumerate(lists)}


def build_run(lists: list[list[int]]) -> dict[str, dict[str, float]]:
    # distinct descending scores: the run's order is the list order
    return {
        f"q{q}": {DOC_IDS[i]: float(len(grades) - i) for i in range(len(grades))}
        for q, grades in enumerate(lists)
    }


def main() -> int:
    parser = suite_parser(__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--lists", type=int, default=None, help="random lists to score")
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()
    if args.lists is None:
        args.lists = 30_000 if args.quick else 100_000
    if args.quick:
        args.repeats = min(args.repeats, 3)

    lists = make_lists(args.lists, args.seed)
    qrels = build_qrels(lists)
    run = build_run(lists)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {MEASURE})
    scorer = Scorer(MetricSpec(ks=KS))
    score = scorer.score
    # the join's input: doc ids in rank order, the judged grades and pool of each query
    joins = [(DOC_IDS[: len(g)], qrels[f"q{q}"], g) for q, g in enumerate(lists)]

    theirs = evaluator.evaluate(run)
    ours = [score(g, g) for g in lists]
    worst = max(
        abs((value or 0.0) - theirs[f"q{q}"][f"ndcg_cut_{k}"])
        for q, scores in enumerate(ours)
        for k, value in zip(scores.ks, scores.ndcg, strict=True)
    )
    print(f"{args.lists} lists, max |streameval - pytrec_eval| NDCG = {worst:.2e}")
    if worst > 1e-9:
        print("MISMATCH: the two implementations disagree", file=sys.stderr)
        return 1

    contenders: list[tuple[str, Callable[[], object]]] = []
    if native.available():
        from streameval import _native

        batch = _native.GradeBatch(lists)
        native_ndcg = batch.score(ks=list(KS), ndcg_only=True)
        if native_ndcg != [s.ndcg if s.ndcg[0] is not None else None for s in ours]:
            print("MISMATCH: the native scorer disagrees with Scorer", file=sys.stderr)
            return 1
        contenders = [
            ("scoring.native", lambda: batch.score(ks=list(KS), ndcg_only=True)),
            (
                "scoring.native+read",
                lambda: _native.score_batch(lists, ks=list(KS), ndcg_only=True),
            ),
        ]
    else:
        print(f"native rows left out: {native.unavailable_reason()}")

    def streameval_score() -> object:
        return [score(g, g) for g in lists]

    def streameval_join() -> object:
        return [score(grades_in_rank_order(docs, grade_of), pool) for docs, grade_of, pool in joins]

    def pytrec_build() -> object:
        ev = pytrec_eval.RelevanceEvaluator(build_qrels(lists), {MEASURE})
        return ev.evaluate(build_run(lists))

    # The inputs above (~200k dicts) live for the whole run; without this every full GC pass
    # triggered by *any* contender's allocations would walk them, which measures the harness.
    # Freezing moves them out of the collector's sight; the contenders' own garbage is
    # still collected as usual.
    gc.collect()
    gc.freeze()
    n, r = args.lists, args.repeats
    rows = measure_interleaved(
        [
            ("pytrec_eval", lambda: evaluator.evaluate(run)),
            ("pytrec_eval+build", pytrec_build),
            ("streameval", streameval_score),
            ("streameval+join", streameval_join),
            *contenders,
        ],
        items=n,
        repeats=r,
        timer=TIMERS[args.timer],
    )
    print(f"timer: {args.timer}, median of {r} interleaved repeats")
    print(ratio_table(rows, baseline="pytrec_eval", unit="lists/s"))
    ratio = rows[2].rate / rows[0].rate
    print(f"streameval / pytrec_eval = {ratio:.2f} (target >= {TARGET:g})")
    result = Result(
        "scoring",
        rows[2].rate,
        "lists/s",
        baseline=rows[0].rate,
        baseline_name="pytrec_eval",
        target=Target(TARGET),
        note=f"Scorer.score vs RelevanceEvaluator.evaluate, {n} lists of 10-50 docs, "
        f"ks={KS}, median of {r} ({args.timer} time); with the doc-id join: "
        f"{rows[3].rate / rows[0].rate:.2f}",
    )
    results = [result]
    if contenders:
        print(
            f"native / pytrec_eval = {rows[4].rate / rows[0].rate:.2f} "
            f"(target >= {NATIVE_TARGET:g}); reading the Python lists too: "
            f"{rows[5].rate / rows[0].rate:.2f}"
        )
        results.append(
            Result(
                "scoring.native",
                rows[4].rate,
                "lists/s",
                baseline=rows[0].rate,
                baseline_name="pytrec_eval",
                target=Target(NATIVE_TARGET),
                note=f"GradeBatch.score (lists in Rust memory) vs RelevanceEvaluator.evaluate, "
                f"same lists, NDCG equal to Scorer's (checked before timing); reading the "
                f"Python lists in the call (score_batch): {rows[5].rate / rows[0].rate:.2f}",
            )
        )
    write_json(
        args.json,
        {
            "benchmark": "scoring",
            "results": [r.as_dict() for r in results],
            "lists": n,
            "repeats": r,
            "timer": args.timer,
            "ks": list(KS),
            "max_abs_diff": worst,
            "ratio": ratio,
            "rows": [row.as_dict() for row in rows],
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
