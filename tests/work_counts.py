"""Counts of the work a call does, for tests that must not depend on the machine's load.

Elapsed time on a shared machine varies by several times from one run to the next; these counts
do not vary at all (bytecode steps) or only with the allocator's size classes (bytes), so tests
can bound ratios tightly:

* :func:`bytecode_steps`: bytecode instructions executed by every Python frame the call runs
  (``sys.settrace`` with ``f_trace_opcodes``): generated codecs and library code alike, whatever
  their names;
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

    An exception raised by ``fn`` propagates after the count has stopped.
    """
    count = 0

    def trace(frame, event, _arg):
        nonlocal count
        if event == "opcode":
            count += 1
        elif event == "call":
            frame.f_trace_lines = False
            frame.f_trace_opcodes = True
        return trace

    enabled = gc.isenabled()
    gc.disable()
    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        fn(*args)
    finally:
        sys.settrace(previous)
        if enabled:
            gc.enable()
    return count


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
