"""Sub-commands of the ``streameval`` CLI.

Every module in this package that defines ``register(subparsers)`` is a sub-command: it adds its
parser and sets ``handler`` (a function ``(argparse.Namespace) -> int``) as a default. Heavy imports
belong inside the handler so that ``streameval --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Callable

Registrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]


def all_registrars() -> list[Registrar]:
    registrars: list[Registrar] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if callable(register):
            registrars.append(register)
    return registrars
