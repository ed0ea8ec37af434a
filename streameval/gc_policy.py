"""The cyclic garbage collector's thresholds for the commands that hold a large live heap.

At the design rate the join holds ~340k open lists, ~3.1M objects the collector tracks. CPython's
defaults ``(700, 10, 10)`` run a young collection every 700 net allocations and a full one each
time the objects promoted since the last grow by a quarter of the old generation: on a re-read
of 1.26M records at the design density (a restart's backlog, in process) that was 14 full
collections, 2.9-3.2 s in all, and 12-17 % of the time with the young ones (one full collection
of the heap at the end alone: 1.39 s). The pipeline makes no cyclic
garbage at all (a full collection after those 1.26M records found 0 unreachable objects), so
collecting less often loses nothing; reference counting frees everything it drops at once.

:data:`THRESHOLDS` (young every 50,000 net allocations, middle every 20 young) left one full
collection in that re-read and took it from 59.7k to 70.6k records/s (medians of 3, alternating;
with the collector off: 72.1k). The collector stays on, for the cycles the Kafka clients and
exception tracebacks make. Set by the commands that run the pipeline for long (``run``,
``replay``, ``demo``), not at import: a library user keeps the interpreter's own.
"""

from __future__ import annotations

import gc

THRESHOLDS = (50_000, 20, 10)


def tune() -> None:
    """Apply :data:`THRESHOLDS` to this process's collector."""
    gc.set_threshold(*THRESHOLDS)
