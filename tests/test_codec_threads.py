"""ReverseBuffer and the compiler under threads and re-entrancy (issue 11).

Each case either works or raises a clear error, never writes garbage:
several threads sharing one buffer, a nested ``pbj.encode(obj, reverse=True)``
on one thread (a ``str`` subclass whose ``encode`` encodes), a nested write
into the buffer being written, and a signal handler that encodes during the
first compile of a class.
"""

from __future__ import annotations

import signal
import sys
import threading

import pytest

import pbj
from pbj.testing import unchecked


@pbj.message
class Leaf:
    n: int = pbj.field(1, "int64")
    s: str = pbj.field(2, "string")


@pbj.message
class Tree:
    kids: tuple[Leaf, ...] = pbj.field(1, Leaf, repeated=True)
    names: tuple[str, ...] = pbj.field(2, "string", repeated=True)


BIG = Tree(kids=[Leaf(n=i * 1000, s="x" * (i % 50)) for i in range(400)])


def test_threads_sharing_one_buffer_work_or_refuse():
    expected = pbj.encode(BIG)
    buf = pbj.ReverseBuffer(16)
    results: list = []
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)

    def work() -> None:
        for _ in range(30):
            try:
                n = pbj.write_reverse(BIG, buf)
            except RuntimeError as exc:
                results.append(str(exc))
            else:
                results.append(n)

    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    written = [r for r in results if isinstance(r, int)]
    refused = [r for r in results if isinstance(r, str)]
    assert len(results) == 120 and written
    assert all(n == len(expected) for n in written)
    assert all("already being written" in r and "one buffer per thread" in r for r in refused)
    # every successful write put one whole encoding in front of the others
    assert buf.to_bytes() == expected * len(written)


class Reentrant(str):
    """A string whose ``encode`` encodes another message with the reverse writer first."""

    seen: list[bytes] = []

    def encode(self, *args, **kwargs):  # type: ignore[override]
        Reentrant.seen.append(pbj.encode(Leaf(n=len(self), s=str(self)), reverse=True))
        return str.encode(self, *args, **kwargs)


def test_the_writers_run_no_user_code_so_no_write_nests():
    """A value's own methods are not called while a message is written (a str subclass's ``encode``
    included): the writers read the characters, so no Python code runs inside a write to start
    another one. Both writers give the plain strings' bytes."""
    Reentrant.seen = []
    names = [Reentrant(f"name-{i}") for i in range(30)]
    tree = unchecked(Tree, kids=(Leaf(n=1),), names=tuple(names))  # the constructor would make them plain str
    plain = Tree(kids=[Leaf(n=1)], names=[str(s) for s in names])
    for _ in range(3):
        assert pbj.encode(tree, reverse=True) == pbj.encode(tree) == pbj.encode(plain)
    assert Reentrant.seen == []


def test_a_write_into_a_buffer_being_written_is_refused():
    buf = pbj.ReverseBuffer()
    pbj.write_reverse(Leaf(n=5), buf)
    before = buf.to_bytes()
    buf.writer_begin()  # a write in progress (what a nested write would meet)
    try:
        with pytest.raises(RuntimeError, match="already being written"):
            pbj.write_reverse(Leaf(n=6), buf)
        with pytest.raises(RuntimeError, match="already being written"):
            buf.writer_begin()
    finally:
        buf.writer_abort()
    assert buf.to_bytes() == before            # the refused writes left the buffer as it was
    assert pbj.write_reverse(Leaf(n=7), buf) == 2 and buf.to_bytes() == bytes.fromhex("0807") + before


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="needs SIGUSR1")
def test_a_signal_handler_encoding_during_a_first_compile():
    @pbj.message
    class Ready:
        x: int = pbj.field(1, "int32")

    pbj.encode(Ready(x=1))

    @pbj.message
    class Cold:
        x: int = pbj.field(1, "int32")

    outputs: list = []
    old = signal.signal(signal.SIGUSR1, lambda *a: handler(*a))

    def handler(signum, frame):
        outputs.append(pbj.encode(Ready(x=2)))       # compiled already: works
        outputs.append(pbj.encode(Cold(x=3)))        # would need a compile inside the compile

    def trigger():
        if not outputs:
            signal.raise_signal(signal.SIGUSR1)      # the handler runs in the middle of the compile
        return Ready

    @pbj.message
    class Host:
        r: object = pbj.field(1, trigger)            # resolved during the first compile

    try:
        # the handler's error surfaces where it interrupted (here: inside a forward reference)
        with pytest.raises(Exception, match="RuntimeError: pbj cannot compile the codec of Cold while this "
                                            "thread is compiling the codec of Host"):
            # built unchecked: the constructor's type check would resolve the reference before the compile
            pbj.encode(unchecked(Host, r=Ready(x=1)))
    finally:
        signal.signal(signal.SIGUSR1, old)
    assert outputs == [bytes.fromhex("0802")]
    # nothing half-done is left: both classes compile and encode afterwards
    assert pbj.encode(Host(r=Ready(x=1))) == bytes.fromhex("0a020801")
    assert pbj.encode(Cold(x=3)) == bytes.fromhex("0803")


@pytest.mark.parametrize("where", ["compile_class", "_make"])
def test_an_interrupt_right_after_the_compile_starts_leaves_no_mark(where):
    """A KeyboardInterrupt on the first line after a compile marks the thread as compiling is undone.

    The interrupt is placed by a trace function on that line (a signal could land there); afterwards
    this class and any other compile and encode on the same thread, on both engines.
    """
    from pbj.codec import compiler

    @pbj.message
    class First:
        x: int = pbj.field(1, "int32")

    @pbj.message
    class Other:
        y: int = pbj.field(1, "int32")

    fired: list[int] = []

    def tracer(frame, event, arg):
        if frame.f_code.co_filename != compiler.__file__:
            return tracer
        if (event == "line" and not fired and frame.f_code.co_name == where
                and getattr(compiler._state, "compiling", None) is not None):
            fired.append(frame.f_lineno)
            raise KeyboardInterrupt
        return tracer

    if where == "_make":
        compiler.codec_of(First)  # the plan first: the interrupt then lands in the Python code's own compile
    sys.settrace(tracer)
    try:
        with pytest.raises(KeyboardInterrupt):
            pbj.source_of(First) if where == "_make" else pbj.encode(First(x=1))
    finally:
        sys.settrace(None)
    assert fired, f"the trace never reached {where} with the thread marked"
    assert getattr(compiler._state, "compiling", None) is None
    assert pbj.encode(First(x=1)) == pbj.encode(First(x=1), reverse=True) == bytes.fromhex("0801")
    assert pbj.encode(Other(y=2)) == pbj.encode(Other(y=2), reverse=True) == bytes.fromhex("0802")
