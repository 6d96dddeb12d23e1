"""The schema cache: the descriptor sets protoc wrote for :func:`pbj.load_proto`, kept on disk.

Running protoc (``grpcio-tools``) in the process costs more than everything else a small
program does at start-up. So ``load_proto`` keeps each descriptor set protoc writes in a
cache, and a later process that loads the same files with the same include directories
reads the set from there instead of running protoc: it starts about as a program with a
generated ``_pb2`` module does.

Where: ``$PBJ_CACHE_DIR`` if set, else the platform's cache folder: ``$XDG_CACHE_HOME/pbj``
(``~/.cache/pbj``) on Linux and other Unix systems, ``~/Library/Caches/pbj`` on macOS,
``%LOCALAPPDATA%\\pbj\\Cache`` on Windows. ``PBJ_NO_CACHE=1`` (any value but ``""`` and
``"0"``) turns the cache off: nothing is read or written. The folder is created on first
write (mode 0700); nothing is written anywhere else. A relative ``$PBJ_CACHE_DIR`` is taken from
the working directory of the load that reads it.

An entry is found by a key made of pbj's version, the cache's format, the protoc of
``grpcio-tools`` (its folder, and the size and time of its package file), the include
directories and the files asked for (the entry keeps the key and is used for that key
only). It is used only when its checks pass:

* every ``.proto`` file the set was compiled from is still the file protoc would find first
  in the include directories, with the same bytes (the entry keeps a copy of each and
  compares them): any edit, a new file that shadows one, or another include order makes
  protoc run again;
* the entry's CRC-32 and length match its bytes: a truncated or damaged entry is never
  trusted (protoc runs, and the entry is written again).

Writes are atomic (a temporary file in the same folder, then ``os.replace``), so processes
sharing the folder read either a whole entry or none. A folder that cannot be written is
not an error: the load goes on without the cache. (No ``hashlib`` or ``json``: their imports
alone cost a small program's start-up more than reading an entry.)

The same folder keeps, for :func:`pbj.load_descriptor_set` (and so for ``load_proto``), what a
load derives from a descriptor set: its names (messages, enums, map entries, the messages that
extensions extend) and the declaration of each class a process built (its fields' numbers, types,
presence, packing, defaults, as the editions features decide them: :mod:`pbj.loader.declarations`).
A later process that loads the same bytes reads them instead of decoding the set and resolving
features, and makes each class from its declaration directly: the class a process without the
cache makes, without the declaration checks it passed when it was first built (a declaration is
kept only once its class was built). Such an entry is found by the set's bytes and checked against
them (it keeps a copy), by pbj's version and the modules that make the declarations and their
rules, and by the Python that
wrote it (``marshal``'s data format); its CRC-32 and length are checked, and each declaration's shape is
checked before use (:func:`pbj.loader.declarations.valid`): a damaged, truncated or foreign entry
is ignored and written again. Declarations are added when a process exits (:mod:`atexit`), to what
the entry holds by then, so processes sharing the folder add to each other's entries.
"""

from __future__ import annotations

import os
import sys
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["cache_dir", "entry_key", "read_entry", "write_entry", "read_set_entry", "write_set_entry"]

#: The format of an entry; part of every key, so a new format never reads an old entry.
FORMAT = "pbj-schema-cache-2"
_MAGIC = b"PBJSC2\n"


def cache_dir() -> Path | None:
    """The cache folder (see the module docstring), or ``None`` when ``PBJ_NO_CACHE`` turns the cache off."""
    if os.environ.get("PBJ_NO_CACHE", "") not in ("", "0"):
        return None
    given = os.environ.get("PBJ_CACHE_DIR")
    if given:  # a relative folder is taken from where the program is when it loads, not when it exits
        return Path(given).absolute()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return Path(base) / "pbj" / "Cache" if base else Path.home() / "AppData" / "Local" / "pbj" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "pbj"
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "pbj"


def entry_key(version: str, compiler: Sequence[str], includes: Iterable[str], names: Iterable[str]) -> str:
    """The key of one ``load_proto`` call: what decides its result, as one text.

    Args:
        version: pbj's version.
        compiler: what names the protoc in use (its folder, its package file's size and time).
        includes: the include directories, in protoc's order.
        names: the files asked for, as protoc names them.
    """
    return "\0".join([FORMAT, version, *compiler, "", *includes, "", *names])


def _file_name(key: str) -> str:
    raw = key.encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}{len(raw):x}.binpb"


def _framed(body: bytes | bytearray) -> bytes:
    return _MAGIC + zlib.crc32(body).to_bytes(4, "little") + len(body).to_bytes(4, "little") + body


def _unframed(raw: bytes) -> bytes | None:
    """The body of an entry whose magic, length and CRC-32 check, else ``None``."""
    head = len(_MAGIC) + 8
    if not raw.startswith(_MAGIC) or len(raw) < head:
        return None
    body = raw[head:]
    if int.from_bytes(raw[len(_MAGIC) + 4:head], "little") != len(body) or \
            int.from_bytes(raw[len(_MAGIC):len(_MAGIC) + 4], "little") != zlib.crc32(body):
        return None  # damaged
    return body


def _store(folder: Path, name: str, data: bytes) -> None:
    """Write ``data`` to ``folder/name`` atomically (a temporary file, then ``os.replace``).

    Raises:
        OSError: the folder cannot be made or written.
    """
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    # a name of its own (not tempfile's: its import, random and hashlib, costs more than the write)
    tmp = folder / f".tmp-{os.getpid()}-{os.urandom(6).hex()}.binpb"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, folder / name)
    except BaseException:
        os.unlink(tmp)
        raise


def _first_found(name: str, search: Sequence[Path]) -> Path | None:
    """The file protoc reads for the import name ``name``: the first include directory that has it."""
    for folder in search:
        path = folder / name
        if path.is_file():
            return path
    return None


def _put(out: bytearray, data: bytes) -> None:
    out += len(data).to_bytes(4, "little")
    out += data


def _text(value: str) -> bytes:
    return value.encode("utf-8", "surrogateescape")


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self) -> bytes:
        end = self.pos + 4 + int.from_bytes(self.data[self.pos:self.pos + 4], "little")
        if end > len(self.data):
            raise ValueError("truncated entry")
        value = self.data[self.pos + 4:end]
        self.pos = end
        return value


def read_entry(folder: Path, key: str, search: Sequence[Path]) -> bytes | None:
    """The descriptor set kept for ``key``, or ``None`` when there is none or it fails a check.

    Args:
        folder: the cache folder.
        key: the call's key (:func:`entry_key`).
        search: the include directories protoc searches, in order (the built-in ones last).
    """
    try:
        raw = (folder / _file_name(key)).read_bytes()
    except OSError:
        return None
    body = _unframed(raw)
    if body is None:
        return None  # damaged: protoc runs and the entry is written again
    try:
        reader = _Reader(body)
        if reader.take() != _text(key):
            return None  # another key of the same file name
        for _ in range(int.from_bytes(reader.take(), "little")):
            name, path, content = reader.take().decode(), reader.take().decode(), reader.take()
            found = _first_found(name, search)
            if found is None or str(found) != path or found.read_bytes() != content:
                return None
        return reader.take()
    except (ValueError, OSError):
        return None


def write_entry(folder: Path, key: str, search: Sequence[Path], files: Iterable[str], data: bytes) -> None:
    """Keep ``data`` (the descriptor set protoc wrote, of the files named ``files``) for ``key``.

    Written atomically; a folder or a source file that cannot be read or written leaves the
    cache as it was (no error: the load does not depend on the cache).
    """
    try:
        body = bytearray()
        _put(body, _text(key))
        names = list(files)
        _put(body, len(names).to_bytes(4, "little"))
        for name in names:
            found = _first_found(name, search)
            if found is None:
                return  # a file protoc read from elsewhere: its changes could not be checked
            _put(body, _text(name))
            _put(body, _text(str(found)))
            _put(body, found.read_bytes())
        _put(body, data)
        _store(folder, _file_name(key), _framed(body))
    except OSError:
        return


#: Part of every descriptor-set entry's key: a new layout of its content never reads an old one.
SET_FORMAT = "pbj-set-cache-1"


def set_key(version: str, maker: str) -> str:
    """The part of a descriptor-set entry's key that is not the set: the format, pbj's version,
    ``maker`` (what names the code that makes declarations: its file's size and time) and the
    Python whose ``marshal`` wrote the content (``sys.implementation.cache_tag``)."""
    return "\0".join([SET_FORMAT, version, maker, str(sys.implementation.cache_tag)])


def _set_file_name(key: str, data: bytes) -> str:
    raw = _text(key)
    return (f"set-{zlib.crc32(data, zlib.crc32(raw)):08x}{zlib.adler32(data, zlib.adler32(raw)):08x}"
            f"{len(data):x}.binpb")


def read_set_entry(folder: Path, key: str, data: bytes) -> object:
    """What is kept for the descriptor set ``data`` under ``key`` (:func:`set_key`): the object
    :func:`write_set_entry` was given, or ``None`` when there is none or it fails a check (its
    CRC-32, its length, its key, its copy of the set, ``marshal``'s reading). Its shape is the
    caller's to check."""
    import marshal

    try:
        raw = (folder / _set_file_name(key, data)).read_bytes()
    except OSError:
        return None
    body = _unframed(raw)
    if body is None:
        return None
    try:
        reader = _Reader(body)
        if reader.take() != _text(key) or reader.take() != data:
            return None  # another key or another set under the same file name
        return marshal.loads(reader.take())
    except (ValueError, EOFError, TypeError):  # marshal's refusals of bytes it did not write
        return None


def write_set_entry(folder: Path, key: str, data: bytes, content: object) -> None:
    """Keep ``content`` (data ``marshal`` can write: tuples, dicts, strings, numbers) for the
    descriptor set ``data`` under ``key``, atomically. A folder that cannot be written, or content
    ``marshal`` refuses, leaves the cache as it was (no error)."""
    import marshal

    try:
        blob = marshal.dumps(content)  # type: ignore[arg-type]  # (any data: refused with ValueError)
    except ValueError:
        return
    body = bytearray()
    _put(body, _text(key))
    _put(body, data)
    _put(body, blob)
    try:
        _store(folder, _set_file_name(key, data), _framed(body))
    except OSError:
        return
