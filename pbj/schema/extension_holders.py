"""Extension values in their stored form: the ``_pbj_extensions`` tuple of holder instances.

A message of a class with extension ranges keeps its extensions as instances of each
extension's hidden holder class (:mod:`pbj.extensions.declare`), one per extension present,
sorted by field number. The constructor (``_pbj_extensions={ext: value}``),
:func:`pbj.with_extensions` and unpickling build that tuple here, each value checked as the
constructor checks a field of the same type (:mod:`pbj.schema.values`).

An extension is known by its holder class, which names it (``holder.__pbj_extension__``), as
the rest of :mod:`pbj.schema` and the codec know it: this module imports nothing above
:mod:`pbj.schema`, so the constructor can use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pbj.schema.resolve import info
from pbj.schema.values import BadValue, coerce_field

__all__ = ["holder_of", "stored_extensions"]


def _is_extension(ext: Any) -> bool:
    """Whether ``ext`` is a :class:`pbj.Extension`: the object its holder class names."""
    return getattr(getattr(ext, "holder", None), "__pbj_extension__", None) is ext


def holder_of(ext: Any, value: Any) -> Any:
    """A holder instance of ``ext`` (a :class:`pbj.Extension`) with ``value`` checked (``None`` when it is absent).

    The holder's class comes from ``ext.compiled_holder()``, which compiles its codec first
    (once), so that no writer meets a holder whose class has no codec yet: the native writers
    write every holder themselves. The compiler sits above :mod:`pbj.schema`; the
    extension object, declared above it, reaches it.

    Raises:
        TypeError, ValueError: the value does not fit (naming the extension).
        SchemaError: the holder's class does not compile (as at its first encode or decode).
    """
    try:
        value = coerce_field(ext.field if not ext.message_set else _set_field(ext), value)
    except BadValue as bad:
        raise bad.error(f"extension {ext.full_name}{bad.where} of {info(ext.extendee).full_name}: "
                        f"{bad.reason}") from None
    if value is None or (ext.repeated and not value):
        return None
    holder = ext.compiled_holder()
    if ext.message_set:
        item_cls = info(holder).fields[0].type
        return holder(item=item_cls(type_id=ext.number, message=value))
    return holder(value=value)


def _set_field(ext: Any) -> Any:
    item_cls = info(ext.holder).fields[0].type
    return info(item_cls).fields[1]  # ``message = 3``


def stored_extensions(cls: type, values: Any, base: tuple = ()) -> tuple:
    """The ``_pbj_extensions`` tuple of ``base`` with ``values`` set (``None`` clears one).

    Args:
        cls: the message class.
        values: a mapping :class:`~pbj.extensions.Extension` -> value.
        base: the holders already there.

    Raises:
        TypeError: ``values`` is not a mapping, a key is not an extension of
            ``cls``, or a value has the wrong type (the error names the extension).
        ValueError: a value is out of range.
    """
    if not isinstance(values, Mapping):
        raise TypeError(f"{cls.__qualname__} extensions must be a mapping of pbj.Extension to value, "
                        f"not {type(values).__name__}")
    by_number = {h.__pbj_extension__.number: h for h in base}
    for ext, value in values.items():
        if not _is_extension(ext):
            raise TypeError(f"{cls.__qualname__} extensions: {ext!r} is not a pbj.Extension")
        if ext.extendee is not cls:
            raise TypeError(f"{ext.full_name} extends {info(ext.extendee).full_name}, not {cls.__qualname__}")
        h = holder_of(ext, value)
        if h is None:
            by_number.pop(ext.number, None)
        else:
            by_number[ext.number] = h
    return tuple(by_number[n] for n in sorted(by_number))
