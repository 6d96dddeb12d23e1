"""The JSON text layer: strict RFC 8259 parsing with duplicate-key detection.

``json.loads`` keeps the last of two equal keys; ProtoJSON input with a key
given twice is an error, reported with its path. Parsing marks such objects
(:class:`DupDict`) instead of failing at once, because only the readers know
the path; a reader that meets one raises through :func:`check_object`, and
:func:`find_duplicate` finds those the readers never met (inside a skipped
member). Numbers with a fraction or exponent are read as ``Decimal`` so that
no precision is lost before a reader sees the field's type, and so is the
integer ``-0`` (an ``int`` has no sign for zero; a double field keeps it,
as Go and C++ read it) and integers of more than 4,000 digits (``int()``
refuses them); ``NaN`` and ``Infinity`` literals are refused (RFC 8259 has none).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from pbj.protojson.common import JSONError, json_type

__all__ = ["DupDict", "loads", "find_duplicate", "check_object"]


class DupDict(dict):
    """A JSON object that had a key twice; readers raise on it, where its path is known."""

    __slots__ = ("duplicate",)
    duplicate: str  # the key given twice


def _pairs_hook(found: list):
    def pairs(pairs: list) -> dict:
        d = dict(pairs)
        if len(d) != len(pairs):
            seen = set()
            for k, _ in pairs:
                if k in seen:
                    break
                seen.add(k)
            dup = DupDict(d)
            dup.duplicate = k
            found.append(k)
            return dup
        return d
    return pairs


def _bad_constant(name: str) -> Any:
    raise JSONError(f"{name} is not valid JSON (write it as the string \"{name}\")")


_NEGATIVE_ZERO = Decimal("-0")
#: Longer integers are read as ``Decimal``: ``int()`` refuses more than 4,300 digits (CPython's
#: integer string conversion limit), and no field type holds such a number; its reader then
#: reports it out of range.
_LONG_INT = 4000


def _parse_int(digits: str) -> Any:
    if len(digits) > _LONG_INT:
        return Decimal(digits)
    return _NEGATIVE_ZERO if digits == "-0" else int(digits)


def loads(text: str | bytes, found: list) -> Any:
    """Parse JSON text; append to ``found`` every key seen twice in one object.

    Raises:
        JSONError: the text is not JSON (with line and column), or uses a
            ``NaN``/``Infinity`` literal.
    """
    try:
        return json.loads(text, object_pairs_hook=_pairs_hook(found), parse_float=Decimal, parse_int=_parse_int,
                          parse_constant=_bad_constant)
    except json.JSONDecodeError as exc:
        raise JSONError(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, JSONError):
            raise
        raise JSONError(f"invalid JSON: {exc}") from None


def find_duplicate(v: Any, path: list) -> list | None:
    """The path of the first key given twice in ``v`` (from ``path``), or ``None``."""
    if isinstance(v, dict):
        if isinstance(v, DupDict):
            return [*path, v.duplicate]
        for k, x in v.items():
            found = find_duplicate(x, [*path, k])
            if found is not None:
                return found
    elif isinstance(v, list):
        for i, x in enumerate(v):
            found = find_duplicate(x, [*path, i])
            if found is not None:
                return found
    return None


def check_object(d: Any, what: str) -> None:
    """Check that ``d`` is a JSON object without a duplicate key.

    Raises:
        JSONError: ``d`` is not an object (naming ``what``), or had a key twice.
    """
    if d.__class__ is dict:
        return
    if isinstance(d, DupDict):
        raise JSONError(f"duplicate key {d.duplicate!r} in a JSON object", path=[d.duplicate])
    if isinstance(d, dict):
        return
    raise JSONError(f"expected a JSON object for {what}, got {json_type(d)}")
