"""``streameval inspect``: what a few records of a topic or file map to, or why they do not
(DESIGN §11): the first thing a team runs when pointing streameval at its topics.

:class:`Inspection` takes records one at a time (bytes, as read) with the decoder of their
source, and keeps for the summary: the event types found, the share invalid (by reason), and the
fields never present. For a mapped format those are the record's own fields the mapping reads
(JSON Pointers) that no record had; for native and UBI input, the optional event fields no event
of its type set.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from streameval.epoch import looks_like_seconds, seconds_hint, utc_text
from streameval.events.decode import Invalid
from streameval.events.mapping import Mapper
from streameval.events.models import Click, Event, Impression, Judgment
from streameval.events.pointer import compile_pointer

__all__ = ["Inspection", "Line"]

_MODELS: dict[str, type[Impression | Click | Judgment]] = {
    "impression": Impression,
    "click": Click,
    "judgment": Judgment,
}


@dataclass(frozen=True, slots=True)
class Line:
    """One record: its number, and the event it maps to or why it is invalid."""

    number: int
    event: Event | None
    invalid: Invalid | None

    @property
    def seconds(self) -> bool:
        """The event time is surely epoch seconds read as milliseconds (streameval.epoch)."""
        return self.event is not None and looks_like_seconds(self.event.timestamp)

    def time_note(self) -> str:
        """The event time as UTC, and what to make of one in seconds."""
        if self.event is None:
            return ""
        ms = self.event.timestamp
        return f"  [{seconds_hint(ms)}]" if self.seconds else f"  [{utc_text(ms)}]"

    def text(self) -> str:
        if self.event is not None:
            shown = self.event.model_dump(mode="json", by_alias=True, exclude_none=True)
            body = json.dumps(shown, ensure_ascii=False)
            return f"#{self.number} {self.event.type}: {body}{self.time_note()}"
        invalid = self.invalid or Invalid("schema", "?")
        where = f" at {invalid.field}" if invalid.field else ""
        return f"#{self.number} invalid ({invalid.reason}{where}): {invalid.detail}"

    def as_json(self) -> dict[str, object]:
        if self.event is not None:
            event = self.event.model_dump(mode="json", by_alias=True, exclude_none=True)
            out: dict[str, object] = {"record": self.number, "event": event}
            out["time"] = utc_text(self.event.timestamp)
            if self.seconds:
                out["warning"] = seconds_hint(self.event.timestamp)
            return out
        invalid = self.invalid or Invalid("schema", "?")
        return {
            "record": self.number,
            "invalid": invalid.reason,
            "field": invalid.field or None,
            "detail": invalid.detail,
        }


@dataclass
class Inspection:
    """The records seen and what they became."""

    #: the mapping of the source, when it is mapped (for the fields never present)
    mapper: Mapper | None = None
    #: bytes -> the decoded record before mapping (a mapped source's ``parse``), if any
    parse: Callable[[bytes], object] | None = None
    lines: list[Line] = field(default_factory=list)
    types: Counter[str] = field(default_factory=Counter)
    invalid: Counter[str] = field(default_factory=Counter)
    _present: set[str] = field(default_factory=set)
    _accessors: list[tuple[str, Callable[[object], object]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.mapper is not None:
            self._accessors = [(p, compile_pointer(p)) for p in self.mapper.pointers()]

    def add(self, raw: bytes, decode: Callable[[bytes], Event | Invalid]) -> Line:
        result = decode(raw)
        number = len(self.lines) + 1
        if isinstance(result, Invalid):
            line = Line(number, None, result)
            self.invalid[result.reason] += 1
        else:
            line = Line(number, result, None)
            self.types[result.type] += 1
            if self.mapper is None:
                self._present.update(f"{result.type}.{f}" for f in result.model_fields_set)
        if self.mapper is not None and self.parse is not None:
            record = self.parse(raw)
            if not isinstance(record, Invalid):
                for pointer, get in self._accessors:
                    value = get(record)
                    if value is not None:
                        self._present.add(pointer)
        self.lines.append(line)
        return line

    def never_present(self) -> list[str]:
        if self.mapper is not None:
            return [p for p, _ in self._accessors if p not in self._present]
        out = []
        for kind in self.types:
            model = _MODELS[kind]
            out += [
                f"{kind}.{name}"
                for name, info in model.model_fields.items()
                if name != "type"
                and f"{kind}.{name}" not in self._present
                and not info.is_required()
            ]
        return out

    def summary(self) -> str:
        n = len(self.lines)
        bad = sum(self.invalid.values())
        found = ", ".join(f"{k} {v}" for k, v in sorted(self.types.items())) or "none"
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(self.invalid.items()))
        share = f"{100 * bad / n:.1f} %" if n else "-"
        lines = [
            f"{n} records: {found}; invalid {bad} ({share}{': ' + reasons if reasons else ''})",
            "fields never present: " + (", ".join(self.never_present()) or "none"),
        ]
        if seconds := self.seconds_timestamps():
            lines.append(
                f"event times like epoch seconds (before 1973 as milliseconds): {seconds}; "
                "read as milliseconds, such events count as late"
            )
        return "\n".join(lines)

    def seconds_timestamps(self) -> int:
        """Records whose event time is surely epoch seconds (streameval.epoch)."""
        return sum(1 for line in self.lines if line.seconds)

    def as_json(self) -> dict[str, object]:
        n = len(self.lines)
        return {
            "records": n,
            "types": dict(sorted(self.types.items())),
            "invalid": dict(sorted(self.invalid.items())),
            "invalid_share": (sum(self.invalid.values()) / n) if n else None,
            "never_present": self.never_present(),
            "seconds_timestamps": self.seconds_timestamps(),
        }
