"""Loading the settings: the TOML file and the environment read, a validation error described
in one line that names the key."""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_settings import SettingsError

from streameval.config.env import check_environment, did_you_mean
from streameval.config.settings import Settings
from streameval.errors import ConfigError


def load_settings(config_file: str | Path | None = None, **overrides: Any) -> Settings:
    """Read the TOML file (if any) and the environment; a bad value raises ConfigError, a
    ``STREAMEVAL_…`` variable that sets nothing is logged (WARNING, one line each)."""
    data: dict[str, Any] = {}
    if config_file is not None:
        path = Path(config_file)
        try:
            with path.open("rb") as fh:
                data = tomllib.load(fh)
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"config file {path} is not valid TOML: not UTF-8 text (byte "
                f"{exc.object[exc.start]:#04x} at offset {exc.start}): give --config a TOML file"
            ) from None
    for section, values in overrides.items():
        data.setdefault(section, {}).update(values)
    for warning in check_environment(Settings, os.environ):
        logging.getLogger("streameval.config").warning("%s", warning)
    try:
        return Settings(**data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, data, os.environ)) from None
    except SettingsError as exc:  # what check_environment did not foresee: still one line
        raise ConfigError(f"a STREAMEVAL_ environment variable cannot be read: {exc}") from None


def _describe(exc: ValidationError, data: dict[str, Any], environ: Mapping[str, str]) -> str:
    lines = []
    for err in exc.errors(include_url=False):
        loc = [str(p) for p in err["loc"]]
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden" and loc:
            msg += did_you_mean(loc[-1], _fields_at(loc[:-1]))
        variable = _variable_of(loc, data, environ)
        if variable is not None:
            msg += f" (from the environment variable {variable})"
        lines.append(f"{'.'.join(loc)}: {msg}" if loc else msg)
    return "invalid configuration: " + "; ".join(lines)


def _variable_of(loc: list[str], data: dict[str, Any], environ: Mapping[str, str]) -> str | None:
    """The ``STREAMEVAL_…`` variable that set the key at ``loc``, when the value came from the
    environment (the file's keys and overrides win over it, as in :class:`Settings`): the
    longest set variable naming ``loc`` or a section above it (``STREAMEVAL_EVALUATION='{…}'``)."""
    node: Any = data
    for key in loc:
        if not isinstance(node, dict) or key not in node:
            break
        node = node[key]
    else:
        return None  # the file (or an override) gave this key
    for depth in range(len(loc), 0, -1):
        name = "STREAMEVAL_" + "__".join(loc[:depth]).upper()
        if name in environ:
            return name
    return None


def _fields_at(loc: list[str]) -> list[str]:
    """The keys of the section at ``loc`` (e.g. ["evaluation"]): where an unknown key was."""
    model: Any = Settings
    for key in loc:
        field = getattr(model, "model_fields", {}).get(key)
        if field is None:
            return []
        model = field.annotation
    return list(getattr(model, "model_fields", {}))
