"""The committed dashboard against Grafana's dashboard schema as grafana-foundation-sdk gives it
(the SDK's models are generated from Grafana's schema for the pinned Grafana release): decoded
with the SDK's own decoder, every field is one the schema has (a round trip through the models
gives the same JSON back), and every value has the schema's type (enums among their members,
numbers numbers, nested objects the schema's objects, panel options the panel plugin's).

Not checked: what the schema leaves open (`object` fields, PromQL strings, the meaning of
values), the import header (`__inputs`, `__requires`: not part of the dashboard schema), and
how a Grafana renders it (no Grafana runs here; tests/deploy/test_live_prometheus.py runs every
query against a real Prometheus).
"""

from __future__ import annotations

import copy
import enum
import json
import types
import typing
from collections.abc import Iterator
from typing import Any

import pytest
from grafana_foundation_sdk.cog import plugins
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as model

from tests.deploy.deployfiles import DASHBOARD_JSON

IMPORT_HEADER = ("__inputs", "__requires")
_MODELS = "grafana_foundation_sdk.models"


def _is_model(value: Any) -> bool:
    return type(value).__module__.startswith(_MODELS) and hasattr(value, "__dict__")


def problems(value: Any, hint: Any, where: str) -> Iterator[str]:
    """Where `value` does not have the type `hint` of the SDK's models."""
    origin = typing.get_origin(hint)
    if hint in (typing.Any, object):
        if _is_model(value):  # a panel plugin's options or field config, decoded as its model
            yield from model_problems(value, where)
        return
    if hint is type(None):
        if value is not None:
            yield f"{where}: {value!r:.60} is not null"
        return
    if origin in (typing.Union, types.UnionType):
        arms = typing.get_args(hint)
        found = {arm: list(problems(value, arm, where)) for arm in arms}
        if any(not errors for errors in found.values()):
            return
        # report the arm the value was meant for: its own class, else the first non-null one
        meant = next(
            (a for a in arms if isinstance(a, type) and type(value) is a),
            next(a for a in arms if a is not type(None)),
        )
        yield from found[meant]
        return
    if origin is typing.Literal:
        if value not in typing.get_args(hint):
            yield f"{where}: {value!r} is none of {typing.get_args(hint)}"
        return
    if origin is list:
        if not isinstance(value, list):
            yield f"{where}: {value!r:.60} is not a list"
            return
        (item,) = typing.get_args(hint) or (typing.Any,)
        for i, element in enumerate(value):
            yield from problems(element, item, f"{where}[{i}]")
        return
    if origin is dict:
        if not isinstance(value, dict):
            yield f"{where}: {value!r:.60} is not an object"
            return
        args = typing.get_args(hint)
        for key, element in value.items():
            yield from problems(element, args[1] if args else typing.Any, f"{where}.{key}")
        return
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        if value not in {member.value for member in hint}:
            yield f"{where}: {value!r} is not a {hint.__name__}"
        return
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            yield f"{where}: {value!r:.60} is not a number"
        return
    if hint in (int, str, bool):
        if type(value) is not hint:
            yield f"{where}: {value!r:.60} is not {hint.__name__}"
        return
    if isinstance(hint, type) and hint.__module__.startswith(_MODELS):
        if not isinstance(value, hint):
            yield f"{where}: {type(value).__name__} is not {hint.__name__}"
            return
        yield from model_problems(value, where)


def model_problems(obj: Any, where: str = "dashboard") -> Iterator[str]:
    for name, hint in typing.get_type_hints(type(obj)).items():
        yield from problems(getattr(obj, name, None), hint, f"{where}.{name}")


def _board() -> dict[str, Any]:
    board: dict[str, Any] = json.loads(DASHBOARD_JSON.read_text(encoding="utf-8"))
    return board


def _decode(board: dict[str, Any]) -> model.Dashboard:
    plugins.register_default_plugins()  # the panel and query plugins' option models
    body = {k: v for k, v in board.items() if k not in IMPORT_HEADER}
    return model.Dashboard.from_json(body)


def _round_trip(board: dict[str, Any]) -> dict[str, Any]:
    encoded: dict[str, Any] = json.loads(json.dumps(_decode(board), cls=JSONEncoder))
    return encoded


def test_every_field_of_the_dashboard_is_in_the_schema() -> None:
    board = _board()
    body = {k: v for k, v in board.items() if k not in IMPORT_HEADER}
    assert _round_trip(board) == body
    assert set(IMPORT_HEADER) <= set(board)


def test_every_value_has_the_schemas_type() -> None:
    decoded = _decode(_board())
    # the panels' options were decoded into their plugins' models (else nothing is checked)
    assert {type(p.options).__module__ for p in decoded.panels or [] if hasattr(p, "options")} >= {
        f"{_MODELS}.stat",
        f"{_MODELS}.timeseries",
    }
    assert list(model_problems(decoded)) == []


def _edited(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    board = copy.deepcopy(_board())
    node = board
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return board


def test_an_unknown_field_is_caught() -> None:
    board = _edited(("panels", 1, "fieldConfig", "defaults", "unitt"), "s")
    body = {k: v for k, v in board.items() if k not in IMPORT_HEADER}
    assert _round_trip(board) != body


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("templating", "list", 0, "hide"), 7),  # an enum
        (("panels", 1, "options", "colorMode"), "rainbow"),  # a stat panel option's enum
        (("panels", 1, "gridPos", "w"), "wide"),  # a number
        (("refresh",), ["30s"]),  # a string
    ],
)
def test_a_value_of_the_wrong_type_is_caught(path: tuple[Any, ...], value: Any) -> None:
    assert list(model_problems(_decode(_edited(path, value))))
