"""Every configuration key, read from the settings model itself (:mod:`streameval.config`).

Two renderings of the same walk over the pydantic models, so that neither can drift from the code:

- :func:`settings_toml`: a TOML document of a :class:`~streameval.config.Settings` (the defaults,
  or the effective configuration), which ``streameval config`` prints and which loads back;
- :func:`reference_markdown`: ``docs/configuration.md``, every key with its type, default and
  meaning. Regenerate it with ``python -m streameval.config_reference > docs/configuration.md``
  (``tests/unit/test_config_reference.py`` fails while it is stale).

A key's meaning is the ``#:`` comment above its field in its section's module of the
:mod:`streameval.config` package (else the field's ``description``); a section's introduction is
its model's docstring.
"""

from __future__ import annotations

import ast
import inspect
import json
import math
import re
import sys
import textwrap
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, SecretStr, TypeAdapter
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from streameval.config import Settings
from streameval.config.mapping import _pointer
from streameval.durations import format_duration

#: What a secret is shown as: never its value, nor whether it is long or short.
MASK = "********"
REGENERATE = "python -m streameval.config_reference > docs/configuration.md"

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


# --- reading the models -------------------------------------------------------------------------


@cache
def _comments(cls: type) -> dict[str, str]:
    """``#:`` comments of the fields declared in ``cls``'s own body (contiguous lines above)."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    src = source.splitlines()
    node = ast.parse(source).body[0]
    if not isinstance(node, ast.ClassDef):
        return {}
    found: dict[str, str] = {}
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        doc: list[str] = []
        row = stmt.lineno - 2
        while row >= 0 and src[row].strip().startswith("#:"):
            doc.insert(0, src[row].strip()[2:].strip())
            row -= 1
        if doc:
            found[stmt.target.id] = " ".join(doc)
    return found


def field_meaning(model: type[BaseModel], name: str) -> str:
    """The documented meaning of ``model``'s field ``name`` ('' when it has none)."""
    for cls in model.__mro__:
        if name in _comments(cls):
            return _markdown(_comments(cls)[name])
    return _markdown(model.model_fields[name].description or "")


def _markdown(text: str) -> str:
    """reStructuredText's inline literals (double back-quotes) as Markdown's (single)."""
    return text.replace("``", "`")


def _unwrap(annotation: Any) -> Any:
    """``X | None`` -> ``X``; ``Annotated[X, ...]`` -> ``X``."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(args) != 1:
                return annotation
            annotation = args[0]
        else:
            return annotation


def _model_of(annotation: Any) -> type[BaseModel] | None:
    inner = _unwrap(annotation)
    return inner if isinstance(inner, type) and issubclass(inner, BaseModel) else None


def _dict_of_models(annotation: Any) -> type[BaseModel] | None:
    inner = _unwrap(annotation)
    if typing.get_origin(inner) is dict:
        return _model_of(typing.get_args(inner)[1])
    return None


def _validators(field: FieldInfo, annotation: Any) -> set[Any]:
    """The functions of the validators and serializers on a field and its annotation (also
    inside ``X | None``)."""
    metadata = list(field.metadata)
    stack = [annotation]
    while stack:
        ann = stack.pop()
        if typing.get_origin(ann) is Annotated:
            metadata += list(typing.get_args(ann)[1:])
        elif typing.get_origin(ann) in (Union, types.UnionType):
            stack += list(typing.get_args(ann))
    return {getattr(m, "func", None) for m in metadata} - {None}


def _type_name(field: FieldInfo, annotation: Any) -> str:
    """A reader's name for a field's type: "duration", "list of strings", "`a` or `b`", …"""
    funcs = _validators(field, annotation)
    if format_duration in funcs:
        return "duration"
    if _pointer in funcs:
        return "JSON Pointer"
    inner = _unwrap(annotation)
    origin = typing.get_origin(inner)
    if origin is Literal:
        return " or ".join(f"`{json.dumps(v)}`" for v in typing.get_args(inner))
    if origin is tuple:
        item = typing.get_args(inner)[0]
        name = _type_name(FieldInfo(), item)
        return f"list of {name}s" if " " not in name else f"list of ({name})"
    if origin is dict:
        key, value = typing.get_args(inner)
        return f"table: {_type_name(FieldInfo(), key)} → {_type_name(FieldInfo(), value)}"
    names = {str: "string", int: "integer", float: "number", bool: "boolean", Path: "path"}
    if inner is SecretStr:
        return "secret string"
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return "table"
    return names.get(inner, getattr(inner, "__name__", str(inner)))


def _dump_default(field: FieldInfo) -> Any:
    """The field's default as it is written in TOML (None when it has none, or it is None)."""
    default = field.get_default(call_default_factory=True)
    if default is None or default is PydanticUndefined:
        return None
    annotated: Any = field.annotation
    if field.metadata:
        annotated = Annotated[(annotated, *field.metadata)]
    adapter: TypeAdapter[Any] = TypeAdapter(annotated)
    return adapter.dump_python(default, mode="json")


# --- TOML ---------------------------------------------------------------------------------------


def _key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else _string(name)


def _string(text: str) -> str:
    # JSON's escapes are TOML's (\" \\ \b \f \n \r \t \uXXXX); TOML also wants DEL escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_value(value: Any) -> str:
    """A TOML literal for a JSON-like value (inline tables for dicts)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return (
            "{ " + ", ".join(f"{_key(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }"
        )
    raise TypeError(f"no TOML literal for {value!r}")


def _section_lines(
    model: BaseModel, dumped: dict[str, Any], path: list[str], comments: bool
) -> list[str]:
    """The lines of one TOML table: its own keys, then its sub-tables."""
    cls = type(model)
    own: list[str] = []
    later: list[str] = []
    for name, field in cls.model_fields.items():
        value = getattr(model, name)
        if comments and (meaning := field_meaning(cls, name)):
            note = [f"# {line}" for line in _wrap(meaning, 98)]
        else:
            note = []
        if isinstance(value, BaseModel):
            later += ["", *note, *_section_lines(value, dumped[name], [*path, name], comments)]
        elif _dict_of_models(field.annotation) is not None and value:
            for sub_name, sub in value.items():
                later += [
                    "",
                    *_section_lines(sub, dumped[name][sub_name], [*path, name, sub_name], comments),
                ]
        elif value is None:
            own += [*note, f"# {_key(name)} = (not set)"]
        elif isinstance(value, SecretStr):
            own += [*note, f"{_key(name)} = {toml_value(MASK)}"]
        else:
            own += [*note, f"{_key(name)} = {toml_value(dumped[name])}"]
    header = ["[" + ".".join(_key(p) for p in path) + "]"] if path else []
    return header + own + later


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    return [*lines, current] if current else lines


def settings_toml(settings: Settings, *, comments: bool = False) -> str:
    """``settings`` as a TOML document that loads back to the same settings (secrets masked,
    unset keys as comments)."""
    dumped = settings.model_dump(mode="json")
    lines = _section_lines(settings, dumped, [], comments)
    return "\n".join(lines).lstrip("\n") + "\n"


def default_settings() -> Settings:
    """The defaults alone: no file, no environment."""
    return Settings.model_construct()


# --- the reference page -------------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    path: str
    type: str
    default: str
    meaning: str


def iter_keys(model: type[BaseModel], prefix: str = "") -> Iterator[Key]:
    """Every key under ``model``, depth first in declaration order (``<name>`` for the entries
    of a table of sub-tables, such as ``input.mappings.<name>``)."""
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        meaning = field_meaning(model, name)
        sub = _model_of(field.annotation)
        if sub is not None:
            yield from iter_keys(sub, f"{path}.")
            continue
        entry = _dict_of_models(field.annotation)
        default = _dump_default(field)
        if field.is_required():
            shown = "required"
        elif default is None:
            shown = "not set"
        else:
            shown = f"`{toml_value(default)}`"
        yield Key(path, _type_name(field, field.annotation), shown, meaning)
        if entry is not None:
            placeholder = "<" + (name[:-1] if name.endswith("s") else name) + ">"
            yield from iter_keys(entry, f"{path}.{placeholder}.")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def reference_markdown() -> str:
    out = [
        "# Configuration reference",
        "",
        "<!-- Generated from the settings models in streameval/config/: do not edit by hand.",
        f"     Regenerate with {REGENERATE} -->",
        "",
        "streameval reads a TOML file (`--config FILE`) and `STREAMEVAL_…` environment variables;",
        "the environment wins over the file. A nested key is one variable, its path joined with",
        "`__`: `kafka.group_id` is `STREAMEVAL_KAFKA__GROUP_ID`. Lists and tables are JSON in a",
        'variable: `STREAMEVAL_KAFKA__TOPICS=\'["a","b"]\'`, and a whole section can be one',
        'variable (`STREAMEVAL_INPUT=\'{"default": {"format": "ubi"}}\'`). Durations are written',
        '`"250ms"`, `"10s"`, `"5m"`, `"1h"`, `"30d"` (or integer milliseconds). A wrong value',
        "stops the start with one line naming the key.",
        "",
        "`streameval config` prints every key with its default as TOML; `streameval config FILE`",
        "validates FILE and prints the effective configuration (file and environment), secrets",
        f'shown as `"{MASK}"`.',
        "",
    ]
    for name, field in Settings.model_fields.items():
        section = _model_of(field.annotation)
        if section is None:
            continue
        out += [f"## `[{name}]`", ""]
        doc = section.__dict__.get("__doc__")
        if doc:
            out += [_markdown(" ".join(doc.split())), ""]
        out += ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
        for key in iter_keys(section, f"{name}."):
            out.append(
                f"| `{_cell(key.path)}` | {_cell(key.type)} | {_cell(key.default)} "
                f"| {_cell(key.meaning)} |"
            )
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """``python -m streameval.config_reference``: print ``docs/configuration.md``."""
    del argv
    sys.stdout.write(reference_markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
