"""Reading and setting extension values on frozen messages.

A message of a class with extension ranges keeps its extensions in the hidden
attribute ``_pbj_extensions``: a tuple of holder instances (see
:mod:`pbj.extensions.declare`), sorted by field number, one per extension
that is present. It is part of ``==`` and ``hash``; ``pbj.replace`` keeps it.

* :func:`get_extension`, :func:`has_extension`: read one;
* :func:`extensions_of`: every present extension, as a read-only mapping;
* :func:`with_extensions`: a copy with some set or cleared (the message is
  immutable, so this is how a message with extensions is built; the
  constructor also takes them as ``_pbj_extensions={ext: value}``).

Values are checked as the constructor checks a field's (:mod:`pbj.schema.values`).
Extensions always have explicit presence ("Field Presence"): a set zero is
present and written.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any, TypeVar

from pbj.codec.compiler import codec_of
from pbj.extensions.declare import Extension
from pbj.schema import info, is_message
from pbj.schema.values import BadValue, coerce_field

__all__ = ["get_extension", "has_extension", "extensions_of", "with_extensions", "stored_extensions"]

T = TypeVar("T")
M = TypeVar("M")


def _holders(obj: Any) -> tuple:
    return _promoted(obj)[0]


def _promoted(obj: Any) -> tuple[tuple, bytes]:
    """``obj``'s extension holders and unknown fields, with the unknown occurrences of every
    extension registered since ``obj`` was decoded read as that extension (upb's "promote").

    The bytes ``obj`` encodes to are the meaning: the holders come from decoding them again
    (last value wins, repeats concatenate, messages merge, as the parser does), so reading and
    setting an extension registered late see the value the wire holds, and setting it replaces
    those occurrences rather than writing both.

    Raises:
        TypeError: ``obj`` is not a pbj message.
        DecodeError: an unknown occurrence of a registered extension is malformed.
    """
    if not is_message(obj) or isinstance(obj, type):
        raise TypeError(f"{obj!r} is not a pbj message")
    holders = getattr(obj, "_pbj_extensions", ())
    unknown = obj._pbj_unknown
    cls = type(obj)
    if not unknown or not info(cls).extensions:
        return holders, unknown
    from pbj.api import decode, encode

    if not decode(cls, unknown, allow_partial=True)._pbj_extensions:
        return holders, unknown  # nothing registered among the unknown fields
    whole = decode(cls, encode(obj, allow_partial=True), allow_partial=True)
    return whole._pbj_extensions, whole._pbj_unknown


def _check_extendee(obj: Any, ext: Any) -> None:
    if not isinstance(ext, Extension):
        raise TypeError(f"{ext!r} is not a pbj.Extension")
    if type(obj) is not ext.extendee:
        raise TypeError(f"{ext.full_name} extends {info(ext.extendee).full_name}, not {type(obj).__qualname__}")


def _find(obj: Any, ext: Extension[Any]) -> Any:
    for h in _holders(obj):
        if h.__class__ is ext.holder:
            return h
    return None


def get_extension(obj: Any, ext: Extension[T], /) -> T:
    """The value of extension ``ext`` on message ``obj`` (Go's ``proto.GetExtension``).

    Args:
        obj: a message of the class ``ext`` extends.
        ext: the :class:`~pbj.extensions.Extension`.

    An extension registered after ``obj`` was decoded is read from ``obj``'s
    unknown fields (as upb promotes them), so the value is what ``obj``'s bytes
    hold. A message with unknown fields pays a parse of them on each call.

    Returns:
        The value; when absent, ``ext.default``: the declared default, else
        ``None`` (``()`` for a repeated extension).

    Raises:
        TypeError: ``obj`` is not a message of ``ext.extendee``, or ``ext`` is not an extension.
        DecodeError: the unknown occurrences of a registered extension are malformed.
    """
    _check_extendee(obj, ext)
    h = _find(obj, ext)
    return ext.default if h is None else ext.value_of(h)  # type: ignore[no-any-return]


def has_extension(obj: Any, ext: Extension[Any], /) -> bool:
    """Whether extension ``ext`` is present on ``obj`` (a repeated one: not empty).

    Raises:
        TypeError: as :func:`get_extension`.
    """
    _check_extendee(obj, ext)
    return _find(obj, ext) is not None


def extensions_of(obj: Any, /) -> Mapping[Extension[Any], Any]:
    """Every extension present on ``obj``, in field-number order, as a read-only mapping
    :class:`~pbj.extensions.Extension` -> value (empty for a class without extension ranges).

    Raises:
        TypeError: ``obj`` is not a pbj message.
    """
    holders = _holders(obj)
    return types.MappingProxyType({h.__pbj_extension__: h.__pbj_extension__.value_of(h) for h in holders})


def holder_of(ext: Extension[Any], value: Any) -> Any:
    """A holder instance of ``ext`` with ``value`` checked (``None`` when it is absent).

    The holder's class is compiled first (once), so that no writer meets a holder whose class has
    no codec yet: the native writers, which run no Python code in the middle of a write, write
    every holder with its class's plan themselves (issue 23).

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
    codec_of(ext.holder)
    if ext.message_set:
        item_cls = info(ext.holder).fields[0].type
        return ext.holder(item=item_cls(type_id=ext.number, message=value))
    return ext.holder(value=value)


def _set_field(ext: Extension[Any]) -> Any:
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
        if not isinstance(ext, Extension):
            raise TypeError(f"{cls.__qualname__} extensions: {ext!r} is not a pbj.Extension")
        if ext.extendee is not cls:
            raise TypeError(f"{ext.full_name} extends {info(ext.extendee).full_name}, not {cls.__qualname__}")
        h = holder_of(ext, value)
        if h is None:
            by_number.pop(ext.number, None)
        else:
            by_number[ext.number] = h
    return tuple(by_number[n] for n in sorted(by_number))


def with_extensions(obj: M, values: Mapping[Extension[Any], Any], /) -> M:
    """A copy of ``obj`` with the extensions of ``values`` set (``None`` or ``()`` clears one).

    The message is immutable: this is the ``pbj.replace`` of extensions.
    Fields, unknown fields and the other extensions are kept, except that the
    unknown occurrences of an extension registered after ``obj`` was decoded
    are read as that extension first (see :func:`get_extension`), so setting
    it replaces them. Google's runtimes keep them unknown and write both (the
    stale copy last, so a reader gets the old value back); pbj does not lose
    the value just set.

    Args:
        obj: a message of a class with extension ranges.
        values: :class:`~pbj.extensions.Extension` -> value, each checked as
            the constructor checks a field of that type.

    Returns:
        The new message.

    Raises:
        TypeError: ``obj`` has no extension ranges, a key is not an extension
            of its class, or a value has the wrong type (naming the extension).
        ValueError: a value is out of range.
    """
    cls = type(obj)
    if not is_message(cls) or not info(cls).extension_ranges:
        raise TypeError(f"{cls.__qualname__} has no extension ranges")
    holders, unknown = _promoted(obj)
    stored = stored_extensions(cls, values, holders)
    from pbj.schema.resolve import replace

    # pbj.replace copies the stored state: a field left unset (one with a declared default
    # included) stays unset, as in Google's runtimes, where setting an extension touches nothing else
    if unknown is obj._pbj_unknown:  # type: ignore[attr-defined]
        return replace(obj, _pbj_extensions=stored)
    return replace(obj, _pbj_extensions=stored, _pbj_unknown=unknown)
