"""Issue 28 §4: ``run`` with no broker answering says within seconds which address did not
answer and which key sets it (one line, exit 2, no traceback); with ``kafka.connect_retry`` it
waits for one with backoff, serving /healthz meanwhile. A closed loopback port plays the absent
broker (no broker needed)."""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from streameval.errors import KafkaUnavailableError
from streameval.kafka.reach import addresses, probe, wait_for_brokers


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMEVAL_")}
    return env | extra


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released: refused from then on)."""
    return _free_port()


def test_run_without_a_broker_says_which_address_and_key_within_10_s(closed_port: int) -> None:
    address = f"127.0.0.1:{closed_port}"
    env = _env(
        STREAMEVAL_KAFKA__BOOTSTRAP_SERVERS=address,
        STREAMEVAL_METRICS__HOST="127.0.0.1",
        STREAMEVAL_METRICS__PORT=str(_free_port()),
    )
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "streameval.cli", "run", "--log-level", "WARNING"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    took = time.monotonic() - started
    assert took < 10.0
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith("streameval: error: no Kafka broker answered at ")
    assert address in line
    assert "kafka.bootstrap_servers" in line and "STREAMEVAL_KAFKA__BOOTSTRAP_SERVERS" in line
    assert "kafka.connect_retry" in line


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            status: int = response.status
            return status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_with_connect_retry_it_waits_serving_healthz_and_stops_when_asked(
    closed_port: int,
) -> None:
    port = _free_port()
    env = _env(
        STREAMEVAL_KAFKA__BOOTSTRAP_SERVERS=f"127.0.0.1:{closed_port}",
        STREAMEVAL_KAFKA__CONNECT_RETRY="true",
        STREAMEVAL_METRICS__HOST="127.0.0.1",
        STREAMEVAL_METRICS__PORT=str(port),
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "streameval.cli", "run", "--log-level", "WARNING"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        healthz = None
        while time.monotonic() < deadline:
            try:
                healthz = _get(f"http://127.0.0.1:{port}/healthz")
                break
            except OSError:
                time.sleep(0.2)
        assert healthz == 200
        assert _get(f"http://127.0.0.1:{port}/readyz") == 503
        time.sleep(2.5)  # the retries go on: 1 s, then 2 s
        assert proc.poll() is None
        assert _get(f"http://127.0.0.1:{port}/healthz") == 200
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    assert rc == 0, stderr
    assert "Traceback" not in stderr
    retries = [line for line in stderr.splitlines() if "retrying in" in line]
    assert len(retries) >= 2
    assert "retrying in 1 s" in retries[0] and "retrying in 2 s" in retries[1]
    assert f"127.0.0.1:{closed_port}" in retries[0]


@pytest.mark.parametrize(
    ("servers", "expected"),
    [
        ("localhost:9092", [("localhost", 9092)]),
        ("a:1, b:2", [("a", 1), ("b", 2)]),
        ("broker", [("broker", 9092)]),
        ("PLAINTEXT://b:9093", [("b", 9093)]),
        ("[::1]:9094", [("::1", 9094)]),
    ],
)
def test_the_addresses_of_bootstrap_servers(servers: str, expected: list[tuple[str, int]]) -> None:
    assert addresses(servers) == expected


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A loopback listener that answers like a broker: the size and correlation id of the
    request it reads (what ApiVersions' response starts with). Yields (port, requests)."""
    server = socket.create_server(("127.0.0.1", 0))
    requests: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                data = conn.recv(4096)
                requests.append(data)
                correlation = struct.unpack(">i", data[8:12])[0]
                conn.sendall(struct.pack(">ii", 4, correlation))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], requests
    finally:
        server.close()


def test_a_listener_that_answers_like_a_broker_passes_the_probe(
    listener: tuple[int, list[bytes]],
) -> None:
    port, requests = listener
    assert probe(f"127.0.0.1:{port}") is None
    # the request was ApiVersions (api key 18)
    assert struct.unpack(">h", requests[0][4:6])[0] == 18


def test_a_port_that_is_not_kafka_fails_the_probe() -> None:
    server = socket.create_server(("127.0.0.1", 0))

    def close_at_once() -> None:
        conn, _ = server.accept()
        conn.close()

    threading.Thread(target=close_at_once, daemon=True).start()
    try:
        error = probe(f"127.0.0.1:{server.getsockname()[1]}")
    finally:
        server.close()
    assert error is not None and "not a Kafka listener" in error


def test_without_retry_a_silence_raises_at_once(closed_port: int) -> None:
    with pytest.raises(KafkaUnavailableError, match=r"kafka\.bootstrap_servers"):
        wait_for_brokers(
            f"127.0.0.1:{closed_port}", retry=False, stop=lambda: False, wait=lambda s: None
        )


def test_retry_backs_off_doubling_to_30_s_until_asked_to_stop(closed_port: int) -> None:
    waits: list[float] = []
    found = wait_for_brokers(
        f"127.0.0.1:{closed_port}",
        retry=True,
        stop=lambda: len(waits) >= 7,
        wait=waits.append,
    )
    assert found is False
    assert waits == [1, 2, 4, 8, 16, 30, 30]


def test_retry_ends_when_the_broker_comes(
    closed_port: int, listener: tuple[int, list[bytes]]
) -> None:
    port, _ = listener
    servers = [f"127.0.0.1:{closed_port}"]
    waits: list[float] = []

    def wait(seconds: float) -> None:  # the broker comes up during the second wait
        waits.append(seconds)
        if len(waits) == 2:
            servers[0] = f"127.0.0.1:{port}"

    class _Servers(list[str]):
        def __iter__(self) -> Iterator[str]:
            return iter(list(servers))

    assert wait_for_brokers(_Servers(), retry=True, stop=lambda: False, wait=wait) is True
    assert waits == [1, 2]


@pytest.mark.parametrize(
    "args",
    [["inspect", "--topic", "search-impressions"], ["simulate", "--duration", "1m"]],
)
def test_the_other_commands_that_connect_say_it_in_one_line_too(
    closed_port: int, args: list[str]
) -> None:
    address = f"127.0.0.1:{closed_port}"
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "streameval.cli", *args],
        env=_env(STREAMEVAL_KAFKA__BOOTSTRAP_SERVERS=address),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert time.monotonic() - started < 10.0
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert address in lines[0] and "kafka.bootstrap_servers" in lines[0]
