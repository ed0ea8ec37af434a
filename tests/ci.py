"""Whether the tests run in CI: there a missing external part (a broker, promtool, Prometheus) is
a failure, never a skip."""

from __future__ import annotations

import os
from types import ModuleType

import pytest


def in_ci() -> bool:
    """``CI`` set to anything but empty, ``0``, ``false`` or ``no`` (``CI=true`` in `.ci/run`)."""
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


def require_native(what: str) -> ModuleType:
    """The extension module ``streameval._native``; where it is not built, a skip (of the module
    calling this at import, or of one test), but in CI a failure: there a native engine that
    was not built is a failure, never a skip."""
    from streameval import native

    if native.available():
        from streameval import _native

        return _native
    message = f"{what}: {native.unavailable_reason()}"
    if in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message, allow_module_level=True)
