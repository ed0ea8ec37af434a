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


class SourceDecoders(dict[str, RecordDecoder]):
    """The decoder of each source, ``decoders[source]``: asked of ``decoder_for`` the first
    time a source is read (sources are few), else ``default`` for every source. A dict, so a
    record's look-up is one C-level subscript; only a source's first record reaches
    :meth:`__missing__`."""

    __slots__ = ("_decoder_for", "_default")

    def __init__(self, default: RecordDecoder, decoder_for: DecoderFor | None) -> None:
        super().__init__()
        self._default = default
        self._decoder_for = decoder_for

    def __missing__(self, source: str) -> RecordDecoder:
        decode = self._default if self._decoder_for is None else self._decoder_for(source)
        self[source] = decode
        return decode
