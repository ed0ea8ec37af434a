"""``streameval run``'s log levels: the daemon's and the Kafka client's."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import pytest

from streameval.commands.run import client_log_level


@pytest.mark.parametrize(
    ("log_level", "client", "expected"),
    [
        # unasked, the client is held at WARNING: kafka-python's INFO is every rebalance step
        ("INFO", None, logging.WARNING),
        ("DEBUG", None, logging.WARNING),
        ("ERROR", None, logging.ERROR),  # but never louder than the daemon
        # asked for, it is what was asked, below or above the daemon's
        ("WARNING", "INFO", logging.INFO),
        ("INFO", "DEBUG", logging.DEBUG),
        ("DEBUG", "ERROR", logging.ERROR),
    ],
)
def test_the_client_log_level(log_level: str, client: str | None, expected: int) -> None:
    assert client_log_level(log_level, client) == expected


def test_a_stop_that_hangs_prints_every_threads_stack() -> None:
    """The first SIGTERM arms faulthandler: a daemon whose shutdown hangs (a broker call that
    never returns) writes its threads' stacks to the log; a prompt one writes nothing."""
    program = textwrap.dedent(
        """
        import os, signal, sys, threading, time
        from streameval.commands.run import stop_handler

        stop = threading.Event()
        signal.signal(signal.SIGTERM, stop_handler(stop, stacks_after_s=0.2))

        def shutdown_step_that_hangs():
            time.sleep(float(sys.argv[1]))

        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.is_set()
        shutdown_step_that_hangs()
        """
    )

    def stopped(hang_s: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", program, hang_s],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )

    slow = stopped("3")
    assert slow.returncode == 0, slow.stderr
    assert "Timeout (0:00:00.200000)!" in slow.stderr
    assert "shutdown_step_that_hangs" in slow.stderr  # the frame it hangs in
    prompt = stopped("0")
    assert prompt.returncode == 0, prompt.stderr
    assert "Timeout" not in prompt.stderr
