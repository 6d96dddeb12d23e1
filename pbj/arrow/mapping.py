"""The mapping of a message class to Arrow: one :class:`~pbj.arrow.columns.Column` per field, built once.

The rules (``docs/arrow.md`` has them as a table, with what each row loses):

* **Columns** are the class's fields and oneofs in declaration order, fields
  named by their ``.proto`` names and oneofs by their attribute names (``import_``
  for a oneof named by a Python keyword); the top-level message is the table
  (one column per field), a sub-message a struct.
* **Scalars** take Arrow's type of the same width and sign: ``int32``,
  ``sint32``, ``sfixed32`` -> ``int32``; the 64-bit ones -> ``int64``;
  ``uint32``, ``fixed32`` -> ``uint32``; ``uint64``, ``fixed64`` ->
  ``uint64``; ``float`` -> ``float32`` (bit-exact); ``double`` ->
  ``float64``; ``bool`` -> ``bool``; ``string`` -> ``string`` (UTF-8);
  ``bytes`` -> ``binary``.
* **Presence** ("Field Presence"): a field with explicit presence (message
  fields, proto3 ``optional``, proto2 ``optional``/``required``, editions
  ``EXPLICIT``) is a nullable Arrow field, null when unset (a proto2 field
  with a declared default is null while unset, not its default); a field with
  implicit presence is non-nullable and holds its value (zero included).
* **Enums**: with ``enums="name"`` (the default) a ``dictionary<int32,
  string>`` of the value's name (a number no member names: its decimal text);
  with ``enums="number"`` its ``int32`` number.
* **Repeated** fields are ``list<item: T not null>``, never null; **maps**
  ``map<key, value not null>``, never null, entries in the map's order.
* **Oneofs**: a nullable struct named after the oneof, null when no member is
  set, holding ``which`` (the set member's name, ``dictionary<int32,
  string>``) and one nullable column per member; a member named ``which``
  makes the name ``_which`` (underscores are added until no member has it).
* **Well-known types** (with ``well_known_types=True``, the default):
  ``Timestamp`` -> ``timestamp[ns, tz=UTC]``, ``Duration`` -> ``duration[ns]``,
  each wrapper (``Int32Value`` ...) -> its value's type, nullable; other
  well-known types (``Any``, ``Struct`` ...) are messages like any other.
* **Recursion**: a message class that contains itself (through any chain of
  fields) is a struct up to ``recursion_depth`` times inside itself (default
  1); at the next level the field holds the sub-message's encoding
  (``binary``, null when unset), so nothing is lost but that level is not
  columns.
* **The top-level message** is always the table's columns (a ``Timestamp``
  table has the columns ``seconds`` and ``nanos``; a message with no fields
  gives a table of no columns, with its rows).
* **A message with no fields** (``google.protobuf.Empty`` ...) is a ``bool``,
  true when set, null when unset: Parquet, DuckDB and Polars have no struct
  without children.

The plan of a class (per option set) is built on first use and kept on a
weak-keyed cache, so a class that goes away takes its plan along.
"""

from __future__ import annotations

import enum
import threading
import weakref
from typing import Any

import attrs
import pyarrow as pa

from pbj.arrow import columns as col
from pbj.schema import FieldInfo, OneofInfo, info, is_message
from pbj.schema.presence import DeclaredDefault
from pbj.schema.resolve import class_needed

__all__ = ["ENUMS_AS", "Options", "arrow_schema", "plan_of", "partial_plan_of", "column_of", "maps_to_struct",
           "WRAPPERS", "DEFAULT_RECURSION_DEPTH"]

#: The values of the ``enums`` option.
ENUMS_AS = ("name", "number")
#: How many times a recursive message is a struct inside itself before its encoding is kept instead.
DEFAULT_RECURSION_DEPTH = 1
#: The wrappers of ``google/protobuf/wrappers.proto``: full name -> the scalar type of their ``value``.
WRAPPERS = {
    "google.protobuf.DoubleValue": "double", "google.protobuf.FloatValue": "float",
    "google.protobuf.Int64Value": "int64", "google.protobuf.UInt64Value": "uint64",
    "google.protobuf.Int32Value": "int32", "google.protobuf.UInt32Value": "uint32",
    "google.protobuf.BoolValue": "bool", "google.protobuf.StringValue": "string",
    "google.protobuf.BytesValue": "bytes",
}
_TIMES = {"google.protobuf.Timestamp": col.Timestamp, "google.protobuf.Duration": col.Duration}


@attrs.frozen
class Options:
    """The mapping's options (see the module docstring).

    Attributes:
        enums: ``"name"`` (dictionary-encoded names) or ``"number"`` (``int32``).
        well_known_types: map Timestamp, Duration and the wrappers to Arrow's types.
        recursion_depth: times a recursive message is a struct inside itself (>= 0).
    """

    enums: str = "name"
    well_known_types: bool = True
    recursion_depth: int = DEFAULT_RECURSION_DEPTH

    def __attrs_post_init__(self) -> None:
        if self.enums not in ENUMS_AS:
            raise ValueError(f"enums must be one of {ENUMS_AS}, got {self.enums!r}")
        if not isinstance(self.recursion_depth, int) or self.recursion_depth < 0:
            raise ValueError(f"recursion_depth must be an int >= 0, got {self.recursion_depth!r}")


#: per class: per option set (or option set and attributes left out), its plan
_plans: weakref.WeakKeyDictionary[type, dict[Any, col.Struct]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def plan_of(cls: type, options: Options) -> col.Struct:
    """The column plan of message class ``cls`` (built once per class and option set).

    Raises:
        TypeError: ``cls`` is not a pbj message class.
        SchemaError: a forward reference of the class cannot be resolved.
    """
    if not (isinstance(cls, type) and is_message(cls)):
        raise class_needed(cls, "pbj.arrow")
    info(cls)
    with _lock:
        per_class = _plans.setdefault(cls, {})
        plan = per_class.get(options)
        if plan is None:
            built = _Builder(options).message(cls, (), nullable=False, top=True)
            assert isinstance(built, col.Struct)  # the top-level message is always a struct
            plan = per_class[options] = built
    return plan


def partial_plan_of(cls: type, options: Options, skip: frozenset[str]) -> col.Struct:
    """The column plan of ``cls`` without the attributes ``skip`` (each column as :func:`plan_of` has it).

    Built once per class, option set and ``skip`` (the narrow tables of
    :mod:`pbj.arrow.split` leave out the wide columns their paths go through).
    """
    if not skip:
        return plan_of(cls, options)
    info(cls)
    with _lock:
        per_class = _plans.setdefault(cls, {})
        key = (options, skip)
        plan = per_class.get(key)
        if plan is None:
            built = _Builder(options).message(cls, (), nullable=False, top=True, skip=skip)
            assert isinstance(built, col.Struct)
            plan = per_class[key] = built
    return plan


def column_of(t: Any, trail: tuple[type, ...], options: Options, *, nullable: bool) -> col.Column:
    """The column of a single value of type ``t`` (a scalar name, an enum or a message class) inside ``trail``."""
    return _Builder(options).single(t, trail, nullable=nullable)


def maps_to_struct(cls: type, trail: tuple[type, ...], options: Options) -> bool:
    """Whether a field of message class ``cls`` inside the classes ``trail`` is a struct of its fields
    (not a well-known type's Arrow type, an encoding past the recursion depth or a message without fields)."""
    return _Builder(options).is_struct(cls, trail)


def arrow_schema(cls: type, *, enums: str = "name", well_known_types: bool = True,
                 recursion_depth: int = DEFAULT_RECURSION_DEPTH) -> pa.Schema:
    """The Arrow schema of the tables :func:`pbj.arrow.to_arrow` makes for message class ``cls``.

    One field per field and oneof of ``cls``, in declaration order, named by
    the ``.proto`` names; the mapping is :mod:`pbj.arrow.mapping`'s (and
    ``docs/arrow.md``'s). The schema's metadata holds ``pbj.message``: the
    class's full name.

    Args:
        cls: a pbj message class (declared or loaded).
        enums: ``"name"``: an enum field is a ``dictionary<int32, string>`` of
            value names; ``"number"``: an ``int32``.
        well_known_types: ``Timestamp`` -> ``timestamp[ns, tz=UTC]``,
            ``Duration`` -> ``duration[ns]``, wrappers -> their value's type
            (``False``: structs, as any message).
        recursion_depth: how many times a message may be a struct inside
            itself; one level deeper its field holds the encoding (``binary``).

    Returns:
        A ``pyarrow.Schema``.

    Raises:
        TypeError: ``cls`` is not a pbj message class.
        ValueError: an option is not one of its values.
        SchemaError: a forward reference of the class cannot be resolved.
    """
    if not (isinstance(cls, type) and is_message(cls)):
        raise class_needed(cls, "pbj.arrow.arrow_schema")
    plan = plan_of(cls, Options(enums, well_known_types, recursion_depth))
    return pa.schema(plan.fields, metadata={"pbj.message": info(cls).full_name})


class _Builder:
    """Builds the column tree of a class, following the rules of the module docstring."""

    def __init__(self, options: Options) -> None:
        self.options = options

    def is_struct(self, cls: type, trail: tuple[type, ...]) -> bool:
        """Whether a field of message class ``cls`` (inside the classes ``trail``) is a struct of its fields."""
        mi = info(cls)
        if self.options.well_known_types and self._well_known(cls, mi.full_name, True) is not None:
            return False
        if trail.count(cls) > self.options.recursion_depth:
            return False
        return bool(mi.fields or mi.oneofs)

    def message(self, cls: type, trail: tuple[type, ...], *, nullable: bool, top: bool = False,
                skip: frozenset[str] = frozenset()) -> col.Column:
        """The column of a message field (``top``: the table's own message, always a struct; ``skip``:
        attributes left out, for the narrow tables of :mod:`pbj.arrow.split`)."""
        mi = info(cls)
        opts = self.options
        if opts.well_known_types and not top:
            column = self._well_known(cls, mi.full_name, nullable)
            if column is not None:
                return column
        if trail.count(cls) > opts.recursion_depth:
            return col.Encoded(cls, nullable)
        trail = (*trail, cls)
        by_attr: dict[str, FieldInfo | OneofInfo] = {f.name: f for f in mi.fields}
        by_attr.update({o.name: o for o in mi.oneofs})
        aliases = {a.name: a.alias for a in attrs.fields(cls)}
        names: list[str] = []
        getters: list[Any] = []
        alias_list: list[str] = []
        attr_list: list[str] = []
        columns: list[col.Column] = []
        for attr in mi.attr_order:
            item = by_attr.get(attr)
            if item is None or attr in skip:
                continue
            if isinstance(item, OneofInfo):
                names.append(item.name)
                columns.append(self.oneof(item, trail))
            else:
                names.append(item.proto_name or item.name)
                columns.append(self.field(item, trail))
            getters.append(_getter(cls, attr))
            alias_list.append(aliases[attr])
            attr_list.append(attr)
        if not columns and not top:
            return col.Present(cls, nullable)
        struct = col.Struct(cls, names, getters, alias_list, columns, nullable)
        struct.attrs = attr_list
        return struct

    def _well_known(self, cls: type, full_name: str, nullable: bool) -> col.Column | None:
        by_proto = {f.proto_name: f.name for f in info(cls).fields}
        if full_name in _TIMES and set(by_proto) == {"seconds", "nanos"}:
            return _TIMES[full_name](cls, by_proto["seconds"], by_proto["nanos"], nullable)
        kind = WRAPPERS.get(full_name)
        if kind is not None and set(by_proto) == {"value"}:
            return col.Wrapper(cls, by_proto["value"], self.single(kind, (), nullable=nullable), nullable)
        return None

    def field(self, f: FieldInfo, trail: tuple[type, ...]) -> col.Column:
        if f.is_map:
            key = self.single(f.map_key, trail, nullable=False)
            return col.Map(key, self.single(f.map_value, trail, nullable=False))
        if f.repeated:
            return col.List(self.single(f.type, trail, nullable=False))
        return self.single(f.type, trail, nullable=f.optional or f.kind == "message")

    def single(self, t: Any, trail: tuple[type, ...], *, nullable: bool) -> col.Column:
        if isinstance(t, str):
            return col.Float32(nullable) if t == "float" else col.Scalar(t, nullable)
        if isinstance(t, type) and issubclass(t, enum.IntEnum):
            return col.Enum(t, self.options.enums == "name", nullable)
        return self.message(t, trail, nullable=nullable)

    def oneof(self, o: OneofInfo, trail: tuple[type, ...]) -> col.Oneof:
        names = [m.proto_name or m.name for m in o.members]
        which = "which"
        while which in names:
            which = "_" + which
        return col.Oneof(which, [m.name for m in o.members], names,
                         [self.single(m.type, trail, nullable=True) for m in o.members])


def _getter(cls: type, attr: str) -> Any:
    """The reader of attribute ``attr``'s stored state (``None`` for an unset field with a declared default)."""
    d = cls.__dict__.get(attr)
    if isinstance(d, DeclaredDefault):
        return d.raw
    import operator

    return operator.attrgetter(attr)
