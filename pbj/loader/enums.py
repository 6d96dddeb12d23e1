"""Enums of a load: the record of an enum descriptor, from which :mod:`pbj.loader.declarations`
makes its ``enum.IntEnum`` (well-known ones are reused)."""

from __future__ import annotations

from typing import Any

from pbj.errors import SchemaError

__all__ = ["derive_enum"]


def derive_enum(schema: Any, full: str) -> tuple:
    """The record (:mod:`pbj.loader.declarations`) of the enum descriptor ``full`` of a load
    (a :class:`~pbj.loader.schema.LoadedSchema`): its values and whether it is closed
    (proto2's enums, editions' ``enum_type = CLOSED``).

    Raises:
        SchemaError: an enum has no values, a value name is not an identifier (only a corrupt
            or hand-made descriptor has one: protoc refuses it, and the text format and
            ProtoJSON write the name as it is), or its file breaks a rule of protoc's (an open
            enum whose first value is not zero ...).
    """
    ed, package, _ = schema.index.enum_desc[full]
    if not ed.value:
        raise SchemaError("an enum needs at least one value", cls_name=full)
    closed = bool(schema.features.enum(full).closed)
    pairs = tuple((v.name or f"VALUE_{v.number}", v.number or 0) for v in ed.value)
    for name, _ in pairs:
        if not name.isidentifier():
            raise SchemaError(f"enum value name {name!r} is not an identifier", cls_name=full)
    return ("enum", full[len(package) + 1:] if package else full, package, closed, pairs)
