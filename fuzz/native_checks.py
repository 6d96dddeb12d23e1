"""The engines-agree checks of the native engine, shared by ``tests/test_native_engine.py`` and ``fuzz/fuzz_native.py``.

:func:`check_same` decodes one input with both engines in the same process: the
native decode (``_engine.decode``) and the generated Python parser
(``codec.parse``) must give the same value, type for type (an enum member stays
a member, a float keeps its bits, unknown fields are the same bytes), or the
native engine must refuse an input the Python one refuses with the same
:class:`~pbj.DecodeError` (text, path, offset: raised from C), or decline a
valid input it leaves to Python (``None``: nesting past 200 levels, the only
one left; merges, extensions and closed enums are its own). Every value decoded
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
from pbj.schema import OneOf, info, is_message

__all__ = ["identical", "check_same", "check_native", "check_counting", "check_writers", "native_decode", "same_error",
           "STATS", "NATIVE_STATS"]


def identical(a, b) -> bool:
    """Same value and same Python types at every leaf; floats by bits; unknown fields compared."""
    if type(a) is not type(b):
        return False
    if is_message(type(a)):
        return a._pbj_unknown == b._pbj_unknown and all(
            identical(getattr(a, n), getattr(b, n)) for n in info(type(a)).attr_order) and identical(
            getattr(a, "_pbj_extensions", ()), getattr(b, "_pbj_extensions", ()))
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(identical(v, b[k]) and type(k) is type(list(b)[list(a).index(k)])
                                          for k, v in a.items())
    return a == b


def same_error(a: pbj.DecodeError, b: pbj.DecodeError) -> bool:
    """The same error: text, reason, path (element types too) and offset."""
    return (str(a), a.reason, a.offset, [(type(x), x) for x in a.path]) == (
        str(b), b.reason, b.offset, [(type(x), x) for x in b.path])


def native_decode(cls, data: bytes, max_depth: int = pbj.DEFAULT_MAX_DEPTH, engine=None):
    """The native engine's decode of ``data``: the object, ``None`` (valid input it leaves to Python) or
    the DecodeError it raises (an input that is not a valid encoding), without the Python parser."""
    try:
        return (engine or _native._engine).decode(codec_of(cls).native, data, max_depth)
    except pbj.DecodeError as exc:
        return exc


def _python_decode(cls, data: bytes, max_depth: int = pbj.DEFAULT_MAX_DEPTH):
    try:
        return codec_of(cls).parse(data, 0, len(data), max_depth, None)
    except pbj.DecodeError as exc:
        return exc


STATS = {"agree_value": 0, "agree_error": 0, "declined": 0}


def _outcome(fn, *args, **kwargs):
    try:
        return ("ok", fn(*args, **kwargs))
    except pbj.PbjError as exc:
        return ("error", type(exc), str(exc), getattr(exc, "path", None), getattr(exc, "offset", None))


#: Past this input size check_entry compares the two results' bytes, not their trees (the entry
#: points' own tests compare trees value by value; a block's tree walk takes seconds).
ENTRY_IDENTICAL_BYTES = 1 << 16


def check_entry(cls, data: bytes):
    """``pbj.decode``/``pbj.encode`` (the builtins of pbj/_native/entry.c) give what pbj.api's Python functions give."""
    from pbj import api
    got, want = _outcome(pbj.decode, cls, data), _outcome(api.python_decode, cls, data)
    if got[0] == "ok" and len(data) > ENTRY_IDENTICAL_BYTES:  # a whole block: the same engine ran both calls
        assert want[0] == "ok" and pbj.encode(got[1]) == pbj.encode(want[1])
        return
    assert got[0] == want[0] and (identical(got[1], want[1]) if got[0] == "ok" else got == want), (got, want)
    if got[0] == "ok":
        assert _outcome(pbj.encode, got[1]) == _outcome(api.python_encode, want[1])


#: Counts of :func:`check_native`'s outcomes.
NATIVE_STATS = {"value": 0, "error": 0, "declined": 0}


def check_native(cls, data: bytes, engine=None):
    """The native engine's own checks of one input, with no Python decoder or writer (the lean mode of
    ``fuzz/fuzz_native.py``; :func:`check_same` adds the pure-Python engine as the oracle).

    Decoded by the engine (``decode``), by the walker's counting sink (:func:`check_counting`) and by
    ``pbj.decode`` (entry.c): the same value or the same DecodeError. A value is hashable and is written
    by the native forward writer (fresh, then with sizes cached), the reverse writer (into the engine's
    storage, fresh, and into ``ReverseBuffer``s that must grow at every point) and ``pbj.encode``: the
    same bytes, which decode again to a value written to the same bytes. Returns the engine's decode:
    the value, the DecodeError, or ``None`` (valid input left to Python)."""
    e = engine or _native._engine
    plan = codec_of(cls).native
    assert plan is not None, f"the native engine declines {cls.__name__}"
    try:
        native = e.decode(plan, data, pbj.DEFAULT_MAX_DEPTH)
    except pbj.DecodeError as exc:
        native = exc
    check_counting(plan, data, native, engine)
    try:
        entry = pbj.decode(cls, data)
    except pbj.DecodeError as exc:
        entry = exc
    if native is None:
        NATIVE_STATS["declined"] += 1
        return None
    if isinstance(native, pbj.DecodeError):
        assert isinstance(entry, pbj.DecodeError) and same_error(entry, native), (entry, native, data)
        NATIVE_STATS["error"] += 1
        return native
    assert type(native) is cls and native._pbj_size == -1, native
    assert isinstance(hash(native), int)
    fresh = e.decode(plan, data, pbj.DEFAULT_MAX_DEPTH)
    out = e.encode(plan, native)
    assert type(out) is bytes and native._pbj_size == len(out), (out, native._pbj_size)
    assert e.encode(plan, native) == out                          # sizes cached
    assert e.write_reverse(plan, fresh) == out                    # fresh, into the engine's own storage
    _reverse_into_buffers(e, plan, native, out)
    if isinstance(entry, pbj.DecodeError):  # only a missing required field (pbj.decode checks them)
        assert entry.offset is None and "required" in entry.reason, (entry, native)
    else:
        assert type(entry) is cls and pbj.encode(entry) == out and pbj.encode(entry, reverse=True) == out
    back = e.decode(plan, out, pbj.DEFAULT_MAX_DEPTH)
    assert type(back) is cls and e.encode(plan, back) == out, (back, out)
    NATIVE_STATS["value"] += 1
    return native


def _reverse_into_buffers(e, plan, value, expected: bytes) -> None:
    for capacity in (1, 7, 4096):                                # growth at every point, and none
        buf = pbj.ReverseBuffer(capacity)
        buf.write_bytes(b"tail")
        pos = buf.writer_begin()
        end = e.write_reverse(plan, value, buf, pos)
        assert end is not None
        buf.writer_commit(end)
        assert buf.to_bytes() == expected + b"tail"


def check_same(cls, data: bytes, engine=None):
    """Decode ``data`` with both engines; assert they agree; return the value (or None).

    ``engine``: the native engine's module object to decode with (default ``pbj._native._engine``;
    tests pass one made with test switches, ``tests/native_switches.py``). Runs :func:`check_native` first."""
    native = check_native(cls, data, engine)
    check_entry(cls, data)
    python = _python_decode(cls, data)
    if native is None:  # valid input the engine leaves to Python (deep nesting); api.decode falls back
        STATS["declined"] += 1
        return None if isinstance(python, pbj.DecodeError) else python
    if isinstance(native, pbj.DecodeError):  # refused: the same error as the Python parser's, from C
        assert isinstance(python, pbj.DecodeError), f"native refused what Python accepts ({native}): {data!r}"
        assert same_error(native, python), (native, python, data)
        STATS["agree_error"] += 1
        return None
    assert not isinstance(python, pbj.DecodeError), f"native accepted what Python refuses ({python}): {data!r}"
    assert identical(native, python), (native, python)  # (check_native hashed and wrote it)
    STATS["agree_value"] += 1
    check_writers(cls, data)
    return native


def check_counting(plan, data: bytes, decoded, engine=None) -> None:
    """The walker's counting sink (``count_values``, count.c) on the input ``decoded`` came from: it refuses
    with the same DecodeError, declines (``None``) the same input, and otherwise counts a number
    of values (0: an empty packed run) under (message class, field name) keys."""
    try:
        counts = (engine or _native._engine).count_values(plan, data, pbj.DEFAULT_MAX_DEPTH)
    except pbj.DecodeError as exc:
        assert isinstance(decoded, pbj.DecodeError) and same_error(exc, decoded), (exc, decoded, data)
        return
    assert not isinstance(decoded, pbj.DecodeError), f"count_values accepts what decode refuses ({decoded}): {data!r}"
    if decoded is None:
        assert counts is None, counts
        return
    assert type(counts) is dict and all(
        is_message(k[0]) and type(k[1]) is str and type(n) is int and n >= 0 for k, n in counts.items()), counts


def _encode_python(obj) -> bytes:
    codec = codec_of(type(obj))
    if obj._pbj_size < 0:
        parts: list[bytes] = []
        codec.write_fresh(obj, parts, parts.append)
        return b"".join(parts)
    parts = []
    codec.write(obj, parts.append)
    return b"".join(parts)


def keeps_other_bytes(value) -> bool:
    """True when ``value`` holds, at any depth (extensions included), a string with the lone surrogates
    that stand for bytes that are not UTF-8 (a proto2 string that keeps any bytes), which every writer,
    the native ones included, writes back as those bytes (surrogateescape)."""
    if isinstance(value, str):
        return any("\udc80" <= ch <= "\udcff" for ch in value)
    if isinstance(value, tuple | list):
        return any(keeps_other_bytes(v) for v in value)
    if isinstance(value, dict):
        return any(keeps_other_bytes(k) or keeps_other_bytes(v) for k, v in value.items())
    if isinstance(value, OneOf):
        return keeps_other_bytes(value.value)
    if is_message(value):
        names = [*info(type(value)).attr_order, "_pbj_extensions"]
        return any(keeps_other_bytes(getattr(value, n, None)) for n in names)
    return False


def check_writers(cls, data: bytes) -> None:
    """Encode fresh decodes of ``data`` with both writers (fresh, then with sizes cached).

    The fresh objects are the native engine's decodes (check_same has asserted them identical to
    the Python engine's), so a large input is not decoded three times more in Python."""
    codec = codec_of(cls)
    a = _native._engine.decode(codec.native, data, pbj.DEFAULT_MAX_DEPTH)
    b = _native._engine.decode(codec.native, data, pbj.DEFAULT_MAX_DEPTH)
    assert type(a) is cls and type(b) is cls
    expected = _encode_python(a)
    got = _native._engine.encode(codec.native, b)
    assert got == expected, (got, expected)  # never handed to the Python writer (None): issue 23
    assert b._pbj_size == a._pbj_size == len(expected)
    assert _native._engine.encode(codec.native, a) == expected  # sizes cached by the Python writer
    assert _encode_python(b) == expected                         # sizes cached by the native writer
    assert _native._engine.write_reverse(codec.native, b) == expected  # into the engine's own storage
    _reverse_into_buffers(_native._engine, codec.native, a, expected)


# ------------------------------------------------ Python code running in the middle of a native write
#
# The two memory errors of issue 20, as functions the tests (tests/test_writer_hardening.py) and the
# sanitizer run (fuzz/native_asan.sh) both call: Python code that runs while a native writer holds
# the message (a buffer's growth, a map key's comparison) replaces one of its fields with
# ``object.__setattr__``, so that the old value's last reference goes. A writer that kept a borrowed
# pointer to it reads freed memory (AddressSanitizer reports it; a normal build writes heap contents).


@pbj.message(full_name="pbj_hardening.Held")
class Held:
    """Every kind of value a writer reads memory of: str, bytes, sub-message, repeated, map, oneof."""

    name: str = pbj.field(1, "string")
    blob: bytes = pbj.field(2, "bytes")
    child: Held | None = pbj.field(3, "Held")
    kids: tuple[Held, ...] = pbj.field(4, "Held", repeated=True)
    texts: pbj.FrozenMap[str, str] = pbj.map_field(5, "string", "string")
    choice: pbj.OneOf | None = pbj.oneof(pick_text=(6, "string"), pick_blob=(7, "bytes"))


@pbj.message(full_name="pbj_hardening.Kept", syntax="proto2", extensions=range(100, 200))
class Kept:
    """Held's strings in proto2, where a string keeps any bytes: the lone surrogates U+DC80..U+DCFF that
    stand for bytes that are not UTF-8, which the native writers write from a bytes object of their own."""

    name: str | None = pbj.field(1, "string", optional=True)
    names: tuple[str, ...] = pbj.field(2, "string", repeated=True)
    texts: pbj.FrozenMap[str, str] = pbj.map_field(3, "string", "string")
    choice: pbj.OneOf | None = pbj.oneof(pick_text=(4, "string"), pick_number=(5, "int32"))


KEPT_NOTE = pbj.extension(Kept, 100, "string", name="pbj_hardening.kept_note")


@pbj.message(full_name="pbj_hardening.Keyed")
class Keyed:
    """A map with int keys, for a key whose comparison runs Python code."""

    m: pbj.FrozenMap[int, str] = pbj.map_field(1, "int32", "string")


class SwapOnGrow(pbj.ReverseBuffer):
    """A :class:`pbj.ReverseBuffer` whose first growth calls ``swap()`` (Python code mid-write).

    Right after ``swap()`` it fills the memory the replaced values gave back: one ``bytes`` of
    ``0xEE`` for every allocation size up to 12 KiB (kept until the buffer goes), so that a
    writer still reading a freed value reads these bytes (or crashes) on a normal build too, not
    only under AddressSanitizer (whose quarantine keeps freed memory from being reused).
    """

    __slots__ = ("grown", "scribbles", "swap")

    def __init__(self, capacity: int, swap) -> None:
        super().__init__(capacity)
        self.swap, self.grown, self.scribbles = swap, 0, []

    def writer_grow(self, pos: int, need: int) -> int:
        self.grown += 1
        swap, self.swap = self.swap, None
        if swap is not None:
            swap()
            self.scribbles = [b"\xee" * n for n in range(16, 12288, 16)]  # every size class, pymalloc's and glibc's
        return super().writer_grow(pos, need)


def _big(n: int, seed: int) -> bytes:
    return bytes((seed + i) % 251 for i in range(n))  # made at run time: no constant keeps it alive


def _text(n: int) -> str:
    return "".join(chr(0xE0 + i % 20) for i in range(n))  # not ASCII: its UTF-8 is a separate block


def _kept(n: int) -> str:
    """Text with a lone surrogate (a byte that is not UTF-8) every third character, made at run time."""
    return "".join(chr(0xDC80 + i % 128) if i % 3 == 0 else chr(0xE0 + i % 20) for i in range(n))


def _held_cases():
    """(label, build() -> (message, swap)) for every place a reverse write reads a value's memory."""
    def blob():
        o = Held(blob=_big(9000, 1))
        return o, lambda: object.__setattr__(o, "blob", b"")

    def name():
        o = Held(name=_text(5000))
        return o, lambda: object.__setattr__(o, "name", "")

    def child():
        o = Held(child=Held(blob=_big(9000, 2), name=_text(300)))
        return o, lambda: object.__setattr__(o, "child", None)

    def kids():
        o = Held(kids=(Held(name=_text(200)), Held(blob=_big(9000, 3)), Held(blob=_big(50, 4))))
        return o, lambda: object.__setattr__(o, "kids", ())

    def texts():
        o = Held(texts={_text(3): _text(6000), _text(4): _text(10)})
        return o, lambda: object.__setattr__(o, "texts", pbj.FrozenMap())

    def choice():
        o = Held(choice=pbj.OneOf("pick_blob", _big(9000, 5)))
        return o, lambda: object.__setattr__(o, "choice", None)

    def unknown():
        raw = b"\x52" + pbj.wire.encode_varint(9000) + _big(9000, 6)  # field 10, LEN: unknown to Held
        o = pbj.decode(Held, raw)
        return o, lambda: object.__setattr__(o, "_pbj_unknown", b"")

    # strings that keep bytes that are not UTF-8: written from bytes the writer made (and holds)
    def kept_name():
        o = Kept(name=_kept(5000))
        return o, lambda: object.__setattr__(o, "name", None)

    def kept_names():
        o = Kept(names=(_kept(3000), "x", _kept(10)))
        return o, lambda: object.__setattr__(o, "names", ())

    def kept_texts():
        o = Kept(texts={_kept(3): _kept(6000), _kept(4): "a", "b": _kept(7)})
        return o, lambda: object.__setattr__(o, "texts", pbj.FrozenMap())

    def kept_choice():
        o = Kept(choice=pbj.OneOf("pick_text", _kept(5000)))
        return o, lambda: object.__setattr__(o, "choice", None)

    def kept_extension():
        o = pbj.with_extensions(Kept(), {KEPT_NOTE: _kept(5000)})
        return o, lambda: object.__setattr__(o, "_pbj_extensions", ())

    return [("blob", blob), ("name", name), ("child", child), ("kids", kids), ("texts", texts),
            ("choice", choice), ("unknown", unknown), ("kept name", kept_name), ("kept names", kept_names),
            ("kept texts", kept_texts), ("kept choice", kept_choice), ("kept extension", kept_extension)]


def replaced_while_growing() -> int:
    """Reverse-write messages whose field is replaced inside the buffer's growth; assert the bytes.

    The native reverse writer must write the values it started with (it holds them), exactly as
    the Python reverse writer (which keeps them in locals) and as ``pbj.encode`` of the message
    before the change. Returns the number of cases run.
    """
    for label, build in _held_cases():
        o, _ = build()
        expected = _encode_python(o)
        plan_of = codec_of(type(o)).native
        for native in (True, False):
            o, swap = build()
            buf = SwapOnGrow(16, swap)
            buf.write_bytes(b"tail")
            pos = buf.writer_begin()
            if native:
                end = _native._engine.write_reverse(plan_of, o, buf, pos)
                assert end is not None, label
            else:
                end = codec_of(type(o)).write_reverse(o, buf, pos)
            buf.writer_commit(end)
            assert buf.grown and buf.swap is None, label
            assert buf.to_bytes() == expected + b"tail", (label, native)
    return len(_held_cases())


class ReplacingKey(int):
    """An ``int`` subclass whose ``<`` runs ``hook()`` first (a map key the constructor never stores)."""

    hook = None
    calls = 0

    def __lt__(self, other):
        type(self).calls += 1
        if ReplacingKey.hook is not None:
            ReplacingKey.hook()
        return int(self) < int(other)


def map_replaced_by_key_compare() -> int:
    """Native-write a map whose int-subclass key's ``<`` replaces the map; assert the writers decline.

    Such a key only gets in behind the constructor's back (``object.__setattr__``): both native
    writers decline it before comparing anything (no ``__lt__`` call), so the Python writer (which
    holds the map it sorts) writes it. Returns the number of writes checked.
    """
    plan = codec_of(Keyed).native
    count = 0
    for writer in ("forward", "reverse"):
        o = Keyed()
        object.__setattr__(o, "m", pbj.FrozenMap({ReplacingKey(i): _text(40 + i) for i in range(8)}))
        ReplacingKey.hook = lambda o=o: object.__setattr__(o, "m", pbj.FrozenMap())
        ReplacingKey.calls = 0
        try:
            if writer == "forward":
                got = _native._engine.encode(plan, o)
            else:
                buf = pbj.ReverseBuffer(16)
                got = _native._engine.write_reverse(plan, o, buf, buf.writer_begin())
                buf.writer_abort()
        finally:
            ReplacingKey.hook = None
        assert got is None and ReplacingKey.calls == 0, (writer, got, ReplacingKey.calls)
        count += 1
    return count
