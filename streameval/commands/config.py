"""``streameval config``: every key with its default, or a file's effective configuration
(DESIGN §7)."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "config",
        help="print every configuration key with its default, or check a file",
        description=(
            "Without FILE, print every configuration key with its default as TOML (with what "
            "each means). With FILE, validate it and print the effective configuration: the "
            "file with the STREAMEVAL_... environment variables over it, as `run` would use "
            "it, secrets shown as ********. An invalid file is one line naming the key, exit "
            "status 2. The printed TOML loads back with `streameval config FILE`."
        ),
    )
    p.add_argument("file", nargs="?", metavar="FILE", help="a TOML configuration file to check")
    p.add_argument(
        "--effective",
        action="store_true",
        help="without FILE: the effective configuration of the environment alone",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from streameval.config import load_settings
    from streameval.config_reference import default_settings, settings_toml

    if args.file is None and not args.effective:
        sys.stdout.write(settings_toml(default_settings(), comments=True))
        return 0
    settings = load_settings(args.file)
    sys.stdout.write(settings_toml(settings))
    return 0
