"""``pbj.load_proto``: compile ``.proto`` files with the protoc that ``grpcio-tools`` ships, then load them."""

from __future__ import annotations

import os
import sys
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
    import tempfile  # here, not at import: load_descriptor_set alone never needs it (about 5 ms)

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
               include: str | os.PathLike | Iterable[str | os.PathLike] = (), *, lazy: bool = True) -> Namespace:
    """Compile ``.proto`` files with the protoc of ``grpcio-tools`` and load them.

    Args:
        files: one or more ``.proto`` files: paths on disk (absolute or
            relative to the current directory), or names inside an include
            directory.
        include: one import directory or several (protoc's ``-I``; a
            single ``str`` or ``os.PathLike`` is one directory), where ``import``
            statements are resolved. A file on disk outside all of them (or
            every file, when there are none) adds its own directory.
            Google's well-known ``.proto`` files (those ``grpcio-tools``
            ships) are always importable.
        lazy: as for :func:`load_descriptor_set`: ``False`` builds every class now.

    Returns:
        A :class:`Namespace`, as :func:`load_descriptor_set` gives, of the
        files and everything they import.

    The descriptor set protoc writes is kept in pbj's schema cache (:mod:`pbj.loader.cache`:
    the platform's cache folder, ``PBJ_CACHE_DIR`` to choose another, ``PBJ_NO_CACHE=1`` to
    turn it off), and a later call with the same files (the same bytes, found in the same
    include directories) reads it from there instead of running protoc.

    Raises:
        SchemaError: ``grpcio-tools`` is not installed (``pip install 'pbj-protobuf[proto]'``),
            or protoc refused the files (a file not found, a syntax error …);
            the message carries protoc's own error lines (file, line, column),
            naming each file as the caller did; or a file passed by its path
            has a name that finds another file first (an earlier include
            directory holds a file of that name, or two files passed are both
            ``s.proto`` to protoc), which protoc would load in its place.
    """
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    paths: list[str] = [os.fspath(f) for f in files]
    if not paths:
        raise SchemaError("load_proto needs at least one .proto file")
    try:
        import grpc_tools
    except ImportError:
        raise SchemaError("load_proto needs protoc from grpcio-tools: pip install 'pbj-protobuf[proto]'") from None
    if isinstance(include, (str, os.PathLike)):
        include = [include]
    includes = [Path(i).resolve() for i in include]
    _check_found(paths, includes)
    names = _protoc_names(paths, includes)
    builtin = Path(grpc_tools.__file__).parent / "_proto"
    search = [*includes, builtin]
    _check_not_shadowed(names, search)
    from pbj.loader import cache

    folder = cache.cache_dir()
    key = ""
    if folder is not None:
        stat = os.stat(grpc_tools.__file__)
        key = cache.entry_key(_version(), (str(builtin), str(stat.st_size), str(stat.st_mtime_ns)),
                              map(str, includes), names.values())
        data = cache.read_entry(folder, key, search)
        if data is not None:
            return load_descriptor_set(data, lazy=lazy)
    data = _compile(names, includes, builtin)
    try:
        ns = load_descriptor_set(data, lazy=lazy)
    except DecodeError as exc:  # pragma: no cover - protoc writes valid sets
        raise SchemaError(f"protoc wrote an unreadable descriptor set: {exc}") from None
    if folder is not None:
        cache.write_entry(folder, key, search, [f.name for f in ns.files], data)
    return ns


def _version() -> str:
    """pbj's version (``pbj.__version__``), read from the package already imported (this module is a
    submodule of it) rather than imported: the loader stays below ``pbj`` in the import graph."""
    return str(sys.modules["pbj"].__version__)


def _compile(names: dict[str, str], includes: list[Path], builtin: Path) -> bytes:
    """Run protoc on the files ``names`` and return the descriptor set it writes.

    Raises:
        SchemaError: protoc refused the files (its error lines, naming files as the caller did).
    """
    import tempfile  # here, not at import (see _run_protoc)

    with tempfile.TemporaryDirectory(prefix="pbj-protoc-") as tmp:
        out = Path(tmp) / "set.binpb"
        args = ["protoc", "--include_imports", f"--descriptor_set_out={out}",
                *(f"-I{i}" for i in includes), f"-I{builtin}", *names.values()]
        status, errors = _run_protoc(args)
        if status != 0 or not out.exists():
            text = _user_paths(errors.strip(), names, includes) or f"protoc exited with status {status}"
            raise SchemaError(f"protoc failed:\n{text}")
        return out.read_bytes()


def _protoc_names(files: list[str], includes: list[Path]) -> dict[str, str]:
    """The name protoc knows each file by (its path inside an include directory), by the user's path.

    protoc names a file by its path relative to the ``-I`` directory that holds
    it and compares paths as text, so ``proto/shop.proto`` with ``-I /abs/proto``
    is "not within any path". A file that exists (relative to the current
    directory or absolute) is named relative to the first include directory
    that holds it; with no include directory, or none that holds it, its own
    directory becomes one. A relative path that does not exist is a name
    inside the include directories, as protoc takes it (protoc reports a file
    it cannot find).
    """
    names: dict[str, str] = {}
    for f in files:
        path = Path(f)
        if not path.is_file() and includes and not path.is_absolute():
            names[f] = path.as_posix()  # a name inside the include directories
            continue
        full = path.resolve()
        home = next((i for i in includes if full.is_relative_to(i)), None)
        if home is None:
            home = full.parent
            includes.append(home)
        names[f] = full.relative_to(home).as_posix()
    return names


def _check_not_shadowed(names: dict[str, str], search: list[Path]) -> None:
    """Refuse a file on disk whose protoc name finds another file first.

    protoc looks a name up in the include directories in order and takes the
    first file it finds, so ``d1/s.proto`` named ``s.proto`` beside an include
    directory ``d2`` holding its own ``s.proto`` would compile ``d2/s.proto``
    in its place (and two files the user passed, both named ``s.proto``, would
    load once): a schema silently other than the one asked for.

    Raises:
        SchemaError: ``"load_proto: 'd1/s.proto' is the file 's.proto' to protoc, but that name
            finds '/abs/d2/s.proto' first ..."``.
    """
    for user, name in names.items():
        if not os.path.isfile(user):  # os.path's: no error for a folder the system refuses
            continue  # a name inside the include directories: protoc finds what it names
        first = next((d / name for d in search if os.path.isfile(d / name)), None)
        if first is not None and not os.path.samefile(first, user):
            raise SchemaError(
                f"load_proto: {user!r} is the file {name!r} to protoc, but that name finds {str(first)!r} "
                "first (include directories are searched in order): pass include directories that tell "
                "the two apart")


def _check_found(files: list[str], includes: list[Path]) -> None:
    """Refuse a file that is neither on disk nor inside an include directory, naming it as given.

    Raises:
        SchemaError: ``"load_proto: no such .proto file: 'x.proto' (looked in ...)"``.
    """
    for f in files:
        path = Path(f)
        if path.is_file() or (not path.is_absolute() and any((i / path).is_file() for i in includes)):
            continue
        where = "the current directory" if path.is_absolute() or not includes else \
            "the current directory and the include directories " + ", ".join(str(i) for i in includes)
        if path.is_absolute():
            where = "that path"
        raise SchemaError(f"load_proto: no such .proto file: {f!r} (looked in {where})")


def _user_paths(errors: str, names: dict[str, str], includes: list[Path] = ()) -> str:  # type: ignore[assignment]
    """protoc's error text with each file named as the user named it (``bad/bad.proto:2:9: ...``),
    each message once.

    protoc names a file by its name inside its include directory, or (for errors
    found when the descriptors are built) by that directory joined with the
    name; both are given back as the path the user passed, and a file it
    imported by its path from the current directory. A line repeated
    (protoc reports some problems from two of its passes), or glued to a copy
    of itself, is kept once. The line Abseil's logging prints before its first
    message (``WARNING: All log messages before absl::InitializeLog() ...``)
    says nothing about the files and is left out.
    """
    spellings: list[tuple[str, str]] = []
    for user, name in names.items():
        spellings.append((name + ":", user + ":"))
        spellings += [(f"{i / name}:", user + ":") for i in includes]
    cwd = Path.cwd()
    for i in includes:  # an imported file: by its path from the current directory, when it is below it
        if i.is_relative_to(cwd) and i != cwd:
            spellings.append((f"{i}{os.sep}", f"{i.relative_to(cwd).as_posix()}/"))
    spellings.sort(key=lambda pair: -len(pair[0]))  # the longest spelling first
    lines: list[str] = []
    for line in errors.splitlines():
        if line.startswith("WARNING: All log messages before absl::InitializeLog()"):
            continue
        half = len(line) // 2
        if line and len(line) % 2 == 0 and line[:half] == line[half:]:
            line = line[:half]
        for theirs, ours in spellings:
            if line.startswith(theirs):
                line = ours + line[len(theirs):]
                break
        if line not in lines:
            lines.append(line)
    return "\n".join(lines)
