"""Random pbj messages drawn with a seeded ``random.Random``: the long runs' generator.

:func:`pbj.testing.values` draws every choice through hypothesis' engine (tens of microseconds
each, plus the engine's own bookkeeping); a message of the conformance schema
``TestAllTypesProto3`` at depth 2 holds a few thousand choices, so 1,000 of them cost minutes of
CPU in generation alone, against seconds for the conversions a test checks. :func:`message`
draws the same kinds of values (each field of the class, each oneof member or none, unknown
fields of every wire type; the edges of :mod:`pbj.testing` half the time: integer limits and
varint edges, ``-0.0``, NaN, infinities and subnormals, strings and bytes whose length prefix
grows, astral characters, enum numbers no member names, proto2 ``required`` fields always set)
with one ``random.Random``, about 30x faster. The seed comes from hypothesis
(``st.integers``), so a run is as deterministic as the profile makes it, and a failure prints
the seed that rebuilds its message.
"""

from __future__ import annotations

import enum
import math
import random
import struct
from typing import Any

from pbj import wire
from pbj.schema import FieldInfo, FrozenMap, OneOf, info
from pbj.testing import _ASTRAL as ASTRAL
from pbj.testing import _DOUBLE_EDGES as DOUBLE_EDGES
from pbj.testing import _FLOAT_EDGES as FLOAT_EDGES
from pbj.testing import _LEAD_CHARS as LEAD_CHARS
from pbj.testing import INT_EDGES, LENGTH_EDGES, _exact_text, _tag, _zero_of

__all__ = ["message"]

_UNKNOWN_NUMBERS = (1, 2, 3, 15, 16, 2047, 2048, 262143, 262144, wire.MAX_FIELD_NUMBER)
_ENUM_UNKNOWN = (2, 7, 127, 128, -1, -2, (1 << 31) - 1, -(1 << 31))
_INT_EDGES = {kind: tuple(sorted({v for v in (*INT_EDGES, lo, hi) if lo <= v <= hi}))
              for kind, (lo, hi) in wire.RANGES.items()}


def message(cls: type, rng: random.Random, *, max_depth: int = 2, unknown_fields: bool = True) -> Any:
    """A random valid instance of pbj message class ``cls`` (as :func:`pbj.testing.values` draws them).

    Args:
        cls: a pbj message class.
        rng: the source of randomness (one seed, one message).
        max_depth: levels of sub-messages below this one (then message fields are ``None``,
            lists and maps of messages empty).
        unknown_fields: give this message and its sub-messages unknown fields.
    """
    return _Draw(rng, unknown_fields).message(cls, max_depth)


class _Draw:
    def __init__(self, rng: random.Random, unknown: bool) -> None:
        self.rng = rng
        self.unknown = unknown

    def message(self, cls: type, depth: int) -> Any:
        rng = self.rng
        mi = info(cls)
        closed = mi.syntax == "proto2"
        kwargs: dict[str, Any] = {}
        for f in mi.fields:
            if (f.repeated or f.type in ("string", "bytes")) and rng.random() < 0.5:
                kwargs[f.name] = FrozenMap() if f.is_map else () if f.repeated else {"string": "", "bytes": b""}[f.type]
            else:
                kwargs[f.name] = self.field(f, depth, closed)
        for o in mi.oneofs:
            options = [m for m in o.members if not self.is_message(m.type) or depth > 0]
            pick = rng.randrange(len(options) + 1)
            if pick < len(options):
                m = options[pick]
                kwargs[o.name] = OneOf(m.name, self.single(m.type, depth, closed))
            else:
                kwargs[o.name] = None
        if self.unknown:
            used = {f.number for f in mi.all_fields()} | set(mi.extensions)
            if mi.message_set:
                used.add(1)
            kwargs["_pbj_unknown"] = b"" if rng.random() < 0.5 else self.unknown_bytes(used)
        return cls(**kwargs)

    @staticmethod
    def is_message(t: Any) -> bool:
        return not isinstance(t, str) and not (isinstance(t, type) and issubclass(t, enum.IntEnum))

    def field(self, f: FieldInfo, depth: int, closed: bool) -> Any:
        rng = self.rng
        if f.is_map:
            if self.is_message(f.map_value) and depth <= 0:
                return FrozenMap()
            return FrozenMap({self.scalar(f.map_key): self.single(f.map_value, depth, closed)
                              for _ in range(rng.randint(0, 3))})
        if self.is_message(f.type) and depth <= 0:
            return () if f.repeated else None
        if f.repeated:
            return tuple(self.single(f.type, depth, closed) for _ in range(rng.randint(0, 5)))
        if f.optional and not f.required:
            r = rng.random()
            if r < 0.5:
                return None
            zero = _zero_of(f.type)
            if r < 0.625 and zero is not None:
                return zero
        return self.single(f.type, depth, closed)

    def single(self, t: Any, depth: int, closed: bool) -> Any:
        if isinstance(t, str):
            return self.scalar(t)
        if isinstance(t, type) and issubclass(t, enum.IntEnum):
            return self.enum_value(t, closed)
        return self.message(t, depth - 1)

    def enum_value(self, t: type[enum.IntEnum], closed: bool) -> Any:
        rng = self.rng
        members = list(t)
        if closed or getattr(t, "__pbj_closed__", False) or rng.random() < 2 / 3:
            return rng.choice(members)
        known = {int(m) for m in members}
        for _ in range(8):
            v = rng.choice(_ENUM_UNKNOWN) if rng.random() < 0.5 else rng.randint(-(1 << 31), (1 << 31) - 1)
            if v not in known:
                return v
        return rng.choice(members)

    def scalar(self, kind: str) -> Any:
        rng = self.rng
        r = rng.random()
        if kind in wire.RANGES:
            lo, hi = wire.RANGES[kind]
            if r < 0.4:
                return rng.choice(_INT_EDGES[kind])
            if r < 0.7:
                return max(lo, min(hi, rng.randint(-300, 300)))
            return rng.randint(lo, hi)
        if kind == "double":
            if r < 0.5:
                return rng.choice(DOUBLE_EDGES)
            if r < 0.75:
                return rng.uniform(-100.0, 100.0)
            return math.ldexp(rng.uniform(-1.0, 1.0), rng.randint(-1074, 1023))
        if kind == "float":  # binary32 values only, NaN as the quiet NaNs of the edges (pbj.testing says why)
            if r < 0.5:
                return rng.choice(FLOAT_EDGES)
            bits = rng.getrandbits(32)
            if (bits >> 23) & 0xFF == 0xFF:
                bits &= ~(1 << 30)  # an exponent of all ones (infinity, NaN) made finite
            return struct.unpack("<f", struct.pack("<I", bits))[0]
        if kind == "bool":
            return r < 0.5
        if kind == "string":
            if r < 0.25:
                return _exact_text(rng.choice(LENGTH_EDGES), rng.choice(LEAD_CHARS))
            if r < 0.375:
                return "".join(rng.choice(ASTRAL) for _ in range(rng.randint(0, 3)))
            return "".join(self.char() for _ in range(rng.randint(0, 8)))
        if kind == "bytes":
            if r < 1 / 3:
                return bytes([rng.randrange(256)]) * rng.choice(LENGTH_EDGES)
            return rng.randbytes(rng.randint(0, 10))
        raise ValueError(f"{kind!r} is not a scalar type name")

    def char(self) -> str:
        rng = self.rng
        if rng.random() < 0.6:
            return chr(rng.randint(0x20, 0x7E))
        c = rng.randint(0, 0x10FFFF - 0x800)
        return chr(c if c < 0xD800 else c + 0x800)  # no surrogates

    def unknown_bytes(self, used: set[int]) -> bytes:
        rng = self.rng
        out = []
        for _ in range(rng.randint(0, 3)):
            if rng.random() < 0.2:
                n = self.unknown_number(used)
                inner = b"".join(self.plain_unknown(used) for _ in range(rng.randint(0, 2)))
                out.append(_tag(n, 3) + inner + _tag(n, 4))
            else:
                out.append(self.plain_unknown(used))
        return b"".join(out)

    def unknown_number(self, used: set[int]) -> int:
        rng = self.rng
        while True:
            n = rng.choice(_UNKNOWN_NUMBERS) if rng.random() < 0.5 else rng.randint(1, wire.MAX_FIELD_NUMBER)
            if n not in used:
                return n

    def plain_unknown(self, used: set[int]) -> bytes:
        rng = self.rng
        n = self.unknown_number(used)
        kind = rng.randrange(4)
        if kind == 0:
            v = rng.choice((0, 1, 127, 128, 1 << 63, (1 << 64) - 1)) if rng.random() < 0.5 else rng.getrandbits(64)
            return _tag(n, 0) + wire.encode_varint(v)
        if kind == 1:
            return _tag(n, 1) + rng.randbytes(8)
        if kind == 2:
            b = rng.randbytes(rng.randint(0, 10))
            return _tag(n, 2) + wire.encode_varint(len(b)) + b
        return _tag(n, 5) + rng.randbytes(4)

