"""Floating-point numbers in the text format: how they are written and narrowed.

Writing follows Google's C++ printer (``io::SimpleDtoa`` / ``io::SimpleFtoa``,
which ``protoc --decode`` uses): a ``double`` is written with C's ``%.15g`` and,
if that text does not read back as the same ``double``, with ``%.17g``; a
``float`` with ``%.6g``, else ``%.9g``, read back as a ``float`` (also ``%.9g``
when the short text reads back below the smallest normal ``float``: C's
``strtof`` then reports an underflow, which C++ takes as a mismatch). Infinities
are ``inf`` and ``-inf``, every NaN is ``nan``. So ``0.1`` prints as ``0.1``,
``-0.0`` as ``-0``, ``1e100`` as ``1e+100`` and the ``float`` nearest 3.3 as
``3.3``. (Google's Python printer writes the shortest text that reads back
instead, ``4294967300.0`` where C++ writes ``4.2949673e+09``; both read back
as the same number, and pbj follows C++.)

Reading a ``float`` field follows C++ too (``io::SafeDoubleToFloat``): the text
is read as a ``double`` first, then narrowed to binary32 by rounding to nearest;
values beyond the largest ``float`` become infinite, except those that would
round down to it (protobuf.dev "Text Format Language Specification", "Value
Types": "Overflows are treated as infinity or -infinity").
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

__all__ = ["format_double", "format_float", "to_float32", "FLOAT32_MAX"]

_F32 = struct.Struct("<f")
_U32 = struct.Struct("<I")
#: The largest finite binary32 value.
FLOAT32_MAX = 3.4028234663852886e38
# Halfway between FLOAT32_MAX and the next binary32 step (0x1.ffffffp127): what still rounds to it.
_FLOAT32_ROUNDS_TO_MAX = 3.4028235677973366e38
_INF = math.inf
_F32_MIN_SUBNORMAL = 1.401298464324817e-45
_F32_MIN_NORMAL = 1.1754943508222875e-38


def to_float32(value: float) -> float:
    """``value`` rounded to the nearest binary32 ``float`` (C++ ``SafeDoubleToFloat``).

    Args:
        value: a ``double``.

    Returns:
        The nearest binary32 value, as a Python ``float``; ``inf``/``-inf``
        beyond ``FLOAT32_MAX`` (except what rounds down to it); NaN stays NaN.
    """
    try:
        return _F32.unpack(_F32.pack(value))[0]
    except OverflowError:  # beyond what rounds to FLOAT32_MAX
        if value > 0:
            return FLOAT32_MAX if value <= _FLOAT32_ROUNDS_TO_MAX else _INF
        return -FLOAT32_MAX if value >= -_FLOAT32_ROUNDS_TO_MAX else -_INF


def format_double(value: float) -> str:
    """A ``double`` as Google's C++ printer writes it (``%.15g``, else ``%.17g``).

    Args:
        value: the value.

    Returns:
        The text: ``nan``, ``inf``, ``-inf`` or C's ``%g`` form (``1.5``,
        ``-0``, ``1e+100``, ``0.30000000000000004``).
    """
    if value != value:
        return "nan"
    if value == _INF:
        return "inf"
    if value == -_INF:
        return "-inf"
    text = f"{value:.15g}"
    if float(text) != value:
        text = f"{value:.17g}"
    return text


def format_float(value: float) -> str:
    """A binary32 ``float`` as Google's C++ printer writes it (``%.6g``, else ``%.9g``).

    Args:
        value: the value, already a binary32 value (see :func:`to_float32`).

    Returns:
        The text, as for :func:`format_double` (``3.3``, ``-0``, ``3.4028235e+38``).
    """
    if value != value:
        return "nan"
    if value == _INF:
        return "inf"
    if value == -_INF:
        return "-inf"
    text = f"{value:.6g}"
    back = _read_float32(text)
    # C++ also takes the long form when reading the short one underflows (strtof's ERANGE: the
    # text is below the smallest normal float), which every subnormal value does.
    if back != value or (back and -_F32_MIN_NORMAL < back < _F32_MIN_NORMAL):
        text = f"{value:.9g}"
    return text


def _read_float32(text: str) -> float:
    """The binary32 value nearest the decimal ``text`` (C's ``strtof``), rounding only once.

    Reading as a ``double`` and then narrowing rounds twice; that differs from
    one rounding only when the ``double`` lands exactly halfway between two
    binary32 values, which is then settled exactly.
    """
    wide = float(text)
    try:
        narrow = _F32.unpack(_F32.pack(wide))[0]
    except OverflowError:  # ``wide`` rounds to infinity; a decimal just below the halfway point does not
        if abs(wide) == _FLOAT32_ROUNDS_TO_MAX and abs(Fraction(text)) < Fraction(_FLOAT32_ROUNDS_TO_MAX):
            return math.copysign(FLOAT32_MAX, wide)
        return math.copysign(_INF, wide)
    if narrow == wide or math.isinf(narrow):
        return narrow
    bits = _U32.unpack(_F32.pack(narrow))[0]
    # The binary32 neighbour on the other side of ``wide``.
    step = 1 if (narrow < wide) == (narrow > 0) else -1
    if bits & 0x7FFFFFFF:
        other = _F32.unpack(_U32.pack(bits + step))[0]
    else:  # narrow is a zero: the neighbour is the smallest subnormal on the side of ``wide``
        other = math.copysign(_F32_MIN_SUBNORMAL, wide)
    if wide != (narrow + other) / 2:
        return narrow
    exact = Fraction(text)
    half = Fraction(narrow) + Fraction(other)
    if exact * 2 == half:
        return narrow  # a true tie: already rounded to even
    return max(narrow, other) if exact * 2 > half else min(narrow, other)
