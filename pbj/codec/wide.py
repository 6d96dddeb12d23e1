"""Wide messages: writers that step through a table, one row per field, instead of one block of code each.

CPython compiles a generated function in time that grows with its lines (and faster than
linearly past some thousands), and the inline writers of :mod:`pbj.codec.forward` and
:mod:`pbj.codec.reverse` take about ten lines per field. So a message with more than
:data:`WIDE_STEPS` write steps is written differently: each writer (``size_<Name>``,
``write_<Name>``, ``write_fresh_<Name>``, ``write_reverse_<Name>``) is a short loop over a
table with one row per write step, in write order (descending for the reverse writer):

* a singular scalar field (implicit or explicit presence, not a group) is a row made here, with
  no source: ``(row function, (get, tag, value))`` (:func:`scalar_row`), where the row function
  (one per role and presence rule, shared by all fields) reads the attribute with ``get``, tests
  presence and writes ``tag`` and ``value(v)`` as one piece;
* every other step (a repeated field, a map, a sub-message, a oneof run, an extension range)
  is a generated function of its own, ``<role>_<Name>__<number>``, holding the code the inline
  writer has for that step, in a row ``(function, None)``; so no generated function grows with
  the number of fields.

Each row ``(fn, a)`` is called with the arguments of the generated function it stands for
(:mod:`pbj.codec.forward`, :mod:`pbj.codec.reverse`) and ``a`` after ``o``, and does that
function's work for its field or step:

``size(o, a) -> int``
    The bytes the step takes (tags included), 0 when nothing is written.
``write(o, a, ap) -> int``
    Appends the step's pieces, returning the bytes appended.
``write_fresh(o, a, parts, ap) -> int``
    As ``write``, caching the sizes it learns.
``write_reverse(o, a, rb, pos) -> pos``
    Writes the step's bytes so that they end at ``pos``, through the writer protocol of
    :mod:`pbj.codec.buffer`, and returns where they begin.

Presence ("Field Presence"): an implicit-presence value is written when it is not its zero
value (``-0.0`` is written), an explicit-presence one when it is not ``None``. The bytes are
those of the inline writers: varints from :func:`pbj.wire.encode_varint` (which refuses a
value out of the type's range), ZigZag for ``sint32``/``sint64``, a ``float`` NaN with its bits
(:mod:`pbj.codec.float32`), strings as strict UTF-8 or, for ``utf8`` false fields, with
``surrogateescape`` (:mod:`pbj.codec.plan`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from pbj import scalars, wire
from pbj.codec import float32
from pbj.codec.plan import EXPLICIT, EXTENSIONS, FIELD, IMPLICIT, MESSAGE, FieldPlan, MessagePlan, row_of
from pbj.codec.runtime import blob

__all__ = ["WIDE_STEPS", "is_wide", "is_row", "scalar_row", "value_bytes"]

#: A message with more write steps than this has its writers as tables (:func:`is_wide`).
WIDE_STEPS = 128


def is_wide(plan: MessagePlan) -> bool:
    """Whether ``plan``'s writers are tables (more than :data:`WIDE_STEPS` write steps)."""
    return len(plan.writes) > WIDE_STEPS


def step_number(plan: MessagePlan, step: int, i: int, members: Any) -> int:
    """The field number that names write step ``i``'s function in a wide message: its field's, an
    extension range's first number, or a oneof run's first member's."""
    if step == FIELD:
        return plan.fields[i].number
    return plan.extension_ranges[i][0] if step == EXTENSIONS else plan.fields[members[0]].number


def is_row(f: FieldPlan) -> bool:
    """Whether field ``f`` is written by a row of :func:`scalar_row` in a wide message."""
    return f.label in (IMPLICIT, EXPLICIT) and f.type != MESSAGE and not f.group


def value_bytes(row: scalars.ScalarType, utf8: bool = True) -> Callable[[Any], bytes]:
    """``value_bytes(row)(v)``: the bytes of one value ``v`` of scalar ``row``, without a tag.

    A LEN value (``string``, ``bytes``) comes with its length, that of the bytes written: a string
    is encoded by ``str.encode`` itself (not the value's own ``encode``), a bytes value read
    through the buffer protocol unless it is exactly ``bytes`` (:func:`pbj.codec.runtime.blob`).
    ``utf8`` false: a string is encoded with ``surrogateescape`` (see :mod:`pbj.codec.plan`).

    Raises (from the returned function):
        EncodeError: an integer outside its type's range.
        TypeError, AttributeError, UnicodeEncodeError, struct.error: a value of the wrong
            type (the caller names the field).
    """
    venc = wire.encode_varint
    op = row.op
    if op == scalars.OP_STRING:
        errors = "strict" if utf8 else "surrogateescape"
        encode = str.encode

        def string(v: Any) -> bytes:
            b = encode(v, "utf-8", errors)
            return venc(len(b)) + b
        return string
    if op == scalars.OP_BYTES:
        def data(v: Any) -> bytes:
            b = v if type(v) is bytes else blob(v)
            return venc(len(b)) + b
        return data
    if op == scalars.OP_ZIGZAG:
        zz = wire.zigzag32 if row.bits == 32 else wire.zigzag64
        return lambda v: venc(zz(v))
    if op == scalars.OP_BOOL:
        return lambda v: b"\x01" if v else b"\x00"
    if op in (scalars.OP_VARINT, scalars.OP_ENUM):
        kind = row.name  # encode_varint's name for the type's range
        return lambda v: venc(v, kind)
    pack = row.packer.pack  # type: ignore[union-attr]  # every fixed-width row has its struct
    if op == scalars.OP_FLOAT32:
        nan = float32.nan_bytes
        return lambda v: pack(v) if v == v else nan(v)
    return pack


def _getter(plan: MessagePlan, name: str, raw: bool) -> Callable[[Any], Any]:
    """What reads field ``name`` of an instance: its slot for a field with a declared default
    (``raw``: the attribute gives the default when the slot holds ``None``), else the attribute."""
    if raw:
        return plan.slots_class.__dict__[name].__get__  # type: ignore[no-any-return]
    return operator.attrgetter(name)


def _put(rb: Any, pos: int, piece: bytes) -> int:
    """Write ``piece`` so that it ends at ``pos`` in reverse buffer ``rb``; returns where it begins."""
    n = len(piece)
    if pos < n:
        pos = rb.writer_grow(pos, n)
    pos -= n
    rb.writer_view[pos:pos + n] = piece
    return pos


def _append(ap: Any, piece: bytes) -> int:
    """Append ``piece`` through ``ap``; returns its size (what the forward writers count)."""
    ap(piece)
    return len(piece)


# The row functions, one set per presence rule; ``a`` is the row's ``(get, tag, value)``. The
# forward writers' rows return the bytes they append (``write_fresh`` caches nothing: a scalar has
# no size of its own to cache, so it is ``write`` with the arguments of its role).

def _size_set(o: Any, a: tuple) -> int:
    v = a[0](o)
    return 0 if v is None else len(a[1]) + len(a[2](v))


def _write_set(o: Any, a: tuple, ap: Any) -> int:
    v = a[0](o)
    return 0 if v is None else _append(ap, a[1] + a[2](v))


def _write_reverse_set(o: Any, a: tuple, rb: Any, pos: int) -> int:
    v = a[0](o)
    return pos if v is None else _put(rb, pos, a[1] + a[2](v))


def _size_nonzero(o: Any, a: tuple) -> int:
    v = a[0](o)
    return len(a[1]) + len(a[2](v)) if v else 0


def _write_nonzero(o: Any, a: tuple, ap: Any) -> int:
    v = a[0](o)
    return _append(ap, a[1] + a[2](v)) if v else 0


def _write_reverse_nonzero(o: Any, a: tuple, rb: Any, pos: int) -> int:
    v = a[0](o)
    return _put(rb, pos, a[1] + a[2](v)) if v else pos


_copysign = math.copysign


def _size_float(o: Any, a: tuple) -> int:
    v = a[0](o)
    return len(a[1]) + len(a[2](v)) if v or _copysign(1.0, v) < 0.0 else 0  # -0.0 is written, 0.0 is not


def _write_float(o: Any, a: tuple, ap: Any) -> int:
    v = a[0](o)
    return _append(ap, a[1] + a[2](v)) if v or _copysign(1.0, v) < 0.0 else 0


def _write_reverse_float(o: Any, a: tuple, rb: Any, pos: int) -> int:
    v = a[0](o)
    return _put(rb, pos, a[1] + a[2](v)) if v or _copysign(1.0, v) < 0.0 else pos


def _fresh(write: Callable[[Any, tuple, Any], int]) -> Callable[[Any, tuple, Any, Any], int]:
    """The ``write_fresh`` row function of a scalar rule: its ``write`` one, called with that role's arguments."""
    def write_fresh(o: Any, a: tuple, parts: Any, ap: Any) -> int:
        return write(o, a, ap)
    return write_fresh


#: presence rule -> role -> row function.
_ROW_FUNCTIONS: dict[str, dict[str, Callable[..., Any]]] = {
    rule: {"size": globals()[f"_size_{rule}"], "write": globals()[f"_write_{rule}"],
           "write_fresh": _fresh(globals()[f"_write_{rule}"]), "write_reverse": globals()[f"_write_reverse_{rule}"]}
    for rule in ("set", "nonzero", "float")
}
_VALUES: dict[tuple[int, bool], Callable[[Any], bytes]] = {}


def scalar_row(plan: MessagePlan, f: FieldPlan, raw: bool = False) -> tuple[dict[str, Callable[..., Any]], tuple]:
    """The row of singular scalar field ``f`` of ``plan`` (see the module docstring); ``raw``: the
    field declares a default, and is read through its slot (:func:`pbj.codec.emit.raw_names`).

    Returns:
        ``(functions, argument)``: role -> row function (``size``, ``write``, ``write_fresh``,
        ``write_reverse``; shared by every field of the same presence rule), and the argument
        each is called with for this field, ``(get, tag, value)``: what reads the field,
        its tag bytes and :func:`value_bytes` of its type.
    """
    row = row_of(f.type)
    value = _VALUES.get((f.type, f.utf8))
    if value is None:
        value = _VALUES[f.type, f.utf8] = value_bytes(row, f.utf8)
    rule = "set" if f.label == EXPLICIT else "float" if row.is_float else "nonzero"
    return _ROW_FUNCTIONS[rule], (_getter(plan, f.name, raw), f.tag, value)
