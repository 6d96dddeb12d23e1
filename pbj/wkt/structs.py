"""``Struct``, ``Value``, ``ListValue`` <-> ``dict``, plain values, ``list`` (JSON in protobuf)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any as _Any

from pbj.schema import OneOf, info, is_message
from pbj.wkt._common import PKG, attrs_of, check, class_of, make, member_names, sequence_arg

__all__ = ["struct_from_dict", "struct_to_dict", "value_from_python", "value_to_python",
           "list_value_from_list", "list_value_to_list"]


#: How deep plain values may nest (a ``dict`` or ``list`` a level), as ProtoJSON parsers limit JSON.
MAX_NESTING = 100


def value_from_python(x: _Any, *, cls: type | None = None, _path: str = "$", _open: tuple[int, ...] = ()) -> _Any:
    """A ``Value`` of a plain Python value, recursively (as ``json.loads`` gives them).

    ``None`` -> ``null_value``, ``bool`` -> ``bool_value``, ``int``/``float`` ->
    ``number_value`` (a double: integers beyond 2**53 round, as in every JSON
    runtime), ``str`` -> ``string_value``, a mapping with ``str`` keys ->
    ``struct_value``, a ``list``/``tuple`` -> ``list_value``. A ``Value``,
    ``Struct`` or ``ListValue`` message is taken as it is.

    Args:
        cls: the ``google.protobuf.Value`` class to build; its ``Struct`` and
            ``ListValue`` are the types its fields name.

    Raises:
        TypeError: a value (or a mapping key) of another type, naming its path (``$.a[2]``).
        ValueError: an ``int`` too large for a double, a ``dict`` or ``list`` that contains
            itself, or nesting deeper than :data:`MAX_NESTING` levels (each naming its path).
    """
    vcls = class_of(cls, PKG + "Value")
    members = member_names(vcls)
    kind = attrs_of(vcls)["null_value"]
    if is_message(type(x)):
        name = info(type(x)).full_name
        if name == PKG + "Value":
            return x
        if name == PKG + "Struct":
            return vcls(**{kind: OneOf(members["struct_value"], x)})
        if name == PKG + "ListValue":
            return vcls(**{kind: OneOf(members["list_value"], x)})
    if x is None:
        null = next(f for f in info(vcls).all_fields() if f.proto_name == "null_value").type
        return vcls(**{kind: OneOf(members["null_value"], null(0) if isinstance(null, type) else 0)})
    if isinstance(x, bool):
        return vcls(**{kind: OneOf(members["bool_value"], x)})
    if isinstance(x, (int, float)):
        try:
            number = float(x)
        except OverflowError:
            raise ValueError(f"{int(x).bit_length()}-bit int is too large for a double (number_value)"
                             f" - at `{_path}`") from None
        return vcls(**{kind: OneOf(members["number_value"], number)})
    if isinstance(x, str):
        return vcls(**{kind: OneOf(members["string_value"], x)})
    if isinstance(x, (Mapping, list, tuple)):
        _open = _enter(x, _open, _path)
        if isinstance(x, Mapping):
            return vcls(**{kind: OneOf(members["struct_value"], _struct(x, vcls, _path, _open=_open))})
        return vcls(**{kind: OneOf(members["list_value"], _list_value(x, vcls, _path, _open))})
    raise TypeError(f"{type(x).__name__} has no google.protobuf.Value form - at `{_path}`")


def _enter(container: _Any, open_ids: tuple[int, ...], path: str) -> tuple[int, ...]:
    """``open_ids`` (the containers being converted) with ``container``, refusing a cycle or too deep a nesting."""
    if id(container) in open_ids:
        raise ValueError(f"a {type(container).__name__} that contains itself has no google.protobuf.Value form"
                         f" - at `{path}`")
    if len(open_ids) >= MAX_NESTING:
        raise ValueError(f"values nested deeper than {MAX_NESTING} levels - at `{path}`")
    return (*open_ids, id(container))


def _field_type(cls: type, proto_name: str) -> _Any:
    f = next(f for f in info(cls).all_fields() if f.proto_name == proto_name)
    return f.map_value if f.is_map else f.type


def _struct(d: Mapping, vcls: type, path: str, scls: type | None = None, _open: tuple[int, ...] = ()) -> _Any:
    struct_cls: type = scls or _field_type(vcls, "struct_value")
    fields = {}
    for k, v in d.items():
        if not isinstance(k, str):
            raise TypeError(f"a Struct key must be a str, got {type(k).__name__} {k!r} - at `{path}`")
        fields[k] = value_from_python(v, cls=vcls, _path=f"{path}.{k}", _open=_open)
    return make(struct_cls, fields=fields)


def _list_value(items: Iterable, vcls: type, path: str, _open: tuple[int, ...] = ()) -> _Any:
    lcls = _field_type(vcls, "list_value")
    return make(lcls, values=tuple(value_from_python(v, cls=vcls, _path=f"{path}[{i}]", _open=_open)
                                    for i, v in enumerate(items)))


def value_to_python(v: _Any) -> _Any:
    """A ``Value`` as a plain Python value: ``None``, ``bool``, ``float``, ``str``, ``dict`` or ``list``.

    A ``Value`` with no kind set reads as ``None`` (ProtoJSON writes it as ``null``).
    """
    a = check(v, PKG + "Value")
    kind = getattr(v, a["null_value"])
    if kind is None:
        return None
    by_member = {m: p for p, m in member_names(type(v)).items()}
    which = by_member.get(kind.which)
    if which == "null_value":
        return None
    if which == "struct_value":
        return struct_to_dict(kind.value)
    if which == "list_value":
        return list_value_to_list(kind.value)
    return kind.value


def struct_from_dict(d: Mapping[str, _Any], *, cls: type | None = None) -> _Any:
    """A ``Struct`` of a ``dict`` of plain values (see :func:`value_from_python`).

    This is the way to build a ``Struct``: ``Struct(fields={"a": 1})`` needs
    ``Value`` messages as its values.

    Args:
        cls: the ``google.protobuf.Struct`` class to build.

    Raises:
        TypeError: ``d`` is not a mapping, or holds a value or key without a ``Value`` form (with its path).
        ValueError: as :func:`value_from_python` (too large an ``int``, a cycle, too deep a nesting).
    """
    if not isinstance(d, Mapping):
        raise TypeError(f"expected a dict, got {type(d).__name__}")
    scls = class_of(cls, PKG + "Struct")
    vcls = _field_type(scls, "fields")
    return _struct(d, vcls, "$", scls, _open=_enter(d, (), "$"))


def struct_to_dict(s: _Any) -> dict[str, _Any]:
    """A ``Struct`` as a ``dict`` of plain values (see :func:`value_to_python`)."""
    a = check(s, PKG + "Struct")
    return {k: value_to_python(v) for k, v in getattr(s, a["fields"]).items()}


def list_value_from_list(items: Iterable[_Any], *, cls: type | None = None) -> _Any:
    """A ``ListValue`` of plain values (see :func:`value_from_python`).

    Raises:
        TypeError: ``items`` is a ``str``, ``bytes`` or a mapping rather than a sequence
            (use :func:`value_from_python` or :func:`struct_from_dict` for those), or an
            element has no ``Value`` form (with its path).
        ValueError: as :func:`value_from_python` (too large an ``int``, a cycle, too deep a nesting).
    """
    values = sequence_arg(items, "list_value_from_list", "items")
    lcls = class_of(cls, PKG + "ListValue")
    opened = _enter(items, (), "$")
    vcls = _field_type(lcls, "values")
    return make(lcls, values=tuple(value_from_python(v, cls=vcls, _path=f"$[{i}]", _open=opened)
                                    for i, v in enumerate(values)))


def list_value_to_list(lv: _Any) -> list[_Any]:
    """A ``ListValue`` as a ``list`` of plain values (see :func:`value_to_python`)."""
    a = check(lv, PKG + "ListValue")
    return [value_to_python(v) for v in getattr(lv, a["values"])]
