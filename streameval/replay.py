"""Replay: the pipeline over JSON-lines event logs, in event time.

Files are read round-robin, one line at a time, each file a source of its own (like a Kafka
partition): so a log split by event type (impressions.jsonl, clicks.jsonl), each in time order,
replays as it happened. An exhausted file stops holding the watermark back. At end of input every
open list is finalized. The same logs always give the same output.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from typing import Any, BinaryIO

from streameval.errors import InputError
from streameval.events.formats import Formats
from streameval.pipeline import DecoderFor, Pipeline


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


def interleave(files: Sequence[BinaryIO]) -> Iterator[tuple[int, int, bytes]]:
    """(file index, line number, line) round-robin over ``files``; blank lines skipped."""
    live = list(enumerate(files))
    line_no = [0] * len(files)
    while live:
        still = []
        for i, fh in live:
            line = fh.readline()
            if not line:
                yield i, -1, b""  # exhausted
                continue
            still.append((i, fh))
            line_no[i] += 1
            if line.strip():
                yield i, line_no[i], line
        live = still


def replay(
    pipeline: Pipeline,
    paths: Sequence[str],
    *,
    progress: bool | None = None,
    finish: bool = True,
) -> Pipeline:
    """Feed every record of ``paths`` to ``pipeline``; then finish it (finalize every open list)
    unless ``finish`` is false, which leaves the state as a caught-up daemon would hold it."""
    with ExitStack() as stack:
        files = [_open(p, stack) for p in paths]
        bar = _progress_bar(paths, files, progress, stack)
        sources = [source_name(i) for i in range(len(files))]
        for source in sources:
            pipeline.add_source(source)
        for i, offset, line in interleave(files):
            if offset < 0:
                pipeline.set_idle(sources[i])
                continue
            pipeline.offer(line.rstrip(b"\r\n"), sources[i], offset)
            if bar is not None:
                bar.update(len(line))
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
