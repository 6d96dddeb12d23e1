"""A message as plain Python data that keeps Python's types: :func:`to_python`, :func:`from_python`.

:func:`pbj.to_dict` gives a message's ProtoJSON value: what ``json.dumps`` needs, so 64-bit
integers are strings, bytes are base64 text and enums are names ("ProtoJSON Format"). A
program that stays in Python usually wants the values themselves; :func:`to_python` gives them:

* 64-bit integers: ``int`` (ProtoJSON: a decimal string);
* ``bytes``: ``bytes`` (ProtoJSON: base64 text);
* an enum: its ``IntEnum`` member, an ``int`` for a number the enum lacks (ProtoJSON: the
  value's name, a number for an unknown one);
* ``float``/``double`` NaN and infinities: ``float`` (ProtoJSON: ``"NaN"``, ``"Infinity"``);
* a message: a ``dict``; a repeated field: a ``list``; a map: a ``dict`` with the typed keys
  (ProtoJSON: string keys);
* a oneof: the set member's name and its value (ProtoJSON: the member's JSON name);
* keys: Python attribute names (ProtoJSON: ``json_name``, lowerCamelCase);
* an unset field: ``None`` with explicit presence, its zero value without (ProtoJSON: left out);
* ``Timestamp``, ``Duration`` and the other well-known types: a ``dict`` of their fields
  (ProtoJSON: RFC 3339 text, ``"1.5s"`` ...);
* extensions: ``"[full.name]"`` keys (as ProtoJSON); unknown fields: left out (as ProtoJSON).

``from_python(cls, to_python(m)) == m`` for every message without unknown fields, and
``from_python`` also takes ``.proto`` names, messages in place of their dicts, tuples for lists,
and leaves out any key (unset). It builds with the class's constructor, so every value is checked
as ``cls(...)`` checks it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pbj.schema import FrozenMap, OneOf, info, is_message
from pbj.schema.constructor import build_unvalidated
from pbj.schema.records import FieldInfo
from pbj.schema.resolve import message_needed

__all__ = ["to_python", "from_python"]

T = TypeVar("T")


def _out(v: Any) -> Any:
    if is_message(v):
        return to_python(v)
    return v


def _field_out(f: FieldInfo, v: Any) -> Any:
    if f.is_map:
        return {k: _out(x) for k, x in v.items()}
    if f.repeated:
        return [_out(x) for x in v]
    return _out(v)


def to_python(obj: Any, /) -> dict[str, Any]:
    """Message ``obj`` as a ``dict`` of Python values (see the module docstring for the form).

    Args:
        obj: a pbj message.

    Returns:
        Attribute name -> value for every field (a set oneof: its member's name -> value;
        extensions present: ``"[full.name]"`` -> value), nested messages as ``dict``\\ s, repeated
        fields as ``list``\\ s, maps as ``dict``\\ s.

    Raises:
        TypeError: ``obj`` is not a pbj message.
    """
    cls = type(obj)
    if not is_message(cls) or isinstance(obj, type):
        raise message_needed(obj, "pbj.to_python")
    mi = info(cls)
    out: dict[str, Any] = {}
    for f in mi.fields:
        out[f.name] = _field_out(f, getattr(obj, f.name))
    for o in mi.oneofs:
        chosen = getattr(obj, o.name)
        if chosen is not None:
            member = next(m for m in o.members if m.name == chosen.which)
            out[member.name] = _field_out(member, chosen.value)
    if mi.extension_ranges and getattr(obj, "_pbj_extensions", ()):
        from pbj.extensions import extensions_of

        for ext, value in extensions_of(obj).items():
            out[f"[{ext.full_name}]"] = [_out(x) for x in value] if ext.repeated else _out(value)
    return out


def _in(t: Any, v: Any, where: str) -> Any:
    if isinstance(t, type) and is_message(t) and isinstance(v, Mapping):
        return from_python(t, v)
    return v


def _field_in(f: FieldInfo, v: Any, where: str) -> Any:
    if v is None:
        return None
    if f.is_map:
        if not isinstance(v, Mapping):
            raise TypeError(f"{where}: a map field takes a dict, not {type(v).__name__}")
        return FrozenMap({k: _in(f.map_value, x, where) for k, x in v.items()})
    if f.repeated:
        if isinstance(v, (str, bytes, Mapping)) or not hasattr(v, "__iter__"):
            raise TypeError(f"{where}: a repeated field takes a list or tuple, not {type(v).__name__}")
        return tuple(_in(f.type, x, where) for x in v)
    return _in(f.type, v, where)


def from_python(cls: type[T], value: Mapping[str, Any], /) -> T:
    """A message of ``cls`` from the Python form :func:`to_python` gives.

    Args:
        cls: a pbj message class.
        value: a mapping of attribute names (or ``.proto`` names, or a oneof member's name) to
            values: nested messages as mappings or messages, repeated fields as lists or tuples,
            maps as mappings, enums as members or numbers, extensions under ``"[full.name]"``
            (of the extensions registered with ``cls``). A key left out leaves its field unset.

    Returns:
        The new message, built (and so checked) by ``cls``'s constructor.

    Raises:
        TypeError: ``cls`` is not a message class, ``value`` is not a mapping, a key is no field
            of ``cls`` (naming class and key), two members of one oneof are given, or a value has
            the wrong type (the constructor's error, naming the field).
        ValueError: a value is out of its field's range (the constructor's error).
    """
    if not (isinstance(cls, type) and is_message(cls)):
        raise TypeError(f"from_python takes a pbj message class, not {cls!r}")
    if not isinstance(value, Mapping):
        raise TypeError(f"from_python({cls.__name__}, ...) takes a mapping, not {type(value).__name__}")
    mi = info(cls)
    by_name: dict[str, tuple[FieldInfo, str | None]] = {}
    for f in mi.fields:
        by_name.setdefault(f.proto_name or f.name, (f, None))
    for o in mi.oneofs:
        for m in o.members:
            by_name.setdefault(m.proto_name or m.name, (m, o.name))
    for f in mi.fields:  # the Python names win over a .proto name equal to one of them
        by_name[f.name] = (f, None)
    for o in mi.oneofs:
        for m in o.members:
            by_name[m.name] = (m, o.name)
    kwargs: dict[str, Any] = {}
    extensions: dict[Any, Any] = {}
    for key, v in value.items():
        where = f"{mi.full_name}.{key}"
        if isinstance(key, str) and key.startswith("[") and key.endswith("]"):
            ext = next((e for e in mi.extensions.values() if e.full_name == key[1:-1]), None)
            if ext is None:
                raise TypeError(f"{mi.full_name} has no extension {key} registered")
            extensions[ext] = [_in(ext.type, x, where) for x in v] if ext.repeated else _in(ext.type, v, where)
            continue
        found = by_name.get(key)
        if found is None:
            raise TypeError(f"{mi.full_name} has no field {key!r}")
        f, oneof_name = found
        if oneof_name is None:
            kwargs[f.name] = _field_in(f, v, where)
        elif v is not None:
            if kwargs.get(oneof_name) is not None:
                raise TypeError(f"{mi.full_name}: {key!r} and {kwargs[oneof_name].which!r} are members of one oneof, "
                                f"{oneof_name!r}; give one")
            kwargs[oneof_name] = OneOf(f.name, _field_in(f, v, where))
    if extensions:
        kwargs["_pbj_extensions"] = extensions
    return build_unvalidated(cls, kwargs)
