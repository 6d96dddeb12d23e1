"""``decode_to_arrow`` on the native engine: encoded messages to Arrow columns with no message objects.

The column tree :mod:`pbj.arrow.mapping` builds for a class is flattened once
per class and option set into node records the C engine
(``pbj/_native/arrow.c``) turns into its own plan: each node that is a message
on the wire names its class's native codec plan (``Codec.native``, what the
engine's one wire walker reads, ``pbj/_native/walk.h``) and the column of each
of the plan's fields. A call then walks every payload with the walker, whose
column sink appends each value straight to its column's buffers; pyarrow
imports the result as one record batch through the Arrow C Data Interface
(the ``__arrow_c_array__`` protocol), with the schema
:func:`pbj.arrow.arrow_schema` gives. The table is the one
``to_arrow([decode(cls, p) for p in payloads])`` gives, value for value.

What runs in Python instead (``decode`` + ``to_arrow``, the same table or
the same error): a class this module does not flatten (:func:`explain` says
why: a message class with extension ranges or the message-set wire format, a
class that can reach a proto2 ``required`` field, a group past the recursion
depth, a Timestamp or Duration whose fields are not int64/int32), the Python engine, and every call whose input
the C walker declines (see ``arrow.c``: any decoding error, a singular
sub-message occurring twice, a map entry kept as an unknown field after its
message value was read, a repeated key ...). Messages past the recursion
depth (their encoding is the column's value) are decoded and re-encoded by
pbj, one message object each, unless the span is in the form pbj writes
already (fields in ascending order, each value as pbj writes it, no unknown
field, map or group), which the C side checks (a sink of the same walker) and
copies.

Node records (``KINDS`` order, checked at import with the engine's layout; the
C side checks every record)::

    (kind, nullable, type code, default bits, default bytes, rest)

``rest`` per kind: scalar ``()``; enum ``(as_names, closed, numbers, names)``;
struct ``(children, entries, plan, entry_of)``; oneof ``(members, names)``;
list ``(item,)``; map ``(key, value)``; time ``(is_duration, entries, plan,
entry_of)``; wrapper ``(entries, plan, entry_of)``; encoded ``(reencode,
plan)``; present ``(plan,)``. ``plan`` is the class's native codec plan;
``entry_of[i]`` is the entry of the plan's field ``i``. An entry is ``(child
position, member position or -1, label, type code, group, field number)``,
checked against the plan's field.
"""

from __future__ import annotations

import struct
import threading
import weakref
from typing import Any

import pyarrow as pa

from pbj import _native, scalars
from pbj.arrow import columns as col
from pbj.arrow.lost import note_counted
from pbj.arrow.mapping import Options, plan_of
from pbj.codec import plan as P
from pbj.codec.compiler import codec_of
from pbj.schema import enum_default, info

__all__ = ["KINDS", "decode_table", "explain", "NativePlan"]

#: The node kinds, in the order of arrow.c's ``K_*`` codes (checked by the engine at import).
KINDS = _native.ARROW_KINDS
(_SCALAR, _ENUM, _STRUCT, _ONEOF, _LIST, _MAP, _TIME, _WRAPPER, _ENCODED, _PRESENT) = range(len(KINDS))
_ZERO = object()  # "the type's zero value" (a list item, a map key: never a default row)
_W4 = {"int32", "sint32", "sfixed32", "uint32", "fixed32", "enum"}


class Unsupported(Exception):
    """A class (or one it reaches) that the native walker does not flatten; the text says why."""


class NativePlan:
    """The native form of a class's column plan: the engine's capsule and the table's schema."""

    __slots__ = ("capsule", "names", "schema")

    def __init__(self, capsule: Any, schema: pa.Schema, names: dict[int, str]) -> None:
        self.capsule = capsule
        self.schema = schema
        #: node -> the full name of its message type, for each node that is a message on the wire
        self.names = names


class _Exported:
    """An ``arrow_array`` capsule from the engine, with its schema: the Arrow PyCapsule protocol."""

    __slots__ = ("array", "schema")

    def __init__(self, schema: pa.Schema, array: Any) -> None:
        self.schema = schema
        self.array = array

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]:
        return self.schema.__arrow_c_schema__(), self.array


_plans: weakref.WeakKeyDictionary[type, dict[Options, NativePlan | str]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _engine() -> Any:
    """The native engine's module when it is the engine in use, else ``None``."""
    if _native._engine is None or _native.engine() != "native":
        return None
    return _native._engine


def plan_for(cls: type, options: Options) -> NativePlan | str:
    """The native plan of ``cls`` with ``options``, or the reason there is none (built once, kept).

    The engine is asked first, on every call, so :func:`explain` says what runs after ``pbj.use_engine``.
    """
    engine = _engine()
    if engine is None:
        return "the native engine is not in use"
    with _lock:
        found = _plans.get(cls, {}).get(options)
    if found is not None:
        return found
    built: NativePlan | str
    try:
        root = plan_of(cls, options)
        from pbj.required import reaches_required

        if reaches_required(cls):
            raise Unsupported(f"{info(cls).full_name} can reach a required field (the decoder checks them)")
        flat = _Flattener()
        flat.struct(root)
        schema = pa.schema(root.fields, metadata={"pbj.message": info(cls).full_name})
        try:
            capsule = engine.arrow_plan(tuple(flat.nodes))
        except ValueError as exc:  # a shape the C side does not take: Python runs it (explain says so)
            raise Unsupported(f"the engine refused the plan ({exc})") from None
        built = NativePlan(capsule, schema, flat.names)
    except Unsupported as exc:
        built = str(exc)
    with _lock:
        return _plans.setdefault(cls, {}).setdefault(options, built)


def explain(cls: type, *, enums: str = "name", well_known_types: bool = True,
            recursion_depth: int | None = None) -> str:
    """How :func:`pbj.arrow.decode_to_arrow` turns payloads of ``cls`` into a table with these options.

    Returns:
        ``"native"`` (the C walker, no message objects), or ``"python: "``
        and the reason it decodes messages and runs ``to_arrow`` instead.

    Raises:
        TypeError: ``cls`` is not a pbj message class.
        ValueError: an option is not one of its values.
    """
    from pbj.arrow.mapping import DEFAULT_RECURSION_DEPTH

    depth = DEFAULT_RECURSION_DEPTH if recursion_depth is None else recursion_depth
    found = plan_for(cls, Options(enums, well_known_types, depth))
    return "native" if isinstance(found, NativePlan) else f"python: {found}"


def decode_table(cls: type, options: Options, payloads: Any, max_depth: int) -> pa.Table | None:
    """The table of ``payloads`` from the native walker, or ``None``: decode and run ``to_arrow`` instead.

    ``None`` for a class without a native plan, payloads that are not all
    bytes-like, and any input the walker declines (an error among them).
    """
    found = plan_for(cls, options)
    engine = _engine()
    if not isinstance(found, NativePlan) or engine is None:
        return None
    data = tuple(payloads)
    if not all(p.__class__ is bytes for p in data):
        if not all(isinstance(p, bytes | bytearray | memoryview) for p in data):
            return None
        data = tuple(bytes(p) for p in data)
    exported = engine.arrow_decode(found.capsule, data, max_depth)
    if exported is None:
        return None
    capsule, address, lost = exported
    for node, fields, size in lost:  # unknown fields met by the walk (counted inside lost.counting only)
        note_counted(found.names[node], fields, size)
    importer = getattr(pa.RecordBatch, "_import_from_c", None)
    if importer is not None:  # with the Schema object itself: no export and import of the schema per call
        batch = importer(address, found.schema)
    else:  # pragma: no cover - a pyarrow without it
        batch = pa.record_batch(_Exported(found.schema, capsule))
    del capsule  # moved out by the import (or released here on an error)
    return pa.Table.from_batches([batch])


def _reencoder(cls: type) -> Any:
    """``(data, depth) -> bytes | None``: pbj's encoding of the ``cls`` message ``data`` encodes (None: an error)."""
    from pbj import api  # read at each call (pbj.api.decode as it is then: what a test that counts decodes sees)
    from pbj.errors import DecodeError

    def reencode(data: bytes, depth: int) -> bytes | None:
        try:
            return api.encode(api.decode(cls, data, max_depth=depth, allow_partial=True), allow_partial=True)
        except DecodeError:
            return None

    return reencode


def _bits(code: int, value: Any) -> tuple[int, bytes]:
    """The storage of ``value`` of scalar type ``code`` in a column (default bits, default bytes)."""
    name = scalars.BY_CODE[code].name if code < P.MESSAGE else "message"
    if value is _ZERO:
        value = "" if name == "string" else b"" if name == "bytes" else 0
    if name == "string":
        return 0, str(value).encode("utf-8")
    if name == "bytes":
        return 0, bytes(value)
    if name == "float":
        return struct.unpack("<I", struct.pack("<f", value))[0], b""
    if name == "double":
        return struct.unpack("<Q", struct.pack("<d", value))[0], b""
    mask = 0xFFFFFFFF if name in _W4 else 0xFFFFFFFFFFFFFFFF
    return int(value) & mask, b""


class _Flattener:
    """The node records of one column tree (node 0: the table); children always come after their parent."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.names: dict[int, str] = {}  # node -> its message's full name (what lost counts per type)

    def message(self, node: int, cls: type) -> int:
        """``node``, a message on the wire of class ``cls`` (named in the unknown-fields counts)."""
        self.names[node] = info(cls).full_name
        return node

    def plan(self, cls: type) -> Any:
        """The native codec plan of ``cls`` (what the engine's walker reads), compiled if need be."""
        capsule = codec_of(cls).native
        if capsule is None:
            raise Unsupported(f"{info(cls).full_name}: the native engine declines its codec plan")
        return capsule

    def reserve(self) -> int:
        self.nodes.append(None)
        return len(self.nodes) - 1

    def add(self, record: tuple) -> int:
        self.nodes.append(record)
        return len(self.nodes) - 1

    def struct(self, column: col.Struct) -> int:
        me = self.message(self.reserve(), column.cls)
        mp = codec_of(column.cls).plan
        if mp.extension_ranges or mp.message_set:
            raise Unsupported(f"{mp.full_name} has extension ranges or the message-set wire format")
        fields = {f.name: f for f in mp.fields if f.oneof < 0}
        oneofs = {o.name: o for o in mp.oneofs}
        empty = column.empty()
        if len(column.attrs) != len(column.columns):
            raise Unsupported(f"{mp.full_name}: the column plan has no attribute names")
        children: list[int] = []
        entries: list[tuple] = []
        entry_of: dict[int, int] = {}
        for pos, (attr, getter, child) in enumerate(zip(column.attrs, column.getters, column.columns, strict=True)):
            if isinstance(child, col.Oneof):
                o = oneofs.get(attr)
                by_member = {mp.fields[i].name: i for i in o.members} if o is not None else {}
                if set(by_member) != set(child.members) or len(child.members) != len(by_member):
                    raise Unsupported(f"{mp.full_name}.{attr}: the oneof's members differ from its columns")
                node = self.reserve()
                members = []
                for mpos, (name, mcol) in enumerate(zip(child.members, child.columns, strict=True)):
                    fidx = by_member[name]
                    f = mp.fields[fidx]
                    members.append(self.single(mcol, f, f.type, None))
                    entry_of[fidx] = len(entries)
                    entries.append((pos, mpos, f.label, f.type, int(f.group), f.number))
                self.nodes[node] = (_ONEOF, 1, P.MESSAGE, 0, b"", (tuple(members), tuple(child.names)))
                children.append(node)
                continue
            plain = fields.get(attr)
            if plain is None:
                raise Unsupported(f"{mp.full_name}.{attr}: no field of the codec plan")
            children.append(self.field(child, plain, getter(empty)))
            entry_of[plain.idx] = len(entries)
            entries.append((pos, -1, plain.label, plain.type, int(plain.group), plain.number))
        if len(entry_of) != len(mp.fields):
            raise Unsupported(f"{mp.full_name}: a field of the codec plan has no column")
        rest = (tuple(children), tuple(entries), self.plan(column.cls),
                tuple(entry_of[i] for i in range(len(mp.fields))))
        self.nodes[me] = (_STRUCT, int(column.nullable), P.MESSAGE, 0, b"", rest)
        return me

    def field(self, column: col.Column, f: P.FieldPlan, default: Any) -> int:
        if isinstance(column, col.List):
            me = self.reserve()
            item = self.single(column.item, f, f.type, _ZERO)
            self.nodes[me] = (_LIST, 0, f.type, 0, b"", (item,))
            return me
        if isinstance(column, col.Map):
            me = self.reserve()
            key = self.single(column.key, f, f.key, _ZERO)
            if f.type == P.MESSAGE:
                vdefault: Any = None
            elif f.enum is not None:
                vdefault = f.default if f.default is not None else enum_default(f.enum)
            else:
                vdefault = scalars.BY_CODE[f.type].zero
            value = self.single(column.value, f, f.type, vdefault)
            self.nodes[me] = (_MAP, 0, f.type, 0, b"", (key, value))
            return me
        return self.single(column, f, f.type, default)

    def single(self, column: col.Column, f: P.FieldPlan, code: int, default: Any) -> int:
        nullable = int(column.nullable)
        if isinstance(column, col.Scalar | col.Float32):
            if nullable != (default is None):
                raise Unsupported(f"{f.name}: its default row ({default!r}) does not fit its presence")
            u, b = (0, b"") if default is None else _bits(code, default)
            return self.add((_SCALAR, nullable, code, u, b, ()))
        if isinstance(column, col.Enum):
            if nullable != (default is None):
                raise Unsupported(f"{f.name}: its default row ({default!r}) does not fit its presence")
            members = list(column.enum_cls)  # type: ignore[call-overload]
            numbers = tuple(int(m) for m in members)
            names = tuple(column.names) if column.as_names else tuple(m.name for m in members)
            if default is None:
                u = 0
            elif default is _ZERO:
                u = 0
            elif column.as_names:
                if int(default) not in column.index:
                    raise Unsupported(f"{f.name}: its default {default!r} is not a member")
                u = column.index[int(default)]
            else:
                u = int(default) & 0xFFFFFFFF
            rest = (int(column.as_names), int(bool(f.closed)), numbers, names)
            return self.add((_ENUM, nullable, code, u, b"", rest))
        if isinstance(column, col.Struct):
            return self.struct(column)
        if isinstance(column, col.Timestamp | col.Duration):
            mp = codec_of(column.cls).plan
            entries: list[tuple[int, ...]] = []
            entry_of: dict[int, int] = {}
            for g in mp.fields:
                which = 0 if g.name == column.seconds else 1
                want = scalars.SCALARS["int64" if which == 0 else "int32"].code
                if g.type != want or g.label not in (P.IMPLICIT, P.EXPLICIT):
                    raise Unsupported(f"{mp.full_name}.{g.name} is not the int64/int32 of the well-known type")
                entry_of[g.idx] = len(entries)
                entries.append((which, -1, g.label, g.type, 0, g.number))
            times = (int(isinstance(column, col.Duration)), tuple(entries), self.plan(column.cls),
                     tuple(entry_of[i] for i in range(len(mp.fields))))
            return self.message(self.add((_TIME, nullable, P.MESSAGE, 0, b"", times)), column.cls)
        if isinstance(column, col.Wrapper):
            mp = codec_of(column.cls).plan
            if len(mp.fields) != 1 or mp.fields[0].enum is not None or mp.fields[0].label not in (P.IMPLICIT,
                                                                                                  P.EXPLICIT):
                raise Unsupported(f"{mp.full_name} is not a wrapper of one scalar value")
            g = mp.fields[0]
            u, b = _bits(g.type, _ZERO)
            entry = ((0, -1, g.label, g.type, int(g.group), g.number),)
            return self.message(self.add((_WRAPPER, nullable, g.type, u, b, (entry, self.plan(column.cls), (0,)))),
                                column.cls)
        if isinstance(column, col.Encoded):
            if f.group:
                raise Unsupported(f"{f.name}: a group past the recursion depth")
            encoded = (_reencoder(column.cls), self.plan(column.cls))
            return self.add((_ENCODED, nullable, P.MESSAGE, 0, b"", encoded))
        if isinstance(column, col.Present):
            return self.message(self.add((_PRESENT, nullable, P.MESSAGE, 1, b"", (self.plan(column.cls),))),
                                column.cls)
        raise Unsupported(f"{f.name}: a {type(column).__name__} column")
