"""pbj changes no interpreter-wide state: decoding never switches the garbage collector.

The native engine keeps the objects a decode call is making out of the collector's sight while
the call runs (each young-generation collection would walk them all again) and tracks them when
it returns: what the collector sees afterwards is what it would have seen without the trick, so
a cycle a program makes through a decoded object is still collected.
"""

from __future__ import annotations

import gc
import threading
import weakref

import pbj


@pbj.message
class Leaf:
    n: int = pbj.field(1, "int64")
    name: str = pbj.field(2, "string")
    ids: tuple[int, ...] = pbj.field(3, "int32", repeated=True)


@pbj.message
class Tree:
    leaves: tuple[Leaf, ...] = pbj.field(1, Leaf, repeated=True)
    pick: pbj.OneOf | None = pbj.oneof(leaf=(2, Leaf), count=(3, "int32"))


def _large() -> bytes:
    return pbj.encode(Tree(leaves=tuple(Leaf(n=i, name=f"leaf {i}", ids=(i, i + 1)) for i in range(20_000)),
                           pick=pbj.OneOf("leaf", Leaf(n=-1))))


def _watch_while_decoding(data: bytes) -> tuple[set[bool], int, Tree]:
    seen: set[bool] = set()
    samples = 0
    done = threading.Event()
    out: list[Tree] = []

    def decode() -> None:
        try:
            for _ in range(3):
                out.append(pbj.decode(Tree, data))
        finally:
            done.set()

    worker = threading.Thread(target=decode)
    worker.start()
    while not done.is_set():
        seen.add(gc.isenabled())
        samples += 1
    worker.join()
    seen.add(gc.isenabled())
    return seen, samples, out[-1]


def test_decode_never_switches_the_collector():
    """A large input decoded in one thread while another watches ``gc.isenabled()``: never changes,
    whether the collector was on or off to begin with."""
    data = _large()
    assert len(data) > 100_000
    pbj.decode(Tree, data)  # compiled before the watch
    was = gc.isenabled()
    try:
        for state in (True, False):
            (gc.enable if state else gc.disable)()
            seen, samples, result = _watch_while_decoding(data)
            assert seen == {state} and samples > 0
            assert len(result.leaves) == 20_000 and result.leaves[7].name == "leaf 7"
    finally:
        (gc.enable if was else gc.disable)()


def test_decoded_objects_are_tracked_when_decode_returns():
    """Every message and every container of messages a decode returns is tracked by the collector."""
    result = pbj.decode(Tree, _large())
    assert gc.is_tracked(result) and gc.is_tracked(result.leaves) and gc.is_tracked(result.pick)
    assert all(gc.is_tracked(leaf) for leaf in result.leaves[:100])
    assert gc.is_tracked(result.pick[1])


def test_a_cycle_through_a_decoded_object_is_collected():
    """A class that keeps a decoded object of its own (``Cls.DEFAULT = decode(...)``) makes a cycle
    through the class; dropped, the collector frees both."""

    def make() -> weakref.ref:
        @pbj.message
        class Holder:
            kids: tuple[Leaf, ...] = pbj.field(1, Leaf, repeated=True)

        Holder.DEFAULT = pbj.decode(Holder, pbj.encode(Holder(kids=(Leaf(n=1), Leaf(n=2)))))  # type: ignore[attr-defined]
        return weakref.ref(Holder)

    ref = make()
    gc.collect()
    assert ref() is None
