"""What the well-known-type helpers share: finding fields by proto name, checking full names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any as _Any

from pbj import wellknown
from pbj.schema import info, is_message

__all__ = ["PKG", "check", "attrs_of", "member_names", "class_of", "make", "whole_nanos", "sequence_arg", "text_arg"]

PKG = "google.protobuf."


def check(obj: _Any, full_name: str) -> dict[str, str]:
    """The attribute names of ``obj``'s fields by proto name; TypeError unless it is a ``full_name``."""
    cls = type(obj)
    if not is_message(cls) or info(cls).full_name != full_name:
        raise TypeError(f"expected a {full_name} message, got {cls.__name__}")
    return attrs_of(cls)


def attrs_of(cls: type) -> dict[str, str]:
    """Proto field name -> attribute to read (a oneof member's oneof attribute)."""
    return {f.proto_name: f.oneof or f.name for f in info(cls).all_fields()}


def member_names(cls: type) -> dict[str, str]:
    """Proto field name -> member name, for the members of oneofs."""
    return {f.proto_name: f.name for f in info(cls).all_fields() if f.oneof}


def class_of(cls: type | None, full_name: str) -> type:
    """The class to build: ``cls`` (checked) or the :mod:`pbj.wellknown` class of ``full_name``."""
    if cls is None:
        return wellknown.WELL_KNOWN[full_name]
    if not (isinstance(cls, type) and is_message(cls)) or info(cls).full_name != full_name:
        raise TypeError(f"cls must be a {full_name} message class, got {cls!r}")
    return cls


def make(cls: type, **by_proto_name: _Any) -> _Any:
    attrs = attrs_of(cls)
    return cls(**{attrs[k]: v for k, v in by_proto_name.items()})


def whole_nanos(nanos: _Any) -> int:
    """``nanos`` as an ``int``; TypeError for anything else (a ``float`` would round, a ``bool`` is no count)."""
    if isinstance(nanos, bool) or not isinstance(nanos, int):
        raise TypeError(f"nanos must be an int (a whole number of nanoseconds), got {type(nanos).__name__} {nanos!r}")
    return nanos


def sequence_arg(value: _Any, function: str, arg: str) -> tuple:
    """``value`` as a tuple, refusing what is iterable but not a sequence of items.

    A ``str`` (its characters), ``bytes``-like (its byte values) or a mapping (its keys)
    is refused, as the constructor refuses one for a repeated field.

    Raises:
        TypeError: naming ``function`` and ``arg``.
    """
    if isinstance(value, (str, bytes, bytearray, memoryview, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"{function}: {arg} must be a sequence (a list or tuple), not {type(value).__name__}")
    return tuple(value)


def text_arg(value: _Any, function: str) -> str:
    """``value``, checked to be the ``str`` a text helper parses.

    Raises:
        TypeError: naming ``function`` and its ``text`` argument.
    """
    if not isinstance(value, str):
        raise TypeError(f"{function}: text must be a str, not {type(value).__name__}")
    return value
