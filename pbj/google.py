"""Google's protobuf messages and pbj messages, converted both ways: :func:`from_google`,
:func:`to_google`, and :func:`load_google` (pbj classes for a ``_pb2`` module or a ``DescriptorPool``).

A program moving from generated ``_pb2`` code to pbj meets Google message objects at its
boundaries (a googleapis client, OpenTelemetry, grpcio-status). The two runtimes agree on one
thing exactly: the wire format. So every conversion goes through the message's bytes: Google's
``SerializeToString`` then :func:`pbj.decode`, or :func:`pbj.encode` then Google's
``FromString``. Nothing is lost on the way: unknown fields, extensions, presence and the
order of repeated values travel in the bytes ("Encoding"; "Unknown Fields").

A proto2 message missing a ``required`` field converts, both ways, as it is: Google's runtime
lets a program build such a message, and refuses it only when it is serialized
(``SerializeToString`` raises, ``SerializePartialToString`` does not; ``IsInitialized`` says
which). The conversions copy one in-memory message into another, so they write and read the
partial bytes (``allow_partial``), as Google's ``CopyFrom`` copies a partial message; the
check stays where both runtimes put it: :func:`pbj.encode` and ``SerializeToString`` of the
result refuse it ("Language Guide (proto2)", "Required").

Which pbj class a Google message becomes: the class pbj loaded from the same descriptors.
:func:`load_google` reads the ``FileDescriptorProto`` of each file a ``_pb2`` module (or a
pool's file) holds, with every file it imports, and loads them as
:func:`pbj.load_descriptor_set` does; the classes are remembered per ``DescriptorPool``, so
:func:`from_google` finds them again. A message whose file was never loaded has its file (and
its imports) loaded on first use. Which Google class a pbj message becomes: the class of a
given ``_pb2`` module or pool, or, with none given, a class of a pool pbj keeps for the
message's own schema (the descriptors a loaded class came from, with their options; for a
declared class, those :func:`pbj.descriptor_writer.describe` writes).

Needs Google's ``protobuf`` package (``pip install protobuf``); this module imports it on first use.
"""

from __future__ import annotations

import threading
import types
import weakref
from collections.abc import Iterable
from typing import Any

from pbj.api import decode, encode
from pbj.errors import SchemaError
from pbj.schema import info, is_message
from pbj.schema.records import namespace_of
from pbj.schema.resolve import message_needed

__all__ = ["from_google", "to_google", "load_google", "google_class", "NotInPoolError"]


class NotInPoolError(SchemaError, KeyError):
    """A Google ``DescriptorPool`` or ``_pb2`` module has no type of the name asked for.

    A :class:`pbj.SchemaError` naming the type (``cls_name``); a ``KeyError`` too, as the
    pool's own lookups raise.
    """

    __str__ = Exception.__str__  # one line, not KeyError's quoted repr


_lock = threading.RLock()
# id(pool) -> (pool, {full name: pbj class}): the classes each Google pool's messages decode into.
# DescriptorPool objects of upb take no weak references; a pool lives as long as its entry.
_BY_POOL: dict[int, tuple[Any, dict[str, Any]]] = {}
# id(namespace or declared class) -> (owner, google pool built from its descriptors)
_OWN_POOLS: dict[int, tuple[Any, Any]] = {}
# pbj class -> the Google class of its own pool
_OWN_CLASSES: weakref.WeakKeyDictionary[type, Any] = weakref.WeakKeyDictionary()
# What each conversion found on its first call, so later calls are a dict lookup and the bytes round trip:
# Google class -> pbj class (from_google); (pbj class, id(target)) -> (target, Google class) (to_google).
_FROM: dict[Any, Any] = {}
_TO: dict[tuple[type, int], tuple[Any, Any]] = {}


def _google() -> Any:
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError as exc:  # pragma: no cover - the test extra installs protobuf
        raise ImportError("pbj's Google interop needs Google's protobuf package: pip install protobuf") from exc
    return descriptor_pb2, descriptor_pool, message_factory


def _is_pool(obj: Any) -> bool:
    """Whether ``obj`` is a Google ``DescriptorPool`` (upb's pools are not instances of the Python class)."""
    _, descriptor_pool, _ = _google()
    return isinstance(obj, (descriptor_pool.DescriptorPool, type(descriptor_pool.Default())))


def _schema_files(fd: Any) -> set[str]:
    """The names of file ``fd`` and of every file it imports, transitively."""
    return {f.name for f in _file_closure([fd])}


def _file_closure(files: Iterable[Any]) -> list[Any]:
    """Every ``FileDescriptor`` of ``files`` and of what they import, each after its imports."""
    out: list[Any] = []
    seen: set[str] = set()

    def visit(fd: Any) -> None:
        if fd.name in seen:
            return
        seen.add(fd.name)
        for dep in fd.dependencies:
            visit(dep)
        out.append(fd)

    for fd in files:
        visit(fd)
    return out


def _files_of(source: Any, names: Iterable[str] | None) -> tuple[Any, list[Any]]:
    """``(pool, FileDescriptors)`` of a ``_pb2`` module, file, message or enum descriptor,
    Google message class or instance, or a pool and names in it."""
    _google()
    from google.protobuf import descriptor as gdesc
    from google.protobuf.message import Message

    if _is_pool(source):
        if isinstance(names, str):
            names = [names]
        if not names:
            raise TypeError("load_google(pool) needs names=: the file names or full names of messages and enums "
                            "to load (a DescriptorPool cannot list what it holds)")
        files = []
        for name in names:
            files.append(_pool_file(source, name))
        return source, files
    if names is not None:
        raise TypeError("names= goes with a DescriptorPool only")
    items = source if isinstance(source, (list, tuple)) else [source]
    pool = None
    files = []
    for item in items:
        fd: Any = None
        if isinstance(item, gdesc.FileDescriptor):
            fd = item
        elif isinstance(item, (gdesc.Descriptor, gdesc.EnumDescriptor, gdesc.ServiceDescriptor)):
            fd = item.file
        elif isinstance(item, Message) or (isinstance(item, type) and issubclass(item, Message)):
            fd = item.DESCRIPTOR.file
        elif isinstance(getattr(item, "DESCRIPTOR", None), gdesc.FileDescriptor):
            fd = item.DESCRIPTOR  # a _pb2 module
        if fd is None and isinstance(item, types.ModuleType) and item.__name__.endswith("_pb2_grpc"):
            raise TypeError(f"load_google takes the _pb2 module ({item.__name__.removesuffix('_grpc')}), "
                            f"not the gRPC stubs module {item.__name__}")
        if fd is None:
            raise TypeError(f"load_google takes a _pb2 module, a Google descriptor, message class or message, or a "
                            f"DescriptorPool with names=, not {item!r}")
        if pool is not None and fd.pool is not pool:
            raise ValueError("load_google: the items come from different DescriptorPools; load each pool apart")
        pool = fd.pool
        files.append(fd)
    if pool is None:
        raise TypeError("load_google: nothing to load")
    return pool, files


def _pool_file(pool: Any, name: str) -> Any:
    try:
        return pool.FindFileByName(name)
    except KeyError:
        pass
    for find in (pool.FindMessageTypeByName, pool.FindEnumTypeByName, pool.FindServiceByName):
        try:
            return find(name.lstrip(".")).file
        except KeyError:
            continue
    raise NotInPoolError(f"the DescriptorPool has no file, message, enum or service named {name!r}", cls_name=name)


def load_google(source: Any, names: Iterable[str] | None = None) -> Any:
    """pbj classes for the schemas of Google's generated code or of a ``DescriptorPool``.

    The ``FileDescriptorProto`` of each file (exactly as the ``_pb2`` module or pool holds it,
    options and custom options included) and of every file it imports, transitively, are
    loaded as :func:`pbj.load_descriptor_set` loads a set. Well-known types are
    :mod:`pbj.wellknown`'s classes, as in every load. The new classes are remembered for the
    pool, so :func:`from_google` converts that pool's messages into them; a full name already
    remembered for the pool keeps its first class (load a program's files in one call, at
    start-up, for one set of classes).

    Args:
        source: a ``_pb2`` module (``from myproto import user_pb2``), a Google
            ``FileDescriptor``/``Descriptor``/``EnumDescriptor``/``ServiceDescriptor``, a Google
            message class or message, or a list of these (from one pool); or a
            ``google.protobuf.descriptor_pool.DescriptorPool`` with ``names``.
        names: with a pool: file names (``"pkg/user.proto"``) or full names of messages,
            enums or services (one name: a ``str``); their files are loaded.

    Returns:
        The :class:`pbj.Namespace` of the loaded files.

    Raises:
        TypeError: ``source`` is none of these (a ``_pb2_grpc`` module: its ``_pb2`` module is
            meant), or a pool comes without ``names``.
        NotInPoolError: a name is not in the pool (a :class:`pbj.SchemaError` and a ``KeyError``).
        ValueError: the items of a list come from different pools.
        SchemaError: pbj refuses the schema (as :func:`pbj.load_descriptor_set`).
        ImportError: Google's ``protobuf`` package is not installed.
    """
    pool, files = _files_of(source, names)
    return _load_files(pool, files)


def _load_files(pool: Any, files: list[Any]) -> Any:
    from pbj.loader import load_descriptor_set

    closure = _file_closure(files)
    data = b"".join(_field1(fd.serialized_pb) for fd in closure)  # FileDescriptorSet.file, field 1
    ns = load_descriptor_set(data)
    with _lock:
        _, known = _BY_POOL.setdefault(id(pool), (pool, {}))
        for full, cls in (*ns.messages.items(), *ns.enums.items()):
            known.setdefault(full, cls)
    return ns


def _field1(payload: bytes) -> bytes:
    from pbj import wire

    return b"\x0a" + wire.encode_varint(len(payload)) + payload


def _pbj_class_of(gmsg: Any) -> Any:
    desc = gmsg.DESCRIPTOR
    full = desc.full_name
    pool = desc.file.pool
    entry = _BY_POOL.get(id(pool))
    if entry is not None and entry[0] is pool:
        found = entry[1].get(full)
        if found is not None:
            return found
    from pbj.wellknown import WELL_KNOWN

    found = WELL_KNOWN.get(full)
    if found is not None:
        return found
    _load_files(pool, [desc.file])
    return _BY_POOL[id(pool)][1][full]


def from_google(message: Any, /) -> Any:
    """The pbj message equal to a Google protobuf message.

    The message's bytes (``SerializeToString``) decoded with the pbj class of its type: the
    class :func:`load_google` loaded for its pool, else the one loaded now from its file and
    the files it imports (then remembered). Unknown fields and extensions come along as the
    wire format carries them.

    Args:
        message: an instance of a Google generated or dynamic message class
            (``google.protobuf.message.Message``).

    Returns:
        A pbj message; ``pbj.encode`` of it gives the bytes Google's deterministic
        serialization gives. A message missing a proto2 ``required`` field (``IsInitialized()``
        false) converts as it is (``SerializePartialToString``, then ``pbj.decode`` with
        ``allow_partial``): ``pbj.encode`` of the result raises ``EncodeError`` naming the
        missing fields, as Google's ``SerializeToString`` does, and ``pbj.encode(...,
        allow_partial=True)`` writes it.

    Raises:
        TypeError: ``message`` is not a Google message.
        DecodeError: pbj refuses the bytes (cannot happen for a message Google serialized,
            except one nested deeper than pbj's depth limit, 100 levels).
        ImportError: Google's ``protobuf`` package is not installed.
    """
    cls = _FROM.get(type(message))
    if cls is None:
        cls = _first_from(message)
    return decode(cls, message.SerializePartialToString(), allow_partial=True)


def _first_from(message: Any) -> Any:
    """The pbj class of a Google message's class, found (and remembered) on its first conversion."""
    from google.protobuf.message import Message

    if not isinstance(message, Message):
        raise TypeError(f"from_google takes a Google protobuf message, not {type(message).__name__}")
    cls = _pbj_class_of(message)
    with _lock:
        _FROM[type(message)] = cls
    return cls


def google_class(cls: type, target: Any = None) -> Any:
    """The Google message class describing the same message as pbj class ``cls``.

    Args:
        cls: a pbj message class.
        target: a ``DescriptorPool`` holding the message's full name, a ``_pb2`` module
            holding it, or ``None``: a pool pbj builds once for the schema ``cls`` comes
            from (a loaded class: the descriptors it was loaded from, options included; a
            declared class: what :func:`pbj.descriptor_writer.describe` writes for it).

    Returns:
        A Google message class (``google.protobuf.message.Message`` subclass).

    Raises:
        TypeError: ``cls`` is not a pbj message class, or ``target`` is none of these.
        NotInPoolError: the pool has no message of that full name, or the module's file (with
            what it imports) has none (a :class:`pbj.SchemaError` and a ``KeyError``).
        ImportError: Google's ``protobuf`` package is not installed.
    """
    if target is None:
        found = _OWN_CLASSES.get(cls)
        if found is not None:
            return found
    message_factory = _google()[2]
    if not (isinstance(cls, type) and is_message(cls)):
        raise TypeError(f"{cls!r} is not a pbj message class")
    full = info(cls).full_name
    if target is None:
        pool = _own_pool(cls)
    elif _is_pool(target):
        pool = target
    elif hasattr(getattr(target, "DESCRIPTOR", None), "pool"):  # a _pb2 module
        pool = target.DESCRIPTOR.pool
    else:
        raise TypeError(f"to_google's target is a Google message class, a _pb2 module or a DescriptorPool, "
                        f"not {target!r}")
    try:
        desc = pool.FindMessageTypeByName(full)
    except KeyError:
        raise NotInPoolError(f"the DescriptorPool has no message {full}", cls_name=full) from None
    if target is not None and not _is_pool(target) and desc.file.name not in _schema_files(target.DESCRIPTOR):
        # a module's pool (often the default one) holds every module's types: only this module's schema counts
        raise NotInPoolError(f"the module {getattr(target, '__name__', target)!r} ({target.DESCRIPTOR.name}) has no "
                             f"message {full}: it is in {desc.file.name}; pass that file's _pb2 module", cls_name=full)
    gcls = message_factory.GetMessageClass(desc)
    if target is None:
        _OWN_CLASSES[cls] = gcls
    return gcls


def _own_pool(cls: type) -> Any:
    """A Google pool holding the schema ``cls`` comes from (built once per load or declared class)."""
    descriptor_pb2, descriptor_pool, _ = _google()
    ns = namespace_of(cls)
    owner: Any = ns if ns is not None else cls
    with _lock:
        entry = _OWN_POOLS.get(id(owner))
        if entry is not None and entry[0] is owner:
            return entry[1]
        if ns is not None:
            files = [encode(f) for f in ns.files]
        else:
            from pbj.descriptor_writer import describe
            files = [encode(f) for f in describe(cls)]
        pool = descriptor_pool.DescriptorPool()
        for data in files:
            pool.Add(descriptor_pb2.FileDescriptorProto.FromString(data))
        _OWN_POOLS[id(owner)] = (owner, pool)
        # this pool's messages convert back into the very classes it was built from
        classes = {**ns.messages, **ns.enums} if ns is not None else _reached(cls)
        _BY_POOL[id(pool)] = (pool, dict(classes))
        return pool


def _reached(cls: type) -> dict[str, Any]:
    """Full name -> every message class a declared class reaches (its fields' types, its extensions')."""
    out: dict[str, Any] = {}
    todo = [cls]
    while todo:
        c = todo.pop()
        name = info(c).full_name
        if name in out:
            continue
        out[name] = c
        types = [f.map_value if f.is_map else f.type for f in info(c).all_fields()]
        types += [ext.type for ext in info(c).extensions.values()]
        todo.extend(t for t in types if isinstance(t, type) and is_message(t))
    return out


def to_google(obj: Any, target: Any = None, /) -> Any:
    """The Google protobuf message equal to pbj message ``obj``.

    ``pbj.encode(obj)`` parsed by the Google class of the same full name (see
    :func:`google_class` for how ``target`` chooses it); unknown fields and extensions come
    along in the bytes. A message missing a proto2 ``required`` field converts as it is
    (``pbj.encode(obj, allow_partial=True)``), as Google's runtime lets a program build it: the
    result's ``IsInitialized()`` is false, its ``SerializeToString`` raises Google's
    ``EncodeError`` and ``SerializePartialToString`` writes it.

    Args:
        obj: a pbj message.
        target: a Google message class (the result is an instance of it), a ``_pb2`` module,
            a ``DescriptorPool``, or ``None`` (see :func:`google_class`).

    Returns:
        A new Google message.

    Raises:
        TypeError: ``obj`` is not a pbj message; ``target`` is not one of these; a Google
            class given as ``target`` describes another message.
        NotInPoolError: the pool has no message of ``obj``'s full name, or the module's file (with
            what it imports) has none (a :class:`pbj.SchemaError` and a ``KeyError``).
        EncodeError: a field of ``obj`` holds a value its type cannot encode (set by hand past the
            constructor's checks), with its path.
        SchemaError: a declared class cannot be described (see :func:`pbj.descriptor_writer.describe`).
        ImportError: Google's ``protobuf`` package is not installed.
    """
    entry = _TO.get((type(obj), id(target)))
    gcls = entry[1] if entry is not None and entry[0] is target else _first_to(obj, target)
    # allow_partial: as Google's runtime, which never checks required fields when it parses (upb, python)
    return gcls.FromString(encode(obj, allow_partial=True))


def _first_to(obj: Any, target: Any) -> Any:
    """The Google class ``to_google(obj, target)`` parses into, found (and remembered) on first use."""
    from google.protobuf.message import Message

    cls = type(obj)
    if not is_message(cls) or isinstance(obj, type):
        raise message_needed(obj, "pbj.to_google")
    if isinstance(target, type) and issubclass(target, Message):
        if target.DESCRIPTOR.full_name != info(cls).full_name:
            raise TypeError(f"{target.__name__} is the message {target.DESCRIPTOR.full_name}, not "
                            f"{info(cls).full_name}")
        gcls = target
    else:
        gcls = google_class(cls, target)
    with _lock:
        _TO[cls, id(target)] = (target, gcls)
    return gcls
