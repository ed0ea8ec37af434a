"""``streameval schema``: print the JSON Schema of the events (DESIGN §7)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "schema",
        help="print the JSON Schema of the events",
        description=(
            "Print the JSON Schema (draft 2020-12) of the native events: the union of "
            "impression, click and judgment, told apart by 'type'. With --ubi, print instead "
            "the OpenSearch UBI query and event fields that streameval reads."
        ),
    )
    p.add_argument(
        "--ubi",
        action="store_true",
        help="the accepted OpenSearch UBI records instead of the native events",
    )
    p.add_argument("--indent", type=int, default=2, help="JSON indentation (default 2)")
    p.set_defaults(handler=run)


def events_schema(*, ubi: bool = False) -> dict[str, Any]:
    """The JSON Schema of the native events' union (or of the UBI records read)."""
    from pydantic import TypeAdapter

    from streameval.events.models import TaggedEvent
    from streameval.events.ubi import UbiRecord

    adapter: TypeAdapter[Any] = TypeAdapter(UbiRecord if ubi else TaggedEvent)
    schema = adapter.json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "streameval UBI record" if ubi else "streameval event"
    return schema


def run(args: argparse.Namespace) -> int:
    indent = args.indent if args.indent > 0 else None
    json.dump(events_schema(ubi=args.ubi), sys.stdout, indent=indent, sort_keys=False)
    sys.stdout.write("\n")
    return 0
