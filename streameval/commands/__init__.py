"""Sub-commands of the ``streameval`` CLI. Each module has ``register(subparsers)``."""

from __future__ import annotations

import argparse
from collections.abc import Callable

Registrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]


def all_registrars() -> list[Registrar]:
    registrars: list[Registrar] = []
    return registrars
