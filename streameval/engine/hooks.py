"""What a driver plugs into the engine: the decoders of its sources, its dead-letter sink, a tap
on every scored list."""

from __future__ import annotations

from collections.abc import Callable

from streameval.events.decode import Invalid
from streameval.events.models import Event
from streameval.values import ScoredList

#: called with (raw record, why it is invalid, source, offset or -1) for the dead-letter topic
DeadLetter = Callable[[bytes, Invalid, str, int], None]
#: called with each list as it is scored (``replay --output lists``)
OnScored = Callable[[ScoredList], None]
#: the decoder of one record: bytes -> event or Invalid, never raising
RecordDecoder = Callable[[bytes], Event | Invalid]
#: the decoder of each source (its format, DESIGN §11), asked once per source
DecoderFor = Callable[[str], RecordDecoder]
