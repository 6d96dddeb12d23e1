"""The public entry points: ``encode``, ``decode``, ``encoded_size``, ``write_reverse``.

``decode`` and ``encode`` are written here in Python: the reference, with every argument check
and error. When the native engine is built, the two names are then bound to builtins of the
extension (``pbj/_native/entry.c``, made by :data:`pbj.engines.ENTRY_POINTS`) that answer the
common call in C, without a Python frame: the native engine in use, a compiled class, ``bytes``,
the keywords given as ints and bools. Every other call goes to the Python function below
(:data:`python_decode`, :data:`python_encode`) with the same arguments, so results and errors
are the same on both engines; the docstrings are the Python functions'.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from pbj import engines
from pbj.codec.buffer import BufferBusyError, ReverseBuffer, thread_buffer
from pbj.codec.compiler import Codec, codec_of
from pbj.codec.runtime import MAX_DEPTH, StaleSize
from pbj.depth import check_max_depth, too_deep
from pbj.engines import CURRENT
from pbj.errors import DecodeError, EncodeError, PbjError
from pbj.required import FREE, GENERATION, check_decode, check_encode, native_steps
from pbj.schema import OneOf, info, is_message
from pbj.schema.resolve import class_needed, message_needed
from pbj.schema.values import none_problem, problem

__all__ = ["encode", "decode", "encoded_size", "write_reverse", "DEFAULT_MAX_DEPTH", "decoder_of", "encoder_of"]

T = TypeVar("T")

#: Default nesting limit of ``decode``, as Google's runtimes use.
DEFAULT_MAX_DEPTH = MAX_DEPTH


def _codec(obj: Any, call: str):
    cls = type(obj)
    if not is_message(cls):
        raise message_needed(obj, call)
    return codec_of(cls)


def encode(obj: Any, *, reverse: bool = False, allow_partial: bool = False) -> bytes:
    """Encode a message to protobuf's binary wire format (protobuf.dev "Encoding").

    The output is deterministic: fields in ascending field number, map
    entries sorted by key (ascending, as Google's C++ and Java runtimes sort
    them), unknown fields last in arrival order; upb orders maps of two or
    more entries otherwise (``docs/usage-guide.md``, "Which bytes").

    Args:
        obj: a pbj message instance.
        reverse: use the reverse writer (writes back to front into a
            reusable buffer of this thread: the native engine's own, else a
            :class:`ReverseBuffer`) instead of the forward writer (measures,
            then writes front to back). Same bytes either way.
        allow_partial: write the message even if a proto2 ``required`` field
            is not set, at any depth (as Google's ``SerializePartialToString``).

    Returns:
        The encoding, as ``bytes``.

    Raises:
        TypeError: ``obj`` is not a pbj message, or ``reverse`` is not a ``bool``.
        EncodeError: a field holds a value its type cannot encode (wrong
            Python type, integer out of range, bad oneof member), with the path;
            or (unless ``allow_partial``) a ``required`` field is not set
            (protobuf.dev "Language Guide (proto2)", "Required"): the error
            names every missing path, e.g. ``$.inner.a, $.items[2].b``
            (:mod:`pbj.required`).
    """
    codec = getattr(obj.__class__, "__pbj_codec__", None)  # compiled already: the common case
    if codec is None:
        codec = _codec(obj, "pbj.encode")
    if not allow_partial and getattr(obj, FREE, None) is not obj.__class__:
        check_encode(obj)
    if reverse is not False and reverse is not True:
        raise TypeError(f"pbj.encode: reverse must be a bool (True or False), got {reverse!r}")
    ours = True  # False while the native engine runs: what it raises is not pbj's, it leaves unchanged
    try:
        if reverse:
            native_reverse = CURRENT.engine.write_reverse  # read once: use_engine may switch meanwhile
            if native_reverse is not None and codec.native is not None:
                ours = False
                out = native_reverse(codec.native, obj)  # into the engine's own buffer of this thread
                ours = True
                if out is not None:
                    return out  # type: ignore[no-any-return]
            buf = thread_buffer()  # declined: the Python writer, into this thread's ReverseBuffer
            pos = buf.writer_begin(empty=True)
            try:
                pos = codec.write_reverse(obj, buf, pos)
                return buf.writer_view[pos:].tobytes()
            finally:
                buf.writer_abort()
        native_encode = CURRENT.engine.encode  # read once: use_engine may switch meanwhile
        if native_encode is not None and codec.native is not None:
            ours = False
            out = native_encode(codec.native, obj)
            ours = True
            if out is NotImplemented:  # a cached size the bytes do not match: measure again
                return _write_measured(codec, obj)
            if out is not None:
                return out  # type: ignore[no-any-return]
            # declined: the Python writer runs once, here (a nested encode is a new call)
        parts: list[bytes] = []
        if obj._pbj_size < 0:
            n = codec.write_fresh(obj, parts, parts.append)
        else:
            n = codec.write(obj, parts.append)  # every size in the tree checked as it is written
        # obj's own cached size (set by hand, or by a measure before a change behind the
        # constructor's back) is what is checked here: it must be the count of the bytes written
        return b"".join(parts) if n == obj._pbj_size else _write_measured(codec, obj)
    except StaleSize:
        return _write_measured(codec, obj)
    except PbjError as exc:
        if ours and isinstance(exc, EncodeError) and not exc.path:
            return _encode_failed(codec, obj, exc)
        raise
    except (BufferBusyError, MemoryError):
        raise
    except Exception as exc:
        if not ours:
            raise
        return _encode_failed(codec, obj, exc)


def encoded_size(obj: Any, *, allow_partial: bool = False) -> int:
    """The size in bytes of ``encode(obj)``; measured once and cached on ``obj``.

    Args:
        obj: a pbj message instance.
        allow_partial: measure it even if a ``required`` field is not set
            (otherwise refused, as :func:`encode` refuses it).

    Raises:
        TypeError: ``obj`` is not a pbj message.
        EncodeError: as for :func:`encode`.
    """
    codec = _codec(obj, "pbj.encoded_size")
    if not allow_partial and getattr(obj, FREE, None) is not obj.__class__:
        check_encode(obj)
    size = obj._pbj_size
    if size.__class__ is int and size >= 0:
        return size  # type: ignore[no-any-return]
    try:
        return codec.size(obj)  # type: ignore[no-any-return]
    except PbjError:
        raise
    except Exception as exc:
        if isinstance(exc, RecursionError) or _find_bad(obj, []) is not None or not _sizes_set_by_hand(obj):
            raise _diagnose(obj, exc, "pbj.encoded_size") from None
    _forget_sizes(obj)  # no value explains it: a size of another type set by hand in the tree
    return codec.size(obj)  # type: ignore[no-any-return]


def write_reverse(obj: Any, buf: ReverseBuffer, *, allow_partial: bool = False) -> int:
    """Write ``obj`` with the reverse writer in front of what ``buf`` holds.

    The message is written without a tag or length (as :func:`encode` writes
    it), so several messages written in turn come out in the opposite order.
    On error nothing is added to ``buf``.

    Args:
        obj: a pbj message instance.
        buf: the buffer to write into.
        allow_partial: write it even if a ``required`` field is not set.

    Returns:
        The number of bytes written.

    Raises:
        TypeError: ``obj`` is not a pbj message.
        EncodeError: as for :func:`encode`.
        RuntimeError: ``buf`` is being written already (by another thread, or
            re-entrantly on this one): a buffer holds one write at a time.
    """
    codec = _codec(obj, "pbj.write_reverse")
    if not allow_partial and getattr(obj, FREE, None) is not obj.__class__:
        check_encode(obj)
    pos = buf.writer_begin()
    # measured under the claim: another thread's write cannot commit between the two reads
    before = len(buf.writer_view) - pos
    ours = True  # False while the native engine runs: what it raises is not pbj's, it leaves unchanged
    try:
        native_reverse = CURRENT.engine.write_reverse  # read once: use_engine may switch meanwhile
        if native_reverse is not None and codec.native is not None:
            ours = False
            end = native_reverse(codec.native, obj, buf, pos)
            ours = True
            # None: the Python writer starts again where the write began (the storage may have grown)
            pos = end if end is not None else codec.write_reverse(obj, buf, len(buf.writer_view) - before)
        else:
            pos = codec.write_reverse(obj, buf, pos)
        written = len(buf.writer_view) - pos - before
    except PbjError as exc:
        buf.writer_abort()  # the bytes written before stay, even if the storage grew
        if ours and isinstance(exc, EncodeError) and not exc.path:
            raise _diagnose(obj, exc, "pbj.write_reverse") from None
        raise
    except BaseException as exc:
        buf.writer_abort()
        if not ours or not isinstance(exc, Exception) or isinstance(exc, BufferBusyError | MemoryError):
            raise
        raise _diagnose(obj, exc, "pbj.write_reverse") from None
    buf.writer_commit(pos)
    return written


def decode(cls: type[T], data: bytes | bytearray | memoryview, *, max_depth: int = DEFAULT_MAX_DEPTH,
           max_size: int | None = None, allow_partial: bool = False) -> T:
    """Decode protobuf binary ``data`` into an instance of message class ``cls``.

    Follows protobuf.dev "Encoding": for a singular field the last value wins;
    a singular sub-message that occurs more than once is merged; repeated
    scalars accept packed and unpacked forms; int32, uint32 and enum keep the
    low 32 bits of the varint; strings must be valid UTF-8; fields the class
    does not know (and known field numbers arriving with a wire type that does
    not fit) are kept as unknown fields.

    Args:
        cls: a pbj message class.
        data: the encoding (``bytes``, ``bytearray`` or ``memoryview``).
        max_depth: how many levels of nested messages (and groups) below the
            top-level message are accepted (default 100).
        max_size: if given, inputs longer than this many bytes are refused.
        allow_partial: accept a message whose proto2 ``required`` fields are
            not all set, at any depth (as Google's ``ParsePartialFromString``).

    Returns:
        A new ``cls`` instance. Messages are immutable, so the native engine makes one object for
        the repeats of a sub-message within one input (docs/performance.md, "Memory"): two equal
        sub-messages of the result may be the same object.

    Raises:
        TypeError: ``cls`` is not a pbj message class, or ``max_depth`` is not an int.
        ValueError: ``max_depth`` is negative.
        DecodeError: the bytes are not a valid encoding: truncated input, a
            length past the end, wire type 6 or 7, field number 0 or above
            2**29-1, a varint longer than 10 bytes, invalid UTF-8, nesting
            deeper than ``max_depth``, input longer than ``max_size``. The
            error carries the field path and the byte offset. Also (unless
            ``allow_partial``) a ``required`` field is missing (protobuf.dev
            "Language Guide (proto2)", "Required"): the error names every
            missing path and has no offset.
    """
    codec = getattr(cls, "__pbj_codec__", None) if cls.__class__ is type else None
    if codec is None:
        if not isinstance(cls, type) or not is_message(cls):
            raise class_needed(cls, "pbj.decode")
        codec = codec_of(cls)
    if max_depth is not DEFAULT_MAX_DEPTH:
        check_max_depth(max_depth, "decode")
    if data.__class__ is not bytes:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"decode needs bytes, bytearray or memoryview, not {type(data).__name__}")
        data = bytes(data)
    if max_size is not None and len(data) > max_size:
        raise DecodeError(f"input of {len(data)} bytes is longer than max_size={max_size}", offset=0)
    # the native engine raises the DecodeError of an input that is not a valid encoding (the
    # Python parser's, from C) and hands back None for valid input it leaves to the Python parser
    native_decode = CURRENT.engine.decode if codec.native is not None else None
    result = None if native_decode is None else native_decode(codec.native, data, max_depth)
    if result is None:
        result = codec.parse(data, 0, len(data), max_depth, None)
    if not allow_partial and getattr(result, FREE, None) is not result.__class__:
        check_decode(result)
    return result


# ---------------------------------------------------------------- the entry points in C

#: The Python ``decode`` and ``encode``: the reference, and where the builtins hand every call
#: they do not answer themselves (the same objects as ``decode``/``encode`` without the extension).
python_decode, python_encode = decode, encode
_bind_decode: Callable[..., Callable[[Any], Any]] | None = None
_bind_encode: Callable[[type, Callable[[Any], bytes]], Callable[[Any], bytes]] | None = None

if not TYPE_CHECKING and engines.ENTRY_POINTS is not None:
    decode, encode, _bind_decode, _bind_encode = engines.ENTRY_POINTS[1](
        engines.ENTRY_POINTS[0], CURRENT, Codec, python_decode, python_encode, check_decode, check_encode, FREE,
        DEFAULT_MAX_DEPTH, native_steps, GENERATION)


def decoder_of(cls: type[T], catch: type[BaseException] | tuple[type[BaseException], ...] | None = None,
               handler: Callable[[BaseException], Any] | None = None) -> Callable[[bytes], Any]:
    """``data -> decode(cls, data)``, one argument: what grpcio takes as a deserializer.

    With the native engine built, a callable of the extension that keeps the class's codec
    between calls (no Python frame per call); otherwise ``functools.partial(decode, cls)``.
    Results and errors are :func:`decode`'s (the class is checked and compiled at the first
    call, as by ``decode``).

    Args:
        cls: a pbj message class.
        catch: an exception class (or a tuple of them) that ``handler`` answers instead.
        handler: called with the exception when decoding raises one of ``catch``; what it
            returns is returned (a server's deserializer turns a DecodeError into a value its
            handler answers ``INVALID_ARGUMENT`` for). Given with ``catch`` or not at all.

    Raises (when called):
        TypeError, DecodeError: as :func:`decode` (unless ``catch`` takes them).
    """
    if (catch is None) != (handler is None):
        raise TypeError("decoder_of: catch and handler go together")
    if _bind_decode is not None:
        return _bind_decode(cls, catch, handler)
    if catch is None or handler is None:
        return functools.partial(decode, cls)

    def decode_or_handle(data: bytes, catch: Any = catch, handler: Callable[[BaseException], Any] = handler) -> Any:
        try:
            return decode(cls, data)
        except catch as exc:
            return handler(exc)
    return decode_or_handle


def encoder_of(cls: type, other: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """``obj -> encode(obj)`` for an instance of exactly ``cls``, ``other(obj)`` for any other object.

    One argument: what grpcio takes as a serializer (``other`` decides what an object of another
    class gives, such as the check of its message type). A builtin of the native engine when it
    is built, otherwise a Python function.

    Raises (when called):
        EncodeError: as :func:`encode`; and whatever ``other`` raises.
    """
    if _bind_encode is not None:
        return _bind_encode(cls, other)

    def encode_or_other(obj: Any) -> bytes:
        return encode(obj) if obj.__class__ is cls else other(obj)
    return encode_or_other


# ---------------------------------------------------------------- encode errors

def _write_measured(codec: Any, obj: Any) -> bytes:
    """The Python forward writer, all sizes measured again, on an object whose cached sizes lie.

    Runs when a writer finds that the bytes of ``obj`` do not add up to a size cached in its tree:
    a size set by hand (``object.__setattr__``), or something changed behind the constructor's
    back after it was measured, such as a ``bytearray`` grown since, or a sub-message of another
    class. So that the bytes are right or the error names the field, never invalid bytes, every
    cached size in the tree is forgotten (and each sub-message's class checked), then measured
    again.

    Raises:
        EncodeError: a sub-message of another class than its field's, with its path; or the
            message changed while it was written (Python code run by the write replaced a value).
    """
    _forget_sizes(obj)
    parts: list[bytes] = []
    try:
        codec.write_fresh(obj, parts, parts.append)
    except StaleSize:
        raise EncodeError("the message changed while it was written (a value replaced with "
                          "object.__setattr__)") from None
    return b"".join(parts)


def _encode_failed(codec: Any, obj: Any, exc: BaseException) -> bytes:
    """What a Python writer's failure ``exc`` on ``obj`` gives: the error naming the field whose
    value explains it (:func:`_diagnose`, raised), or, when no value does and a size cached in the
    tree is one no writer caches (set by hand: a ``str``, ``None``, ``2**64``, which make a writer
    fail where it reads them), the bytes of ``obj`` with every size measured again."""
    if not isinstance(exc, RecursionError) and _find_bad(obj, []) is None and _sizes_set_by_hand(obj):
        try:
            return _write_measured(codec, obj)
        except (BufferBusyError, MemoryError, PbjError):
            raise
        except Exception:  # not the cache's: the first failure is the one to report
            pass
    raise _diagnose(obj, exc) from None


def _forget_sizes(obj: Any) -> None:
    """Mark every message in ``obj``'s tree as not measured (``_pbj_size`` -1), without recursion."""
    for o in _messages(obj):
        object.__setattr__(o, "_pbj_size", -1)


#: The largest size a writer caches (the native engine's PBJ_SIZE_MAX on a 64-bit build).
_SIZE_MAX = (1 << 61) - 1


def _sizes_set_by_hand(obj: Any) -> bool:
    """Whether a message in ``obj``'s tree caches a size no writer caches (not an ``int`` from -1 to
    :data:`_SIZE_MAX`): a writer that reads it may fail where it does, which no value explains."""
    return any(not (o._pbj_size.__class__ is int and -1 <= o._pbj_size <= _SIZE_MAX) for o in _messages(obj))


def _messages(obj: Any) -> Iterator[Any]:
    """Every message in ``obj``'s tree, ``obj`` first, without recursion (extension holders too).

    Raises:
        EncodeError: a sub-message of another class than its field's, with its path.
    """
    todo: list[tuple[Any, list[Any]]] = [(obj, [])]
    while todo:
        o, path = todo.pop()
        yield o
        todo.extend((h, path) for h in getattr(o, "_pbj_extensions", ()) if is_message(type(h)))
        mi = info(type(o))
        found: list[tuple[Any, Any, list[Any]]] = []
        for f in mi.fields:
            t = f.map_value if f.is_map else f.type
            if not (isinstance(t, type) and is_message(t)):
                continue
            value = getattr(o, f.name)
            if f.is_map and isinstance(value, dict):
                found.extend((t, v, [*path, f.name, (k,)]) for k, v in value.items())
            elif f.repeated and isinstance(value, tuple):
                found.extend((t, v, [*path, f.name, i]) for i, v in enumerate(value))
            elif not f.repeated and value is not None:
                found.append((t, value, [*path, f.name]))
        for one in mi.oneofs:
            value = getattr(o, one.name)
            member = next((m for m in one.members if isinstance(value, tuple) and len(value) == 2
                           and m.name == value[0]), None)
            if member is not None and isinstance(member.type, type) and is_message(member.type):
                found.append((member.type, value[1], [*path, one.name, member.name]))
        for t, v, where in found:
            if v.__class__ is not t:
                raise EncodeError(problem(t, v) or f"needs {t.__name__}", path=where)
            todo.append((v, where))


#: Where pbj's own code runs: its modules, and the writers it generates (``pbj.codec.source.register_lines``).
_PBJ_CODE = (os.path.dirname(os.path.abspath(__file__)) + os.sep, "<pbj generated codec ")


def _raised_in_pbj(exc: BaseException) -> bool:
    """Whether every frame of ``exc``'s traceback runs pbj's own code, none code pbj called.

    A ``RecursionError`` is raised in the frame that makes the call one level too deep: pbj's
    writer going down a message too deep for the limit, or user code that pbj called (a
    ``ReverseBuffer`` subclass's ``writer_grow``, a map key's ``__lt__`` that encodes) recursing,
    or raising one, on its own: then the recursion went through that code, and it is not pbj's.
    """
    tb = exc.__traceback__
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_PBJ_CODE):
            return False
        tb = tb.tb_next
    return True


def _diagnose(obj: Any, exc: BaseException, what: str = "pbj.encode") -> BaseException:
    """Find the field whose value made ``what`` (the function called) fail; runs only on the error path.

    Returns the error to raise: an :class:`EncodeError` naming the field whose value the
    generated writer could not write, the depth error for a ``RecursionError`` raised in pbj's
    own code (:func:`_raised_in_pbj`), or ``exc`` itself when no field explains it and it is not
    pbj's own (an error from user code, such as a ``ReverseBuffer`` subclass's ``writer_grow``,
    leaves unchanged, as on the native engine).
    """
    if isinstance(exc, RecursionError):
        return too_deep(obj, what) if _raised_in_pbj(exc) else exc
    found = _find_bad(obj, [])
    if found is not None:
        path, reason = found
        return EncodeError(reason, path=path)
    if isinstance(exc, EncodeError):
        return EncodeError(exc.reason)
    return exc


def _check_value(f_type: Any, value: Any, path: list[Any], utf8: bool = True) -> tuple[list[Any], str] | None:
    """The first value inside ``value`` its type refuses, by the constructor's rules (pbj.schema.values)."""
    reason = problem(f_type, value, utf8)
    if reason:
        return path, reason
    if isinstance(f_type, type) and is_message(f_type):
        return _find_bad(value, path)
    return None


def _find_bad(obj: Any, path: list[Any]) -> tuple[list[Any], str] | None:
    mi = info(type(obj))
    for f in mi.fields:
        value = getattr(obj, f.name)
        here = [*path, f.name]
        if f.is_map:
            if not isinstance(value, dict):  # a FrozenMap (a dict subclass) or a dict: both are written
                return here, f"map field needs a FrozenMap, got {type(value).__name__}"
            for k, v in value.items():
                bad = _check_value(f.map_key, k, [*here, (k,)], f.utf8) or \
                    _check_value(f.map_value, v, [*here, (k,)], f.utf8)
                if bad:
                    return bad
        elif f.repeated:
            if not isinstance(value, tuple | list):  # a list is written as a tuple is
                return here, f"repeated field needs a tuple, got {type(value).__name__}"
            for i, v in enumerate(value):
                bad = _check_value(f.type, v, [*here, i], f.utf8)
                if bad:
                    return bad
        elif value is None:
            if not f.optional:
                return here, none_problem(f)
        else:
            bad = _check_value(f.type, value, here, f.utf8)
            if bad:
                return bad
    for o in mi.oneofs:
        value = getattr(obj, o.name)
        if value is None:
            continue
        members = {m.name: m for m in o.members}
        if not isinstance(value, OneOf) or value[0] not in members:
            return [*path, o.name], f"oneof needs pbj.OneOf(member, value) with member one of {sorted(members)}"
        bad = _check_value(members[value[0]].type, value[1], [*path, o.name, value[0]], members[value[0]].utf8)
        if bad:
            return bad
    return None
