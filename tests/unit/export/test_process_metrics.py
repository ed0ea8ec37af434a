"""The standard process metrics (DESIGN §8) on the daemon's and the demo's registries:
memory, CPU and file descriptors are how an operator sizes and watches the process."""

from __future__ import annotations

import os
import resource
import sys

import pytest
from prometheus_client import CollectorRegistry

from streameval.config import Settings
from streameval.export import names
from streameval.runtime.daemon import Daemon
from streameval.runtime.demo import Demo
from streameval.sim import SimConfig

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="process_* come from /proc (Linux only)"
)


def _samples(registry: CollectorRegistry) -> dict[str, float]:
    return {s.name: s.value for m in registry.collect() for s in m.samples}


def _check(registry: CollectorRegistry) -> None:
    samples = _samples(registry)
    assert set(samples) >= names.PROCESS, names.PROCESS - set(samples)
    assert set(samples) <= names.ALL | names.PROCESS  # nothing exported that is not listed
    # this process's resident memory: above 1 MiB, and at most its peak so far (ru_maxrss, KiB)
    rss = samples["process_resident_memory_bytes"]
    assert 2**20 < rss <= resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    assert samples["process_open_fds"] == pytest.approx(len(os.listdir("/proc/self/fd")), abs=3)
    assert samples["process_cpu_seconds_total"] > 0


def test_the_daemon_exports_process_metrics() -> None:
    settings = Settings(
        kafka={"judgment_topics": [], "state_topic": "", "dlq_topic": ""},
        metrics={"host": "127.0.0.1", "port": 0},
    )
    _check(Daemon(settings)._registry)


def test_the_demo_exports_process_metrics() -> None:
    _check(Demo(Settings(), SimConfig(seed=1), start_ms=1_700_000_000_000).registry)
