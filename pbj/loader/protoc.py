"""``pbj.load_proto``: compile ``.proto`` files with the protoc that ``grpcio-tools`` ships, then load them."""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

from pbj.errors import DecodeError, SchemaError
from pbj.loader.descriptor_set import load_descriptor_set
from pbj.loader.namespace import Namespace

__all__ = ["load_proto"]

_protoc_lock = threading.Lock()


def _run_protoc(args: list[str]) -> tuple[int, str]:
    """Run grpc_tools' protoc in this process; return its exit status and what it wrote to stderr."""
    from grpc_tools import protoc as grpc_protoc

    with _protoc_lock, tempfile.TemporaryFile() as err:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(err.fileno(), 2)
            status = grpc_protoc.main(args)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        return status, err.read().decode("utf-8", "replace")


def load_proto(files: str | os.PathLike | Iterable[str | os.PathLike],
               include: Iterable[str | os.PathLike] = ()) -> Namespace:
    """Compile ``.proto`` files with the protoc of ``grpcio-tools`` and load them.

    Args:
        files: one or more ``.proto`` files (paths on disk, or paths relative
            to an include directory).
        include: import directories (protoc's ``-I``). Default: the directory
            of each file. Google's well-known ``.proto`` files (those
            ``grpcio-tools`` ships) are always importable.

    Returns:
        A :class:`Namespace`, as :func:`load_descriptor_set` gives, of the
        files and everything they import.

    Raises:
        SchemaError: ``grpcio-tools`` is not installed (``pip install 'pbj-protobuf[proto]'``),
            or protoc refused the files; the message carries protoc's own
            error lines.
    """
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    files = [str(f) for f in files]
    if not files:
        raise SchemaError("load_proto needs at least one .proto file")
    try:
        import grpc_tools
    except ImportError:
        raise SchemaError("load_proto needs protoc from grpcio-tools: pip install 'pbj-protobuf[proto]'") from None
    includes = [str(i) for i in include] or sorted({str(Path(f).resolve().parent) for f in files})
    builtin = Path(grpc_tools.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory(prefix="pbj-protoc-") as tmp:
        out = Path(tmp) / "set.binpb"
        args = ["protoc", "--include_imports", f"--descriptor_set_out={out}",
                *(f"-I{i}" for i in includes), f"-I{builtin}", *files]
        status, errors = _run_protoc(args)
        if status != 0 or not out.exists():
            text = errors.strip() or f"protoc exited with status {status}"
            raise SchemaError(f"protoc failed:\n{text}")
        data = out.read_bytes()
    try:
        return load_descriptor_set(data)
    except DecodeError as exc:  # pragma: no cover - protoc writes valid sets
        raise SchemaError(f"protoc wrote an unreadable descriptor set: {exc}") from None
