"""Small modules that each do one job (docs/development.md, Layout): no module of the package
is over 400 lines, and the coordinators' packages, ``engine/`` and ``runtime/``, keep theirs to
300. A module that grows past its bound is split by responsibility, not trimmed of its
comments."""

from __future__ import annotations

from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "streameval"
MAX_LINES = 400
COORDINATOR_PACKAGES = {"engine": 300, "runtime": 300}


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_the_package_has_modules_to_check() -> None:
    assert len(_modules()) > 100


@pytest.mark.parametrize("module", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_over_its_bound(module: Path) -> None:
    relative = module.relative_to(PACKAGE)
    bound = COORDINATOR_PACKAGES.get(relative.parts[0], MAX_LINES)
    lines = len(module.read_text(encoding="utf-8").splitlines())
    assert lines <= bound, f"{relative}: {lines} lines, over {bound}: split it by responsibility"
