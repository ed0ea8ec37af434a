"""Whether the tests run in CI: there a missing external part (a broker, promtool, Prometheus) is
a failure, never a skip."""

from __future__ import annotations

import os


def in_ci() -> bool:
    """``CI`` set to anything but empty, ``0``, ``false`` or ``no`` (``CI=true`` in `.ci/run`)."""
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}
