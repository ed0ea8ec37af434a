"""The simulator's optional LLM judge: off by default, and merged in without changing anything
else of the stream."""

from __future__ import annotations

import itertools
import json
import random
import statistics

import pytest

from streameval.errors import ConfigError
from streameval.sim import SimConfig, traffic
from streameval.sim.traffic import llm_grade

START = 1_700_000_000_000


def records(config: SimConfig, n: int) -> list[bytes]:
    return [r.raw for r in itertools.islice(traffic(config, START), n)]


def test_the_rest_of_the_stream_does_not_change() -> None:
    base = SimConfig(seed=3, queries=20, duration_ms=600_000)
    with_llm = SimConfig(seed=3, queries=20, duration_ms=600_000, llm_judge="m", llm_drift=2.0)
    plain = records(base, 10**6)
    mixed = records(with_llm, 10**6)
    assert not any(b'"llm:' in r for r in plain)
    llm = [json.loads(r) for r in mixed if b'"llm:m"' in r]
    assert [r for r in mixed if b'"llm:m"' not in r] == plain
    at_start = [r for r in llm if r["timestamp"] == START]
    humans = [
        json.loads(r) for r in plain if b'"judgment"' in r and json.loads(r)["timestamp"] == START
    ]
    assert {(r["query_id"], r["doc_id"]) for r in at_start} == {
        (r["query_id"], r["doc_id"]) for r in humans
    }
    later = [r for r in llm if r["timestamp"] > START]
    assert 450 < len(later) < 750  # Poisson(600 s x 1/s)
    times = [r["timestamp"] for r in llm]
    assert times == sorted(times)


def test_drift_shifts_grades_by_its_expectation() -> None:
    config = SimConfig(llm_noise=0.0, llm_drift=0.5)
    rng = random.Random(0)
    # half an hour at 0.5 grade points per hour: +0.25 expected from grade 1 (no clipping)
    shifts = [llm_grade(1, config, 1_800_000, rng) - 1 for _ in range(20_000)]
    assert statistics.mean(shifts) == pytest.approx(0.25, abs=0.015)
    assert llm_grade(3, SimConfig(llm_noise=0.0, llm_drift=5.0), 3_600_000, rng) == 3  # clipped


def test_bad_knobs_name_the_field() -> None:
    with pytest.raises(ConfigError, match="llm_rate"):
        SimConfig(llm_rate=-1.0)
    with pytest.raises(ConfigError, match="llm_noise"):
        SimConfig(llm_noise=2.0)


def test_the_traffic_flags() -> None:
    import argparse

    from streameval.sim.arguments import add_traffic_arguments, sim_config

    parser = argparse.ArgumentParser()
    add_traffic_arguments(parser, rate=10.0, regression_at=None)
    config = sim_config(parser.parse_args(["--llm-judge", "gpt-4o", "--llm-drift", "0.5"]))
    assert (config.llm_judge, config.llm_drift) == ("gpt-4o", 0.5)
    assert sim_config(parser.parse_args([])).llm_judge == ""  # off by default
