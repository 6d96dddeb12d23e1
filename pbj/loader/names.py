"""Python names for what a schema names: field attributes and enum members."""

from __future__ import annotations

import keyword
import unicodedata

from pbj.errors import SchemaError

__all__ = ["enum_member_names", "join"]  # and _attr_name, for the builders


def _attr_name(proto_name: str, taken: set[str], owner: str | None = None) -> str:
    """The Python attribute name of a field: its proto name, made safe and unique.

    The name is NFKC-normalised first, as Python normalises identifiers in
    source ("Identifiers and keywords" in the Python reference), so that
    ``obj.<name>`` written in code reaches the field (``ﬁ`` becomes ``fi``,
    ``M²`` becomes ``M2``); ``proto_name`` keeps the schema's spelling. A
    keyword or a name already taken gets trailing underscores; a dunder name
    or one starting with ``_pbj`` (pbj's own slots) gets an ``f`` in front.

    Raises:
        SchemaError: the name is not an identifier, even NFKC-normalised (only a
            corrupt descriptor has one: protoc accepts letters, digits and ``_``),
            naming the message ``owner`` (its full name) and the field.
    """
    name = unicodedata.normalize("NFKC", proto_name)
    if not name.isidentifier():
        raise SchemaError(f"field name {proto_name!r} is not an identifier", cls_name=owner, field_name=proto_name)
    if name.startswith("_pbj") or (name.startswith("__") and name.endswith("__")):
        name = "f" + name
    while keyword.iskeyword(name) or name in taken:
        name += "_"
    taken.add(name)
    return name


def enum_member_names(values: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Enum value names made safe as ``enum.IntEnum`` members (``_x`` -> ``V_x``, ``name`` -> ``name_``)."""
    out = []
    for name, number in values:
        if name.startswith("_") or name in ("name", "value", "mro"):
            name = name + "_" if not name.startswith("_") else "V" + name
        out.append((name, number))
    return out


def join(scope: str, name: str) -> str:
    """The full name of ``name`` declared in ``scope`` (a package or message full name, maybe empty)."""
    return f"{scope}.{name}" if scope else name
