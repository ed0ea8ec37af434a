"""The field types and model configuration that every settings section shares."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, ConfigDict, PlainSerializer

from streameval.durations import format_duration, parse_duration

#: A duration in milliseconds, written in config as "10s", "5m", "1h" (or integer milliseconds).
Duration = Annotated[
    int, BeforeValidator(parse_duration), PlainSerializer(format_duration, return_type=str)
]

FROZEN = ConfigDict(frozen=True, extra="forbid")
