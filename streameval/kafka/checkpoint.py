"""What a commit remembers besides the offset: the horizon and read position it was made at.

The committed *offset* of a partition is where a restart must re-read from to rebuild its state
(the oldest record a window or an open list still needs). The *metadata* says how far the
committing run had read and counted: records before ``next_offset`` and lists at or before
``horizon_ms`` are rebuilt from on the way back but not counted a second time. With the window
state changelog, ``persisted_before`` says that every bucket of the partition that starts before it
is in the state topic (written before this commit), so the re-read starts after them and they are
loaded instead. An older reader ignores that key and re-reads, as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

_VERSION = 1


@dataclass(frozen=True, slots=True)
class Checkpoint:
    horizon_ms: int | None
    next_offset: int
    persisted_before: int | None = None

    def encode(self) -> str:
        data: dict[str, int | None] = {"v": _VERSION, "h": self.horizon_ms, "p": self.next_offset}
        if self.persisted_before is not None:
            data["s"] = self.persisted_before
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def decode(cls, metadata: str | None) -> Checkpoint | None:
        """The checkpoint in a commit's metadata; None when absent or not ours. A trailing NUL is
        ignored: confluent-kafka commits the metadata as a C string with its terminator, which
        kafka-python reads back (a group may switch clients)."""
        if not metadata:
            return None
        try:
            data = json.loads(metadata.rstrip("\x00"))
        except ValueError:
            return None
        if not isinstance(data, dict) or data.get("v") != _VERSION:
            return None
        horizon, pos = data.get("h"), data.get("p")
        if horizon is not None and type(horizon) is not int:
            return None
        if type(pos) is not int or pos < 0:
            return None
        persisted = data.get("s")
        if persisted is not None and type(persisted) is not int:
            return None
        return cls(horizon, pos, persisted)
