"""Source emission shared by the forward writer, the reverse writer and the parser.

Every generated function lives in one namespace, :data:`GENERATED`, under a
name that is unique across all message classes (``size_Timestamp``,
``parse_Timestamp_2`` …). A function calls the functions of other classes by
name, so mutually recursive messages need no linking step: the compiler only
has to compile every class a message can reach before the first call.

Constants (tag bytes, ``struct.Struct`` methods, enum lookup tables, oneof
dispatch tables) are registered in the same namespace with readable names,
so generated code reads them as globals and never walks the schema.

:class:`Source` collects one function's lines; it is plain text until
:func:`pbj.compiler` compiles it, so it can be read and tested on its own.
"""

from __future__ import annotations

import enum
import struct
from typing import Any

from pbj import wire
from pbj.schema import FieldInfo, enum_default

__all__ = ["GENERATED", "Source", "const", "fixed_format", "wire_type_of", "tag_of",
           "tag_const", "VARINT_TYPES", "FIXED_SIZE", "codec_name"]

#: The namespace every generated function and constant lives in.
GENERATED: dict[str, Any] = {"__name__": "pbj._generated", "__builtins__": __builtins__}

_const_names: dict[tuple, str] = {}
_codec_names: dict[int, str] = {}
_used_codec_names: set[str] = set()

VARINT_TYPES = frozenset({"int32", "int64", "uint32", "uint64", "sint32", "sint64", "bool", "enum"})
FIXED_SIZE = {"fixed32": 4, "sfixed32": 4, "float": 4, "fixed64": 8, "sfixed64": 8, "double": 8}
_FIXED_FORMAT = {"fixed32": "I", "sfixed32": "i", "float": "f", "fixed64": "Q", "sfixed64": "q", "double": "d"}


class Source:
    """The lines of generated source being built, with indentation."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, text: str) -> None:
        """Add one line (or several, separated by newlines) at the current depth."""
        for line in text.split("\n"):
            self.lines.append("    " * self.depth + line)

    def indent(self) -> Source:
        """Use as ``with src.indent():`` to emit a nested block."""
        return self

    def __enter__(self) -> Source:
        self.depth += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        self.depth -= 1

    def text(self) -> str:
        """The source text, ending with a newline."""
        return "\n".join(self.lines) + "\n"


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


def codec_name(cls: type) -> str:
    """The unique name stem of a class's generated functions (``Timestamp``, ``Timestamp_2``)."""
    key = id(cls)
    name = _codec_names.get(key)
    if name is None:
        base = _safe(cls.__name__)
        name = base
        i = 2
        while name in _used_codec_names:
            name = f"{base}_{i}"
            i += 1
        _used_codec_names.add(name)
        _codec_names[key] = name
    return name


def const(value: Any, hint: str) -> str:
    """Register ``value`` in :data:`GENERATED` and return its global name.

    Bytes constants are shared by value (``T_08`` is the tag byte 0x08); other
    values are registered under ``hint`` (made unique).
    """
    if isinstance(value, bytes):
        key: tuple = ("bytes", value)
        name = _const_names.get(key)
        if name is None:
            name = f"{hint}_{value.hex()}" if len(value) <= 6 else f"{hint}_{len(_const_names)}"
            _const_names[key] = name
            GENERATED[name] = value
        return name
    name = _safe(hint)
    base = name
    i = 2
    while name in GENERATED and GENERATED[name] is not value:
        name = f"{base}_{i}"
        i += 1
    GENERATED[name] = value
    return name


def scalar_kind(f_type: Any) -> str:
    """The scalar type name of a field type, ``"enum"`` for enums, ``"message"`` else."""
    if isinstance(f_type, str):
        return f_type
    if isinstance(f_type, type) and issubclass(f_type, enum.IntEnum):
        return "enum"
    return "message"


def wire_type_of(kind: str) -> int:
    """The wire type of a value of ``kind`` (a scalar name, ``enum`` or ``message``)."""
    if kind in VARINT_TYPES:
        return wire.WIRE_VARINT
    if kind in FIXED_SIZE:
        return wire.WIRE_I32 if FIXED_SIZE[kind] == 4 else wire.WIRE_I64
    return wire.WIRE_LEN


def fixed_format(kind: str) -> str:
    """The ``struct`` format letter of a fixed-width kind."""
    return _FIXED_FORMAT[kind]


_STRUCTS = {kind: struct.Struct("<" + fmt) for kind, fmt in _FIXED_FORMAT.items()}
GENERATED.update({f"S_{kind}": s for kind, s in _STRUCTS.items()})
# Bound methods made once: calling ``S_double.pack_into(...)`` in generated code made a new
# bound method object on every call (seen with memray).
GENERATED.update({f"PI_{kind}": s.pack_into for kind, s in _STRUCTS.items()})


def fixed_struct(kind: str) -> str:
    """Global name of the ``struct.Struct`` for one fixed-width value of ``kind`` (``S_double``)."""
    return f"S_{kind}"


def tag_of(number: int, wire_type: int) -> int:
    """The integer tag of a field number and wire type."""
    return wire.make_tag(number, wire_type)


def tag_const(number: int, wire_type: int) -> str:
    """Global name of a field's tag bytes (``T_08``)."""
    return const(wire.tag_bytes(number, wire_type), "T")


def tag_value_table(tag: bytes) -> str:
    """Global name of the table of ``tag + value`` bytes for every value below 128 (``TV_08``).

    One ``bytes`` piece for a tag and a 1-byte varint (or length) saves the
    forward writer an append per field.
    """
    name = f"TV_{tag.hex()}"
    if name not in GENERATED:
        GENERATED[name] = [tag + bytes((i,)) for i in range(128)]
    return name


def tagged_struct(tag: bytes, kind: str) -> str:
    """Global name of a ``struct.Struct`` packing a field's tag bytes and one fixed-width value."""
    name = f"ST_{tag.hex()}_{kind}"
    if name not in GENERATED:
        GENERATED[name] = struct.Struct("<" + "B" * len(tag) + _FIXED_FORMAT[kind])
    return name


def default_literal(f: FieldInfo, kind: str) -> str:
    """Source for a field's value when it is absent on the wire."""
    if f.repeated or f.optional or kind == "message":
        return "None"
    if kind == "enum":
        return const(enum_default(f.type), f"D_{f.type.__name__}")
    if kind == "string":
        return '""'
    if kind == "bytes":
        return 'b""'
    if kind in ("float", "double"):
        return "0.0"
    if kind == "bool":
        return "False"
    return "0"
