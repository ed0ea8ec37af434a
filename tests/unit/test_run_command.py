"""``streameval run``'s log levels: the daemon's and the Kafka client's."""

from __future__ import annotations

import logging

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
