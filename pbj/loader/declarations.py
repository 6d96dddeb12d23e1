"""The declarations of a load's classes as plain data, and the classes made from them.

A class of a load is made in two steps. The first reads the set's descriptors and the
editions features that apply to them (:func:`pbj.loader.messages.derive_message`,
:func:`pbj.loader.enums.derive_enum`) and writes what the class declares as a *record*: a
tuple of strings, numbers, booleans and tuples, with the message and enum types of its fields
named by full name. The second, here, makes the class from the record: a record just
derived, with the same ``pbj.field``, ``pbj.map_field``, ``pbj.oneof`` and ``pbj.message``
calls (and their checks) as a class declared in Python (:func:`build_message_from`); a record
whose class was built before, directly (:func:`build_checked_from`: what those calls derive,
derived by the same rules, without a declared class or the checks it passed). Records are
what the schema cache keeps (:mod:`pbj.loader.cache`; only those whose class was built), so a
process that reads them skips the first step, decoding the set included, and the checks, and
makes classes that are the same as those of a process that derived them.

A message record::

    ("message", qualname, package, file name, syntax, json rules, message_set,
     extension ranges ((start, end), ...), reserved names (...), items (...),
     nested ((attribute, full name), ...), attribute names taken (...))

and its items, in declaration order::

    ("field", attr, number, type, repeated, packed, optional, group, required, name, json_name,
     default text, utf8)
    ("map", attr, number, key type, value type, json_name, name, utf8)
    ("oneof", attr, ((attr, number, type, name, json_name, group, default text, utf8), ...))

where a type is a scalar's name (``"int32"``) or ``("enum", full name)`` or ``("message",
full name)``; ``packed``, ``json_name``, the default's text (protoc's ``default_value``) and
``utf8`` may be ``None``. An enum record: ``("enum", qualname, package, closed, ((name,
number), ...))``. :func:`valid` checks a record's shape before it is used, and that its
attribute names are identifiers that are not keywords or pbj's own and its field numbers are
in range (they reach generated code).

This module imports neither :mod:`pbj.descriptor` nor the features' resolver: a process that
finds its records in the cache never loads them.
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Iterator, Mapping
from keyword import iskeyword
from typing import Any

from pbj.errors import SchemaError
from pbj.loader.defaults import parse_default
from pbj.loader.names import enum_member_names
from pbj.loader.pickling import (
    make_enum_reduce,
    message_copy,
    message_deepcopy,
    message_reduce,
    registry_module,
)
from pbj.scalars import SCALARS
from pbj.schema import FrozenMap, OneOf, field, map_field, message, oneof
from pbj.schema.containers import EMPTY_MAP
from pbj.schema.declare import declared_default
from pbj.schema.field_rules import close_plain_enum
from pbj.schema.make_class import build_class
from pbj.schema.records import FieldInfo, OneofInfo, enum_default, json_name_of
from pbj.wire import MAX_FIELD_NUMBER

__all__ = ["build_checked_from", "build_enum_from", "build_message_from", "valid", "well_known"]


def well_known() -> Mapping[str, Any]:
    """Full name -> :mod:`pbj.wellknown` class or enum, for the types loads reuse.

    :mod:`pbj.wellknown` is imported (its classes declared) when a name of package
    ``google.protobuf`` is first looked up, not by the load: a program that never
    reaches a well-known type does not pay for them.
    """
    return _KNOWN


class _WellKnown(Mapping):
    """:data:`pbj.wellknown.WELL_KNOWN`, imported on the first lookup of a ``google.protobuf`` name
    (every name it holds is of that package); other names are answered without it."""

    __slots__ = ()

    @staticmethod
    def _table() -> dict[str, Any]:
        # (looked up under FIRST_USE while a class is built: importing pbj.wellknown never takes that lock)
        from pbj.wellknown import WELL_KNOWN
        return WELL_KNOWN

    def get(self, full_name: str, default: Any = None) -> Any:
        if not full_name.startswith(_WELL_KNOWN_PACKAGE):
            return default
        return self._table().get(full_name, default)

    def __getitem__(self, full_name: str) -> Any:
        found = self.get(full_name)
        if found is None:
            raise KeyError(full_name)
        return found

    def __contains__(self, full_name: object) -> bool:
        return isinstance(full_name, str) and self.get(full_name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


_WELL_KNOWN_PACKAGE = "google.protobuf."
_KNOWN = _WellKnown()


class _Nested:
    """A nested message or enum as an attribute of its outer class (``Outer.Inner``), built on first read.

    The first read builds the class (through the load, so every thread gets the same one) and
    puts it on the outer class in place of this stand-in.
    """

    __slots__ = ("full_name", "name", "schema")

    def __init__(self, schema: Any, full_name: str, name: str) -> None:
        self.schema = schema
        self.full_name = full_name
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        cls = self.schema.get(self.full_name)
        if owner is not None:
            type.__setattr__(owner, self.name, cls)
        return cls


def field_type(schema: Any, kind: Any) -> Any:
    """The pbj type of a record's field type: a scalar's name, the enum class (built now), or the
    message class (a :mod:`pbj.wellknown` one) or a reference to it resolved on first use."""
    if isinstance(kind, str):
        return kind
    what, target = kind
    if what == "enum":
        return schema.enum(target)
    known = schema.known.get(target)
    if known is not None:
        return known
    find = schema.message

    def ref() -> Any:
        return find(target)
    ref.__qualname__ = ref.__name__ = target  # errors name the message, not a <lambda>
    return ref


def _annotation(ftype: Any, repeated: bool, optional: bool) -> Any:
    if repeated:
        return tuple
    if isinstance(ftype, str):
        base: Any = SCALARS[ftype].py_type
    elif isinstance(ftype, type):
        base = ftype
    else:
        return typing.Any  # a message reference, resolved on first use
    return base | None if optional else base


def _field(schema: Any, full: str, item: tuple) -> tuple[Any, Any]:
    _, _, number, kind, repeated, packed, optional, group, required, name, json_name, text, utf8 = item
    ftype = field_type(schema, kind)
    is_message = not isinstance(kind, str) and kind[0] == "message"
    default = None if text is None else parse_default(text, ftype, full, name)
    kwargs: dict[str, Any] = {"name": name, "json_name": json_name}
    if default is not None:
        kwargs["default"] = default
    spec = field(number, ftype, repeated=repeated, packed=packed, optional=optional, group=group,
                 required=required, **kwargs)
    if utf8 is not None:  # proto2 and utf8_validation = NONE strings keep any bytes
        spec.utf8 = utf8
    # a field with a declared default reads it when unset: its attribute is never None
    return _annotation(ftype, repeated, (optional or required or is_message) and default is None), spec


def _oneof(schema: Any, full: str, members: tuple) -> Any:
    made: dict[str, tuple] = {}
    for attr, number, kind, name, json_name, group, text, utf8 in members:
        ftype = field_type(schema, kind)
        opts: dict[str, Any] = {"name": name}
        if json_name:
            opts["json_name"] = json_name
        if group:
            opts["group"] = True
        if text is not None:
            opts["default"] = parse_default(text, ftype, full, name)
        if utf8 is not None:
            opts["utf8"] = utf8
        made[attr] = (number, ftype, opts)
    return oneof(**made)


def build_message_from(schema: Any, full: str, record: tuple) -> type:
    """The message class of ``record`` (a valid message record of ``full``) in the load ``schema``
    (a :class:`~pbj.loader.schema.LoadedSchema`).

    Raises:
        SchemaError: a declaration ``@pbj.message`` refuses, or a default that does not fit its field.
    """
    (_, qualname, package, file_name, syntax, json_rules, message_set, ranges, reserved, items, nested,
     taken) = record
    anns: dict[str, Any] = {}
    body: dict[str, Any] = {}
    for item in items:
        kind, attr = item[0], item[1]
        if kind == "field":
            anns[attr], body[attr] = _field(schema, full, item)
        elif kind == "map":
            _, _, number, key, value, json_name, name, utf8 = item
            spec = map_field(number, field_type(schema, key), field_type(schema, value), json_name=json_name,
                             name=name)
            spec.utf8 = utf8  # about its string key or value
            anns[attr], body[attr] = FrozenMap, spec
        else:
            anns[attr], body[attr] = OneOf | None, _oneof(schema, full, item[2])
    body["__pbj_json_rules__"] = json_rules
    # Nested classes as class attributes (ns.pkg.Outer.Inner, and pickling of classes), built when first read
    for name, inner in nested:
        if inner in schema:
            body[name] = _Nested(schema, inner, name)
            if iskeyword(name) and name + "_" not in body:  # Outer.class_, as pbj stubs declares it
                body[name + "_"] = _Nested(schema, inner, name + "_")
    ns = {"__annotations__": anns, **body, "__module__": registry_module(package),
          "__doc__": f"The message {full} (loaded from {file_name}).", "__reduce__": message_reduce,
          "__copy__": message_copy, "__deepcopy__": message_deepcopy}
    raw = type(qualname.rsplit(".", 1)[-1], (), ns)
    cls = message(raw, full_name=full, syntax=syntax, message_set=message_set,
                  extensions=[range(start, end) for start, end in ranges] or None)
    cls.__qualname__ = qualname
    # Attributes of the class message() built from a plain type(): the checkers do not see them.
    cls.__pbj_fields_taken__ = frozenset(taken)  # type: ignore[attr-defined]
    cls.__pbj_info__.reserved_names = frozenset(reserved)  # type: ignore[attr-defined]
    return cls


def build_checked_from(schema: Any, full: str, record: tuple) -> type:
    """The message class of ``record``, a record whose class was built before (it is in the schema
    cache, which keeps only those): the class :func:`build_message_from` makes, made without
    the declaration step (``pbj.field`` markers, a declared class, ``@pbj.message``'s checks).

    What ``@pbj.message`` derives from a loaded declaration is derived here directly, by the
    same rules (:mod:`pbj.schema.declare`, the rules without an edition of
    :class:`~pbj.schema.field_rules.FieldRules`: a loaded class's features are resolved into
    its record); the checks are not run again, as they passed when the record was made
    (``tests/test_loader_cache.py`` compares every class of several schemas made both ways).

    Raises:
        SchemaError: a default that does not fit its field (as :func:`build_message_from`).
    """
    (_, qualname, package, file_name, syntax, json_rules, message_set, ranges, reserved, items, nested,
     taken) = record
    proto2 = syntax == "proto2"
    name = qualname.rsplit(".", 1)[-1]
    fields_: list[FieldInfo] = []
    oneofs: list[OneofInfo] = []
    order: list[str] = []
    defaults: dict[str, Any] = {}
    anns: dict[str, Any] = {}
    for item in items:
        kind, attr = item[0], item[1]
        order.append(attr)
        if kind == "field":
            fi, anns[attr], defaults[attr] = _field_info(schema, full, name, item, proto2)
            fields_.append(fi)
        elif kind == "map":
            _, _, number, key, value, json_name, pname, utf8 = item
            pname = pname or attr
            fi = FieldInfo(attr, number, "map", proto_name=pname, json_name=json_name or json_name_of(pname),
                           repeated=True, map_key=key, map_value=field_type(schema, value))
            _apply_rules(fi, "string" in (key, value), proto2, utf8, fi.map_value)
            fields_.append(fi)
            anns[attr], defaults[attr] = FrozenMap, EMPTY_MAP
        else:
            members = []
            for mname, number, mkind, given, json_name, group, text, utf8 in item[2]:
                ftype = field_type(schema, mkind)
                pname = given or mname
                fi = FieldInfo(mname, number, ftype, proto_name=pname, json_name=json_name or json_name_of(pname),
                               optional=True, oneof=attr, group=group,
                               default=None if text is None else parse_default(text, ftype, full, given))
                _apply_rules(fi, ftype == "string", proto2, utf8, ftype)
                members.append(fi)
            oneofs.append(OneofInfo(attr, members))
            anns[attr], defaults[attr] = OneOf | None, None
    fields_.sort(key=_number)
    ns: dict[str, Any] = {"__pbj_json_rules__": json_rules}
    for nested_name, inner in nested:
        if inner in schema:
            ns[nested_name] = _Nested(schema, inner, nested_name)
            if iskeyword(nested_name) and nested_name + "_" not in anns:  # Outer.class_, as pbj stubs declares it
                ns[nested_name + "_"] = _Nested(schema, inner, nested_name + "_")
    ns.update(__module__=registry_module(package), __doc__=f"The message {full} (loaded from {file_name}).",
              __reduce__=message_reduce, __copy__=message_copy, __deepcopy__=message_deepcopy)
    if ranges:
        extension_ranges = tuple(sorted(ranges))
    else:
        extension_ranges = ((4, MAX_FIELD_NUMBER + 1),) if message_set else ()
    cls = build_class(name, name, ns, fields_, oneofs, order, defaults, anns, full_name=full,
                      syntax=syntax or "proto3", message_set=message_set, map_entry=False,
                      extension_ranges=extension_ranges)
    cls.__qualname__ = qualname
    cls.__pbj_fields_taken__ = frozenset(taken)  # type: ignore[attr-defined]
    cls.__pbj_info__.reserved_names = frozenset(reserved)  # type: ignore[attr-defined]
    return cls


def _number(fi: FieldInfo) -> int:
    return fi.number


def _apply_rules(fi: FieldInfo, strings: bool, proto2: bool, utf8: bool | None, value_type: Any) -> None:
    """What :class:`~pbj.schema.field_rules.FieldRules` sets on a loaded field (no edition: its
    features are in the record): UTF-8 checks, proto2's packing and closed enums."""
    fi.utf8 = utf8 if utf8 is not None and strings else not (strings and proto2)
    if proto2:
        close_plain_enum(value_type)


def _field_info(schema: Any, full: str, cls_name: str, item: tuple, proto2: bool) -> tuple[FieldInfo, Any, Any]:
    """A record's regular field as ``@pbj.message`` makes it: ``(FieldInfo, annotation, default)``."""
    _, attr, number, kind, repeated, packed, optional, group, required, given, json_name, text, utf8 = item
    ftype = field_type(schema, kind)
    scalar = isinstance(kind, str)
    is_msg = not scalar and kind[0] == "message"
    packable = SCALARS[kind].packable if scalar else not is_msg
    pname = given or attr
    fi = FieldInfo(attr, number, ftype, proto_name=pname, json_name=json_name or json_name_of(pname),
                   repeated=repeated, packed=repeated and packable and packed is not False,
                   optional=optional or (is_msg and not repeated) or required, group=group, required=required)
    if proto2 and packed is None:
        fi.packed = False  # proto2 packs only with [packed = true]
    _apply_rules(fi, kind == "string", proto2, utf8, ftype)
    default = None if text is None else parse_default(text, ftype, full, given)
    if default is not None:
        fi.default = declared_default(cls_name, fi, default, is_msg)
    ann = _annotation(ftype, repeated, (optional or required or is_msg) and default is None)
    if repeated:
        return fi, ann, ()
    if fi.optional:
        return fi, ann, None
    return fi, ann, (SCALARS[kind].zero if scalar else enum_default(ftype))


def build_enum_from(full: str, record: tuple) -> type:
    """The ``enum.IntEnum`` of ``record`` (a valid enum record of ``full``).

    A closed enum's class has ``__pbj_closed__ = True``: the parser keeps a
    number that is not a member as an unknown field, as Google's runtimes do.
    Members pickle by the enum's full name. A value whose schema name cannot be
    a member name (``value``, ``_X``: see :func:`~pbj.loader.names.enum_member_names`)
    is listed in the class's ``__pbj_proto_names__`` (member name -> schema
    name), which ProtoJSON and the text format write and read instead.

    Raises:
        SchemaError: the values cannot make an ``IntEnum``.
    """
    _, qualname, package, closed, schema_pairs = record
    pairs = enum_member_names(list(schema_pairs))
    try:
        # The checkers follow the functional API only with a literal name: this one is the schema's.
        cls: type[enum.IntEnum] = enum.IntEnum(  # type: ignore[misc]
            qualname.rsplit(".", 1)[-1], pairs, module=registry_module(package), qualname=qualname)
    except (ValueError, TypeError) as exc:
        raise SchemaError(f"cannot build enum: {exc}", cls_name=full) from None
    # Pickling by full name, and closedness, are set on the class built above (not declared on IntEnum).
    cls.__reduce_ex__ = make_enum_reduce(full)  # type: ignore[method-assign]
    cls.__doc__ = f"The enum {full}."
    renamed = {py: name for (py, _), (name, _) in zip(pairs, schema_pairs, strict=True) if py != name}
    if renamed:  # ProtoJSON and the text format write and read the schema's names
        cls.__pbj_proto_names__ = renamed  # type: ignore[attr-defined]
    # the parser keeps a closed enum's non-member numbers as unknown fields; an open one is
    # marked too, so a proto2 message using it keeps it open (see pbj.schema.field_rules)
    cls.__pbj_closed__ = closed  # type: ignore[attr-defined]
    return cls


# The shape of records, checked before one read from the cache is used.

def _strs(value: Any) -> bool:
    return type(value) is tuple and all(type(v) is str for v in value)


_REFS = ("enum", "message")
_OPT_BOOLS = (True, False, None)


def _kind_ok(kind: Any) -> bool:
    """A scalar's name, or ``("enum" | "message", full name)``."""
    if type(kind) is str:
        return kind in SCALARS
    return type(kind) is tuple and len(kind) == 2 and kind[0] in _REFS and type(kind[1]) is str


def _attr_ok(attr: Any) -> bool:
    """An attribute name the loader could have made (``pbj.loader.names``): an identifier, no
    keyword, not pbj's own: a class built from a record in the cache skips ``@pbj.message``'s
    checks, and its names go into generated code."""
    return (type(attr) is str and attr.isidentifier() and not iskeyword(attr) and not attr.startswith("_pbj")
            and not (attr[:2] == "__" and attr[-2:] == "__"))


def _number_ok(number: Any) -> bool:
    return type(number) is int and (0 < number < 19000 or 19999 < number <= MAX_FIELD_NUMBER)


def _item_ok(item: Any) -> bool:
    """Whether ``item`` has the shape of a record's item (see the module docstring)."""
    if type(item) is not tuple or not item or not _attr_ok(item[1]):
        return False
    kind = item[0]
    if kind == "field" and len(item) == 13:
        _, _, number, ftype, repeated, packed, optional, group, required, name, json_name, text, utf8 = item
        # (``x in (True, False)`` holds for 1 and 0 as well: the ``is`` checks keep them out)
        return (_number_ok(number) and _kind_ok(ftype) and type(name) is str
                and (repeated is True or repeated is False) and packed in _OPT_BOOLS and type(packed) is not int
                and (optional is True or optional is False) and (group is True or group is False)
                and (required is True or required is False) and (json_name is None or type(json_name) is str)
                and (text is None or type(text) is str) and utf8 in _OPT_BOOLS and type(utf8) is not int)
    if kind == "map" and len(item) == 8:
        _, _, number, key, value, json_name, name, utf8 = item
        return (_number_ok(number) and type(key) is str and key in SCALARS and _kind_ok(value)
                and (json_name is None or type(json_name) is str) and type(name) is str
                and (utf8 is True or utf8 is False))
    if kind != "oneof" or len(item) != 3 or type(item[2]) is not tuple:
        return False
    for m in item[2]:
        if type(m) is not tuple or len(m) != 8:
            return False
        mname, number, ftype, name, json_name, group, text, utf8 = m
        if not (_attr_ok(mname) and _number_ok(number) and _kind_ok(ftype) and type(name) is str
                and (json_name is None or type(json_name) is str) and (group is True or group is False)
                and (text is None or type(text) is str) and utf8 in _OPT_BOOLS and type(utf8) is not int):
            return False
    return True


def valid(full: str, record: Any) -> bool:
    """Whether ``record`` has the shape of a message or enum record (the module's docstring) of the
    type ``full``: what the cache gave is used only then."""
    if type(record) is not tuple or not record:
        return False
    if record[0] == "enum":
        if tuple(map(type, record)) != _ENUM or not record[4] or not full.endswith(record[1]):
            return False
        for pair in record[4]:
            if type(pair) is not tuple or tuple(map(type, pair)) != _PAIR or not pair[0].isidentifier():
                return False
        return True
    if tuple(map(type, record)) != _MESSAGE:
        return False
    qualname, syntax, json_rules, ranges, reserved, items, nested, taken = (record[1], *record[4:6], *record[7:])
    if (not full.endswith(qualname) or syntax not in _SYNTAXES or json_rules not in _JSON_RULES
            or not _strs(reserved) or not _strs(taken)):
        return False
    for r in ranges:
        if type(r) is not tuple or tuple(map(type, r)) != _RANGE:
            return False
    for n in nested:
        if type(n) is not tuple or tuple(map(type, n)) != _NESTED:
            return False
    for item in items:
        if not _item_ok(item):
            return False
    return True


_ENUM = (str, str, str, bool, tuple)  # the types of an enum record, position by position
_PAIR = (str, int)
_MESSAGE = (str, str, str, str, str, str, bool, tuple, tuple, tuple, tuple, tuple)
_RANGE = (int, int)
_NESTED = (str, str)
_SYNTAXES = frozenset({"proto2", "proto3", "editions"})
_JSON_RULES = frozenset({"skip", "legacy", "allow"})
