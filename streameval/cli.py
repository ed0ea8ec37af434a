"""The ``streameval`` command line: one sub-command per job, each implemented in its own module."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from streameval import __version__
from streameval.errors import StreamevalError

Handler = Callable[[argparse.Namespace], int]

#: the exit status when the reader of stdout went away (``streameval schema | head``): 128 +
#: SIGPIPE, what a shell reports for any tool a closed pipe stops, so ``set -o pipefail`` can
#: still tell a cut-short output from a complete one
EXIT_BROKEN_PIPE = 141


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streameval",
        description="Live NDCG@k of a search system, from its event stream to Prometheus.",
    )
    parser.add_argument("--version", action="version", version=f"streameval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in _registrars():
        register(sub)
    return parser


def _registrars() -> list[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]]:
    # Each command module exposes ``register(subparsers)`` which adds its parser and sets
    # ``handler``. Imports stay inside the modules' handlers so ``--help`` is fast.
    from streameval.commands import all_registrars

    return all_registrars()


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        status = handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return status
    except StreamevalError as exc:
        print(f"streameval: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader is gone: nothing to say to it; stdout now points at /dev/null so that
        # the interpreter's own flush at exit does not fail again (Python's SIGPIPE recipe)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
