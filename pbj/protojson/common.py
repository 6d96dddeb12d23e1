"""What every ProtoJSON reader and writer shares: :class:`JSONError`, the nesting guard, type names.

protobuf.dev "ProtoJSON Format" defines the mapping; this module holds no part of
it, only the error readers raise (with the JSON path of the bad value), the
per-thread depth count that bounds nesting as binary decoding does, and the JSON
type names error texts use.
"""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import Any

from pbj.errors import JSONError  # defined with the others, so that ``except pbj.JSONError`` costs no import

__all__ = ["JSONError", "MAX_DEPTH", "SKIP", "enter", "leave", "json_type"]


#: A reader's answer for "leave the field unset" (an unknown enum name skipped with ``ignore_unknown``).
SKIP = object()

#: How deep messages (Struct and ListValue included) may nest in JSON input, as in binary decoding.
MAX_DEPTH = 100
_local = threading.local()


def enter() -> None:
    """Count one more level of message nesting on this thread.

    Raises:
        JSONError: the input nests deeper than :data:`MAX_DEPTH` levels.
    """
    depth = getattr(_local, "depth", 0) + 1
    if depth > MAX_DEPTH:
        raise JSONError(f"messages nest deeper than {MAX_DEPTH} levels")
    _local.depth = depth


def leave() -> None:
    """Count one level of nesting less (the pair of :func:`enter`)."""
    _local.depth -= 1


def json_type(v: Any) -> str:
    """The JSON type name of a decoded JSON value (``"string"``, ``"array"`` …), for error texts."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float, Decimal)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__
