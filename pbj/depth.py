"""Nesting limits outside the wire parser: the ``max_depth`` argument, and messages too deep to walk.

The readers (``pbj.decode``, ``pbj.from_text``) take a ``max_depth``: how many
levels of nested messages below the top-level one they accept (0: none, as
C++ ``CodedInputStream::SetRecursionLimit(0)``). :func:`check_max_depth`
refuses a value that is not an ``int`` or is negative, naming the argument.

The writers and printers that walk a message recursively (``pbj.encode``,
``pbj.to_text``, ``pbj.to_json``/``to_dict``, ``repr``) are limited by
Python's recursion limit (``sys.getrecursionlimit()``, 1000 by default), so
a message built (or decoded with a high ``max_depth``) hundreds of levels
deep can be too deep for them. They never let a ``RecursionError`` out:

* ``encode``, ``to_text`` and ``to_dict``/``to_json`` raise
  :func:`too_deep`'s :class:`~pbj.errors.EncodeError`, which names the
  message's nesting depth (measured by :func:`nesting_depth`, a loop, not a
  recursion) and the limit;
* ``repr`` writes ``Name(...)`` for a message more than
  :data:`pbj.schema.make_class.REPR_DEPTH` levels below the one being shown,
  as Python writes ``[...]`` for a list that holds itself.
"""

from __future__ import annotations

import sys
from typing import Any

from pbj.errors import EncodeError
from pbj.schema import OneOf, is_message

__all__ = ["check_max_depth", "nesting_depth", "too_deep"]


def check_max_depth(value: Any, function: str) -> None:
    """Check a reader's ``max_depth`` argument.

    Args:
        value: the argument.
        function: the function's name, for the message (``"decode"``).

    Raises:
        TypeError: ``value`` is not an ``int`` (``bool`` is refused too).
        ValueError: ``value`` is negative.
    """
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{function}(): max_depth must be an int, got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{function}(): max_depth must be 0 or more (levels below the top-level message), "
                         f"got {value}")


def _children(value: Any):
    """The messages directly inside field value ``value`` (a message, tuple, map or oneof)."""
    if value is None or value.__class__ in (int, float, str, bytes, bool):
        return ()
    if isinstance(value, OneOf):
        value = value[1]
    if is_message(value):
        return (value,)
    if isinstance(value, tuple):
        return [v for v in value if is_message(v)]
    if isinstance(value, dict):
        return [v for v in value.values() if is_message(v)]
    return ()


def nesting_depth(obj: Any) -> int:
    """How many levels of messages ``obj`` holds: 1 for a message without sub-messages.

    Walks the message with a loop and an explicit stack, so any depth can be measured.
    """
    deepest = 0
    stack = [(obj, 1)]
    while stack:
        m, level = stack.pop()
        if level > deepest:
            deepest = level
        for name in m.__pbj_info__.attr_order:
            for child in _children(getattr(m, name)):
                stack.append((child, level + 1))
    return deepest


def too_deep(obj: Any, what: str) -> EncodeError:
    """The error of ``what`` (``"pbj.to_text"`` …) meeting a message too deep for Python's recursion limit."""
    return EncodeError(f"{what}: the message is nested {nesting_depth(obj)} levels deep, more than {what} can "
                       f"follow within Python's recursion limit ({sys.getrecursionlimit()})")
