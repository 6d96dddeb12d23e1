"""``pbj.load_descriptor_set``: the classes of a serialized ``FileDescriptorSet``."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pbj.api import decode
from pbj.descriptor import FileDescriptorSet
from pbj.errors import DecodeError, PbjError, SchemaError
from pbj.loader.messages import UnknownRoot, build_namespace
from pbj.loader.namespace import Namespace
from pbj.loader.pickling import register
from pbj.schema import info

__all__ = ["load_descriptor_set"]


def load_descriptor_set(data: bytes | bytearray | memoryview | str | os.PathLike, *,
                        only: Iterable[str] | None = None) -> Namespace:
    """Build pbj classes for every message and enum of a ``FileDescriptorSet``.

    Args:
        data: the serialized ``google.protobuf.FileDescriptorSet`` (from
            ``protoc --include_imports --descriptor_set_out=F`` or ``buf build -o F``),
            or the path of a file holding it (a ``str`` or ``os.PathLike``), which is read.
            Every file a file imports must be in the set.
        only: full names of messages or enums (``["pkg.Block"]``): build these and every
            message and enum they reach (their fields' types, map values, and the types of
            the set's extensions of a reached message), not the whole set; a program that
            needs a few types of a large schema pays for those only. The namespace then
            holds just these classes, and the services whose types are all among them; type
            references are checked for these only. Default: the whole set.

    Returns:
        A :class:`Namespace` of the new classes (and of :mod:`pbj.wellknown`
        classes for Google's well-known types).

    Raises:
        OSError: ``data`` is a path that cannot be read (``FileNotFoundError`` …).
        TypeError: ``data`` is neither bytes nor a path.
        KeyError: a name of ``only`` is no message or enum of the set.
        DecodeError: ``data`` is not a valid encoding of a ``FileDescriptorSet``
            (the text says so, and when ``data`` looks like text, that it does).
        SchemaError: ``data`` decodes but holds a file with no name (another
            message, not a set); the descriptors are inconsistent: a type name that no
            file defines (the text names the imported files the set lacks,
            pointing to ``protoc --include_imports``), a message defined twice, a field with no name or
            number, or a declaration pbj refuses (duplicate field number …).
            Nothing is registered when loading fails.
    """
    if isinstance(data, (str, os.PathLike)):
        data = Path(data).read_bytes()
    elif not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"load_descriptor_set takes the bytes of a FileDescriptorSet or a path to its file, "
                        f"not {type(data).__name__}")
    try:
        fds = decode(FileDescriptorSet, data)
    except DecodeError as exc:
        raise DecodeError(f"{exc.reason} (this is not a FileDescriptorSet{_looks_like(bytes(data[:64]))}; make a "
                          "set with protoc --include_imports --descriptor_set_out=F)",
                          path=exc.path, offset=exc.offset) from None
    nameless = [i for i, f in enumerate(fds.file) if not f.name]
    if nameless:
        raise SchemaError(f"this is not a FileDescriptorSet: file #{nameless[0]} of it has no name (is it "
                          "an encoded message of another type? make a set with protoc --include_imports "
                          "--descriptor_set_out=F)")
    try:
        ns, known = build_namespace(fds, only)
        for cls in ns.messages.values():
            info(cls)  # resolve every type reference now: a dangling one fails the load, not a later use
    except UnknownRoot:
        raise
    except SchemaError as exc:
        hint = _missing_imports(fds)
        if hint:
            raise SchemaError(f"{exc}; {hint}") from None
        raise
    except PbjError:
        raise
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise SchemaError(f"malformed descriptor set: {type(exc).__name__}: {exc}") from None
    register({full: cls for full, cls in (*ns.enums.items(), *ns.messages.items()) if full not in known})
    return ns


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


def _missing_imports(fds: FileDescriptorSet) -> str:
    """Which imported files the set lacks (``"a.proto imports b.proto, ..."`` with the flag that
    includes them), or ``""`` when it has them all."""
    names = {f.name for f in fds.file}
    missing = [(f.name, d) for f in fds.file for d in f.dependency if d not in names]
    if not missing:
        return ""
    shown = ", ".join(f"{f} imports {d}" for f, d in missing[:3])
    more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
    return (f"the set lacks imported files ({shown}{more}, not in the set): "
            "make it with protoc --include_imports --descriptor_set_out=F")
