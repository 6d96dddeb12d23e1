"""Counts of the work a call does, for tests that must not depend on the machine's load.

Elapsed time on a shared machine varies by several times from one run to the next; these counts
do not vary at all (bytecode steps) or only with the allocator's size classes (bytes), so tests
can bound ratios tightly:

* :func:`bytecode_steps`: bytecode instructions executed by every Python frame the call runs
  (``sys.monitoring``'s INSTRUCTION events on CPython 3.12+, ``sys.settrace`` with
  ``f_trace_opcodes`` on 3.11): generated codecs and library code alike, whatever their names;
* :func:`system_bytes`: bytes requested from the C allocator (``malloc``, ``calloc``,
  ``realloc``; recorded by memray without Python's small-object allocator and its arenas), the
  measure of C-level copying that bytecode steps cannot see: a tuple, list or ``bytes`` rebuilt
  at every element takes a constant number of steps but copies a growing amount.

Both run with the cyclic garbage collector off, so that no collection (and no finaliser) falls
inside the count.
"""

from __future__ import annotations

import gc
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["bytecode_steps", "system_bytes"]


def bytecode_steps(fn: Callable[..., Any], *args: Any) -> int:
    """How many bytecode instructions ``fn(*args)`` executes, in every Python frame it runs.

    An exception raised by ``fn`` propagates after the count has stopped. CPython 3.12 rebuilt
    ``sys.settrace`` on ``sys.monitoring``, and its ``opcode`` events no longer reach every frame:
    code first run under the tracer in this call is partly missed (a loop calling a small function
    ten times counts 36 steps the first time, 129 the next), so there the count comes from
    ``sys.monitoring``'s INSTRUCTION events, under a tool id of its own, for all code alike.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _monitored_steps(fn, args) if sys.version_info >= (3, 12) else _traced_steps(fn, args)
    finally:
        if enabled:
            gc.enable()


def _traced_steps(fn: Callable[..., Any], args: tuple[Any, ...]) -> int:
    count = 0

    def trace(frame, event, _arg):
        nonlocal count
        if event == "opcode":
            count += 1
        elif event == "call":
            frame.f_trace_lines = False
            frame.f_trace_opcodes = True
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        fn(*args)
    finally:
        sys.settrace(previous)
    return count


def _monitored_steps(fn: Callable[..., Any], args: tuple[Any, ...]) -> int:
    monitoring = sys.monitoring  # type: ignore[attr-defined]  # 3.12+
    tool = next((i for i in range(6) if monitoring.get_tool(i) is None), None)
    if tool is None:
        raise RuntimeError("bytecode_steps: every sys.monitoring tool id is taken")
    count = 0

    def step(_code, _offset):
        nonlocal count
        count += 1

    monitoring.use_tool_id(tool, "pbj tests.work_counts")
    try:
        monitoring.register_callback(tool, monitoring.events.INSTRUCTION, step)
        monitoring.set_events(tool, monitoring.events.INSTRUCTION)
        try:
            fn(*args)
        finally:
            monitoring.set_events(tool, monitoring.events.NO_EVENTS)
        return count
    finally:
        monitoring.register_callback(tool, monitoring.events.INSTRUCTION, None)
        monitoring.free_tool_id(tool)


def system_bytes(fn: Callable[..., Any], *args: Any) -> int:
    """Bytes ``fn(*args)`` requests from the C allocator (``malloc``/``calloc``/``realloc`` sizes summed).

    Python's small objects (pymalloc, up to 512 bytes) and the arenas pymalloc maps are left
    out: their count follows how much is alive, in steps of a whole arena, not how much is copied.

    Raises:
        ImportError: memray is not installed (it is in the ``test`` extra).
    """
    import memray

    kept = {memray.AllocatorType.MALLOC, memray.AllocatorType.CALLOC, memray.AllocatorType.REALLOC}
    enabled = gc.isenabled()
    gc.disable()
    with tempfile.TemporaryDirectory(prefix="pbj-work-") as tmp:
        path = Path(tmp) / "allocations.bin"
        try:
            with memray.Tracker(path, trace_python_allocators=False):
                fn(*args)
        finally:
            if enabled:
                gc.enable()
        with memray.FileReader(path) as reader:
            total = sum(r.size for r in reader.get_allocation_records() if memray.AllocatorType(r.allocator) in kept)
    return total
