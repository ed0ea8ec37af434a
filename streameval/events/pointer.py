"""JSON Pointers (RFC 6901) compiled once into accessors.

A mapped format names its fields by JSON Pointer (``/context/page/query``, ``/items/0/id``). Each
pointer is compiled, when the mapping is built, into one small Python function of straight-line
subscripts (``r["context"]["page"]["query"]``), so reading a field of a record is one call and a
few dictionary look-ups, never a walk over the pointer's tokens per record. The tokens are put into
the generated source with :func:`repr` only, so a pointer from a configuration file cannot inject
code.

Semantics (RFC 6901 §4): ``""`` is the whole record; ``~1`` is ``/`` and ``~0`` is ``~`` in a
token; a token applies to an object as a member name and to an array as a decimal index without
leading zeros (``-`` and anything else names no element). Whatever is not there (a missing member,
an index out of range, a token applied to a string or number) is ``None``, like JSON ``null``
(both mean "absent" for an event field), and never an exception.

Why not a path library: JSON Pointer is the standard form of a field's address in JSON (RFC 6901,
used by JSON Schema and JSON Patch) and needs no expression language; the JSONPath libraries on
PyPI (jsonpath-ng, python-jsonpath) interpret a parsed path per call, several times slower than
a generated subscript, and would add a dependency for no gain here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["Accessor", "compile_pointer", "lookup_code", "tokens"]


Accessor = Callable[[object], object]

_INDEX = re.compile(r"0|[1-9][0-9]{0,8}")


def tokens(pointer: str) -> list[str]:
    """The unescaped reference tokens of ``pointer``; ``ValueError`` when it is not one."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"JSON Pointer {pointer!r} must be empty or start with '/'")
    out = []
    for raw in pointer[1:].split("/"):
        if "~" in raw.replace("~0", "").replace("~1", ""):
            raise ValueError(f"JSON Pointer {pointer!r}: '~' must be followed by 0 or 1")
        out.append(raw.replace("~1", "/").replace("~0", "~"))
    return out


def lookup_code(pointer: str, var: str, indent: str) -> str:
    """Python statements that replace ``var`` (a record) with the value ``pointer`` names in it,
    or ``None`` when it names nothing: for generated accessors. No exception is raised on the
    way (an absent optional field is the common case, and an exception costs more than the
    look-ups). Tokens enter the code only through :func:`repr`."""
    lines = []
    for token in tokens(pointer):
        member = f"({var}.get({token!r}) if type({var}) is dict else None)"
        if _INDEX.fullmatch(token):
            # an array index, or the member of that name of an object (RFC 6901 §4)
            i = int(token)
            index = f"({var}[{i}] if len({var}) > {i} else None)"
            lines.append(f"{indent}{var} = {index} if type({var}) is list else {member}\n")
        else:
            lines.append(f"{indent}{var} = {member}\n")
    return "".join(lines)


def compile_pointer(pointer: str) -> Accessor:
    """An accessor ``get(record)``: the value ``pointer`` names in ``record``, or None when it
    names nothing (JSON ``null`` and an absent field are the same, as in native events)."""
    if not tokens(pointer):
        return _identity
    source = "def get(r):\n" + lookup_code(pointer, "r", "    ") + "    return r\n"
    namespace: dict[str, object] = {}
    exec(compile(source, f"<pointer {pointer!r}>", "exec"), namespace)  # tokens only via repr
    get: Accessor = namespace["get"]  # type: ignore[assignment]
    return get


def _identity(record: object) -> object:
    return record
