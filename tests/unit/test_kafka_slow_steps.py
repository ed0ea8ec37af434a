"""kafka-python's ``Task … ran for 0.186s (>0.100s threshold). It is blocking the event loop``
stays out of the daemon's log below a second: its network thread waiting for the GIL behind the
read loop, not a loop that blocks (the measurements are in
:class:`streameval.log_limits.SlowStepFilter`'s doc). A step of a second or more, which could
delay a heartbeat, is still logged."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import pytest
from kafka.net.selector import NetworkSelector

from streameval.log_limits import SELECTOR_LOGGER, SlowStepFilter, quiet_slow_steps

WARNING = "It is blocking the event loop"


def _slow_step(seconds: float) -> None:
    """One step of kafka-python's own event loop that takes ``seconds``: it logs the line."""
    net = NetworkSelector()
    try:
        net.call_soon(lambda: time.sleep(seconds))
        net.poll(timeout_ms=100)
    finally:
        net.close()


@pytest.fixture
def selector_logger() -> Iterator[logging.Logger]:
    logger = logging.getLogger(SELECTOR_LOGGER)
    before = list(logger.filters)
    yield logger
    logger.filters[:] = before


def test_the_client_logs_a_slow_step_and_the_filter_keeps_it_out(
    caplog: pytest.LogCaptureFixture, selector_logger: logging.Logger
) -> None:
    caplog.set_level(logging.WARNING, logger=SELECTOR_LOGGER)
    _slow_step(0.15)
    assert [r for r in caplog.records if WARNING in r.getMessage()]  # the real line, unfiltered
    caplog.clear()
    quiet_slow_steps()
    quiet_slow_steps()  # (once)
    assert sum(isinstance(f, SlowStepFilter) for f in selector_logger.filters) == 1
    _slow_step(0.15)
    assert [r.getMessage() for r in caplog.records] == []


def _record(message: str) -> logging.LogRecord:
    return logging.LogRecord(SELECTOR_LOGGER, logging.WARNING, __file__, 1, message, None, None)


@pytest.mark.parametrize(
    ("seconds", "kept"), [("0.186", False), ("0.999", False), ("1.000", True), ("4.250", True)]
)
def test_a_step_of_a_second_or_more_is_still_logged(seconds: str, kept: bool) -> None:
    message = (
        f"Task <kafka.net.selector.Task object at 0x7f59a4354c90> ran for {seconds}s (>0.100s "
        "threshold). It is blocking the event loop -- likely a tight sync loop inside a "
        "coroutine. Other pollers will time out."
    )
    assert SlowStepFilter().filter(_record(message)) is kept


def test_the_selectors_other_lines_pass() -> None:
    assert SlowStepFilter().filter(_record("Task %s left RUNNING after step; demoting"))
    assert SlowStepFilter().filter(_record("IO loop crashed (client_id=streameval)"))


def test_streameval_run_sets_it_up() -> None:
    """``run``'s own logging set-up, with a daemon that only makes kafka-python log a slow
    step: the log (stderr) has the daemon's lines and not kafka-python's."""
    program = textwrap.dedent(
        """
        import argparse, sys
        from streameval.runtime import daemon
        from streameval.commands import run
        from tests.unit.test_kafka_slow_steps import _slow_step

        class Daemon:
            def __init__(self, settings):
                pass

            def run(self, stop):
                _slow_step(0.15)

        daemon.Daemon = Daemon
        args = argparse.Namespace(config=None, log_level="INFO", client_log_level=None)
        sys.exit(run.run(args))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "INFO streameval: stopped" in done.stderr
    assert WARNING not in done.stderr
