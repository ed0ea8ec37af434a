"""``bench_restart.py --membership``: a crashed instance restarted at once, with and without static
group membership (``kafka.group_instance_id``, KIP-345; issue 28 §1), against a graceful restart.

Three consumer groups per client, each on the same log, with the state topic and the default
``kafka.session_timeout`` (45 s, what a deployment waits):

* ``static``: the daemon has an instance id; it is SIGKILLed and a new process with the same id
  is spawned right after (no wait): the broker hands it the dead member's partitions at once.
* ``crash``: the same without the id (dynamic membership, today's default): the new process
  waits in the join until the broker expires the dead member's session. Its figure includes
  that wait: it starts at the spawn, right after the SIGKILL.
* ``graceful``: without the id, stopped with SIGTERM (the final commit, LeaveGroup), the new
  process spawned once the old one has exited.

In each group a first daemon reads the whole log and commits for a few seconds with nothing
arriving (the client's groups one after the other; each stays live, idle, for the restarts);
then, ``repeats`` times, the live daemon is stopped (SIGKILL, or SIGTERM for ``graceful``) and a
new one spawned at once, timed from the spawn to the first ``/readyz`` 200, where its window
gauges must equal the first daemon's (else the benchmark fails). The restarts of a client's
groups take turns (static, crash, graceful, static, ...), so that a load that drifts on a shared
machine weighs on every mode alike (one group after the other, kafka-python's static re-reads
ran 28-37 s, the graceful ones 23-25 s minutes later, with the same backlog and join times).
Nothing arrives, so each restart re-reads the same committed backlog. The rows take each group's
median.
"""

from __future__ import annotations

import signal
import statistics
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _common import Result, Target
from bench_daemon import Daemon, Topics, have_confluent, produce
from bench_load import DESIGN_RATE
from bench_restart import (
    RESTART_TARGET_S,
    TAIL_RATE,
    Backlog,
    _delete_topics,
    backlog_of,
    same_windows,
    settled_windows,
    spawn,
    wait_ready,
    windows,
)

MODES = ("static", "crash", "graceful")
#: the daemon's default session timeout: what a crashed dynamic member's partitions wait
SESSION_TIMEOUT = "45s"
#: a static member's restart may take this much longer than a graceful one (issue 28 §1)
OVER_GRACEFUL_S = 2.0
#: light traffic (the --quick log: a few thousand records to re-read): ready within this
LIGHT_TARGET_S = 10.0


@dataclass(frozen=True)
class MembershipRestart:
    consumer: str
    mode: str
    backlog: Backlog
    #: spawn → first /readyz 200
    wall_s: float
    #: "assigned … rebuilding state" → "caught up: ready" (the daemon's log)
    reread_s: float
    #: spawn → the first assignment ("rebuilding state"): the group's wait, the process start
    assigned_s: float
    #: the old process's stop: signal → exit
    stop_s: float


class MembershipGroup:
    """One consumer group, client and mode; one live daemon at a time."""

    def __init__(
        self, bootstrap: str, topics: Topics, consumer: str, mode: str, workdir: Path
    ) -> None:
        self.bootstrap, self.topics, self.consumer, self.mode = bootstrap, topics, consumer, mode
        self.name = f"bench-membership-{consumer}-{mode}-{uuid.uuid4().hex[:8]}"
        self.state_topic = f"bench-state-{self.name}"
        self.settings = {
            "STREAMEVAL_KAFKA__STATE_TOPIC": self.state_topic,
            "STREAMEVAL_KAFKA__SESSION_TIMEOUT": SESSION_TIMEOUT,
        }
        if mode == "static":
            self.settings["STREAMEVAL_KAFKA__GROUP_INSTANCE_ID"] = f"{self.name}-0"
        self.workdir = workdir
        self.runs = 0
        self.want: dict[str, float] = {}
        self.live: Daemon | None = None

    def first(self, total: int) -> None:
        daemon = self.live = spawn(self)
        daemon.wait_records(total)
        wait_ready(daemon)
        self.want = settled_windows(daemon, self.bootstrap, self.topics, self.name)
        print(f"{self.name}: first run read {total:,} records")

    def restart(self) -> MembershipRestart:
        old = self.live
        if old is None:
            raise RuntimeError("restart() before first()")
        backlog = backlog_of(self.bootstrap, self.topics, self.name)
        stopping = time.time()
        old.stop(signal.SIGTERM if self.mode == "graceful" else signal.SIGKILL)
        stopped = time.time()
        spawned = time.time()
        daemon = self.live = spawn(self)
        ready = wait_ready(daemon)
        got = windows(daemon)
        reread_s = daemon.catch_up_seconds()
        if not same_windows(got, self.want):
            diff = sorted(set(got.items()) ^ set(self.want.items()))[:4]
            raise RuntimeError(f"{self.name}: windows differ at ready: {diff}")
        result = MembershipRestart(
            self.consumer,
            self.mode,
            backlog,
            ready - spawned,
            reread_s,
            ready - reread_s - spawned,
            stopped - stopping,
        )
        print(f"restart: {result}")
        return result

    def close(self) -> None:
        if self.live is not None:
            self.live.stop(signal.SIGKILL)
            self.live = None


def run(
    bootstrap: str,
    n: int,
    rate: float,
    seed: int,
    workdir: Path,
    *,
    tail_min: float,
    repeats: int,
    crash_repeats: int,
    modes: tuple[str, ...] = MODES,
    clients: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    topics = Topics.fresh()
    topics.create(bootstrap)
    groups: list[MembershipGroup] = []
    try:
        sent, last_ms = produce(bootstrap, topics, n, seed, rate=rate)
        tail = int(DESIGN_RATE * tail_min * 60)
        if tail:
            more, _ = produce(
                bootstrap, topics, tail, seed, rate=TAIL_RATE, start_ms=last_ms + 1_000
            )
            for topic, count in more.items():
                sent[topic] = sent.get(topic, 0) + count
        print(f"produced {sent}")
        n += tail
        if clients is None:
            clients = ("kafka-python",) + (("confluent-kafka",) if have_confluent() else ())
        restarts: list[MembershipRestart] = []
        for client in clients:
            turn = [MembershipGroup(bootstrap, topics, client, mode, workdir) for mode in modes]
            groups.extend(turn)
            try:
                for group in turn:
                    group.first(n)
                for i in range(max(repeats, crash_repeats)):
                    for group in turn:
                        if i < (crash_repeats if group.mode == "crash" else repeats):
                            restarts.append(group.restart())
            finally:
                for group in turn:
                    group.close()
        return {
            "records": n,
            "rate": rate,
            "tail_records": tail,
            "sent": sent,
            "session_timeout": SESSION_TIMEOUT,
            "repeats": repeats,
            "crash_repeats": crash_repeats,
            "modes": list(modes),
            "restarts": [asdict(r) for r in restarts],
        }
    finally:
        topics.delete(bootstrap)
        _delete_topics(bootstrap, [g.state_topic for g in groups])


def results(data: dict[str, Any]) -> list[Result]:
    """Per client: the static restart against the graceful one (target: ≤ 30 s at the design
    rate, ≤ 10 s on light traffic; and within 2 s of the graceful restart), the crash without
    the id for comparison."""
    rows: list[Result] = []
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in data["restarts"]:
        by.setdefault((r["consumer"], r["mode"]), []).append(r)
    light = not data.get("tail_records")
    bound = LIGHT_TARGET_S if light else RESTART_TARGET_S
    where = "light traffic (--quick)" if light else "a log that ends at the design rate"
    modes = data.get("modes", MODES)
    for client in dict.fromkeys(r["consumer"] for r in data["restarts"]):
        suffix = "" if client == "kafka-python" else ".confluent"
        med = {mode: statistics.median(r["wall_s"] for r in by[(client, mode)]) for mode in modes}
        static = by[(client, "static")]
        backlog = static[0]["backlog"]["records"]

        def walls(mode: str, client: str = client) -> str:
            runs = by[(client, mode)]
            return (
                f"{[round(r['wall_s'], 1) for r in runs]} s (join "
                f"{statistics.median(r['assigned_s'] for r in runs):.1f} s, re-read "
                f"{statistics.median(r['reread_s'] for r in runs):.1f} s)"
            )

        rows.append(
            Result(
                f"restart.static{suffix}",
                med["static"],
                "s",
                baseline=med["graceful"],
                baseline_name="graceful restart",
                target=Target(bound, at_most=True, on="measured"),
                note=f"{client}, {where}: spawn → /readyz 200 right after a SIGKILL, the same "
                f"kafka.group_instance_id, session timeout {data['session_timeout']}; median of "
                f"{walls('static')}; graceful (SIGTERM, no id): {walls('graceful')}; "
                f"{backlog:,} records re-read; windows equal the killed daemon's at the 200",
            )
        )
        rows.append(
            Result(
                f"restart.static{suffix}.over_graceful",
                med["static"] - med["graceful"],
                "s",
                target=Target(OVER_GRACEFUL_S, at_most=True, on="measured"),
                note=f"{client}: the static restart's median minus the graceful one's",
            )
        )
        if "crash" not in med:
            continue
        rows.append(
            Result(
                f"restart.crash{suffix}",
                med["crash"],
                "s",
                baseline=med["static"],
                baseline_name="static membership",
                note=f"{client}: the same SIGKILL and restart at once WITHOUT the id (dynamic "
                f"membership): the join waits for the dead member's session "
                f"({data['session_timeout']}) to expire; {walls('crash')}",
            )
        )
    return rows
