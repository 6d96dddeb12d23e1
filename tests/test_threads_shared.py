"""Eight threads on the same messages at once: the thread stress test of free-threaded CPython.

On a free-threaded build (3.13t, 3.14t) with the GIL off, the threads really run the engine at
the same moment; with the GIL they interleave at every switch interval. Either way each round
makes fresh classes (nothing of them compiled yet) and fresh shared messages (no size cached
yet), then 8 threads, released together by a barrier, each run every operation below on them,
starting at a different one so that the first uses collide:

* the first use of a class (its compile) and of a message (its sizes, measured and cached by the
  forward writer while other threads read them);
* both writers, ``pbj.encode`` and the one-argument ``encoder_of``/``decoder_of`` builtins shared
  by all threads (the entry points' class cache and a bound function's cache), ``pbj.decode``;
* the proto2 required-field check (a class that can miss one, set and missing);
* ProtoJSON and text format both ways;
* a run over more classes than the entry points' class cache has rows (64), so its entries are
  replaced while other threads read them.

Every result is compared with bytes, strings and objects made beforehand on one thread from an
equal set of classes: exact bytes from both writers, equal objects, the same error. Bounded:
``ROUNDS`` rounds of a fixed number of calls, every thread joined with a timeout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
import threading
import traceback
from collections.abc import Callable
from typing import Any

import pytest

import pbj
from pbj.api import decoder_of, encoder_of

THREADS = 8
ROUNDS = 3
#: classes in the run over the entry points' class cache (PbjEntry.types has 64 rows)
MANY = 80


def _classes(tag: str) -> dict[str, Any]:
    """A fresh set of message classes (full names under ``ft.<tag>``): nothing compiled yet."""

    @pbj.message(full_name=f"ft.{tag}.Leaf")
    class Leaf:
        n: int = pbj.field(1, "int64")
        s: str = pbj.field(2, "string")
        b: bytes = pbj.field(3, "bytes")

    @pbj.message(full_name=f"ft.{tag}.Node")
    class Node:
        id: int = pbj.field(1, "uint32")
        leaf: Leaf | None = pbj.field(2, Leaf)
        kids: tuple[Leaf, ...] = pbj.field(3, Leaf, repeated=True)
        by_name: pbj.FrozenMap[str, Leaf] = pbj.map_field(4, "string", Leaf)
        labels: pbj.FrozenMap[int, str] = pbj.map_field(5, "int32", "string")
        deltas: tuple[int, ...] = pbj.field(6, "sint64", repeated=True)
        ratio: float = pbj.field(7, "double")
        choice: pbj.OneOf | None = pbj.oneof(text=(8, "string"), other=(9, Leaf))

    @pbj.message(full_name=f"ft.{tag}.Need", syntax="proto2")
    class Need:
        a: int | None = pbj.field(1, "int32", required=True)
        kids: tuple[Leaf, ...] = pbj.field(2, Leaf, repeated=True)

    many = []
    for i in range(MANY):
        many.append(pbj.message(type(f"Small{i}", (), {
            "__annotations__": {"x": "int"}, "x": pbj.field(1, "int32"),
        }), full_name=f"ft.{tag}.Small{i}"))
    return {"Leaf": Leaf, "Node": Node, "Need": Need, "many": many}


def _node(c: dict[str, Any], k: int) -> Any:
    """Message k of a round: over 256 bytes (a size CPython does not share) with sub-messages of
    several sizes, every field set."""
    Leaf = c["Leaf"]
    kids = [Leaf(n=k * 1000 + i, s="é" * (i * 40 + k), b=bytes([i]) * (i * 30)) for i in range(6)]
    return c["Node"](id=k, leaf=Leaf(n=-k, s="leaf"), kids=kids,
                     by_name={f"k{i}": Leaf(n=i, s="v" * (100 + i)) for i in range(4)},
                     labels={i - 2: str(i) for i in range(5)}, deltas=[-(2 ** 40), -1, 0, k],
                     ratio=k / 3, choice=pbj.OneOf("other", Leaf(n=7, s="x" * 300)))


def _need(c: dict[str, Any], k: int, complete: bool = True) -> Any:
    return c["Need"](a=k if complete else None, kids=[c["Leaf"](n=k, s="r" * 270)])


class Expected:
    """What each operation must give, made on one thread from another set of equal classes."""

    def __init__(self) -> None:
        ref = _classes("expected")
        nodes = [_node(ref, k) for k in range(3)]
        self.wire = [pbj.encode(n) for n in nodes]
        assert self.wire == [pbj.encode(_node(ref, k), reverse=True) for k in range(3)]
        assert all(len(w) > 1000 for w in self.wire)
        self.json = [pbj.to_json(n) for n in nodes]
        self.text = [pbj.to_text(n) for n in nodes]
        self.need = pbj.encode(_need(ref, 5))
        assert self.need == pbj.encode(_need(ref, 5), reverse=True)
        with pytest.raises(pbj.EncodeError) as missing:
            pbj.encode(_need(ref, 5, complete=False))
        self.missing = str(missing.value)
        self.small = [pbj.encode(cls(x=i + 1)) for i, cls in enumerate(ref["many"])]


def _operations(c: dict[str, Any], shared: list[Any], bound: dict[str, Any],
                want: Expected) -> list[tuple[str, Callable[[], None]]]:
    """The operations every thread runs, each on the round's shared objects."""
    Node, Need = c["Node"], c["Need"]

    def encode() -> None:
        for k, n in enumerate(shared):
            assert pbj.encode(n) == want.wire[k]

    def encode_reverse() -> None:
        for k, n in enumerate(shared):
            assert pbj.encode(n, reverse=True) == want.wire[k]

    def bound_writers() -> None:
        for k, n in enumerate(shared):
            assert bound["encode"](n) == want.wire[k]
            assert bound["decode"](want.wire[k]) == n

    def decode() -> None:
        for k, n in enumerate(shared):
            got = pbj.decode(Node, want.wire[k])
            assert got == n and pbj.encode(got, reverse=True) == want.wire[k] and pbj.encode(got) == want.wire[k]

    def required() -> None:
        assert pbj.encode(shared_need) == want.need and pbj.encode(shared_need, reverse=True) == want.need
        assert pbj.decode(Need, want.need) == shared_need
        with pytest.raises(pbj.EncodeError) as missing:
            pbj.encode(_need(c, 5, complete=False))
        assert str(missing.value) == want.missing

    def json() -> None:
        for k, n in enumerate(shared):
            assert pbj.to_json(n) == want.json[k] and pbj.from_json(Node, want.json[k]) == n

    def text() -> None:
        for k, n in enumerate(shared):
            assert pbj.to_text(n) == want.text[k] and pbj.from_text(Node, want.text[k]) == n

    def many_classes() -> None:
        for i, cls in enumerate(c["many"]):
            obj = cls(x=i + 1)
            assert pbj.encode(obj) == want.small[i] and pbj.decode(cls, want.small[i]) == obj

    shared_need = _need(c, 5)
    return [("encode", encode), ("encode, reverse writer", encode_reverse), ("encoder_of, decoder_of", bound_writers),
            ("decode", decode), ("required fields", required), ("to_json, from_json", json),
            ("to_text, from_text", text), (f"{MANY} classes", many_classes)]


def test_eight_threads_share_fresh_classes_and_messages() -> None:
    want = Expected()
    errors: list[str] = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # (with the GIL: threads switch often, so the first uses overlap)
    try:
        for round_ in range(ROUNDS):
            c = _classes(f"r{round_}")
            shared = [_node(c, k) for k in range(3)]
            bound = {"encode": encoder_of(c["Node"], pbj.encode), "decode": decoder_of(c["Node"])}
            ops = _operations(c, shared, bound, want)
            start = threading.Barrier(THREADS)

            def work(i: int, ops: list[tuple[str, Callable[[], None]]] = ops, start: Any = start,
                     round_: int = round_) -> None:
                start.wait()
                for k in range(2 * len(ops)):  # every operation twice: first use, then warm
                    name, op = ops[(i + k) % len(ops)]
                    try:
                        op()
                    except Exception:
                        errors.append(f"round {round_}, {name}: {traceback.format_exc(limit=-4)}")

            threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=300)
            assert not any(t.is_alive() for t in threads), "a thread hung"
            # the shared messages are unchanged, their cached sizes right
            assert [pbj.encode(n) for n in shared] == want.wire
    finally:
        sys.setswitchinterval(interval)
    assert errors == [], f"{len(errors)} failed operations, the first: {errors[0]}"


@pytest.mark.skipif(not sysconfig.get_config_var("Py_GIL_DISABLED"), reason="needs a free-threaded CPython")
@pytest.mark.xfail(strict=True, reason="Py_MOD_GIL_NOT_USED is not declared yet (docs/install.md, "
                   "'Free-threaded Python')")
def test_the_native_engine_leaves_the_gil_off() -> None:
    """Importing pbj (both native modules) on a free-threaded build keeps the GIL off: the modules
    declare ``Py_MOD_GIL_NOT_USED`` (CPython would turn the GIL on, with a RuntimeWarning, for a
    module that does not)."""
    program = textwrap.dedent("""
        import sys, warnings
        warnings.simplefilter("error")
        import pbj, pbj._native._engine, pbj._native._arrow
        assert pbj.engine() == "native", pbj.engine()
        print(sys._is_gil_enabled())
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHON_GIL", "PBJ_ENGINE")}
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
