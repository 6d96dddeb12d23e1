"""One row per protobuf scalar type: everything pbj knows about a type, in one place.

protobuf.dev "Language Guide (proto3)", "Scalar Value Types", lists fifteen
scalar types; "Encoding" says how each is written ("Base 128 Varints",
"Signed Integers", "Non-varint Numbers", "Length-Delimited Records"), and
"ProtoJSON Format" how each is written in JSON. Every module that needs to
know something about a type (the codec plan and its emitters, the schema
checks, ProtoJSON, the text format, the loader) reads it from its
:class:`ScalarType` row here, so adding or changing a type is one edit.

Enum values travel as ``int32`` varints ("Enumerations" in "Encoding"), so
enum fields use the ``enum`` row, which is not a scalar type of the spec but
shares the ``int32`` wire form.

The rows are plain data: a native engine can copy them into its own tables
(:attr:`ScalarType.code` is a small stable integer for that).
"""

from __future__ import annotations

import struct
from typing import Any

from pbj.record import FrozenRecord

__all__ = [
    "ScalarType", "SCALARS", "ENUM", "BY_CODE", "SCALAR_NAMES", "MAP_KEY_NAMES", "INTEGER_NAMES",
    "WIRE_VARINT", "WIRE_I64", "WIRE_LEN", "WIRE_SGROUP", "WIRE_EGROUP", "WIRE_I32", "row",
    "fixed_packer", "OPS", "OP_VARINT", "OP_ENUM", "OP_ZIGZAG", "OP_BOOL", "OP_FIXED", "OP_FLOAT32", "OP_STRING",
    "OP_BYTES",
]

# The wire types ("Message Structure" in "Encoding").
WIRE_VARINT, WIRE_I64, WIRE_LEN, WIRE_SGROUP, WIRE_EGROUP, WIRE_I32 = 0, 1, 2, 3, 4, 5

_I32 = (-(1 << 31), (1 << 31) - 1)
_I64 = (-(1 << 63), (1 << 63) - 1)
_U32 = (0, (1 << 32) - 1)
_U64 = (0, (1 << 64) - 1)


class ScalarType(FrozenRecord):
    """What one protobuf scalar type is, on the wire, in Python and in ProtoJSON.

    Attributes:
        name: the type's name in ``.proto`` (``"int32"``), or ``"enum"``.
        code: a small stable integer naming the type (its index in :data:`SCALARS`,
            ``enum`` last), for tables of a native engine.
        wire_type: the wire type of one value: 0 (VARINT), 1 (I64), 2 (LEN) or 5 (I32).
        width: the encoded size in bytes of a fixed-width value (4 or 8), else ``None``.
        struct_format: the little-endian ``struct`` format of a fixed-width value
            (``"<i"``), else ``None``.
        py_type: the Python type of a decoded value (``int``, ``float``, ``bool``,
            ``str``, ``bytes``).
        zero: the type's default value ("Default Values"): ``0``, ``0.0``,
            ``False``, ``""`` or ``b""``.
        range: the inclusive ``(lo, hi)`` range of an integral type, else ``None``.
        zigzag: the value is ZigZag-encoded before the varint (``sint32``, ``sint64``).
        signed_varint: a negative value is written as a 10-byte two's-complement
            varint (``int32``, ``int64``, ``enum``).
        bits: for an integral varint type, the width a decoded value is narrowed
            to (32 or 64), else ``None``.
        packable: a repeated field of this type may be packed ("Packed Repeated
            Fields": every scalar but ``string`` and ``bytes``).
        map_key: legal as a map key ("Maps": integral types, ``bool``, ``string``).
        json: how ProtoJSON writes a value: ``"number"`` (32-bit integers),
            ``"int64"`` (a decimal string), ``"float"`` (a number, or
            ``"NaN"``/``"Infinity"``/``"-Infinity"``), ``"bool"``, ``"string"``,
            ``"bytes"`` (base64) or ``"enum"`` (the value's name).
    """

    # the order of repr and __init__, not sorted
    __slots__ = (  # noqa: RUF023
        "name", "code", "wire_type", "width", "struct_format", "py_type", "zero", "range", "zigzag",
        "signed_varint", "bits", "packable", "map_key", "json")
    name: str
    code: int
    wire_type: int
    width: int | None
    struct_format: str | None
    py_type: type
    zero: Any
    range: tuple[int, int] | None
    zigzag: bool
    signed_varint: bool
    bits: int | None
    packable: bool
    map_key: bool
    json: str

    def __init__(self, name: str, code: int, wire_type: int, width: int | None, struct_format: str | None,
                 py_type: type, zero: Any, range: tuple[int, int] | None, zigzag: bool, signed_varint: bool,
                 bits: int | None, packable: bool, map_key: bool, json: str) -> None:
        self._set(name=name, code=code, wire_type=wire_type, width=width, struct_format=struct_format,
                  py_type=py_type, zero=zero, range=range, zigzag=zigzag, signed_varint=signed_varint, bits=bits,
                  packable=packable, map_key=map_key, json=json)

    @property
    def is_varint(self) -> bool:
        """True for a type written as a varint (integral types, ``bool``, ``enum``)."""
        return self.wire_type == WIRE_VARINT

    @property
    def is_fixed(self) -> bool:
        """True for a fixed-width type (``fixed32`` … ``double``)."""
        return self.width is not None

    @property
    def is_integral(self) -> bool:
        """True for an integer type (not ``bool``, ``float`` or ``double``)."""
        return self.range is not None

    @property
    def is_float(self) -> bool:
        """True for ``float`` and ``double``."""
        return self.py_type is float

    @property
    def is_len(self) -> bool:
        """True for ``string`` and ``bytes`` (LEN values)."""
        return self.wire_type == WIRE_LEN

    @property
    def packer(self) -> struct.Struct | None:
        """The ``struct.Struct`` of a fixed-width value, else ``None``."""
        return _STRUCTS.get(self.name)

    @property
    def op(self) -> int:
        """How the writers and the parser handle a value: one of the ``OP_*`` codes (:data:`OPS`)."""
        return _OP_OF[self.code]


def _rows() -> tuple[ScalarType, ...]:
    v, i64, ln, i32 = WIRE_VARINT, WIRE_I64, WIRE_LEN, WIRE_I32
    spec: list[tuple[str, int, int | None, str | None, type, Any, tuple[int, int] | None, bool, bool,
                     int | None, bool, bool, str]] = [
        # name       wire width fmt    py     zero   range zigzag signed bits pack  key    json
        ("double",   i64, 8, "<d", float, 0.0,   None, False, False, None, True, False, "float"),
        ("float",    i32, 4, "<f", float, 0.0,   None, False, False, None, True, False, "float"),
        ("int64",    v, None, None, int,  0,     _I64, False, True,  64,   True, True,  "int64"),
        ("uint64",   v, None, None, int,  0,     _U64, False, False, 64,   True, True,  "int64"),
        ("int32",    v, None, None, int,  0,     _I32, False, True,  32,   True, True,  "number"),
        ("fixed64",  i64, 8, "<Q", int,   0,     _U64, False, False, None, True, True,  "int64"),
        ("fixed32",  i32, 4, "<I", int,   0,     _U32, False, False, None, True, True,  "number"),
        ("bool",     v, None, None, bool, False, None, False, False, None, True, True,  "bool"),
        ("string",   ln, None, None, str, "",    None, False, False, None, False, True, "string"),
        ("bytes",    ln, None, None, bytes, b"", None, False, False, None, False, False, "bytes"),
        ("uint32",   v, None, None, int,  0,     _U32, False, False, 32,   True, True,  "number"),
        ("sfixed32", i32, 4, "<i", int,   0,     _I32, False, False, None, True, True,  "number"),
        ("sfixed64", i64, 8, "<q", int,   0,     _I64, False, False, None, True, True,  "int64"),
        ("sint32",   v, None, None, int,  0,     _I32, True,  False, 32,   True, True,  "number"),
        ("sint64",   v, None, None, int,  0,     _I64, True,  False, 64,   True, True,  "int64"),
        ("enum",     v, None, None, int,  0,     _I32, False, True,  32,   True, False, "enum"),
    ]
    return tuple(
        ScalarType(name, code, wire, width, fmt, py, zero, rng, zz, signed, bits, pack, key, js)
        for code, (name, wire, width, fmt, py, zero, rng, zz, signed, bits, pack, key, js) in enumerate(spec)
    )


_ALL = _rows()
_STRUCTS = {t.name: struct.Struct(t.struct_format) for t in _ALL if t.struct_format}

#: The operation codes (:attr:`ScalarType.op`): what the codec's emitters (and the engines) branch
#: on, so that no code outside this module asks which scalar type a value has by its name.
#: ``OP_VARINT``: a varint written as it is (``int32``, ``int64``, ``uint32``, ``uint64``; a
#: negative ``int32``/``int64`` sign-extended); ``OP_ENUM``: the same on the wire, decoded to a
#: member of the field's enum; ``OP_ZIGZAG``: a ZigZag varint (``sint32``, ``sint64``: see
#: :attr:`ScalarType.bits`); ``OP_BOOL``: a 1-byte varint, 0 or 1; ``OP_FIXED``: a fixed-width value
#: through its struct (``fixed32`` … ``double``, not ``float``); ``OP_FLOAT32``: ``float``, whose
#: NaNs keep their bits (:mod:`pbj.codec.float32`); ``OP_STRING``: UTF-8 text, LEN; ``OP_BYTES``: LEN.
OP_VARINT, OP_ENUM, OP_ZIGZAG, OP_BOOL, OP_FIXED, OP_FLOAT32, OP_STRING, OP_BYTES = range(8)
OPS: tuple[str, ...] = ("varint", "enum", "zigzag", "bool", "fixed", "float32", "string", "bytes")


def _op(t: ScalarType) -> int:
    if t.name == "enum":
        return OP_ENUM
    if t.name == "bool":
        return OP_BOOL
    if t.zigzag:
        return OP_ZIGZAG
    if t.is_varint:
        return OP_VARINT
    if t.name == "float":
        return OP_FLOAT32
    if t.width is not None:
        return OP_FIXED
    return OP_STRING if t.name == "string" else OP_BYTES


_OP_OF: tuple[int, ...] = tuple(_op(t) for t in _ALL)

#: Every row, ``enum`` last, indexed by :attr:`ScalarType.code`.
BY_CODE: tuple[ScalarType, ...] = _ALL
#: The fifteen scalar types of the spec, by name.
SCALARS: dict[str, ScalarType] = {t.name: t for t in _ALL if t.name != "enum"}
#: The row enum fields use (an ``int32`` varint on the wire).
ENUM: ScalarType = _ALL[-1]
#: The names of the fifteen scalar types.
SCALAR_NAMES: frozenset[str] = frozenset(SCALARS)
#: The scalar types a map key may have ("Maps").
MAP_KEY_NAMES: frozenset[str] = frozenset(t.name for t in SCALARS.values() if t.map_key)
#: The integral scalar types (every type with a range, ``enum`` excluded).
INTEGER_NAMES: frozenset[str] = frozenset(t.name for t in SCALARS.values() if t.is_integral)


def row(name: str) -> ScalarType:
    """The row of a scalar type name, or of ``"enum"``.

    Raises:
        KeyError: ``name`` is neither a scalar type name nor ``"enum"``.
    """
    return ENUM if name == "enum" else SCALARS[name]


def fixed_packer(name: str) -> struct.Struct:
    """The ``struct.Struct`` of a fixed-width scalar type (``fixed32`` … ``double``), little-endian.

    The same object as ``SCALARS[name].packer``, typed for a type known to have one
    (protobuf.dev "Encoding", "Non-varint Numbers").

    Raises:
        KeyError: ``name`` is not a fixed-width scalar type.
    """
    return _STRUCTS[name]
