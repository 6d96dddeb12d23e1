"""What the schema cache keeps for one descriptor set: its names and its classes' declarations.

:func:`open_entry` reads the entry of a set's bytes (:func:`pbj.loader.cache.read_set_entry`)
at a load; the load uses its :class:`Summary` instead of decoding the set, and each class's
record (:mod:`pbj.loader.declarations`) instead of deriving it. What the process derives is
added to the entry when it exits (one :mod:`atexit` function for every entry of the process;
it re-reads the entry first, so processes sharing the cache add to each other's records). An
entry that fails a check, or whose content has another shape, counts as no entry.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

from pbj.loader import cache

__all__ = ["Entry", "Summary", "open_entry"]


class Summary:
    """The names a load of a set needs before any class is built (what its index would give).

    Attributes:
        messages: the full names of its messages (map entries excluded), in the set's order.
        enums: the full names of its enums, in the set's order.
        map_entries: the full names of its map-entry messages.
        extendees: the messages of the set that extensions of the set extend.
        google: whether a file of the set is of package ``google.protobuf``.
    """

    __slots__ = ("enums", "extendees", "google", "map_entries", "messages")

    def __init__(self, messages: tuple[str, ...], enums: tuple[str, ...], map_entries: frozenset[str],
                 extendees: frozenset[str], google: bool) -> None:
        self.messages = messages
        self.enums = enums
        self.map_entries = map_entries
        self.extendees = extendees
        self.google = google

    @classmethod
    def of(cls, index: Any) -> Summary:
        """The summary of a :class:`~pbj.loader.index.SchemaIndex`."""
        return cls(tuple(n for n in index.msg_desc if n not in index.map_entries), tuple(index.enum_desc),
                   frozenset(index.map_entries), frozenset(index.extending),
                   any(f.package == "google.protobuf" for f in index.files))

    def as_data(self) -> tuple:
        return (self.messages, self.enums, tuple(self.map_entries), tuple(self.extendees), self.google)

    @classmethod
    def from_data(cls, data: Any) -> Summary | None:
        """The summary ``as_data`` gave, or ``None`` when ``data`` has another shape."""
        if type(data) is not tuple or len(data) != 5 or type(data[4]) is not bool:
            return None
        if not all(type(part) is tuple and all(type(n) is str for n in part) for part in data[:4]):
            return None
        return cls(data[0], data[1], frozenset(data[2]), frozenset(data[3]), data[4])


class Entry:
    """The cache entry of one descriptor set, as read at a load, and what the process adds to it.

    Attributes:
        summary: the set's :class:`Summary`, or ``None`` when the entry had none (not written yet).
        records: full name -> record, read and derived (the load adds to it: this very dict).
    """

    def __init__(self, folder: Path, key: str, data: bytes, summary: Summary | None, records: dict[str, Any]) -> None:
        self._folder = folder
        self._key = key
        self._data = data
        self.summary = summary
        self.records = records
        self._written = (summary is not None, len(records))
        self._folder_was = False

    def keep(self, summary: Summary) -> None:
        """Write this entry (with ``summary``, the set's) when the process exits, if the load added to it.

        One entry a set is held until then: a later load of the same set takes the records of the
        one before it, so a program loading a set many times holds one set of records."""
        self.summary = summary
        self._folder_was = _is_dir(self._folder)  # a folder removed before the exit is not made again
        name = (str(self._folder), self._key, len(self._data), hash(self._data))
        with _lock:
            if not _registered:
                import atexit

                atexit.register(_write_pending)
                _registered.append(True)
            before = _pending.get(name)
            if before is not None and before is not self and before._data == self._data:
                for full, record in before.records.items():
                    self.records.setdefault(full, record)
            _pending[name] = self

    def write(self) -> None:
        """Write the entry now if it has anything the one on disk lacks (merged with what is there)."""
        if self.summary is None or self._written == (True, len(self.records)):
            return
        if self._folder_was and not _is_dir(self._folder):
            return  # removed since the load (a test run's own folder, at its end): not made again
        records = dict(self.records)
        on_disk = _content(cache.read_set_entry(self._folder, self._key, self._data))
        if on_disk is not None:
            records = {**on_disk[1], **records}
        cache.write_set_entry(self._folder, self._key, self._data, (self.summary.as_data(), records))
        self._written = (True, len(self.records))


def _is_dir(folder: Path) -> bool:
    """Whether ``folder`` is a folder; ``False`` when it cannot be reached (no permission to its
    parent, a name too long: ``Path.is_dir`` raises for those), which is no error."""
    try:
        return folder.is_dir()
    except OSError:
        return False


_lock = threading.Lock()
_pending: dict[tuple, Entry] = {}  # one entry a set (its folder, key and bytes) to write at exit
_registered: list[bool] = []


def _write_pending() -> None:
    """Write every entry kept (at exit; tests call it to stand for a process's end)."""
    with _lock:
        entries = list(_pending.values())
        _pending.clear()
    for entry in entries:
        entry.write()


def _content(found: Any) -> tuple[Summary, dict[str, Any]] | None:
    if type(found) is not tuple or len(found) != 2 or type(found[1]) is not dict:
        return None
    summary = Summary.from_data(found[0])
    return None if summary is None else (summary, found[1])


def _maker() -> str:
    """What names the code that derives records: the size and time of each module of the loader
    and of the features' resolver (a change to any of them is another key), read once a process."""
    if _MAKER:
        return _MAKER[0]
    here = os.path.dirname(__file__)
    top = os.path.dirname(here)
    parts = []
    # (and the declaration rules a class made from a cached record follows without its checks)
    for path in sorted([*(os.path.join(here, n) for n in os.listdir(here) if n.endswith(".py")),
                        os.path.join(top, "features.py"),
                        *(os.path.join(top, "schema", n) for n in ("declare.py", "field_rules.py", "name_rules.py"))]):
        st = os.stat(path)
        parts.append(f"{os.path.basename(path)}:{st.st_size}:{st.st_mtime_ns}")
    _MAKER[:] = [",".join(parts)]
    return _MAKER[0]


_MAKER: list[str] = []


def open_entry(data: bytes) -> Entry | None:
    """The cache entry of the descriptor set ``data`` (empty when the cache has none for it), or
    ``None`` when the cache is off (``PBJ_NO_CACHE``) or its code cannot be named."""
    folder = cache.cache_dir()
    if folder is None:
        return None
    try:
        key = cache.set_key(str(sys.modules["pbj"].__version__), _maker())
    except OSError:
        return None
    found = _content(cache.read_set_entry(folder, key, data))
    if found is None:
        return Entry(folder, key, data, None, {})
    return Entry(folder, key, data, found[0], found[1])
