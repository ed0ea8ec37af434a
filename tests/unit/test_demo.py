"""``streameval demo``: the simulator through the pipeline, served over HTTP, without pacing.

The regression's size is the expected relative drop of the treatment's judged NDCG@k (see
``tests/unit/sim/test_regression.py``). Tolerance here: the 5m window at 10 impressions/s holds
~1500 lists per arm, ~1250 with a judged relevant doc; NDCG@10's sd is ~0.25 around 0.56, so
each arm's mean has a relative standard error of 0.25 / 0.56 / sqrt(1250) = 1.3 % and the ratio
of the arms 1.8 %: ±0.07 is about 4 standard errors.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from streameval.cli import main
from streameval.commands.demo import serve_address
from streameval.config import load_settings
from streameval.runtime.demo import Demo, DemoTick, no_pacing, wall_pacer
from streameval.sim import SimConfig

START_MS = 1_700_000_000_000
MINUTE = 60_000
SIZE = 0.25


def _get(url: str) -> tuple[int, str, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.headers["Content-Type"], response.read()


def _ndcg(metrics: str, **labels: str) -> dict[str, float]:
    """streameval_ndcg by arm, for the samples matching ``labels``."""
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(metrics):
        for sample in family.samples:
            if sample.name == "streameval_ndcg" and all(
                sample.labels.get(k) == v for k, v in labels.items()
            ):
                out[sample.labels["arm"]] = sample.value
    return out


@pytest.fixture(scope="module")
def served() -> dict[str, Any]:
    """30 event minutes, regression at 10, scraped over HTTP once the driver has stopped."""
    sim = SimConfig(
        rate=10.0,
        queries=300,
        candidates=20,
        regression_at_ms=10 * MINUTE,
        regression_size=SIZE,
        seed=5,
    )
    demo = Demo(load_settings(), sim, start_ms=START_MS)
    end = START_MS + 30 * MINUTE
    ticks: list[DemoTick] = []
    with demo.server("127.0.0.1", 0) as server:
        base = f"http://127.0.0.1:{server.port}"
        demo.run(lambda event_ms: event_ms < end, on_tick=ticks.append)
        return {
            "demo": demo,
            "ticks": ticks,
            "metrics": _get(f"{base}/metrics")[2].decode(),
            "status": json.loads(_get(f"{base}/api/status")[2]),
            "page": _get(f"{base}/"),
        }


def test_the_5m_window_after_the_regression_shows_the_configured_drop(
    served: dict[str, Any],
) -> None:
    status = served["status"]
    # horizon = newest event - 10 s lateness - 5 min attribution; the 5m window before it is
    # wholly after the regression at +10m
    assert status["horizon_ms"] - 5 * MINUTE >= START_MS + 10 * MINUTE
    assert status["horizon_ms"] <= START_MS + 30 * MINUTE - 5 * MINUTE
    ndcg = _ndcg(served["metrics"], k="10", window="5m", relevance="judged")
    assert set(ndcg) == {"control", "treatment"}
    assert abs(ndcg["treatment"] / ndcg["control"] - (1 - SIZE)) < 0.07
    # the 1h window still holds 10 minutes before the regression: a smaller drop
    hour = _ndcg(served["metrics"], k="10", window="1h", relevance="judged")
    assert 1 - SIZE < hour["treatment"] / hour["control"] < 1.0


def test_the_status_page_and_its_json_show_both_arms(served: dict[str, Any]) -> None:
    status_code, content_type, body = served["page"]
    assert status_code == 200
    assert content_type.startswith("text/html")
    assert b"api/status" in body
    status = served["status"]
    arms = {row["labels"]["arm"] for row in status["ndcg"]}
    assert arms == {"control", "treatment"}
    rankers = {row["labels"]["ranker"] for row in status["ndcg"]}
    assert rankers == {"bm25-v1", "ltr-v2"}
    assert status["judgments"] > 0
    assert status["intake"]["records_read"] == served["demo"].latest().intake.records_read


def test_one_history_point_per_tick_and_the_treatment_line_falls(served: dict[str, Any]) -> None:
    history = served["status"]["history"]
    ticks = served["ticks"]
    # one tick per 10 s bucket over 30 minutes; a point from the first tick with a horizon on
    assert len(ticks) == 180
    assert [t.event_ms - START_MS for t in ticks[:2]] == [10_000, 20_000]
    with_horizon = [t for t in ticks if t.snapshot.horizon_ms is not None]
    assert len(history["horizons_ms"]) == len(with_horizon)
    series = {
        row["segment"][1]: row["mean"]
        for row in history["series"]
        if row["window"] == "5m" and row["relevance"] == "judged" and row["k"] == 10
    }
    treatment, control = series["treatment"], series["control"]
    before = [i for i, h in enumerate(history["horizons_ms"]) if h <= START_MS + 10 * MINUTE]
    assert before
    i, last = before[-1], len(treatment) - 1
    assert treatment[i] / control[i] > 0.9
    assert treatment[last] / control[last] < 0.85


def test_metrics_account_for_every_record(served: dict[str, Any]) -> None:
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(served["metrics"]):
        for sample in family.samples:
            if sample.name in ("streameval_records_read_total", "streameval_events_total"):
                key = sample.name + sample.labels.get("type", "")
                values[key] = sample.value
    read = values["streameval_records_read_total"]
    accepted = sum(v for k, v in values.items() if k.startswith("streameval_events_total"))
    assert read == accepted > 0  # noise off: every record accepted
    assert values["streameval_events_totaljudgment"] >= 0.5 * 300 * 20


def test_same_seed_same_numbers() -> None:
    sim = SimConfig(rate=5.0, queries=100, candidates=20, duration_ms=8 * MINUTE, seed=3)
    first = Demo(load_settings(), sim, start_ms=START_MS).run(no_pacing())
    second = Demo(load_settings(), sim, start_ms=START_MS).run(no_pacing())
    assert first == second
    assert first.intake.records_read > 0
    # the traffic ended (duration set): every list finalized, none left open
    assert first.open_lists == 0


def test_a_set_stop_event_ends_the_run_at_the_next_tick() -> None:
    stop = threading.Event()
    ticks: list[DemoTick] = []

    def on_tick(tick: DemoTick) -> None:
        ticks.append(tick)
        if len(ticks) == 3:
            stop.set()

    sim = SimConfig(rate=5.0, queries=100, candidates=20, seed=3)  # endless
    Demo(load_settings(), sim, start_ms=START_MS).run(no_pacing(stop), on_tick=on_tick)
    assert len(ticks) == 3


class _RecordingEvent(threading.Event):
    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(0.0 if timeout is None else timeout)
        return self.is_set()


def test_the_wall_pacer_holds_each_tick_until_it_is_due() -> None:
    # speed 60: 10 event seconds are 1/6 wall second. The clock reads 100.0 at the first call,
    # then 100.05 (the tick is due at 100 + 10/60 = 100.1667: wait 0.1167), then 101.0 (the
    # tick at 20 s is due at 100.3333: late, no wait).
    readings = iter([100.0, 100.05, 101.0])
    stop = _RecordingEvent()
    pace = wall_pacer(START_MS, 60.0, stop, clock=lambda: next(readings))
    assert pace(START_MS)
    assert pace(START_MS + 10_000)
    assert pace(START_MS + 20_000)
    assert stop.waits == [pytest.approx(10 / 60 - 0.05)]
    stop.set()
    assert not no_pacing(stop)(START_MS)


def test_the_command_serves_prints_the_url_and_the_final_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        [
            *("demo", "--port", "0", "--duration", "3m", "--speed", "1e6", "--rate", "5"),
            *("--queries", "100", "--regression-at", "1m"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "status page: http://127.0.0.1:" in out
    assert "the treatment ranker regresses now" in out
    assert "judged" in out and "treatment" in out
    assert "stopped after" in out


def test_help_says_the_demo_serves_this_machine_only(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "default 127.0.0.1" in out
    assert "0 picks a free one" in out


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_command_stops_cleanly_on_sigterm_and_ctrl_c(signum: int) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "streameval.cli", "demo", "--port", "0", "--rate", "2"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        url = None
        for line in proc.stdout:
            if line.startswith("status page: "):
                url = line.split()[2].rstrip("/")
                break
        assert url is not None and url.startswith("http://127.0.0.1:")
        assert _get(f"{url}/healthz")[2] == b"ok\n"
        proc.send_signal(signum)
        rest, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "stopped after" in rest
    with pytest.raises(OSError):
        _get(f"{url}/healthz")


# --- where the demo serves: flags, then the configuration, then the demo's defaults -------------


def _settings_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "streameval.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def no_metrics_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for key in list(os.environ):
        if key.upper().startswith("STREAMEVAL_METRICS"):
            monkeypatch.delenv(key)
    return monkeypatch


def test_without_flag_or_configuration_the_demo_serves_this_machine_on_9724(
    no_metrics_env: pytest.MonkeyPatch,
) -> None:
    # the daemon's default host is 0.0.0.0; the demo's stays 127.0.0.1
    assert load_settings().metrics.host == "0.0.0.0"
    assert serve_address(load_settings().metrics, None, None) == ("127.0.0.1", 9724)


def test_the_config_file_sets_where_the_demo_serves(
    tmp_path: Path, no_metrics_env: pytest.MonkeyPatch
) -> None:
    path = _settings_file(tmp_path, '[metrics]\nhost = "0.0.0.0"\nport = 9999\n')
    assert serve_address(load_settings(path).metrics, None, None) == ("0.0.0.0", 9999)
    # one key set: the other keeps the demo's default, not the daemon's
    path = _settings_file(tmp_path, "[metrics]\nport = 9999\n")
    assert serve_address(load_settings(path).metrics, None, None) == ("127.0.0.1", 9999)
    # a metrics section without host or port (TLS here) changes neither
    path = _settings_file(
        tmp_path, '[metrics]\nbasic_auth_username = "u"\nbasic_auth_password = "p"\n'
    )
    assert serve_address(load_settings(path).metrics, None, None) == ("127.0.0.1", 9724)


def test_the_environment_sets_where_the_demo_serves_over_the_file(
    tmp_path: Path, no_metrics_env: pytest.MonkeyPatch
) -> None:
    no_metrics_env.setenv("STREAMEVAL_METRICS__PORT", "9998")
    assert serve_address(load_settings().metrics, None, None) == ("127.0.0.1", 9998)
    path = _settings_file(tmp_path, '[metrics]\nhost = "::1"\nport = 9999\n')
    assert serve_address(load_settings(path).metrics, None, None) == ("::1", 9998)


def test_flags_win_over_file_and_environment(
    tmp_path: Path, no_metrics_env: pytest.MonkeyPatch
) -> None:
    no_metrics_env.setenv("STREAMEVAL_METRICS__HOST", "0.0.0.0")
    no_metrics_env.setenv("STREAMEVAL_METRICS__PORT", "9998")
    metrics = load_settings(_settings_file(tmp_path, "[metrics]\nport = 9999\n")).metrics
    assert serve_address(metrics, "127.0.0.2", 0) == ("127.0.0.2", 0)
    assert serve_address(metrics, None, 0) == ("0.0.0.0", 0)  # port 0 is a flag, not "unset"
    assert serve_address(metrics, "127.0.0.2", None) == ("127.0.0.2", 9998)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_command_serves_where_the_configuration_says(
    tmp_path: Path, no_metrics_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The case: `demo --config FILE` with metrics.port (and the environment's) ignored.
    port = _free_port()
    path = _settings_file(tmp_path, f'[metrics]\nhost = "127.0.0.1"\nport = {port}\n')
    fast = ("--duration", "1m", "--speed", "1e6", "--rate", "2", "--queries", "20")
    assert main(["demo", "--config", str(path), *fast]) == 0
    assert f"status page: http://127.0.0.1:{port}/" in capsys.readouterr().out
    env_port = _free_port()
    no_metrics_env.setenv("STREAMEVAL_METRICS__PORT", str(env_port))
    assert main(["demo", "--config", str(path), *fast]) == 0
    assert f"status page: http://127.0.0.1:{env_port}/" in capsys.readouterr().out
    assert main(["demo", "--config", str(path), "--port", "0", *fast]) == 0
    out = capsys.readouterr().out
    assert "status page: http://127.0.0.1:" in out and f":{env_port}/" not in out


def test_the_demo_server_takes_tls_and_basic_auth_from_the_configuration(
    tmp_path: Path, no_metrics_env: pytest.MonkeyPatch
) -> None:
    # the other settings `run` and `demo` share: the [metrics] section's auth (and TLS, built
    # by the same MetricsServer arguments) and the [evaluation] section
    path = _settings_file(
        tmp_path,
        '[metrics]\nbasic_auth_username = "prom"\nbasic_auth_password = "pw"\n'
        '[evaluation]\nks = [2]\nwindows = ["1m"]\n',
    )
    settings = load_settings(path)
    demo = Demo(settings, SimConfig(rate=2.0, queries=20, seed=1), start_ms=START_MS)
    demo.run(lambda event_ms: event_ms < START_MS + 7 * MINUTE)
    with demo.server("127.0.0.1", 0) as server:
        url = f"http://127.0.0.1:{server.port}/metrics"
        with pytest.raises(urllib.error.HTTPError) as refused:
            _get(url)
        assert refused.value.code == 401
        token = base64.b64encode(b"prom:pw").decode()
        request = urllib.request.Request(url, headers={"Authorization": f"Basic {token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
    rows = [
        s.labels
        for f in text_string_to_metric_families(text)
        for s in f.samples
        if s.name == "streameval_window_lists"
    ]
    assert rows and {(r["k"], r["window"]) for r in rows} == {("2", "1m")}
