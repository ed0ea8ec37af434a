"""``[input]``: the format of each topic and file read (DESIGN §11)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from streameval.config.base import FROZEN, Duration
from streameval.config.mapping import MappingSettings


class SourceFormat(BaseModel):
    """How the records of one topic or file are read."""

    model_config = FROZEN

    #: "auto": native or UBI, told apart by shape (the default); "native", "ubi"; "mapped":
    #: through ``mapping`` (a name in ``input.mappings``)
    format: Literal["auto", "native", "ubi", "mapped"] = "auto"
    #: "json" (UTF-8, one record per message or line) or "avro" (Confluent wire format:
    #: magic byte 0, 4-byte schema id, Avro binary; needs format = "mapped")
    encoding: Literal["json", "avro"] = "json"
    #: the name of the mapping (in ``input.mappings``) of ``format = "mapped"``
    mapping: str | None = None

    @model_validator(mode="after")
    def _mapping_named(self) -> SourceFormat:
        if (self.format == "mapped") != (self.mapping is not None):
            raise ValueError('mapping names the mapping of format = "mapped" (and only then)')
        if self.encoding == "avro" and self.format != "mapped":
            raise ValueError('encoding = "avro" needs format = "mapped"')
        return self


class InputSettings(BaseModel):
    """``[input]``: the format of each topic and file read (DESIGN §11)."""

    model_config = FROZEN

    #: topic -> its format; topics not listed are read as ``default``
    topics: dict[str, SourceFormat] = Field(default_factory=dict)
    #: for ``replay``: file (the path as given, its name, or a glob of its name) -> its format
    files: dict[str, SourceFormat] = Field(default_factory=dict)
    #: the format of every topic and file not listed
    default: SourceFormat = SourceFormat()
    #: name -> a mapping from a team's own records to the events (``format = "mapped"``)
    mappings: dict[str, MappingSettings] = Field(default_factory=dict)
    #: a Confluent-compatible schema registry (e.g. "http://registry:8081", or Apicurio's
    #: ".../apis/ccompat/v7"), asked for Avro schemas by id, each once
    schema_registry_url: str | None = None
    #: schema id -> an Avro schema file (.avsc), read at start; looked up before the registry
    avro_schemas: dict[int, Path] = Field(default_factory=dict)
    #: how long one request to the schema registry may take
    schema_registry_timeout: Duration = 5_000

    @model_validator(mode="after")
    def _references(self) -> InputSettings:
        named = {"default": self.default} | {
            f"{kind}.{name}": fmt
            for kind, table in (("topics", self.topics), ("files", self.files))
            for name, fmt in table.items()
        }
        for where, fmt in named.items():
            if fmt.mapping is not None and fmt.mapping not in self.mappings:
                raise ValueError(f"{where}.mapping: {fmt.mapping!r} is not in input.mappings")
            if fmt.encoding == "avro":
                # a topic's records name their schema by id; a file (an Avro container file)
                # carries its own
                needs_schemas = not where.startswith("files.")
                if needs_schemas and not self.avro_schemas and not self.schema_registry_url:
                    raise ValueError(
                        f"{where}.encoding: Avro needs schema_registry_url or avro_schemas"
                    )
                if importlib.util.find_spec("fastavro") is None:
                    raise ValueError(
                        f"{where}.encoding: Avro needs fastavro: pip install 'streameval[avro]'"
                    )
        for schema_id, path in self.avro_schemas.items():
            if not path.is_file():
                raise ValueError(f"avro_schemas.{schema_id}: no such file {str(path)!r}")
        return self
