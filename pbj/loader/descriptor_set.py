"""``pbj.load_descriptor_set``: the classes of a serialized ``FileDescriptorSet``."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pbj.api import decode
from pbj.errors import DecodeError, PbjError, SchemaError
from pbj.loader.namespace import Namespace

__all__ = ["load_descriptor_set"]


def load_descriptor_set(data: bytes | bytearray | memoryview | str | os.PathLike, *,
                        only: Iterable[str] | None = None, lazy: bool = True) -> Namespace:
    """The pbj classes of every message and enum of a ``FileDescriptorSet``.

    The set is decoded and indexed now; each class is built the first time it is used
    (looked up in the namespace, reached through a field, read as an attribute, unpickled),
    with the enums its fields use, so a program pays for the classes it touches. Building is
    atomic: a class asked for from several threads at once is built once, and an
    interrupted build changes nothing.

    Args:
        data: the serialized ``google.protobuf.FileDescriptorSet`` (from
            ``protoc --include_imports --descriptor_set_out=F`` or ``buf build -o F``),
            or the path of a file holding it (a ``str`` or ``os.PathLike``), which is read.
            Every file a file imports must be in the set.
        only: full names of messages or enums (``["pkg.Block"]``): the namespace offers these
            and every message and enum they reach (their fields' types, map values, and the
            types of the set's extensions of a reached message), not the whole set, and the
            services whose types are all among them. Default: the whole set.
        lazy: ``False`` builds every class now (:meth:`Namespace.build_all`), so that a
            declaration pbj refuses fails the load instead of the first use of its class.

    Returns:
        A :class:`Namespace` of the classes (:mod:`pbj.wellknown` classes for Google's
        well-known types).

    Raises:
        OSError: ``data`` is a path that cannot be read (``FileNotFoundError`` …).
        TypeError: ``data`` is neither bytes nor a path.
        KeyError: a name of ``only`` is no message or enum of the set.
        DecodeError: ``data`` is not a valid encoding of a ``FileDescriptorSet``
            (the text says so, and when ``data`` looks like text, that it does).
        SchemaError: ``data`` decodes but holds a file with no name (another
            message, not a set); the set is inconsistent: a file imports a file the set
            lacks (the text names them, pointing to ``protoc --include_imports``), a type
            name that no file defines, a message defined twice, a file or type with no
            name. With ``lazy=False``, also a declaration pbj refuses (which otherwise
            raises on the first use of its class: a field with no name or number, a
            duplicate field number, a rule of protoc's the file breaks …).
            Nothing is registered when loading fails.
    """
    if isinstance(data, (str, os.PathLike)):
        data = Path(data).read_bytes()
    elif not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"load_descriptor_set takes the bytes of a FileDescriptorSet or a path to its file, "
                        f"not {type(data).__name__}")
    from pbj.loader.set_cache import open_entry

    data = bytes(data)
    entry = open_entry(data)
    if entry is not None and entry.summary is not None and only is None:
        return _load_cached(data, entry, lazy)
    from pbj.descriptor import FileDescriptorSet

    try:
        # allow_partial: descriptor.proto's only required fields are those of UninterpretedOption.NamePart,
        # which a load never reads; checking them walked every descriptor of the set (most of the decode)
        fds = decode(FileDescriptorSet, data, allow_partial=True)
    except DecodeError as exc:
        raise DecodeError(f"{exc.reason} (this is not a FileDescriptorSet{_looks_like(bytes(data[:64]))}; make a "
                          "set with protoc --include_imports --descriptor_set_out=F)",
                          path=exc.path, offset=exc.offset) from None
    return load_files(fds.file, only=only, lazy=lazy, entry=entry)


def _load_cached(data: bytes, entry: Any, lazy: bool) -> Namespace:
    """The namespace of a set whose names the schema cache holds (:mod:`pbj.loader.set_cache`): the
    set was loaded before (a set that fails to load is never kept), so it is not decoded now.

    Raises:
        SchemaError: with ``lazy=False``, as :func:`load_descriptor_set`.
    """
    from pbj.loader.declarations import well_known
    from pbj.loader.pickling import register
    from pbj.loader.schema import LoadedSchema

    summary = entry.summary
    schema = LoadedSchema(None, None, well_known() if summary.google else {}, summary=summary, source=data,
                          records=entry.records)
    ns = Namespace(schema)
    if not lazy:
        ns.build_all()
    register(schema)
    entry.keep(summary)
    return ns


def load_files(files: Any, *, only: Iterable[str] | None = None, lazy: bool = True, entry: Any = None) -> Namespace:
    """The namespace of decoded ``FileDescriptorProto`` objects (see :func:`load_descriptor_set`).

    ``entry``: the set's :class:`~pbj.loader.set_cache.Entry` in the schema cache: its records are
    used, and the names and records of this load are added to it when the process exits.

    Raises:
        KeyError, SchemaError: as :func:`load_descriptor_set`.
    """
    from pbj.loader.index import SchemaIndex
    from pbj.loader.messages import UnknownRoot, reached, well_known
    from pbj.loader.pickling import register
    from pbj.loader.schema import LoadedSchema
    from pbj.loader.set_cache import Summary

    nameless = [i for i, f in enumerate(files) if not f.name]
    if nameless:
        raise SchemaError(f"this is not a FileDescriptorSet: file #{nameless[0]} of it has no name (is it "
                          "an encoded message of another type? make a set with protoc --include_imports "
                          "--descriptor_set_out=F)")
    hint = _missing_imports(files)
    try:
        index = SchemaIndex(files)
        _check_method_types(index)
        # pbj.wellknown's classes stand for google.protobuf's messages, for a set that has them (imported when
        # the first of them is looked up)
        summary = Summary.of(index)
        known = well_known() if summary.google else {}
        schema = LoadedSchema(index, None if only is None else reached(index, only), known, summary=summary,
                              records=None if entry is None else entry.records)
        ns = Namespace(schema)
        if not lazy:
            ns.build_all()
    except UnknownRoot:
        raise
    except SchemaError as exc:
        if hint:
            raise SchemaError(f"{exc}; {hint}") from None
        raise
    except PbjError:
        raise
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise SchemaError(f"malformed descriptor set: {type(exc).__name__}: {exc}") from None
    register(schema)
    if entry is not None:
        entry.keep(summary)
    return ns


def _check_method_types(index: Any) -> None:
    """Refuse a set whose service methods name an input or output type that is no message of it (the
    services themselves, and the classes of their types, are built when ``Namespace.services`` is read).

    Raises:
        SchemaError: naming the service and the method.
    """
    for fd in index.files:
        for sd in fd.service:
            for md in sd.method:
                for role, ref in (("input", md.input_type), ("output", md.output_type)):
                    if (ref or "").lstrip(".") not in index.msg_desc:
                        full = f"{fd.package}.{sd.name}" if fd.package else sd.name
                        raise SchemaError(f"method {md.name}: its {role} type {ref!r} is not a message of the "
                                          "schema", cls_name=full)


def _looks_like(head: bytes) -> str:
    """``": it looks like a .proto file ..."`` when ``head`` is printable text, else ``""``."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    if not text.strip() or not all(c.isprintable() or c in "\t\r\n" for c in text):
        return ""
    if "syntax" in text or "package" in text or "message" in text or "edition" in text:
        return ": it looks like a .proto file, which pbj.load_proto loads"
    return ": it looks like text"


def _missing_imports(files: Any) -> str:
    """Which imported files the set lacks (``"a.proto imports b.proto, ..."`` with the flag that
    includes them), or ``""`` when it has them all."""
    names = {f.name for f in files}
    missing = [(f.name, d) for f in files for d in f.dependency if d not in names]
    if not missing:
        return ""
    shown = ", ".join(f"{f} imports {d}" for f, d in missing[:3])
    more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
    return (f"the set lacks imported files ({shown}{more}, not in the set): "
            "make it with protoc --include_imports --descriptor_set_out=F")
