"""Enum classes of a load: one ``enum.IntEnum`` per enum descriptor, well-known ones reused."""

from __future__ import annotations

import enum
from typing import Any

from pbj.errors import SchemaError
from pbj.loader.names import enum_member_names
from pbj.loader.pickling import make_enum_reduce, registry_module

__all__ = ["build_enum"]


def build_enum(schema: Any, full: str) -> type:
    """The ``enum.IntEnum`` of the enum descriptor ``full`` of a load
    (a :class:`~pbj.loader.schema.LoadedSchema`).

    A closed enum's class has ``__pbj_closed__ = True``: the parser keeps a
    number that is not a member as an unknown field, as Google's runtimes do.
    Members pickle by the enum's full name. A value whose schema name cannot be
    a member name (``value``, ``_X``: see :func:`~pbj.loader.names.enum_member_names`)
    is listed in the class's ``__pbj_proto_names__`` (member name -> schema
    name), which ProtoJSON and the text format write and read instead.

    Raises:
        SchemaError: an enum has no values, or its values cannot make an ``IntEnum``;
            its file breaks a rule of protoc's (an open enum whose first value is not zero ...).
    """
    ed, package, _ = schema.index.enum_desc[full]
    if not ed.value:
        raise SchemaError("an enum needs at least one value", cls_name=full)
    closed = schema.features.enum(full).closed
    schema_pairs = [(v.name or f"VALUE_{v.number}", v.number or 0) for v in ed.value]
    pairs = enum_member_names(schema_pairs)
    qualname = full[len(package) + 1:] if package else full
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
