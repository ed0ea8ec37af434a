"""The ``STREAMEVAL_…`` environment variables, read the way an operator means them.

pydantic-settings reads the variables (:class:`ListFriendlyEnvSource`); this module adds what it
does not say:

* a variable that sets nothing (``STREAMEVAL_EVALUATON__KS``, a typo in the section) is ignored
  by pydantic-settings without a word: :func:`check_environment` names each, with the key it
  probably meant (the variables of our own scripts, :data:`SCRIPT_VARIABLES`, excepted);
* a list, table or section that is not valid JSON fails with a :class:`ConfigError` that names
  the variable and shows the JSON expected, instead of a traceback that names neither;
* a list of plain values (``ks``, ``windows``, ``topics``, ``segment_labels``, ...) may also be
  written comma-separated, ``STREAMEVAL_EVALUATION__KS=1,5``: a value that does not start with
  ``[`` is split at its commas (unambiguous: no valid element of those lists holds a comma or
  starts with ``[``). ``'[1, 5]'`` (JSON) still works.
"""

from __future__ import annotations

import difflib
import json
import types
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, TypeAdapter
from pydantic.fields import FieldInfo
from pydantic_settings import EnvSettingsSource

from streameval.errors import ConfigError

PREFIX = "STREAMEVAL_"
DELIMITER = "__"

#: variables under the prefix that are not settings: read by scripts/kafka-broker and
#: scripts/schema-registry (the test broker and registry) and the tests that start them
SCRIPT_VARIABLES = frozenset(
    {
        "STREAMEVAL_KAFKA_CONTROLLER_PORT",
        "STREAMEVAL_KAFKA_DATA_DIR",
        "STREAMEVAL_KAFKA_HEAP",
        "STREAMEVAL_KAFKA_HOME",
        "STREAMEVAL_KAFKA_PORT",
        "STREAMEVAL_KAFKA_SASL_PLAIN",
        "STREAMEVAL_KAFKA_START_TIMEOUT",
        "STREAMEVAL_KAFKA_VERSION",
        "STREAMEVAL_KAFKA_WATCH_PID",
        "STREAMEVAL_REGISTRY_DATA_DIR",
        "STREAMEVAL_REGISTRY_HEAP",
        "STREAMEVAL_REGISTRY_HOME",
        "STREAMEVAL_REGISTRY_PORT",
        "STREAMEVAL_REGISTRY_START_TIMEOUT",
        "STREAMEVAL_REGISTRY_WATCH_PID",
    }
)

_SCALARS = (int, float, str, bool)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean `x`?)`` for the closest of ``choices`` to ``word``, or ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return f" (did you mean `{close[0]}`?)" if close else ""


def _unwrap(annotation: Any) -> Any:
    """``X`` of ``Annotated[X, …]`` and of ``X | None``."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            inner = [a for a in get_args(annotation) if a is not type(None)]
            if len(inner) != 1:
                return annotation
            annotation = inner[0]
        else:
            return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def is_plain_list(annotation: Any) -> bool:
    """A tuple or list of scalars (numbers, strings, literals, durations): what may be written
    comma-separated."""
    annotation = _unwrap(annotation)
    if get_origin(annotation) not in (tuple, list):
        return False
    for arg in get_args(annotation):
        if arg is Ellipsis:
            continue
        element = _unwrap(arg)
        if get_origin(element) is Literal:
            continue
        if not (isinstance(element, type) and issubclass(element, _SCALARS)):
            return False
    return True


def split_list(value: str) -> list[str]:
    """``"1, 5"`` -> ``["1", "5"]``."""
    return [part.strip() for part in value.split(",")]


class ListFriendlyEnvSource(EnvSettingsSource):
    """pydantic-settings' environment source, where a list of plain values may also be written
    comma-separated (see the module's doc)."""

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        # (pydantic-settings passes None for a table's values, despite its annotation)
        if (
            isinstance(value, str)
            and field is not None
            and is_plain_list(field.annotation)
            and not value.lstrip().startswith("[")
        ):
            return split_list(value)
        return super().decode_complex_value(field_name, field, value)


def _resolve(model: type[BaseModel], keys: Sequence[str]) -> tuple[str, FieldInfo | None, int, str]:
    """Walks ``keys`` (lower case) down ``model``'s fields. Returns the dotted key reached, the
    field it names (None when a key is unknown), the position of the unknown key, and the
    known key closest to it (or "")."""
    annotation: Any = model
    field: FieldInfo | None = None
    path: list[str] = []
    for depth, key in enumerate(keys):
        annotation = _unwrap(annotation)
        if _is_model(annotation):
            fields = {name.lower(): (name, info) for name, info in annotation.model_fields.items()}
            if key not in fields:
                close = difflib.get_close_matches(key, list(fields), n=1, cutoff=0.5)
                return ".".join([*path, key]), None, depth, close[0] if close else ""
            name, field = fields[key]
            path.append(name)
            annotation = field.annotation
        elif get_origin(annotation) is dict:
            path.append(key)  # a free key of a table (a topic, a mapping, a label)
            annotation = get_args(annotation)[1]
            field = FieldInfo.from_annotation(annotation)
        else:
            return ".".join([*path, key]), None, depth, ""
    return ".".join(path), field, len(keys), ""


def _complex(annotation: Any) -> str | None:
    """ "list" or "object" when the variable's value must be JSON (or a comma list), else None."""
    annotation = _unwrap(annotation)
    origin = get_origin(annotation)
    if origin in (tuple, list, set, frozenset):
        return "list"
    if origin is dict or _is_model(annotation):
        return "object"
    return None


def _example(field: FieldInfo, kind: str) -> str:
    """The field's default as JSON (what the variable would hold to set it), else a shape."""
    try:
        default = field.get_default(call_default_factory=True)
        if default is not None:
            adapter: TypeAdapter[Any] = TypeAdapter(field.annotation or Any)
            shown = adapter.dump_python(default, mode="json")
            return json.dumps(shown)
    except Exception:  # an example is only a nicety
        pass
    return "[…]" if kind == "list" else "{…}"


def check_environment(settings_cls: type[BaseModel], environ: Mapping[str, str]) -> list[str]:
    """The warnings about ``environ``'s ``STREAMEVAL_…`` variables that set nothing (one line
    each, with a did-you-mean). Raises :class:`ConfigError` naming the variable when its value
    cannot be read, or when it names a key inside a section that does not exist (pydantic
    would refuse it, without saying which variable it came from)."""
    warnings: list[str] = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(PREFIX) or upper in SCRIPT_VARIABLES:
            continue
        value = environ[name]
        keys = upper[len(PREFIX) :].lower().split(DELIMITER)
        key, field, depth, close = _resolve(settings_cls, keys)
        if field is None:
            meant = ""
            if close:
                fixed = [*keys[:depth], close, *keys[depth + 1 :]]
                meant = f" (did you mean {PREFIX}{DELIMITER.join(fixed).upper()}?)"
            if depth == 0:  # pydantic-settings reads no section by that name: it is ignored
                sections = ", ".join(settings_cls.model_fields)
                warnings.append(
                    f"{name} sets nothing and is ignored: {keys[0]!r} is not a section "
                    f"({sections}){meant}"
                )
                continue
            raise ConfigError(
                f"{name}: {key} is not a setting{meant}; a variable is "
                f"{PREFIX}<SECTION>{DELIMITER}<KEY>, e.g. {PREFIX}EVALUATION{DELIMITER}KS"
            )
        kind = _complex(field.annotation)
        if kind is None or not value:
            continue
        if (
            kind == "list"
            and is_plain_list(field.annotation)
            and not value.lstrip().startswith("[")
        ):
            continue  # comma-separated: read by ListFriendlyEnvSource
        try:
            json.loads(value)
        except ValueError:
            comma = " (or comma-separated: 1,5)" if is_plain_list(field.annotation) else ""
            raise ConfigError(
                f"{name}: {value!r} is not valid JSON; {key} takes a JSON {kind}, e.g. "
                f"'{_example(field, kind)}'{comma}"
            ) from None
    return warnings
