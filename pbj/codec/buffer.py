"""The :class:`ReverseBuffer`: storage filled from its end toward its start.

A reverse writer puts each value before its length and tag, so the length of
every nested message is known the moment it is needed (the idea of Hedera's
PBJ and of Google's upb encoder). This module owns the buffer's invariant:
``_pos`` is where the bytes written so far begin, and everything from
``_pos`` to the end of the storage is the output.

The writer protocol
-------------------
Generated ``write_reverse_<Name>`` functions (and :mod:`pbj.api`) use the
buffer only through these names, all starting with ``writer_``:

``pos = buf.writer_begin(empty=False)``
    Claims the buffer for one write (emptying it first if ``empty``) and
    returns the position the write starts at. Raises :class:`RuntimeError`
    (a :class:`BufferBusyError`) if the buffer is already claimed: by another thread, or re-entrantly on
    this thread (a signal handler, a ``str`` subclass's ``encode``).
``buf.writer_view``
    The storage as a writable ``memoryview``. Generated code reads it into a
    local, stores bytes *below* its current ``pos`` and never keeps it across
    a call that may grow the buffer (a sub-message's writer): it reads it
    again after such a call.
``pos = buf.writer_grow(pos, need)``
    Makes room for ``need`` more bytes before ``pos``: replaces the storage
    (copying what was written to the new storage's end) and returns the new
    ``pos``. ``writer_view`` changes.
``buf.writer_commit(pos)`` / ``buf.writer_abort()``
    Ends the write: ``commit`` makes ``pos`` the start of the output;
    ``abort`` leaves the output as it was before ``writer_begin`` (the bytes
    written before survive a growth). Both release the claim.

Nothing else reads or writes the buffer's private state.

Threads
-------
A buffer holds one write at a time. Sharing one buffer between threads
without a lock of your own is refused, not corrupted: a write that finds the
buffer claimed raises ``RuntimeError``, and so do the primitive methods and
:meth:`reset` while a write is in progress. ``pbj.encode(obj, reverse=True)``
uses a buffer per thread and, when that one is claimed (a nested encode on
the same thread), a new temporary buffer, so it always works.
"""

from __future__ import annotations

import builtins
import operator
import threading
from typing import Any

from pbj import wire
from pbj.errors import EncodeError

__all__ = ["ReverseBuffer", "BufferBusyError", "thread_buffer"]

_BUSY = ("this ReverseBuffer is already being written (by another thread, or re-entrantly on this "
         "one); use one buffer per thread")


class BufferBusyError(RuntimeError):
    """A write or a primitive was started on a :class:`ReverseBuffer` while a write holds it."""


class ReverseBuffer:
    """A reusable, growable buffer written from the end toward the start.

    ``with pbj.ReverseBuffer() as buf:`` gives an empty buffer; write into it
    with :func:`pbj.write_reverse` (or the primitive methods below), then read
    the result with :meth:`bytes`, :meth:`to_bytes` or :meth:`copy_to`.

    Growth allocates storage of at least twice the size and copies what was
    written to its end; marks stay valid because they count bytes written,
    not positions.

    Views: :meth:`bytes` returns a ``memoryview`` of the storage, without
    copying. A view still held when the buffer grows keeps showing the old
    storage, which no longer changes; a view held across :meth:`reset` (or a
    new write after it) shows whatever is written there next. Copy
    (:meth:`to_bytes`) what must outlive the next write.

    Threads: one write at a time (see the module notes). A second write
    started while one is in progress, from another thread or re-entrantly,
    raises ``RuntimeError``; use one buffer per thread.

    Args:
        capacity: the initial storage size in bytes (a positive ``int``; default 4096).

    Raises:
        TypeError: ``capacity`` is not an ``int`` (a ``bool`` or ``float`` included).
        ValueError: ``capacity`` is 0 or negative.
    """

    __slots__ = ("_before", "_buf", "_claim", "_pos", "writer_view")

    def __init__(self, capacity: int = 4096) -> None:
        if isinstance(capacity, bool) or not hasattr(type(capacity), "__index__"):
            raise TypeError(f"ReverseBuffer: capacity must be a positive int (bytes), "
                            f"got {type(capacity).__name__} {capacity!r}")
        capacity = operator.index(capacity)
        if capacity < 1:
            raise ValueError(f"ReverseBuffer: capacity must be a positive int (bytes), got {capacity}")
        self._buf = bytearray(capacity)
        self.writer_view = memoryview(self._buf)
        self._pos = capacity
        self._before = 0
        self._claim = False  # True while a write holds the buffer

    # ------------------------------------------------------------ writer protocol

    def writer_begin(self, empty: bool = False) -> int:
        """Claim the buffer for one write; return the position it starts at.

        Args:
            empty: empty the buffer first (keeping its storage).

        Raises:
            RuntimeError: a write is already in progress on this buffer.
        """
        # Test and set with no call or backward jump in between: CPython (with its GIL) switches
        # threads and runs signal handlers only at those points, so no other write can slip in.
        if self._claim:
            raise BufferBusyError(_BUSY)
        self._claim = True
        if empty:
            self._pos = len(self.writer_view)
        self._before = len(self.writer_view) - self._pos
        return self._pos

    def writer_grow(self, pos: int, need: int) -> int:
        """Make room for ``need`` more bytes before ``pos``; return the new ``pos``."""
        old = self.writer_view
        cap = len(old)
        written = cap - pos
        new_cap = max(cap * 2, written + need + 64)
        buf = bytearray(new_cap)
        mv = memoryview(buf)
        start = new_cap - written
        mv[start:] = old[pos:]
        self._buf = buf
        self.writer_view = mv
        return start

    def writer_commit(self, pos: int) -> None:
        """End the write: the output now begins at ``pos``; release the claim."""
        self._pos = pos
        self._claim = False

    def writer_abort(self) -> None:
        """End a failed write: the output is what it was at :meth:`writer_begin`; release."""
        self._pos = len(self.writer_view) - self._before
        self._claim = False

    # ------------------------------------------------------------ public API

    @property
    def capacity(self) -> int:
        """The storage size in bytes."""
        return len(self.writer_view)

    def __len__(self) -> int:
        """The number of bytes written."""
        return len(self.writer_view) - self._pos

    def mark(self) -> int:
        """Return the number of bytes written so far, to pass to :meth:`length_since`."""
        return len(self.writer_view) - self._pos

    def length_since(self, mark: int) -> None:
        """Write, as a varint, the number of bytes written since ``mark``.

        Raises:
            ValueError: ``mark`` is larger than what has been written.
            RuntimeError: a write is in progress on this buffer.
        """
        n = len(self) - mark
        if n < 0:
            raise ValueError(f"mark {mark} is past the {len(self)} bytes written")
        self.write_varint(n)

    def _room(self, need: int) -> int:
        if self._claim:
            raise BufferBusyError(_BUSY)
        pos = self._pos
        if pos < need:
            pos = self._pos = self.writer_grow(pos, need)
        return pos

    def write_varint(self, value: int) -> None:
        """Write an unsigned varint (0 to 2**64-1) before what is written ("Base 128 Varints").

        Raises:
            EncodeError: ``value`` is negative or above 2**64-1.
            RuntimeError: a write is in progress on this buffer.
        """
        pos = self._room(10)
        if 0 <= value < 0x80:
            pos -= 1
            self.writer_view[pos] = value
            self._pos = pos
        else:
            self._pos = wire.rev_varint(self.writer_view, pos, value)

    def write_tag(self, number: int, wire_type: int) -> None:
        """Write the tag of field ``number`` with ``wire_type`` ("Message Structure").

        Raises:
            EncodeError: the field number is outside 1..2**29-1 or the wire type outside 0..5.
            RuntimeError: a write is in progress on this buffer.
        """
        if not 1 <= number <= wire.MAX_FIELD_NUMBER or not 0 <= wire_type <= 5:
            raise EncodeError(f"invalid tag: field number {number}, wire type {wire_type}")
        self.write_varint(wire.make_tag(number, wire_type))

    def write_bytes(self, data: bytes | bytearray | memoryview) -> None:
        """Write raw bytes before what is written.

        Raises:
            RuntimeError: a write is in progress on this buffer.
        """
        n = len(data)
        pos = self._room(n) - n
        self.writer_view[pos:pos + n] = data
        self._pos = pos

    def bytes(self) -> memoryview:
        """A zero-copy ``memoryview`` of what was written (see the class notes on views)."""
        return self.writer_view[self._pos:]

    def to_bytes(self) -> builtins.bytes:
        """A copy of what was written, as ``bytes``."""
        return self.writer_view[self._pos:].tobytes()

    def copy_to(self, target: bytearray | memoryview, offset: int = 0) -> int:
        """Copy what was written into ``target`` at ``offset``; return the bytes copied.

        Raises:
            ValueError: ``target`` is too small.
        """
        n = len(self)
        if offset < 0 or offset + n > len(target):
            raise ValueError(f"target of {len(target)} bytes cannot hold {n} bytes at offset {offset}")
        target[offset:offset + n] = self.writer_view[self._pos:]
        return n

    def reset(self) -> None:
        """Empty the buffer, keeping its storage and capacity.

        Raises:
            RuntimeError: a write is in progress on this buffer.
        """
        if self._claim:
            raise BufferBusyError(_BUSY)
        self._pos = len(self.writer_view)

    def __enter__(self) -> ReverseBuffer:
        self.reset()
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __repr__(self) -> str:
        return f"ReverseBuffer({len(self)} bytes written, capacity {self.capacity})"


_local = threading.local()


def thread_buffer() -> ReverseBuffer:
    """This thread's reusable buffer for ``pbj.encode(obj, reverse=True)``.

    Returns a new temporary buffer when this thread's own is claimed (an
    encode nested in another on the same thread). The caller empties it with
    ``writer_begin(empty=True)``.
    """
    buf = getattr(_local, "buf", None)
    if buf is None:
        buf = _local.buf = ReverseBuffer(1 << 16)
    elif buf._claim:
        return ReverseBuffer(4096)
    return buf
