"""The column of each kind of field: its Arrow type, Python values to an array, an array to Python values.

One :class:`Column` per field of the plan :mod:`pbj.arrow.mapping` builds for a
class. The contract, the same for every kind:

* ``type``: the Arrow ``DataType``; ``nullable``: whether the Arrow field is
  nullable (the protobuf field has presence);
* ``to_array(values, path)``: a Python list of the field's values, one per row
  (``None`` for an unset field, only where ``nullable``), to a ``pyarrow.Array``
  of ``type``. Whole columns are built at once (``pa.array`` on a list,
  ``StructArray.from_arrays``, ``ListArray.from_arrays``), never one array per
  message. ``path`` is the field path for errors;
* ``from_array(array)``: a ``pyarrow.Array`` of ``type`` to the Python list of
  values the message constructor takes, one per row (``None`` for a null).

Rows of a null struct (an unset sub-message or oneof) still have a slot in
every child column: they hold the child's zero value (a non-nullable child) or
a null, as Arrow lets a child hold anything under a null parent.
"""

from __future__ import annotations

import itertools
import struct
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pbj.arrow.lost import note
from pbj.codec.float32 import nan_from_bits, pack_run
from pbj.errors import EncodeError
from pbj.schema import FrozenMap, OneOf, info

__all__ = ["Column", "Scalar", "Float32", "Enum", "Struct", "Oneof", "List", "Map", "Timestamp", "Duration",
           "Wrapper", "Encoded", "Present", "SCALAR_TYPES"]

#: The Arrow type of each protobuf scalar type ("Scalar Value Types").
SCALAR_TYPES: dict[str, pa.DataType] = {
    "int32": pa.int32(), "sint32": pa.int32(), "sfixed32": pa.int32(),
    "int64": pa.int64(), "sint64": pa.int64(), "sfixed64": pa.int64(),
    "uint32": pa.uint32(), "fixed32": pa.uint32(),
    "uint64": pa.uint64(), "fixed64": pa.uint64(),
    "float": pa.float32(), "double": pa.float64(), "bool": pa.bool_(),
    "string": pa.string(), "bytes": pa.binary(),
}
_ZERO: dict[str, Any] = {"float": 0.0, "double": 0.0, "bool": False, "string": "", "bytes": b""}
_NANOS = 1_000_000_000
_I64 = (-(1 << 63), (1 << 63) - 1)
_ZERO_OFFSET = pa.array([0], pa.int32())


class Column:
    """Base of the columns (see the module's contract)."""

    type: pa.DataType
    nullable: bool
    zero: Any = None
    #: a message column's class: its full name and whether it has extension ranges (for :mod:`pbj.arrow.lost`)
    lost_key: tuple[str, bool] = ("", False)

    def note_lost(self, values: list) -> None:
        """Count the unknown fields and extensions of messages ``values``, which the table leaves out."""
        note(*self.lost_key, values)

    def to_array(self, values: list, path: list, spread: pa.Array | None = None) -> pa.Array:
        """The array of ``values``; with ``spread``, its rows taken at those indices (see :class:`Struct`)."""
        array = self.make(values, path)
        return array if spread is None else array.take(spread)

    def make(self, values: list, path: list) -> pa.Array:
        """The array of ``values``, one row each."""
        raise NotImplementedError

    def from_array(self, array: pa.Array) -> list:
        raise NotImplementedError


class Scalar(Column):
    """An integral, ``double``, ``bool``, ``string`` or ``bytes`` field: Arrow's type of the same width."""

    def __init__(self, kind: str, nullable: bool) -> None:
        self.kind = kind
        self.type = SCALAR_TYPES[kind]
        self.nullable = nullable
        self.zero = _ZERO.get(kind, 0)

    def make(self, values: list, path: list) -> pa.Array:
        try:
            return pa.array(values, self.type)
        except UnicodeEncodeError as exc:
            # a string without UTF-8 validation keeping bytes that are no UTF-8 (surrogateescape)
            row = next(i for i, v in enumerate(values) if isinstance(v, str) and not _is_utf8(v))
            raise EncodeError(f"row {row}: {values[row]!r} is not valid UTF-8, which an Arrow string "
                              f"cannot hold ({exc.reason})", path=path) from None

    def from_array(self, array: pa.Array) -> list:
        return array.to_pylist()


def _lost_key(cls: type) -> tuple[str, bool]:
    mi = info(cls)
    return mi.full_name, bool(mi.extension_ranges)


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Float32(Column):
    """A ``float`` field: Arrow ``float32``, bit-exact (NaN payloads and signalling NaNs included)."""

    type = pa.float32()
    zero = 0.0

    def __init__(self, nullable: bool) -> None:
        self.nullable = nullable

    def make(self, values: list, path: list) -> pa.Array:
        array = pa.array(values, self.type)
        filled = [0.0 if v is None else v for v in values] if array.null_count else values
        total = sum(filled)
        if total == total:  # no NaN: the hardware narrowing is exact
            return array
        # NaNs narrowed as pbj's writers narrow them (pbj.codec.float32), not by the hardware
        return pa.Array.from_buffers(self.type, len(values), [array.buffers()[0], pa.py_buffer(pack_run(filled))],
                                     null_count=array.null_count)

    def from_array(self, array: pa.Array) -> list:
        out = array.to_pylist()
        total = sum(v for v in out if v is not None)
        if total == total:
            return out
        bits = struct.unpack_from(f"<{len(array)}I", array.buffers()[1], 4 * array.offset)
        return [nan_from_bits(bits[i]) if v is not None and v != v else v for i, v in enumerate(out)]


class Enum(Column):
    """An enum field: a dictionary-encoded string of the value's name, or its number (``int32``).

    With names, a number that no member of the enum names (proto3 enums are
    open) is the decimal text of the number (``"7"``), as ProtoJSON writes it,
    so it comes back as that number. The dictionary lists every member, in the
    enum's order, then such numbers in the order they occur.
    """

    def __init__(self, enum_cls: type, as_names: bool, nullable: bool) -> None:
        self.enum_cls = enum_cls
        self.as_names = as_names
        self.nullable = nullable
        self.zero = 0
        if not as_names:
            self.type = pa.int32()
            return
        self.type = pa.dictionary(pa.int32(), pa.string())
        renamed = getattr(enum_cls, "__pbj_proto_names__", {})
        members = list(enum_cls)  # type: ignore[call-overload]
        self.names = [renamed.get(m.name, m.name) for m in members]
        self.index = {int(m): i for i, m in enumerate(members)}
        self.zero = 0 if 0 in self.index else int(members[0])
        self.by_name: dict[str, Any] = {n: m for n, m in zip(self.names, members, strict=True)}

    def make(self, values: list, path: list) -> pa.Array:
        if not self.as_names:
            return pa.array(values, self.type)
        index = self.index
        names = self.names
        try:
            indices = [None if v is None else index[v] for v in values]
        except KeyError:
            index = dict(index)
            names = list(names)
            indices = []
            for v in values:
                if v is not None and v not in index:
                    index[v] = len(names)
                    names.append(str(int(v)))
                indices.append(None if v is None else index[v])
        return pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), pa.array(names, pa.string()))

    def from_array(self, array: pa.Array) -> list:
        if not self.as_names:
            return array.to_pylist()
        by_name = self.by_name
        lookup = [by_name[n] if n in by_name else int(n) for n in array.dictionary.to_pylist()]
        return [None if i is None else lookup[i] for i in array.indices.to_pylist()]


class Struct(Column):
    """A message field: a struct of its fields' columns (null when the field is unset)."""

    def __init__(self, cls: type, names: list[str], getters: list[Any], aliases: list[str],
                 columns: list[Column], nullable: bool) -> None:
        self.cls = cls
        self.names = names
        self.getters = getters
        self.aliases = aliases
        self.columns = columns
        self.nullable = nullable
        #: the attribute (field or oneof) name of each column (set by :mod:`pbj.arrow.mapping`)
        self.attrs: list[str] = []
        self.fields = [pa.field(n, c.type, nullable=c.nullable) for n, c in zip(names, columns, strict=True)]
        self.type = pa.struct(self.fields)
        self._empty: Any = None
        self.lost_key = _lost_key(cls)

    def empty(self) -> Any:
        """An instance with every field at its zero value (the stand-in for an unset sub-message)."""
        if self._empty is None:
            self._empty = self.cls()
        return self._empty

    def children(self, values: list, path: list, spread: pa.Array | None = None) -> list[pa.Array]:
        """The arrays of each field over messages ``values`` (no ``None`` among them), spread as asked."""
        self.note_lost(values)
        return [column.to_array(list(map(getter, values)), [*path, name], spread)
                for name, getter, column in zip(self.names, self.getters, self.columns, strict=True)]

    def to_array(self, values: list, path: list, spread: pa.Array | None = None) -> pa.Array:
        """The struct array of messages ``values`` (``None``: unset), its rows spread by ``spread``.

        Unset rows: the columns are built over the set messages and one empty
        message, and the rows are *spread* (``take``) to every row, an unset
        row taking the empty message's values, so a non-nullable child never
        holds a null (which Parquet refuses). The spreading is done once, at
        the leaves (and lists, maps): a struct inside a struct composes its
        indices with its parent's and passes them down, so no level copies a
        subtree its parent copies again.
        """
        present = [v for v in values if v is not None] if self.nullable else values
        mask = None
        if len(present) != len(values):
            unset = [v is None for v in values]
            mask = pa.array(unset, pa.bool_())
            extra = len(present)
            present.append(self.empty())
            take = []
            k = -1
            for v in values:
                if v is None:
                    take.append(extra)
                else:
                    k += 1
                    take.append(k)
            own = pa.array(take, pa.int32())
            if spread is not None:
                own = own.take(spread)
                mask = mask.take(spread)
            spread = own
        return pa.StructArray.from_arrays(self.children(present, path, spread), fields=self.fields, mask=mask)

    def from_array(self, array: pa.Array) -> list:
        if not array.null_count:
            return self.build(len(array), [c.from_array(array.field(i)) for i, c in enumerate(self.columns)])
        valid = array.is_valid()
        compact = array.filter(valid)
        it = iter(self.build(len(compact), [c.from_array(compact.field(i)) for i, c in enumerate(self.columns)]))
        return [next(it) if ok else None for ok in valid.to_pylist()]

    def build(self, n: int, child_values: list[list]) -> list:
        """``n`` messages from the Python values of each field (one list per field, ``n`` values each)."""
        cls = self.cls
        aliases = self.aliases
        if aliases:
            return [cls(**dict(zip(aliases, row, strict=True))) for row in zip(*child_values, strict=True)]
        return [cls() for _ in range(n)]


class Oneof(Column):
    """A oneof: a struct of one nullable column per member plus ``which``, the set member's name.

    ``which`` is a dictionary-encoded string (the member names in declaration
    order); the struct is null when no member is set, and exactly the set
    member's column is non-null otherwise.
    """

    def __init__(self, which_name: str, members: list[str], names: list[str], columns: list[Column]) -> None:
        self.which_name = which_name
        self.members = members
        self.names = names
        self.columns = columns
        self.nullable = True
        self.position = {m: i for i, m in enumerate(members)}
        self.fields = [pa.field(which_name, pa.dictionary(pa.int32(), pa.string()), nullable=False),
                       *(pa.field(n, c.type, nullable=True) for n, c in zip(names, columns, strict=True))]
        self.type = pa.struct(self.fields)
        self.dictionary = pa.array(names, pa.string())

    def to_array(self, values: list, path: list, spread: pa.Array | None = None) -> pa.Array:
        """The struct array of ``values`` (``pbj.OneOf`` or ``None``), its rows spread by ``spread`` (see Struct)."""
        n = len(values)
        position = self.position
        rows: list[list[int]] = [[] for _ in self.members]
        held: list[list] = [[] for _ in self.members]
        which = [0] * n
        unset = False
        for row, v in enumerate(values):
            if v is None:
                unset = True
            else:
                p = position[v.which]
                which[row] = p
                rows[p].append(row)
                held[p].append(v.value)
        which_array = pa.DictionaryArray.from_arrays(pa.array(which, pa.int32()), self.dictionary)
        arrays = [which_array if spread is None else which_array.take(spread)]
        for name, column, member_rows, member_values in zip(self.names, self.columns, rows, held, strict=True):
            # each member's column is built over the rows that set it and one null, spread to every row
            member_spread = spread
            if len(member_values) != n:
                k = len(member_values)
                take = [k] * n
                for j, row in enumerate(member_rows):
                    take[row] = j
                member_values.append(None)
                own = pa.array(take, pa.int32())
                member_spread = own if spread is None else own.take(spread)
            arrays.append(column.to_array(member_values, [*path, name], member_spread))
        mask = None
        if unset:
            mask = pa.array([v is None for v in values], pa.bool_())
            if spread is not None:
                mask = mask.take(spread)
        return pa.StructArray.from_arrays(arrays, fields=self.fields, mask=mask)

    def from_array(self, array: pa.Array) -> list:
        n = len(array)
        which = array.field(0).indices.to_pylist()
        member_values = [c.from_array(array.field(i + 1)) for i, c in enumerate(self.columns)]
        valid = array.is_valid().to_pylist() if array.null_count else None
        members = self.members
        out: list = []
        for row in range(n):
            if valid is not None and not valid[row]:
                out.append(None)
            else:
                p = which[row]
                out.append(OneOf(members[p], member_values[p][row]))
        return out


class List(Column):
    """A repeated field: a list of non-null items (never null itself: an empty list is empty)."""

    nullable = False
    zero = ()

    def __init__(self, item: Column) -> None:
        self.item = item
        self.type = pa.list_(pa.field("item", item.type, nullable=False))

    def to_array(self, values: list, path: list, spread: pa.Array | None = None) -> pa.Array:
        """The list array of ``values`` (tuples); ``spread`` (see :class:`Struct`) moves the rows, not the items."""
        items = self.item.to_array(list(itertools.chain.from_iterable(values)), path)
        return pa.ListArray.from_arrays(_offsets(values, spread), items, type=self.type)

    def from_array(self, array: pa.Array) -> list:
        offsets = array.offsets.to_pylist()
        items = self.item.from_array(array.values)
        return [tuple(items[a:b]) for a, b in itertools.pairwise(offsets)]


def _offsets(values: list, spread: pa.Array | None) -> pa.Array:
    """The offsets of lists (or maps) ``values``, their rows spread by ``spread``.

    A spread (:class:`Struct`) takes each row of ``values`` at most once, in
    order, and repeats only the stand-in row of an unset message, whose lists
    are empty: so the items keep their order and only the offsets change.
    """
    if spread is None:
        return pa.array(list(itertools.accumulate(map(len, values), initial=0)), pa.int32())
    lengths = pa.array(list(map(len, values)), pa.int32()).take(spread)
    return pa.concat_arrays([_ZERO_OFFSET, pc.cumulative_sum(lengths)])  # pyright: ignore[reportAttributeAccessIssue]


class Map(Column):
    """A map field: an Arrow map of non-null keys and values, entries in the map's order."""

    nullable = False

    def __init__(self, key: Column, value: Column) -> None:
        self.key = key
        self.value = value
        self.zero = FrozenMap()
        self.type = pa.map_(pa.field("key", key.type, nullable=False), pa.field("value", value.type, nullable=False))

    def to_array(self, values: list, path: list, spread: pa.Array | None = None) -> pa.Array:
        """The map array of ``values`` (dicts); ``spread`` (see :class:`Struct`) moves the rows, not the entries."""
        keys = self.key.to_array(list(itertools.chain.from_iterable(values)), [*path, "key"])
        items = self.value.to_array(list(itertools.chain.from_iterable(v.values() for v in values)), path)
        return pa.MapArray.from_arrays(_offsets(values, spread), keys, items, type=self.type)

    def from_array(self, array: pa.Array) -> list:
        offsets = array.offsets.to_pylist()
        keys = self.key.from_array(array.keys)
        items = self.value.from_array(array.items)
        return [dict(zip(keys[a:b], items[a:b], strict=True)) for a, b in itertools.pairwise(offsets)]


class _Seconds(Column):
    """Shared by Timestamp and Duration: the message as one int64 of nanoseconds."""

    nullable = True
    what = ""

    def __init__(self, cls: type, seconds: str, nanos: str, nullable: bool) -> None:
        self.cls = cls
        self.seconds = seconds
        self.nanos = nanos
        self.nullable = nullable
        self.lost_key = _lost_key(cls)

    def check(self, s: int, n: int) -> bool:
        raise NotImplementedError

    def make(self, values: list, path: list) -> pa.Array:
        self.note_lost(values)
        sec, nan = self.seconds, self.nanos
        out: list = []
        for v in values:
            if v is None:
                out.append(None)
                continue
            s, n = getattr(v, sec), getattr(v, nan)
            total = s * _NANOS + n
            if not self.check(s, n) or not _I64[0] <= total <= _I64[1]:
                raise EncodeError(f"row {len(out)}: {v!r} is not a {self.what} that Arrow's {self.type} can hold "
                                  f"(see docs/arrow.md; well_known_types=False keeps it as a struct)", path=path)
            out.append(total)
        return pa.array(out, pa.int64()).view(self.type)

    def from_array(self, array: pa.Array) -> list:
        cls, sec, nan = self.cls, self.seconds, self.nanos
        out: list = []
        for total in array.view(pa.int64()).to_pylist():
            if total is None:
                out.append(None)
            else:
                s, n = self.split(total)
                out.append(cls(**{sec: s, nan: n}))
        return out

    def split(self, total: int) -> tuple[int, int]:
        raise NotImplementedError


class Timestamp(_Seconds):
    """``google.protobuf.Timestamp``: Arrow ``timestamp[ns, tz=UTC]`` (nanoseconds since the epoch).

    Holds a normalized Timestamp (``0 <= nanos < 10**9``) from 1677-09-21 to
    2262-04-11 (the int64 range of nanoseconds); another raises ``EncodeError``.
    """

    type = pa.timestamp("ns", tz="UTC")
    what = "normalized Timestamp (0 <= nanos < 10**9, 1677-09-21 to 2262-04-11)"

    def check(self, s: int, n: int) -> bool:
        return 0 <= n < _NANOS

    def split(self, total: int) -> tuple[int, int]:
        return divmod(total, _NANOS)


class Duration(_Seconds):
    """``google.protobuf.Duration``: Arrow ``duration[ns]``.

    Holds a valid Duration (``seconds`` and ``nanos`` of the same sign,
    ``|nanos| < 10**9``) of at most about 292 years either way; another raises
    ``EncodeError``.
    """

    type = pa.duration("ns")
    what = "valid Duration (seconds and nanos of one sign, |nanos| < 10**9, within +-292 years)"

    def check(self, s: int, n: int) -> bool:
        return -_NANOS < n < _NANOS and not (s > 0 > n or s < 0 < n)

    def split(self, total: int) -> tuple[int, int]:
        s, n = divmod(abs(total), _NANOS)
        return (-s, -n) if total < 0 else (s, n)


class Wrapper(Column):
    """A wrapper of ``google/protobuf/wrappers.proto`` (``Int32Value`` ...): its value's type, null when unset."""

    def __init__(self, cls: type, attr: str, value: Column, nullable: bool) -> None:
        self.cls = cls
        self.attr = attr
        self.value = value
        self.type = value.type
        self.nullable = nullable
        self.lost_key = _lost_key(cls)

    def make(self, values: list, path: list) -> pa.Array:
        self.note_lost(values)
        attr = self.attr
        return self.value.to_array([None if v is None else getattr(v, attr) for v in values], path)

    def from_array(self, array: pa.Array) -> list:
        cls, attr = self.cls, self.attr
        return [None if v is None else cls(**{attr: v}) for v in self.value.from_array(array)]


class Encoded(Column):
    """A message past the recursion depth: its encoding (``binary``), null when unset. Lossless."""

    def __init__(self, cls: type, nullable: bool) -> None:
        self.cls = cls
        self.nullable = nullable
        self.type = pa.binary()

    def make(self, values: list, path: list) -> pa.Array:
        from pbj.api import encode

        return pa.array([None if v is None else encode(v, allow_partial=True) for v in values], self.type)

    def from_array(self, array: pa.Array) -> list:
        from pbj.api import decode

        cls = self.cls
        return [None if v is None else decode(cls, v, allow_partial=True) for v in array.to_pylist()]


class Present(Column):
    """A message with no fields (``google.protobuf.Empty`` and the like): ``bool``, true when set.

    A struct needs at least one child in Parquet, DuckDB and Polars, so the
    only thing such a message holds, whether it is set, is a ``bool``: true
    when set, null when unset (true for each element of a list or map).
    """

    def __init__(self, cls: type, nullable: bool) -> None:
        self.cls = cls
        self.nullable = nullable
        self.type = pa.bool_()
        self.lost_key = _lost_key(cls)

    def make(self, values: list, path: list) -> pa.Array:
        self.note_lost(values)
        return pa.array([None if v is None else True for v in values], self.type)

    def from_array(self, array: pa.Array) -> list:
        cls = self.cls
        return [None if v is None else cls() for v in array.to_pylist()]
