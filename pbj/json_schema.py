"""The JSON Schema of a message's ProtoJSON form: :func:`json_schema`.

What ``pbj.to_json`` writes and ``pbj.from_json`` reads, field by field (protobuf.dev
"ProtoJSON Format", its type table), as JSON Schema 2020-12 (the dialect of OpenAPI 3.1):

* an object whose keys are the fields' ``json_name`` (``additionalProperties: false``), and
  also their ``.proto`` names where those differ ("ProtoJSON Format": parsers accept both the
  lowerCamelCase name and the original proto field name; ``from_json`` does,
  ``to_json(proto_names=True)`` writes them), never both for one field. A ``.proto`` name
  another field uses as its JSON name is that field's (as ``from_json`` reads it). Names that
  pbj renames in Python (``class`` -> ``class_``, ``_private``, ``__init__`` -> ``f__init__``)
  are keys by their schema names: the attribute names never appear;
* 32-bit integers as ``integer`` with their range; 64-bit integers as a decimal ``string``
  (ProtoJSON writes them so, as JavaScript's numbers hold 53 bits), a number also read;
* ``float``/``double`` as ``number``, or the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``;
* ``bytes`` as a standard base64 ``string``; ``bool`` as ``boolean``;
* an enum as the ``string`` of a value name, or an ``integer`` (a number the enum does not
  name, which proto3 keeps);
* a repeated field as an ``array``; a map as an ``object`` (keys are strings in JSON);
* a oneof: its members are properties of the object, at most one present
  (``"not": {"required": [a, b]}`` for each pair);
* the well-known types in their special forms: ``Timestamp`` an RFC 3339 ``date-time``
  string, ``Duration`` a string like ``"1.5s"``, ``FieldMask`` a string, the wrappers their
  value's schema, ``Struct`` an object, ``Value`` any JSON value, ``ListValue`` an array,
  ``Any`` an object with ``@type`` (or ``{}``, the empty ``Any``), ``Empty`` an empty object;
* every field may be ``null``, which ProtoJSON reads as "not set".

Nested messages are ``$ref``\\ s to definitions named by full name, so recursive messages
have finite schemas.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from pbj.scalars import SCALARS
from pbj.schema import info, is_message
from pbj.schema.records import FieldInfo

__all__ = ["json_schema", "message_schema", "WELL_KNOWN_SCHEMAS"]

_INT64_TEXT = {"type": "string", "pattern": "^-?[0-9]+$"}
_SPECIAL_FLOAT = {"type": "string", "enum": ["NaN", "Infinity", "-Infinity"]}
_FLOAT = {"anyOf": [{"type": "number"}, _SPECIAL_FLOAT]}
_P = "google.protobuf."

#: The schemas of the well-known types with a special JSON form, by full name.
WELL_KNOWN_SCHEMAS: dict[str, dict[str, Any]] = {
    _P + "Timestamp": {"type": "string", "format": "date-time"},
    _P + "Duration": {"type": "string", "pattern": r"^-?[0-9]+(\.[0-9]{1,9})?s$"},
    _P + "FieldMask": {"type": "string"},
    _P + "Struct": {"type": "object"},
    _P + "Value": {},
    _P + "ListValue": {"type": "array"},
    _P + "Empty": {"type": "object", "additionalProperties": False},
    # an Any with no type URL and no value is written {} (as Google's json_format and pbj.to_json write it)
    _P + "Any": {"type": "object", "properties": {"@type": {"type": "string"}},
                 "anyOf": [{"required": ["@type"]}, {"maxProperties": 0}]},
    _P + "DoubleValue": _FLOAT, _P + "FloatValue": _FLOAT,
    _P + "Int64Value": {"anyOf": [_INT64_TEXT, {"type": "integer"}]},
    _P + "UInt64Value": {"anyOf": [_INT64_TEXT, {"type": "integer"}]},
    _P + "Int32Value": {"type": "integer"}, _P + "UInt32Value": {"type": "integer"},
    _P + "BoolValue": {"type": "boolean"}, _P + "StringValue": {"type": "string"},
    _P + "BytesValue": {"type": "string", "contentEncoding": "base64"},
}


def _scalar(name: str) -> dict[str, Any]:
    row = SCALARS[name]
    if row.json == "number":
        lo, hi = row.range  # type: ignore[misc]
        return {"type": "integer", "minimum": lo, "maximum": hi}
    if row.json == "int64":  # no bounds on the number: they are beyond what JSON numbers say exactly
        return {"anyOf": [_INT64_TEXT, {"type": "integer"}]}
    if row.json == "float":
        return dict(_FLOAT)
    if row.json == "bool":
        return {"type": "boolean"}
    if row.json == "bytes":
        return {"type": "string", "contentEncoding": "base64"}
    return {"type": "string"}


def _enum(t: type[enum.IntEnum]) -> dict[str, Any]:
    renamed = getattr(t, "__pbj_proto_names__", {})
    names = [renamed.get(m.name, m.name) for m in t]
    return {"anyOf": [{"type": "string", "enum": names}, {"type": "integer", "minimum": -(1 << 31),
                                                         "maximum": (1 << 31) - 1}],
            "title": t.__name__}


def _value(t: Any, ref: Callable[[type], dict[str, Any]]) -> dict[str, Any]:
    if isinstance(t, str):
        return _scalar(t)
    if isinstance(t, type) and issubclass(t, enum.IntEnum):
        return _enum(t)
    special = WELL_KNOWN_SCHEMAS.get(info(t).full_name)
    if special is not None:
        return dict(special)
    return ref(t)


def _field(f: FieldInfo, ref: Callable[[type], dict[str, Any]]) -> dict[str, Any]:
    if f.is_map:
        key = _scalar(f.map_key) if f.map_key else {}
        names = {"type": "string"} if f.map_key == "string" else {"type": "string", "pattern": _key_pattern(key)}
        return {"type": "object", "propertyNames": names, "additionalProperties": _value(f.map_value, ref)}
    one = _value(f.type, ref)
    if f.repeated:
        return {"type": "array", "items": one}
    return one


def _key_pattern(key: dict[str, Any]) -> str:
    if key.get("type") == "boolean":
        return "^(true|false)$"
    return "^-?[0-9]+$"


def message_schema(cls: type, ref: Callable[[type], dict[str, Any]]) -> dict[str, Any]:
    """The schema of one message class's JSON object, its nested messages given by ``ref``.

    Args:
        cls: a pbj message class (a well-known type with a special form gets that form).
        ref: called with each message class a field holds; returns the schema to use for it
            (a ``{"$ref": ...}``, typically).

    Returns:
        The JSON Schema (a ``dict``).
    """
    mi = info(cls)
    special = WELL_KNOWN_SCHEMAS.get(mi.full_name)
    if special is not None:
        return dict(special)
    fields = mi.all_fields()
    props: dict[str, Any] = {}
    for f in fields:  # JSON names first: a JSON name wins over another field's .proto name
        props.setdefault(f.json_name, {"anyOf": [_field(f, ref), {"type": "null"}]})
    spellings: dict[int, list[str]] = {f.number: [f.json_name] for f in fields}
    for f in fields:
        name = f.proto_name or f.name
        if name not in props:
            props[name] = {**props[f.json_name], "description": f"The .proto name of field {f.json_name!r}."}
            spellings[f.number].append(name)
    out: dict[str, Any] = {"type": "object", "title": mi.full_name.rpartition(".")[2] or mi.full_name,
                           "description": f"The protobuf message {mi.full_name}, in its ProtoJSON form.",
                           "properties": props, "additionalProperties": False}
    # at most one key of each group: a field's two spellings; every spelling of a oneof's members
    groups = [spellings[f.number] for f in mi.fields if len(spellings[f.number]) > 1]
    groups += [[k for m in o.members for k in spellings[m.number]] for o in mi.oneofs]
    exclusive = [{"required": [a, b]} for keys in groups for i, a in enumerate(keys) for b in keys[i + 1:]]
    if exclusive:
        out["not"] = {"anyOf": exclusive}
    if mi.extension_ranges:
        out["additionalProperties"] = False
        out["patternProperties"] = {r"^\[.+\]$": {}}  # extensions, by "[full.name]"
    return out


def json_schema(cls: type) -> dict[str, Any]:
    """The JSON Schema (2020-12) of the ProtoJSON form of message class ``cls``.

    Args:
        cls: a pbj message class.

    Returns:
        A self-contained schema: ``{"$ref": "#/$defs/<full name>", "$defs": {...}}`` with one
        definition per message class reached (a well-known type with a special form is written
        in place).

    Raises:
        TypeError: ``cls`` is not a pbj message class.
    """
    if not (isinstance(cls, type) and is_message(cls)):
        raise TypeError(f"{cls!r} is not a pbj message class")
    defs: dict[str, Any] = {}

    def ref(t: type) -> dict[str, Any]:
        name = info(t).full_name
        if name not in defs:
            defs[name] = {}  # a recursive message refers to itself while it is written
            defs[name] = message_schema(t, ref)
        return {"$ref": f"#/$defs/{name}"}

    root = ref(cls)
    if info(cls).full_name in WELL_KNOWN_SCHEMAS:
        return {"$schema": "https://json-schema.org/draft/2020-12/schema", **defs[info(cls).full_name]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **root, "$defs": defs}
