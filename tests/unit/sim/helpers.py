"""Reading the simulator's records back in tests (decoded JSON, per kind)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from streameval.sim import SimRecord

START_MS = 1_700_000_000_000  # 2023-11-14T22:13:20Z


def decoded(records: Iterable[SimRecord], kind: str) -> list[dict[str, Any]]:
    return [json.loads(r.raw) for r in records if r.kind == kind]
