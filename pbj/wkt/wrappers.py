"""Wrapper types (``Int32Value`` …) <-> a plain value or ``None``; ``FieldMask`` <-> paths and text."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any as _Any

from pbj.protojson.text_forms import camel_path, snake_path
from pbj.schema import info, is_message
from pbj.wkt._common import PKG, attrs_of, check, class_of, make, sequence_arg, text_arg

__all__ = ["wrap", "unwrap", "field_mask", "field_mask_paths", "field_mask_from_text", "field_mask_to_text"]

_WRAPPERS = frozenset(PKG + n for n in (
    "DoubleValue", "FloatValue", "Int64Value", "UInt64Value", "Int32Value", "UInt32Value",
    "BoolValue", "StringValue", "BytesValue"))


def wrap(value: _Any, cls: type) -> _Any:
    """The wrapper message ``cls`` (``Int32Value`` …) holding ``value``; ``None`` stays ``None``.

    Raises:
        TypeError: ``cls`` is not a wrapper type, or ``value`` does not fit it.
    """
    if not (isinstance(cls, type) and is_message(cls)) or info(cls).full_name not in _WRAPPERS:
        raise TypeError(f"{cls!r} is not a google.protobuf wrapper type (Int32Value, StringValue ...)")
    if value is None:
        return None
    return make(cls, value=value)


def unwrap(w: _Any) -> _Any:
    """The value a wrapper message holds; ``None`` (the field is unset) stays ``None``.

    Raises:
        TypeError: ``w`` is not a wrapper message.
    """
    if w is None:
        return None
    if not is_message(type(w)) or info(type(w)).full_name not in _WRAPPERS:
        raise TypeError(f"expected a google.protobuf wrapper message, got {type(w).__name__}")
    return getattr(w, attrs_of(type(w))["value"])


def field_mask(paths: Iterable[str], *, cls: type | None = None) -> _Any:
    """A ``FieldMask`` of field paths (``["user.display_name", "photo"]``).

    Raises:
        TypeError: ``paths`` is a ``str``, ``bytes`` or a mapping rather than a sequence of
            paths (a single path goes in a list: ``field_mask(["name"])``), or a path is not a ``str``.
    """
    paths = sequence_arg(paths, "field_mask", "paths")
    for p in paths:
        if not isinstance(p, str):
            raise TypeError(f"a FieldMask path must be a str, got {type(p).__name__}")
    return make(class_of(cls, PKG + "FieldMask"), paths=paths)


def field_mask_paths(fm: _Any) -> tuple[str, ...]:
    """The paths of a ``FieldMask``."""
    a = check(fm, PKG + "FieldMask")
    return tuple(getattr(fm, a["paths"]))


def field_mask_from_text(text: str, *, cls: type | None = None) -> _Any:
    """A ``FieldMask`` from its ProtoJSON text (``"user.displayName,photo"``).

    Raises:
        TypeError: ``text`` is not a ``str``.
        ValueError: (:class:`pbj.JSONError`) a path has a ``_`` (JSON paths are lowerCamelCase).
    """
    text = text_arg(text, "field_mask_from_text")
    paths = tuple(snake_path(p) for p in text.split(",")) if text else ()
    return make(class_of(cls, PKG + "FieldMask"), paths=paths)


def field_mask_to_text(fm: _Any) -> str:
    """The ``FieldMask`` as ProtoJSON text: paths in lowerCamelCase, joined by commas.

    Raises:
        ValueError: (:class:`pbj.EncodeError`) a path has no JSON form (an upper-case letter, ``__`` …).
    """
    return ",".join(camel_path(p) for p in field_mask_paths(fm))
