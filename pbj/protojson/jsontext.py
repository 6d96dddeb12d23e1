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
A number whose exponent is beyond what ``Decimal`` holds (``2.5e99999999999999999999``) is
read as the nearest ``Decimal`` that keeps what a reader decides by (:func:`to_decimal`), so
its reader refuses it with the path as it refuses any number out of its field's range.
"""

from __future__ import annotations

import json
import re
from decimal import MAX_EMAX, MIN_EMIN, Decimal, InvalidOperation
from typing import Any

from pbj.protojson.common import MAX_DEPTH, JSONError, json_type

__all__ = ["DupDict", "loads", "find_duplicate", "check_object", "to_decimal"]


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


_NUMBER = re.compile(r"\s*([-+]?)([0-9]*)\.?([0-9]*)[eE]([-+]?)[0-9]+\s*")


def to_decimal(text: str) -> Decimal:
    """The ``Decimal`` of a JSON number's text (RFC 8259 "Numbers"; a quoted one too).

    Exact when ``Decimal`` can hold it. An exponent beyond ``Decimal``'s range (about
    10**18 either way, where ``Decimal`` raises ``InvalidOperation``) gives ``±1E+MAX_EMAX``
    (a number above every range of a field type) or ``±1E+MIN_EMIN`` (below every
    non-zero float's half-ulp, not an integer: a double reads it as 0, as it reads
    ``1e-400``); a zero mantissa gives 0. No input text can have digits enough to
    matter against such an exponent.

    Raises:
        JSONError: ``text`` is not a number at all.
    """
    try:
        return Decimal(text)
    except InvalidOperation:
        m = _NUMBER.fullmatch(text)
        if m is None:
            raise JSONError(f"invalid number {text[:40]!r}") from None
        sign, whole, fraction, exp_sign = m.groups()
        sign = "-" if sign == "-" else ""
        if not (whole + fraction).strip("0"):
            return Decimal(f"{sign}0")
        return Decimal(f"{sign}1E{MIN_EMIN if exp_sign == '-' else f'+{MAX_EMAX}'}")


def _parse_int(digits: str) -> Any:
    if len(digits) > _LONG_INT:
        return Decimal(digits)
    return _NEGATIVE_ZERO if digits == "-0" else int(digits)


def loads(text: str | bytes, found: list) -> Any:
    """Parse JSON text; append to ``found`` every key seen twice in one object.

    Raises:
        JSONError: the text is not JSON (with line and column), uses a
            ``NaN``/``Infinity`` literal, or nests deeper than ``json`` can read within
            Python's recursion limit.
    """
    try:
        return json.loads(text, object_pairs_hook=_pairs_hook(found), parse_float=to_decimal, parse_int=_parse_int,
                          parse_constant=_bad_constant)
    except json.JSONDecodeError as exc:
        raise JSONError(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:  # json's reader is recursive: text nested past Python's recursion limit
        raise JSONError("JSON text nested deeper than Python's recursion limit lets json read it "
                        f"(messages may nest {MAX_DEPTH} levels)") from None
    except ValueError as exc:
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
