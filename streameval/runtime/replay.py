"""Replay: the pipeline over JSON-lines event logs, in event time.

Files are read round-robin, one record (line) at a time, each file a source of its own (like a Kafka
partition): so a log split by event type (impressions.jsonl, clicks.jsonl), each in time order,
replays as it happened (one file alone is read in chunks of lines, each offered at once). An
exhausted file stops holding the watermark back. At end of input every open list is finalized.
The same logs always give the same output.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from itertools import islice
from typing import Any, BinaryIO, TypeVar

from streameval.config import SourceFormat
from streameval.engine import DecoderFor
from streameval.engine.interface import Engine
from streameval.errors import InputError
from streameval.events.formats import Formats


def _open(path: str, stack: ExitStack) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    try:
        return stack.enter_context(open(path, "rb"))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def source_name(index: int) -> str:
    """The pipeline's name of the ``index``-th file (a source of its own)."""
    return f"file:{index}"


def file_decoders(formats: Formats, paths: Sequence[str]) -> DecoderFor:
    """``decoder_for`` of a replay of ``paths``: each file read in the format ``[input]`` gives
    it (``input.files``, else ``input.default``)."""
    by_source = {source_name(i): formats.for_file(path) for i, path in enumerate(paths)}
    return by_source.__getitem__


def file_formats(formats: Formats, paths: Sequence[str]) -> Callable[[str], SourceFormat]:
    """``format_of`` of a replay of ``paths`` (beside :func:`file_decoders`): each file's format,
    for the native engine's decoders."""
    by_source = {source_name(i): formats.file_format(path) for i, path in enumerate(paths)}
    return by_source.__getitem__


E = TypeVar("E", bound=Engine)

#: the lines of one log offered at once (``Engine.offer_batch``): a few thousand amortize the
#: call; more only hold more lines in memory at once
CHUNK_LINES = 2_000


def lines(fh: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """(line number, line without its line end) of a JSON-lines file; blank lines skipped."""
    for number, line in enumerate(fh, 1):
        if not line.isspace():  # (the file's lines are never empty: each has its line end)
            yield number, line.rstrip(b"\r\n")


def interleave(files: Sequence[Iterator[tuple[int, bytes]]]) -> Iterator[tuple[int, int, bytes]]:
    """(file index, offset, record) round-robin over ``files``; (index, -1, b"") once a file is
    exhausted."""
    live = list(enumerate(files))
    while live:
        still = []
        for i, records in live:
            item = next(records, None)
            if item is None:
                yield i, -1, b""  # exhausted
                continue
            still.append((i, records))
            yield i, item[0], item[1]
        live = still


def _records(path: str, fh: BinaryIO, formats: Formats | None) -> Iterator[tuple[int, bytes]]:
    """The records of one file: its lines, or the records of an Avro container file."""
    if formats is not None and formats.file_format(path).encoding == "avro":
        from streameval.events.avro import container_records  # (fastavro: only when needed)

        return enumerate(container_records(fh, formats.schemas()))
    return lines(fh)


def replay(
    pipeline: E,
    paths: Sequence[str],
    *,
    progress: bool | None = None,
    finish: bool = True,
    formats: Formats | None = None,
) -> E:
    """Feed every record of ``paths`` to ``pipeline``; then finish it (finalize every open list)
    unless ``finish`` is false, which leaves the state as a caught-up daemon would hold it.
    ``formats``: the ``[input]`` formats, for files read as Avro container files (the pipeline's
    ``decoder_for`` is :func:`file_decoders` of the same)."""
    with ExitStack() as stack:
        files = [_open(p, stack) for p in paths]
        readers = [_records(p, fh, formats) for p, fh in zip(paths, files, strict=True)]
        bar = _progress_bar(paths, files, progress, stack)
        sources = [source_name(i) for i in range(len(files))]
        for source in sources:
            pipeline.add_source(source)
        if len(readers) == 1 and bar is None:  # one file (the usual case): no round robin
            # in chunks of lines, each offered at once (the native engine runs a chunk in one
            # call, docs/native.md "The record path in batches")
            offer_batch, source, records = pipeline.offer_batch, sources[0], readers[0]
            while chunk := [(r, offset, -1) for offset, r in islice(records, CHUNK_LINES)]:
                offer_batch(chunk, source)
            pipeline.set_idle(source)
        else:
            for i, offset, record in interleave(readers):
                if offset < 0:
                    pipeline.set_idle(sources[i])
                    continue
                pipeline.offer(record, sources[i], offset)
                if bar is not None:
                    bar.update(len(record) + 1)
    if finish:
        pipeline.finish()
    return pipeline


def _progress_bar(
    paths: Sequence[str], files: Sequence[BinaryIO], progress: bool | None, stack: ExitStack
) -> Any:
    import os

    if progress is False or "-" in paths:
        return None
    total = sum(os.fstat(f.fileno()).st_size for f in files)
    if progress is None and (total < 20_000_000 or not sys.stderr.isatty()):
        return None
    from tqdm import tqdm

    return stack.enter_context(
        tqdm(total=total, unit="B", unit_scale=True, desc="replay", file=sys.stderr)
    )
