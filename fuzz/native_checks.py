"""The engines-agree checks of the native engine, shared by ``tests/test_native_engine.py`` and ``fuzz/fuzz_native.py``.

:func:`check_same` decodes one input with both engines in the same process: the
native decode (``_engine.decode``) and the generated Python parser
(``codec.parse``) must give the same value, type for type (an enum member stays
a member, a float keeps its bits, unknown fields are the same bytes), or the
native engine must refuse an input the Python one refuses (``None``), or
decline a valid input it leaves to Python (``NotImplemented``: a singular
sub-message that occurs twice, nesting past 200 levels). Every value decoded
is then encoded by the native forward writer (fresh and with sizes cached), by
the native reverse writer (into buffers that must grow at every point) and by
the Python writer; all bytes must be equal (:func:`check_writers`). An
``AssertionError`` is a disagreement.
"""

from __future__ import annotations

import struct

import pbj
from pbj import _native
from pbj.codec import codec_of
from pbj.schema import info, is_message

__all__ = ["identical", "check_same", "check_writers", "STATS"]


def identical(a, b) -> bool:
    """Same value and same Python types at every leaf; floats by bits; unknown fields compared."""
    if type(a) is not type(b):
        return False
    if is_message(type(a)):
        return a._pbj_unknown == b._pbj_unknown and all(
            identical(getattr(a, n), getattr(b, n)) for n in info(type(a)).attr_order)
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(identical(v, b[k]) and type(k) is type(list(b)[list(a).index(k)])
                                          for k, v in a.items())
    return a == b


def _python_decode(cls, data: bytes):
    try:
        return codec_of(cls).parse(data, 0, len(data), pbj.DEFAULT_MAX_DEPTH, None)
    except pbj.DecodeError as exc:
        return exc


STATS = {"agree_value": 0, "agree_error": 0, "declined": 0}


def check_same(cls, data: bytes):
    """Decode ``data`` with both engines; assert they agree; return the value (or None)."""
    codec = codec_of(cls)
    assert codec.native is not None, f"the native engine declines {cls.__name__}"
    native = _native._engine.decode(codec.native, data, pbj.DEFAULT_MAX_DEPTH, True)
    python = _python_decode(cls, data)
    if native is NotImplemented:  # valid input the engine leaves to Python (a merge); api.decode falls back
        STATS["declined"] += 1
        return None if isinstance(python, pbj.DecodeError) else python
    if native is None:
        assert isinstance(python, pbj.DecodeError), f"native refused what Python accepts: {data!r}"
        STATS["agree_error"] += 1
        return None
    assert not isinstance(python, pbj.DecodeError), f"native accepted what Python refuses ({python}): {data!r}"
    assert identical(native, python), (native, python)
    assert native._pbj_size == -1
    assert isinstance(hash(native), int)  # hashable (equal hashes cannot be asked for: hash(nan) is per object)
    STATS["agree_value"] += 1
    check_writers(cls, data)
    return native


def _encode_python(obj) -> bytes:
    codec = codec_of(type(obj))
    if obj._pbj_size < 0:
        parts: list[bytes] = []
        codec.write_fresh(obj, parts, parts.append)
        return b"".join(parts)
    parts = []
    codec.write(obj, parts.append)
    return b"".join(parts)


def check_writers(cls, data: bytes) -> None:
    """Encode fresh decodes of ``data`` with both writers (fresh, then with sizes cached)."""
    codec = codec_of(cls)
    a = _python_decode(cls, data)
    b = _python_decode(cls, data)
    expected = _encode_python(a)
    got = _native._engine.encode(codec.native, b)
    assert got == expected, (got, expected)
    assert b._pbj_size == a._pbj_size == len(expected)
    assert _native._engine.encode(codec.native, a) == expected  # sizes cached by the Python writer
    assert _encode_python(b) == expected                         # sizes cached by the native writer
    for capacity in (1, 7, 4096):                                # growth at every point, and none
        buf = pbj.ReverseBuffer(capacity)
        buf.write_bytes(b"tail")
        pos = buf.writer_begin()
        end = _native._engine.write_reverse(codec.native, a, buf, pos)
        assert end is not None
        buf.writer_commit(end)
        assert buf.to_bytes() == expected + b"tail"
