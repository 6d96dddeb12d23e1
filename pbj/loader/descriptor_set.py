"""``pbj.load_descriptor_set``: the classes of a serialized ``FileDescriptorSet``."""

from __future__ import annotations

import os
from pathlib import Path

from pbj.api import decode
from pbj.descriptor import FileDescriptorSet
from pbj.errors import PbjError, SchemaError
from pbj.loader.messages import build_namespace
from pbj.loader.namespace import Namespace
from pbj.loader.pickling import register
from pbj.schema import info

__all__ = ["load_descriptor_set"]


def load_descriptor_set(data: bytes | bytearray | memoryview | str | os.PathLike) -> Namespace:
    """Build pbj classes for every message and enum of a ``FileDescriptorSet``.

    Args:
        data: the serialized ``google.protobuf.FileDescriptorSet`` (from
            ``protoc --include_imports --descriptor_set_out=F`` or ``buf build -o F``),
            or the path of a file holding it (a ``str`` or ``os.PathLike``), which is read.
            Every file a file imports must be in the set.

    Returns:
        A :class:`Namespace` of the new classes (and of :mod:`pbj.wellknown`
        classes for Google's well-known types).

    Raises:
        OSError: ``data`` is a path that cannot be read (``FileNotFoundError`` …).
        TypeError: ``data`` is neither bytes nor a path.
        DecodeError: ``data`` is not a valid encoding of a ``FileDescriptorSet``.
        SchemaError: the descriptors are inconsistent: a type name that no
            file defines, a message defined twice, a field with no name or
            number, or a declaration pbj refuses (duplicate field number …).
            Nothing is registered when loading fails.
    """
    if isinstance(data, (str, os.PathLike)):
        data = Path(data).read_bytes()
    elif not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"load_descriptor_set takes the bytes of a FileDescriptorSet or a path to its file, "
                        f"not {type(data).__name__}")
    fds = decode(FileDescriptorSet, data)
    try:
        ns, known = build_namespace(fds)
        for cls in ns.messages.values():
            info(cls)  # resolve every type reference now: a dangling one fails the load, not a later use
    except PbjError:
        raise
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise SchemaError(f"malformed descriptor set: {type(exc).__name__}: {exc}") from None
    register({full: cls for full, cls in (*ns.enums.items(), *ns.messages.items()) if full not in known})
    return ns
