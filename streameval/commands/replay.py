"""``streameval replay FILE… | -``: the pipeline over JSON-lines logs, in event time."""

from __future__ import annotations

import argparse
import json
import sys

from streameval import gc_policy


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "replay",
        help="run the pipeline over JSON-lines event logs and print the final windows",
        description=(
            "Replay JSON-lines event logs (one event per line; '-' reads stdin) through the "
            "same pipeline as the daemon, in event time. Each file is a source of its own, read "
            "round-robin. At end of input every open list is finalized."
        ),
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="JSON-lines log, or - for stdin")
    p.add_argument(
        "--config", metavar="FILE", help="TOML configuration (evaluation and input sections)"
    )
    p.add_argument(
        "--output",
        choices=("table", "json", "lists"),
        default="table",
        help="final windows as a table (default) or JSON; or one JSON object per scored list",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: on for inputs over 20 MB on a terminal)",
    )
    p.add_argument(
        "--no-finish",
        action="store_true",
        help=(
            "leave open lists open at end of input and report the windows as of the watermark "
            "the input reached, as a caught-up daemon would"
        ),
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from streameval import alarms
    from streameval.config import load_settings
    from streameval.engine.evaluator import Evaluator
    from streameval.events.formats import Formats
    from streameval.log_limits import SecondsTimestampLog
    from streameval.report import scored_list_json, snapshot_json, snapshot_table
    from streameval.runtime.replay import file_decoders, file_formats, replay
    from streameval.values import ScoredList

    settings = load_settings(args.config)
    gc_policy.tune()  # a large live heap: see streameval.gc_policy
    alarms.show_on_stderr()  # when the daemon would have paged, on stderr (stdout unchanged)
    out = sys.stdout

    def print_list(scored: ScoredList) -> None:
        for obj in scored_list_json(scored):
            out.write(json.dumps(obj, separators=(",", ":")) + "\n")

    on_scored = print_list if args.output == "lists" else None
    formats = Formats(settings.input, settings.evaluation.max_record_bytes)
    formats.check()
    evaluator = Evaluator(
        settings,
        on_scored=on_scored,
        decoder_for=file_decoders(formats, args.files),
        format_of=file_formats(formats, args.files),
        on_seconds=SecondsTimestampLog(),
    )
    replay(
        evaluator.pipeline,
        args.files,
        progress=args.progress,
        finish=not args.no_finish,
        formats=formats,
    )
    snapshot = evaluator.snapshot()
    if args.output == "json":
        json.dump(snapshot_json(snapshot), out, indent=2)
        out.write("\n")
    elif args.output == "table":
        out.write(snapshot_table(snapshot) + "\n")
    return 0
