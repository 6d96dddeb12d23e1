"""A class's first use under threads and under Ctrl-C (issue 34; the GIL build's thread stress test of issue 35).

A message class builds parts of itself on first use: its codec (:mod:`pbj.codec.compiler`),
its checking ``__init__``, attrs' part (fields, frozen ``__setattr__``, pickling state:
:func:`pbj.schema.make_class.complete_attrs`) and ``__eq__``/``__hash__``/``__repr__``
(:mod:`pbj.schema.methods`). Two properties are checked here, on freshly loaded classes:

* **threads**: 8 threads using a new class at once, each running the operations of
  :data:`OPERATIONS` (each thread starting at a different one, so the first uses collide),
  40 rounds, every other round with a ninth thread switching the engine back and forth:
  no operation fails, no assignment to (or deletion from) a frozen message succeeds, and the
  shared messages are unchanged at the end;
* **Ctrl-C**: the first use of each of 300 classes is interrupted by a ``KeyboardInterrupt``
  raised by a trace function at its k-th Python function call, k spread evenly over the whole
  first use (no randomness); every class works afterwards, as a class never interrupted does.
"""

from __future__ import annotations

import copy
import gc
import inspect
import pickle
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

import attrs
import pytest

import pbj
from pbj import _native

descriptor_pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
F = descriptor_pb2.FieldDescriptorProto


def _schema(package: str, names: list[str], with_map: bool = True) -> bytes:
    """A proto3 file of ``Leaf`` and one message per name: ``{int64 n = 1; string s = 2;
    repeated int32 xs = 3; Leaf leaf = 4; repeated Leaf kids = 5; map<string, int32> m = 6}``
    (without ``m`` unless ``with_map``)."""
    fds = descriptor_pb2.FileDescriptorSet()
    f = fds.file.add(name=f"{package}.proto", package=package, syntax="proto3")
    leaf = f.message_type.add(name="Leaf")
    leaf.field.add(name="n", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    leaf.field.add(name="s", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    for name in names:
        m = f.message_type.add(name=name)
        m.field.add(name="n", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
        m.field.add(name="s", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
        m.field.add(name="xs", number=3, type=F.TYPE_INT32, label=F.LABEL_REPEATED)
        m.field.add(name="leaf", number=4, type=F.TYPE_MESSAGE, type_name=f".{package}.Leaf",
                    label=F.LABEL_OPTIONAL)
        m.field.add(name="kids", number=5, type=F.TYPE_MESSAGE, type_name=f".{package}.Leaf",
                    label=F.LABEL_REPEATED)
        if not with_map:
            continue
        entry = m.nested_type.add(name="MEntry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
        entry.field.add(name="value", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
        m.field.add(name="m", number=6, type=F.TYPE_MESSAGE, type_name=f".{package}.{name}.MEntry",
                    label=F.LABEL_REPEATED)
    return fds.SerializeToString()


def _sample(cls: type, leaf: type) -> Any:
    maps = {"m": {"k": 5}} if "m" in cls.__pbj_info__.attr_order else {}  # type: ignore[attr-defined]
    return cls(n=-7, s="é", xs=[1, 300], leaf=leaf(n=1, s="a"), kids=[leaf(n=2), leaf(n=2)], **maps)


#: The encoding of :func:`_sample` without the map (the two kids are equal: the native decoder
#: may share them), and with it.
NO_MAP_WIRE = bytes.fromhex("08f9ffffffffffffffff011202c3a91a0301ac02220508011201612a0208022a020802")
WIRE = NO_MAP_WIRE + bytes.fromhex("32050a016b1005")

THREAD_SCHEMA = _schema("firstuse.threads", ["Tree"])


def _refused(action: Callable[[], None]) -> int:
    """1 when ``action`` (an assignment to or deletion from a frozen message) went through, else 0."""
    try:
        action()
    except attrs.exceptions.FrozenInstanceError:
        return 0
    return 1


def _encode(T: Any, L: Any, m: Any) -> int:
    assert pbj.encode(m) == WIRE
    return 0


def _encode_reverse(T: Any, L: Any, m: Any) -> int:
    assert pbj.encode(m, reverse=True) == WIRE
    return 0


def _decode(T: Any, L: Any, m: Any) -> int:
    assert pbj.decode(T, WIRE) == m
    return 0


def _compare(T: Any, L: Any, m: Any) -> int:
    assert m.kids[0] == L(n=2) and m.leaf != m.kids[0] and m != T()
    return 0


def _hash(T: Any, L: Any, m: Any) -> int:
    assert hash(m) == hash(pbj.decode(T, WIRE)) and hash(m.leaf) == hash(L(n=1, s="a"))
    return 0


def _repr(T: Any, L: Any, m: Any) -> int:
    assert repr(m.leaf) == "Leaf(n=1, s='a')" and repr(m).startswith("Tree(n=-7, s='é', xs=(1, 300), leaf=Leaf(")
    return 0


def _text(T: Any, L: Any, m: Any) -> int:
    assert pbj.from_text(T, pbj.to_text(m)) == m
    return 0


def _json(T: Any, L: Any, m: Any) -> int:
    assert pbj.from_json(T, pbj.to_json(m)) == m
    return 0


def _pickle(T: Any, L: Any, m: Any) -> int:
    assert pickle.loads(pickle.dumps(m)) == m and copy.deepcopy(m.leaf) == m.leaf
    return 0


def _replace(T: Any, L: Any, m: Any) -> int:
    assert pbj.replace(m, n=1).n == 1 and attrs.evolve(m.leaf, n=3) == L(n=3, s="a")
    return 0


def _fields(T: Any, L: Any, m: Any) -> int:
    assert [a.name for a in attrs.fields(L)] == ["n", "s", "_pbj_unknown", "_pbj_size"]
    assert [f.name for f in pbj.fields(T)] == ["n", "s", "xs", "leaf", "kids", "m"]
    return 0


def _assign(T: Any, L: Any, m: Any) -> int:
    return _refused(lambda: setattr(m.leaf, "n", 99)) + _refused(lambda: setattr(m, "s", "x"))


def _delete(T: Any, L: Any, m: Any) -> int:
    return _refused(lambda: delattr(m.kids[1], "s")) + _refused(lambda: delattr(m, "n"))


def _new_load(T: Any, L: Any, m: Any) -> int:
    """Load the schema again and use the new classes at once (while the others use theirs)."""
    ns = pbj.load_descriptor_set(THREAD_SCHEMA)
    tree, leaf = ns["firstuse.threads.Tree"], ns["firstuse.threads.Leaf"]
    built = _sample(tree, leaf)
    assert pbj.encode(built) == WIRE and built == _sample(tree, leaf) and hash(built.leaf) == hash(leaf(n=1, s="a"))
    return _refused(lambda: setattr(built, "n", 1))


#: The 14 operations each thread runs on a fresh class, each a function of (Tree, Leaf, a shared
#: Tree) that returns how many assignments to a frozen message went through (a failed check raises).
OPERATIONS: list[tuple[str, Callable[[Any, Any, Any], int]]] = [
    ("encode", _encode), ("encode, reverse writer", _encode_reverse), ("decode", _decode),
    ("==", _compare), ("hash", _hash), ("repr", _repr), ("to_text, from_text", _text),
    ("to_json, from_json", _json), ("pickle, deepcopy", _pickle), ("pbj.replace, attrs.evolve", _replace),
    ("attrs.fields, pbj.fields", _fields), ("assign to a field", _assign), ("delete a field", _delete),
    ("load the schema again and use it", _new_load),
]


def _toggle_engines(start: threading.Barrier, other: str) -> None:
    start.wait()
    for i in range(60):
        pbj.use_engine(other if i % 2 else "python")


def test_eight_threads_first_using_a_fresh_class() -> None:
    assert len(OPERATIONS) == 14
    engine = pbj.engine()
    other = "native" if _native.NATIVE is not None else "python"
    errors: list[str] = []
    went_through: list[tuple[str, int]] = []  # appended to (atomic), not added to from 8 threads
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # threads switch often: the first uses overlap
    try:
        for round_ in range(40):
            ns = pbj.load_descriptor_set(THREAD_SCHEMA)
            tree, leaf = ns["firstuse.threads.Tree"], ns["firstuse.threads.Leaf"]
            shared = _sample(tree, leaf)  # built with the constructor: nothing else of either class is used yet
            toggling = round_ % 2 == 1
            start = threading.Barrier(8 + toggling)

            def work(i: int, tree: Any = tree, leaf: Any = leaf, shared: Any = shared, start: Any = start) -> None:
                start.wait()
                for k in range(len(OPERATIONS)):
                    name, op = OPERATIONS[(i + k) % len(OPERATIONS)]
                    try:
                        n = op(tree, leaf, shared)
                        if n:
                            went_through.append((name, n))
                    except Exception:
                        errors.append(f"{name}: {traceback.format_exc(limit=-3)}")

            threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
            if toggling:
                threads.append(threading.Thread(target=_toggle_engines, args=(start, other)))
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=120)
            assert not any(t.is_alive() for t in threads), "a thread hung"
            pbj.use_engine(engine)
            try:
                assert pbj.encode(shared) == WIRE and shared == _sample(tree, leaf)
            except Exception:
                errors.append(f"round {round_}: the shared message changed: {traceback.format_exc(limit=-1)}")
    finally:
        sys.setswitchinterval(interval)
        pbj.use_engine(engine)
    assert errors == [], f"{len(errors)} failed operations, the first: {errors[0]}"
    assert went_through == [], f"{sum(n for _, n in went_through)} assignments to a frozen message went through"


INTERRUPTED = 300
# The warm-up, the calibration and the interrupted classes: same shape, same name length, so the
# same first use, call for call (no map: a map entry class would double the compile work).
CTRL_C_SCHEMA = _schema("firstuse.ctrlc", ["Warm", "Calibr", *(f"M{j:05}" for j in range(INTERRUPTED))],
                        with_map=False)


def _first_use(cls: type, leaf: type) -> None:
    """What a program may do first with a class: every part built on first use is built here."""
    a, b = _sample(cls, leaf), _sample(cls, leaf)
    assert a == b and hash(a) == hash(b) and repr(a).startswith(cls.__name__)
    try:
        a.n = 5  # type: ignore[attr-defined]
    except attrs.exceptions.FrozenInstanceError:
        pass
    assert pickle.loads(pickle.dumps(a)) == a and copy.copy(a) == a
    assert pbj.decode(cls, pbj.encode(a)) == pbj.decode(cls, pbj.encode(a, reverse=True)) == a
    assert attrs.evolve(a, n=1).n == 1 and pbj.to_json(a)


_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class _InterruptAt:
    """A trace function raising ``KeyboardInterrupt`` as the ``at``-th Python function call starts
    (``at=None``: only counting): where CPython runs a signal handler (when a function starts or a
    loop jumps back; never between two plain statements, so cleanup written as plain statements
    in a ``finally`` runs, as it does under a real Ctrl-C)."""

    def __init__(self, at: int | None) -> None:
        self.at = at
        self.calls = 0

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        # generators are left out: a generator's "call" may be its close when it is collected,
        # where Python reports an exception as unraisable and drops it
        if event == "call" and not frame.f_code.co_flags & _GENERATOR_FLAGS:
            self.calls += 1
            if self.calls == self.at:
                raise KeyboardInterrupt
        # None: no line events in this frame (only calls are counted), which keeps the run cheap


def _traced(cls: type, leaf: type, at: int | None) -> tuple[int, bool]:
    """The first use of ``cls`` under :class:`_InterruptAt` (garbage collection held off, so no
    finalizer runs traced): (function calls seen, whether it was interrupted)."""
    trace = _InterruptAt(at)
    collecting = gc.isenabled()
    gc.disable()
    sys.settrace(trace)
    try:
        _first_use(cls, leaf)
    except KeyboardInterrupt:
        return trace.calls, True
    finally:
        sys.settrace(None)
        if collecting:
            gc.enable()
    return trace.calls, False


def _works(cls: type, leaf: type) -> None:
    a = _sample(cls, leaf)
    assert a == _sample(cls, leaf) and a != cls(n=-7) and hash(a) == hash(_sample(cls, leaf))
    assert repr(a) == f"{cls.__name__}(n=-7, s='é', xs=(1, 300), leaf=Leaf(n=1, s='a'), " \
                      "kids=(Leaf(n=2, s=''), Leaf(n=2, s='')))"
    assert pbj.encode(a) == pbj.encode(a, reverse=True) == NO_MAP_WIRE
    assert pbj.decode(cls, NO_MAP_WIRE) == a and pickle.loads(pickle.dumps(a)) == a and copy.deepcopy(a) == a
    for action in (lambda: setattr(a, "n", 1), lambda: delattr(a, "s"), lambda: setattr(a.leaf, "n", 2)):
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            action()
    assert a.n == -7 and a.s == "é" and a.leaf.n == 1
    assert [f.name for f in attrs.fields(cls)] == ["n", "s", "xs", "leaf", "kids", "_pbj_unknown", "_pbj_size"]
    assert attrs.evolve(a, n=3) == pbj.replace(a, n=3) != a
    assert pbj.from_json(cls, pbj.to_json(a)) == a


def test_an_interrupted_first_use_leaves_the_class_working() -> None:
    if sys.gettrace() is not None:
        pytest.skip("runs under a tracer (coverage, a debugger): it sets its own trace function")
    ns = pbj.load_descriptor_set(CTRL_C_SCHEMA)
    leaf = ns["firstuse.ctrlc.Leaf"]
    _first_use(ns["firstuse.ctrlc.Warm"], leaf)  # the modules and the Leaf class, first used untraced
    calls, interrupted = _traced(ns["firstuse.ctrlc.Calibr"], leaf, None)
    assert not interrupted and calls > INTERRUPTED
    points = [1 + j * (calls - 1) // INTERRUPTED for j in range(INTERRUPTED)]  # from the first call to the last
    missed, broken = [], []
    for j, at in enumerate(points):
        cls = ns[f"firstuse.ctrlc.M{j:05}"]
        if not _traced(cls, leaf, at)[1]:
            missed.append(at)
        try:
            _works(cls, leaf)
        except Exception:
            broken.append(f"M{j:05} (interrupted at call {at}): {traceback.format_exc(limit=-2)}")
    assert broken == [], f"{len(broken)} of {INTERRUPTED} classes broken, the first: {broken[0]}"
    assert missed == [], f"{len(missed)} first uses ended before their interrupt (of {calls} calls)"
