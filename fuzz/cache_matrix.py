"""The private-cache matrix: values set by hand in a message's private state, or a field's value
swapped behind the constructor's back, must never make a writer emit bytes that do not decode.

Messages are frozen, but ``object.__setattr__`` can still put anything into their slots: a cached
size (``_pbj_size``) that no writer wrote, a ``bytes`` subclass whose ``len`` lies, a ``memoryview``
whose items are not bytes, a sub-message of another class whose field names match. For each such
input (:func:`cases`) every writer runs (:data:`WRITERS`: both engines' forward writer, the
reverse writer into the engine's own storage and into a small :class:`~pbj.ReverseBuffer` that
must grow), and each must give the bytes of the honest message, or each must raise the same
:class:`~pbj.EncodeError` with the same path. :func:`run` counts the outcomes;
``tests/test_private_caches.py`` asserts them on both engines and ``fuzz/native_asan.sh`` runs
them on the AddressSanitizer + UndefinedBehaviorSanitizer build (``python -m fuzz.cache_matrix``).
"""

from __future__ import annotations

import array
import itertools
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pbj
from pbj import _native

__all__ = ["SIZES", "WRITERS", "cases", "run", "Top", "Leaf", "Point", "LeafLike"]


@pbj.message(full_name="pbj_cache_matrix.Point")
class Point:
    """A leaf the Python forward writer writes inline (scalars with 1-byte tags)."""

    x: int = pbj.field(1, "int64")
    y: int = pbj.field(2, "sint32")


@pbj.message(full_name="pbj_cache_matrix.Leaf")
class Leaf:
    blob: bytes = pbj.field(1, "bytes")
    text: str = pbj.field(2, "string")
    at: Point | None = pbj.field(3, Point)


@pbj.message(full_name="pbj_cache_matrix.LeafLike")
class LeafLike:
    """Leaf's field names and numbers, and one field more: a sub-message of the wrong class."""

    blob: bytes = pbj.field(1, "bytes")
    text: str = pbj.field(2, "string")
    at: Point | None = pbj.field(3, Point)
    extra: int = pbj.field(4, "int32")


@pbj.message(full_name="pbj_cache_matrix.Top")
class Top:
    one: Leaf | None = pbj.field(1, Leaf)
    many: tuple[Leaf, ...] = pbj.field(2, Leaf, repeated=True)
    by_name: pbj.FrozenMap[str, Leaf] = pbj.map_field(3, "string", Leaf)
    pick: pbj.OneOf | None = pbj.oneof(pick_leaf=(4, Leaf), pick_text=(5, "string"))
    blob: bytes = pbj.field(6, "bytes")
    blobs: pbj.FrozenMap[str, bytes] = pbj.map_field(7, "string", "bytes")
    point: Point | None = pbj.field(8, Point)
    n: int = pbj.field(9, "int32")


def honest() -> Top:
    """A new copy of the honest message (nothing measured yet)."""
    return Top(
        one=Leaf(blob=b"ab", text="one", at=Point(x=300, y=-2)),
        many=(Leaf(blob=b"c" * 130), Leaf(text="yy"), Leaf(at=Point(x=1))),
        by_name=pbj.FrozenMap({"k": Leaf(blob=b"q", at=Point(y=5)), "j": Leaf()}),
        pick=pbj.OneOf("pick_leaf", Leaf(text="z" * 200)),
        blob=b"top", blobs=pbj.FrozenMap({"b": b"xyz"}), point=Point(x=7, y=7), n=150)


#: Where a message sits in the tree: name -> how to find it in an instance of :func:`honest`.
PLACES: dict[str, Callable[[Top], Any]] = {
    "top": lambda o: o,
    "one": lambda o: o.one,
    "one.at": lambda o: o.one.at,
    "many[0]": lambda o: o.many[0],
    "many[2]": lambda o: o.many[2],
    "many[2].at": lambda o: o.many[2].at,
    "by_name[k]": lambda o: o.by_name["k"],
    "by_name[k].at": lambda o: o.by_name["k"].at,
    "pick": lambda o: o.pick[1],
    "point": lambda o: o.point,
}

#: The cached sizes set by hand: no writer ever caches these (or they are wrong for the message).
SIZES: tuple[Any, ...] = (-2, -100, True, False, 0, 1, 2**31, 2**63 - 1, 2**64, -(2**70), 3.0, "7", None)


class LyingBytes(bytes):
    """``bytes`` whose ``len`` says something else than the bytes it holds."""

    def __new__(cls, data: bytes, claim: int) -> LyingBytes:
        self = super().__new__(cls, data)
        self.claim = claim
        return self

    def __len__(self) -> int:
        return self.claim


def _buffers() -> dict[str, Callable[[], Any]]:
    """Bytes-like values whose ``len`` is not their size in bytes (or that are not ``bytes``)."""
    return {
        "bytes subclass, len too small": lambda: LyingBytes(b"abcdef", 1),
        "bytes subclass, len too large": lambda: LyingBytes(b"ab", 200),
        "memoryview of array('i')": lambda: memoryview(array.array("i", [1, 2, 3])),
        "memoryview, 2-D": lambda: memoryview(b"abcdef").cast("B", (2, 3)),
        "memoryview, strided": lambda: memoryview(b"abcdefgh")[::2],
        "bytearray": lambda: bytearray(b"abc"),
    }


#: Where a bytes value sits: name -> (how to set it in an instance, how to set it in the honest one).
_BYTES_PLACES: dict[str, Callable[[Top, Any], None]] = {
    "blob": lambda o, v: object.__setattr__(o, "blob", v),
    "one.blob": lambda o, v: object.__setattr__(o.one, "blob", v),
    "many[0].blob": lambda o, v: object.__setattr__(o.many[0], "blob", v),
    "by_name[k].blob": lambda o, v: object.__setattr__(o.by_name["k"], "blob", v),
    "blobs[b]": lambda o, v: object.__setattr__(o, "blobs", pbj.FrozenMap({"b": v})),
}

#: Where a sub-message of another class can be put: name -> (setter, the path the error names).
_WRONG_PLACES: dict[str, tuple[Callable[[Top, Any], None], list[Any]]] = {
    "one": (lambda o, v: object.__setattr__(o, "one", v), ["one"]),
    "many[1]": (lambda o, v: object.__setattr__(o, "many", (o.many[0], v, o.many[2])), ["many", 1]),
    "by_name[k]": (lambda o, v: object.__setattr__(o, "by_name", pbj.FrozenMap({"k": v})), ["by_name", ("k",)]),
    "pick": (lambda o, v: object.__setattr__(o, "pick", pbj.OneOf("pick_leaf", v)), ["pick", "pick_leaf"]),
    "one.at": (lambda o, v: object.__setattr__(o.one, "at", v), ["one", "at"]),
}


def _encode(reverse: bool) -> Callable[[Any], bytes]:
    return lambda o: pbj.encode(o, reverse=reverse)


def _into_buffer(o: Any) -> bytes:
    buf = pbj.ReverseBuffer(16)  # grows several times during the write
    buf.write_bytes(b"tail")
    pbj.write_reverse(o, buf)
    data = buf.to_bytes()
    assert data.endswith(b"tail")
    return data[:-4]


#: Every writer: name -> a function of a message returning its bytes.
WRITERS: dict[str, Callable[[Any], bytes]] = {
    "forward": _encode(False),
    "reverse": _encode(True),
    "reverse into a ReverseBuffer": _into_buffer,
}


def _forge_sizes(place: str, size: Any, warm: bool) -> Callable[[], Top]:
    def make() -> Top:
        o = honest()
        if warm:
            pbj.encode(o)  # every size measured and cached first
        object.__setattr__(PLACES[place](o), "_pbj_size", size)
        return o
    return make


def _forge_pair(place_a: str, place_b: str, k: int) -> Callable[[], Top]:
    """Two siblings' sizes moved by +k and -k after a write: their parent's total still holds."""
    def make() -> Top:
        o = honest()
        pbj.encode(o)
        a, b = PLACES[place_a](o), PLACES[place_b](o)
        object.__setattr__(a, "_pbj_size", a._pbj_size + k)
        object.__setattr__(b, "_pbj_size", b._pbj_size - k)
        return o
    return make


def _with_value(put: Callable[[Top, Any], None], value: Callable[[], Any], warm: bool) -> Callable[[], Top]:
    def make() -> Top:
        o = honest()
        if warm:
            pbj.encode(o)
        put(o, value())
        return o
    return make


def cases() -> Iterator[tuple[str, Callable[[], Top], bytes | list[Any]]]:
    """Every case: (its name, a maker of a new forged message, what every writer must give).

    What every writer must give is the honest bytes, or (a sub-message of the wrong class) the
    path of the EncodeError every writer must raise.
    """
    good = pbj.encode(honest())
    for (place, size), warm in itertools.product(itertools.product(PLACES, SIZES), (False, True)):
        yield f"_pbj_size={size!r} at {place}, {'sizes cached' if warm else 'fresh'}", \
            _forge_sizes(place, size, warm), good
    for place in PLACES:  # off by one, either way
        for k in (1, -1):
            def make(place: str = place, k: int = k) -> Top:
                o = honest()
                pbj.encode(o)
                target = PLACES[place](o)
                object.__setattr__(target, "_pbj_size", target._pbj_size + k)
                return o
            yield f"_pbj_size off by {k:+d} at {place}, sizes cached", make, good
    for a, b in (("many[0]", "many[2]"), ("one", "pick"), ("one.at", "one"), ("by_name[k]", "many[1]")):
        if b in PLACES:
            yield f"_pbj_size +5 at {a} and -5 at {b} (the total holds)", _forge_pair(a, b, 5), good
    for (where, put), (what, value), warm in itertools.product(_BYTES_PLACES.items(), _buffers().items(),
                                                               (False, True)):
        def real(where: str = where, what: str = what) -> bytes:
            o = honest()
            _BYTES_PLACES[where](o, memoryview(_buffers()[what]()).tobytes())
            return pbj.encode(o)
        yield f"{what} at {where}, {'sizes cached' if warm else 'fresh'}", _with_value(put, value, warm), real()
    for (where, (put, path)), extra, warm, measured in itertools.product(
            _WRONG_PLACES.items(), (0, 7), (False, True), (False, True)):
        def wrong(where: str = where, extra: int = extra, measured: bool = measured) -> Any:
            # a Leaf where a Point is expected; elsewhere a LeafLike where a Leaf is
            v = Leaf(text="t", blob=b"x" * extra) if where == "one.at" else LeafLike(blob=b"ab", text="t", extra=extra)
            if measured:
                pbj.encode(v)  # its own size cached, right for its own class
            return v
        yield (f"a sub-message of another class (extra={extra}) at {where}, "
               f"{'sizes cached' if warm else 'fresh'}, {'measured' if measured else 'not measured'}",
               _with_value(put, wrong, warm), path)


def _outcome(write: Callable[[Any], bytes], make: Callable[[], Top]) -> tuple[str, Any]:
    try:
        return "bytes", write(make())
    except pbj.EncodeError as exc:
        return "EncodeError", list(exc.path)
    except Exception as exc:  # anything but an EncodeError is a finding
        return "foreign", f"{type(exc).__name__}: {exc}"


def _decodes(data: bytes) -> bool:
    try:
        pbj.decode(Top, data)
    except pbj.DecodeError:
        return False
    return True


def run(engines: tuple[str, ...] | None = None, verbose: bool = False) -> dict[str, int]:
    """Run every case with every writer on each engine (default: every engine built).

    Returns:
        counts: ``cases``, ``writes`` (case x writer x engine), ``undecodable`` (bytes that do
        not decode), ``disagreements`` (a result other than the expected one: other bytes, another
        error, an error where bytes were due, or an exception that is not an EncodeError).
    """
    if engines is None:
        engines = ("native", "python") if _native.available() else ("python",)
    before = pbj.engine()
    counts = {"cases": 0, "writes": 0, "undecodable": 0, "disagreements": 0}
    try:
        for name, make, expected in cases():
            counts["cases"] += 1
            for engine in engines:
                pbj.use_engine(engine)
                for writer, write in WRITERS.items():
                    counts["writes"] += 1
                    kind, got = _outcome(write, make)
                    bad = False
                    if kind == "bytes" and not _decodes(got):
                        counts["undecodable"] += 1
                        bad = True
                    want = ("bytes", expected) if isinstance(expected, bytes) else ("EncodeError", expected)
                    if (kind, got) != want:
                        counts["disagreements"] += 1
                        bad = True
                    if bad and verbose:
                        print(f"{engine} {writer}: {name}: {kind} {str(got)[:120]}", file=sys.stderr)
    finally:
        pbj.use_engine(before)
    return counts


if __name__ == "__main__":
    result = run(verbose=True)
    print("private-cache matrix:", result)
    sys.exit(1 if result["undecodable"] or result["disagreements"] else 0)
