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
write (mode 0700); nothing is written anywhere else.

An entry is found by a key made of pbj's version, the cache's format, the protoc of
``grpcio-tools`` (its folder, and the size and time of its package file), the include
directories and the files asked for. It is used only when its checks pass:

* every ``.proto`` file the set was compiled from is still the file protoc would find first
  in the include directories, with the same bytes (a SHA-256 of each is kept): any edit, a
  new file that shadows one, or another include order makes protoc run again;
* the entry's own SHA-256 matches its bytes: a truncated or damaged entry is never trusted
  (protoc runs, and the entry is written again).

Writes are atomic (a temporary file in the same folder, then ``os.replace``), so processes
sharing the folder read either a whole entry or none. A folder that cannot be written is
not an error: the load goes on without the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["cache_dir", "entry_key", "read_entry", "write_entry"]

#: The format of an entry; part of every key, so a new format never reads an old entry.
FORMAT = b"pbj-schema-cache-1"
_MAGIC = b"PBJSC1\n"


def cache_dir() -> Path | None:
    """The cache folder (see the module docstring), or ``None`` when ``PBJ_NO_CACHE`` turns the cache off."""
    if os.environ.get("PBJ_NO_CACHE", "") not in ("", "0"):
        return None
    given = os.environ.get("PBJ_CACHE_DIR")
    if given:
        return Path(given)
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return Path(base) / "pbj" / "Cache" if base else Path.home() / "AppData" / "Local" / "pbj" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "pbj"
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "pbj"


def entry_key(version: str, compiler: Sequence[str], includes: Iterable[str], names: Iterable[str]) -> str:
    """The file name of the entry for one ``load_proto`` call (a SHA-256 of what decides its result).

    Args:
        version: pbj's version.
        compiler: what names the protoc in use (its folder, its package file's size and time).
        includes: the include directories, in protoc's order.
        names: the files asked for, as protoc names them.
    """
    text = json.dumps([FORMAT.decode(), version, list(compiler), list(includes), list(names)])
    return hashlib.sha256(text.encode()).hexdigest() + ".binpb"


def _first_found(name: str, search: Sequence[Path]) -> Path | None:
    """The file protoc reads for the import name ``name``: the first include directory that has it."""
    for folder in search:
        path = folder / name
        if path.is_file():
            return path
    return None


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_entry(folder: Path, key: str, search: Sequence[Path]) -> bytes | None:
    """The descriptor set of entry ``key``, or ``None`` when there is none or it fails a check.

    Args:
        folder: the cache folder.
        key: the entry's name (:func:`entry_key`).
        search: the include directories protoc searches, in order (the built-in ones last).
    """
    try:
        raw = (folder / key).read_bytes()
    except OSError:
        return None
    if not raw.startswith(_MAGIC) or len(raw) < len(_MAGIC) + 36:
        return None
    digest, body = raw[len(_MAGIC):len(_MAGIC) + 32], raw[len(_MAGIC) + 32:]
    if hashlib.sha256(body).digest() != digest:
        return None  # damaged: protoc runs and the entry is written again
    size = int.from_bytes(body[:4], "little")
    try:
        manifest = json.loads(body[4:4 + size])
        for name, path, sha in manifest:
            found = _first_found(name, search)
            if found is None or str(found) != path or _digest(found) != sha:
                return None
    except (ValueError, TypeError, OSError):
        return None
    return body[4 + size:]


def write_entry(folder: Path, key: str, search: Sequence[Path], files: Iterable[str], data: bytes) -> None:
    """Keep ``data`` (the descriptor set protoc wrote, of the files named ``files``) as entry ``key``.

    Written atomically; a folder or a source file that cannot be read or written leaves the
    cache as it was (no error: the load does not depend on the cache).
    """
    try:
        manifest = []
        for name in files:
            found = _first_found(name, search)
            if found is None:
                return  # a file protoc read from elsewhere: its changes could not be checked
            manifest.append([name, str(found), _digest(found)])
        head = json.dumps(manifest).encode()
        body = len(head).to_bytes(4, "little") + head + data
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        import tempfile

        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".binpb")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(_MAGIC + hashlib.sha256(body).digest() + body)
            os.replace(tmp, folder / key)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return
