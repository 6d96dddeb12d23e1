"""What other engines give back, made into the mapping's exact Arrow types: :func:`conform_batch`.

A table that has been through DuckDB, Polars or a Parquet writer holds the
values :func:`pbj.arrow.to_arrow` wrote, in other Arrow types. Each array is
rebuilt here with the type the column plan (:mod:`pbj.arrow.mapping`) has, so
the readers of columns (:mod:`pbj.arrow.columns`, the native writer) see one
layout. What is taken, per column kind:

* **nullability**: any field may be declared nullable; a null is refused only
  where the field has no presence *and* every enclosing struct and list holds
  a value (a null under a null struct, which DuckDB and Polars write, is no
  value of the message and is ignored);
* **strings, bytes, lists**: ``large_*``, ``*_view``, fixed-size and
  dictionary-encoded forms; a list's item field may have any name (DuckDB
  writes ``l``, Parquet ``element``);
* **enums**: with names, a dictionary of any index type or plain strings (a
  name that is neither a member nor a number is refused); with numbers, any
  integer type whose values fit ``int32``;
* **maps**: Arrow maps, or lists of ``struct<key, value>`` (Polars has no map
  type);
* **integers and floats** of another width, when every value fits (a safe
  cast); **timestamps** of any unit and time zone (a naive one is taken as
  UTC); **durations** of any unit, ``int64`` nanoseconds (DuckDB reads
  Parquet's durations so) and ``month_day_nano_interval`` without months
  (DuckDB's ``INTERVAL``);
* **structs** by field name, in any order, extra fields ignored.

Every refusal is a ``ValueError`` naming the class, the column path and the
first offending row of the table, kept short (types are abbreviated).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute

from pbj.arrow import columns as col
from pbj.schema.values import FLOAT_MAX

pc: Any = pyarrow.compute  # its functions are made at import: no static checker sees them

__all__ = ["conform_batch", "TooLarge", "describe"]

_INT32_MAX = (1 << 31) - 1
_DAY_NANOS = 86_400 * 1_000_000_000


class TooLarge(Exception):
    """A string, bytes or list column of more than 2**31-1 bytes or items: the caller halves the batch."""


def describe(t: pa.DataType, limit: int = 60) -> str:
    """A type's text, cut to ``limit`` characters (a struct of the HAPI schema prints as megabytes)."""
    text = str(t)
    return text if len(text) <= limit else text[:limit - 3] + "..."


class _Where:
    """Where an array sits in the table: its path, its rows' table rows, the rows that must hold values."""

    __slots__ = ("_alive", "_row", "path")

    def __init__(self, path: list[str], row: Callable[[int], int], alive: Callable[[], pa.Array | None]) -> None:
        self.path = path
        self._row = row
        self._alive = alive

    def row(self, i: int) -> int:
        """The table row of this array's element ``i``."""
        return self._row(i)

    def alive(self) -> pa.Array | None:
        """A boolean array: the elements every enclosing struct and list holds (``None``: all of them)."""
        return self._alive()

    def struct_child(self, name: str, valid: pa.Array | None) -> _Where:
        """The place of a child of this struct array (``valid``: the struct's own validity, None: all valid)."""
        parent = self._alive

        def alive() -> pa.Array | None:
            above = parent()
            if valid is None:
                return above
            return valid if above is None else pc.and_(above, valid)

        return _Where([*self.path, name], self._row, _once(alive))

    def items(self, name: str, offsets: pa.Array, valid: pa.Array | None) -> _Where:
        """The place of the items of this list (or map) array, whose offsets start at 0."""
        parent_row, parent = self._row, self._alive
        starts: list[int] = []

        def row(i: int) -> int:
            if not starts:
                starts.extend(offsets.to_pylist())
            return parent_row(bisect.bisect_right(starts, i) - 1)

        def alive() -> pa.Array | None:
            above = parent()
            lists = valid if above is None else above if valid is None else pc.and_(above, valid)
            if lists is None:
                return None
            spans = pa.ListArray.from_arrays(offsets, pa.nulls(offsets[len(offsets) - 1].as_py()))
            return lists.take(pc.list_parent_indices(spans))

        return _Where([*self.path, name], row, _once(alive))


def _once(fn: Callable[[], Any]) -> Callable[[], Any]:
    memo: list[Any] = []

    def once() -> Any:
        if not memo:
            memo.append(fn())
        return memo[0]

    return once


class _Conformer:
    """Rebuilds arrays with the column plan's types (see the module docstring); ``fail`` raises the error."""

    def __init__(self, cls_name: str, check_values: bool) -> None:
        self.cls_name = cls_name
        self.check_values = check_values

    def fail(self, where: _Where, index: int | None, text: str) -> ValueError:
        """The error at element ``index`` of the array at ``where`` (``None``: the whole column)."""
        column = ".".join(where.path).replace(".[]", "[]")
        at = f" row {where.row(index)}:" if index is not None else ""
        return ValueError(f"{self.cls_name}: column {column!r}{at} {text}")

    def wrong_type(self, where: _Where, got: pa.DataType, want: str) -> ValueError:
        return self.fail(where, None, f"is {describe(got)}, expected {want}")

    def first(self, where: _Where, bad: pa.Array) -> int | None:
        """The first element where boolean ``bad`` is true among the alive ones (its index), or None."""
        alive = where.alive()
        if alive is not None:
            bad = pc.and_(bad, alive)
        index = pc.index(bad.fill_null(False), True).as_py()
        return None if index is None or index < 0 else index

    def check_nulls(self, column: col.Column, array: pa.Array, where: _Where) -> None:
        if column.nullable or not array.null_count:
            return
        row = self.first(where, array.is_null())
        if row is not None:
            raise self.fail(where, row, "null, but the field has no presence (only a null struct or list may hold "
                                        "nulls under it)")

    def check_indices(self, indices: pa.Array, size: int, where: _Where) -> None:
        """Refuse a dictionary index outside its dictionary (``size`` entries): an array Arrow calls invalid."""
        if not len(indices) or indices.null_count == len(indices):
            return
        low, high = pc.min_max(indices).values()
        if low.as_py() < 0 or high.as_py() >= size:
            row = self.first(where, pc.or_(pc.less(indices, 0), pc.greater_equal(indices, size)))
            if row is not None:
                raise self.fail(where, row, f"dictionary index {indices[row].as_py()} is outside its "
                                            f"dictionary of {size}")

    def array(self, column: col.Column, array: pa.Array, where: _Where) -> pa.Array:
        """``array`` with ``column.type`` (nullability aside), its values checked as the module says."""
        if array.type.equals(column.type) and not (self.check_values and type(column) in _VALUES_CHECKED):
            out = array
        elif column.nullable and array.null_count == len(array):  # no value below: no conversion (a oneof's
            out = pa.nulls(len(array), column.type)                 # unset members are most of a wide table)
        else:
            convert = _CONVERT.get(type(column))
            if convert is None:  # pragma: no cover - every column kind has a converter
                raise self.wrong_type(where, array.type, describe(column.type))
            out = convert(self, column, array, where)
        self.check_nulls(column, out, where)
        if self.check_values and pa.types.is_string(out.type) and out.null_count < len(out):
            self.check_utf8(out, where)
        return out

    def check_utf8(self, array: pa.Array, where: _Where) -> None:
        """Refuse a string array holding bytes that are not UTF-8 (Arrow calls it invalid; the Python
        values could not be read), naming the first such row (found by halving)."""
        try:
            array.validate(full=True)
            return
        except pa.ArrowInvalid:
            pass
        lo, hi = 0, len(array)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            try:
                array.slice(lo, mid - lo).validate(full=True)
                lo = mid
            except pa.ArrowInvalid:
                hi = mid
        raise self.fail(where, lo, "a string that is not UTF-8")

    # ---- leaves ----

    def cast(self, array: pa.Array, to: pa.DataType, where: _Where) -> pa.Array:
        """A safe cast; on a value that does not fit, the error names its row (found by halving)."""
        try:
            return array.cast(to, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            if isinstance(exc, pa.ArrowNotImplementedError) or len(array) == 0:
                raise self.wrong_type(where, array.type, describe(to)) from None
            lo, hi = 0, len(array)
            while hi - lo > 1:  # the first element whose cast fails
                mid = (lo + hi) // 2
                try:
                    array.slice(lo, mid - lo).cast(to, safe=True)
                    lo = mid
                except pa.ArrowInvalid:
                    hi = mid
            raise self.fail(where, lo, f"{str(array[lo].as_py())[:60]} does not fit {describe(to)}") from None

    def variable(self, array: pa.Array, to: pa.DataType, where: _Where, want: str,
                 accept: Callable[[pa.DataType], bool]) -> pa.Array:
        """A string or binary array as ``to`` (``string``/``binary``): large, view and dictionary forms too."""
        t = array.type
        if pa.types.is_dictionary(t) and accept(t.value_type):
            array = array.dictionary_decode()
            t = array.type
        if not accept(t):
            raise self.wrong_type(where, t, want)
        if pa.types.is_large_string(t) or pa.types.is_large_binary(t):
            offsets = array.buffers()[1]
            if offsets is not None and len(array):
                ends = pa.Array.from_buffers(pa.int64(), len(array) + 1, [None, offsets], offset=array.offset)
                if ends[len(array)].as_py() - ends[0].as_py() > _INT32_MAX:
                    raise TooLarge
        return array.cast(to)

    def scalar(self, column: Any, array: pa.Array, where: _Where) -> pa.Array:
        want = column.type
        t = array.type
        if pa.types.is_string(want):
            return self.variable(array, want, where, "a string", _stringy)
        if pa.types.is_binary(want):
            return self.variable(array, want, where, "binary", _binary)
        if pa.types.is_dictionary(t):
            array = array.dictionary_decode()
            t = array.type
        same = ((pa.types.is_integer(want) and pa.types.is_integer(t))
                or (pa.types.is_floating(want) and pa.types.is_floating(t))
                or (pa.types.is_boolean(want) and pa.types.is_boolean(t)))
        if not same:
            raise self.wrong_type(where, t, describe(want))
        if pa.types.is_float32(want) and not pa.types.is_float32(t) and not pa.types.is_float16(t) and len(array):
            # past binary32's range is a ValueError, as when the message is built (an infinity or NaN is kept)
            past = pc.and_(pc.is_finite(array), pc.greater(pc.abs(array), FLOAT_MAX))
            row = self.first(where, past)
            if row is not None:
                raise self.fail(where, row, f"{array[row].as_py()!r} is out of range for float")
        return self.cast(array, want, where)

    def enum(self, column: col.Enum, array: pa.Array, where: _Where) -> pa.Array:
        t = array.type
        if not column.as_names:
            if pa.types.is_dictionary(t) and pa.types.is_integer(t.value_type):
                array = array.dictionary_decode()
                t = array.type
            if not pa.types.is_integer(t):
                raise self.wrong_type(where, t, "int32 enum numbers")
            return self.cast(array, pa.int32(), where)
        if pa.types.is_dictionary(t) and _stringy(t.value_type):
            names = array.dictionary.cast(pa.string())
            indices = self.cast(array.indices, pa.int32(), where)
        elif _stringy(t):
            encoded = array.cast(pa.string()).dictionary_encode()
            names, indices = encoded.dictionary, encoded.indices.cast(pa.int32())
        else:
            raise self.wrong_type(where, t, "enum names (a dictionary or strings)")
        self.check_indices(indices, len(names), where)
        bad = [i for i, n in enumerate(names.to_pylist()) if n is None or not _names_enum(column, n)]
        if bad:
            row = self.first(where, pc.is_in(indices, pa.array(bad, pa.int32())))
            if row is not None:
                name = names[indices[row].as_py()].as_py()
                raise self.fail(where, row, f"{'null' if name is None else repr(name)[:60]} is not a member of "
                                            f"{column.enum_cls.__name__} nor a number")
        return pa.DictionaryArray.from_arrays(indices, names)

    def timestamp(self, column: col.Timestamp, array: pa.Array, where: _Where) -> pa.Array:
        if not pa.types.is_timestamp(array.type):
            raise self.wrong_type(where, array.type, "a timestamp")
        if array.type.tz is None:
            array = array.cast(pa.timestamp(array.type.unit, tz="UTC"))
        return self.cast(array, column.type, where)

    def duration(self, column: col.Duration, array: pa.Array, where: _Where) -> pa.Array:
        t = array.type
        if pa.types.is_int64(t):  # DuckDB reads Parquet's duration[ns] as int64 nanoseconds
            return array.view(column.type)
        if t == pa.month_day_nano_interval():
            values = array.to_pylist()
            months = pa.array([v is not None and v.months != 0 for v in values], pa.bool_())
            row = self.first(where, months)
            if row is not None:
                raise self.fail(where, row, "an interval with months is no Duration (a month has no fixed length)")
            nanos = [None if v is None or v.months else v.days * _DAY_NANOS + v.nanoseconds for v in values]
            try:
                return pa.array(nanos, pa.int64()).view(column.type)
            except OverflowError:
                big = pa.array([n is not None and not -(1 << 63) <= n < (1 << 63) for n in nanos], pa.bool_())
                raise self.fail(where, self.first(where, big), "an interval past duration[ns]'s range") from None
        if not pa.types.is_duration(t):
            raise self.wrong_type(where, t, "a duration")
        return self.cast(array, column.type, where)

    def wrapper(self, column: col.Wrapper, array: pa.Array, where: _Where) -> pa.Array:
        return self.array(column.value, array, where)

    def encoded(self, column: col.Encoded, array: pa.Array, where: _Where) -> pa.Array:
        return self.variable(array, column.type, where, "binary (the encoding)", _binary)

    def present(self, column: col.Present, array: pa.Array, where: _Where) -> pa.Array:
        if not pa.types.is_boolean(array.type):
            raise self.wrong_type(where, array.type, "bool")
        return array

    # ---- nested ----

    def struct(self, column: col.Struct, array: pa.Array, where: _Where) -> pa.Array:
        t = array.type
        if not pa.types.is_struct(t):
            raise self.wrong_type(where, t, f"a struct of {len(column.names)} fields")
        valid = array.is_valid() if array.null_count else None
        children = []
        for name, child in zip(column.names, column.columns, strict=True):
            idx = t.get_field_index(name)
            if idx < 0:
                raise self.fail(where, None, f"has no field {name!r} (a struct of {t.num_fields} fields)")
            children.append(self.array(child, array.field(idx), where.struct_child(name, valid)))
        fields = [pa.field(f.name, c.type, nullable=f.nullable) for f, c in zip(column.fields, children, strict=True)]
        mask = array.is_null() if valid is not None else None
        if not fields:
            return pa.StructArray.from_arrays([], fields=[], mask=mask if mask is not None else
                                              pa.array([False] * len(array), pa.bool_()))
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)

    def oneof(self, column: col.Oneof, array: pa.Array, where: _Where) -> pa.Array:
        t = array.type
        if not pa.types.is_struct(t):
            raise self.wrong_type(where, t, f"a struct (a oneof: {column.which_name} and its members)")
        valid = array.is_valid() if array.null_count else None
        idx = t.get_field_index(column.which_name)
        if idx < 0:
            raise self.fail(where, None, f"has no field {column.which_name!r} (the member set)")
        for name in column.names:
            if t.get_field_index(name) < 0:
                raise self.fail(where, None, f"has no field {name!r} (a member of the oneof)")
        which_where = where.struct_child(column.which_name, valid)
        which = array.field(idx)
        if pa.types.is_dictionary(which.type) and _stringy(which.type.value_type):
            names, indices = which.dictionary.cast(pa.string()), self.cast(which.indices, pa.int32(), which_where)
        elif _stringy(which.type):
            encoded = which.cast(pa.string()).dictionary_encode()
            names, indices = encoded.dictionary, encoded.indices.cast(pa.int32())
        else:
            raise self.wrong_type(which_where, which.type, "member names (a dictionary or strings)")
        self.check_indices(indices, len(names), which_where)
        position = {n: i for i, n in enumerate(column.names)}
        lookup = [position.get(n, -1) if n is not None else -1 for n in names.to_pylist()]
        if -1 in lookup:
            bad = [i for i, p in enumerate(lookup) if p < 0]
            row = self.first(which_where, pc.is_in(indices, pa.array(bad, pa.int32())))
            if row is not None:
                name = str(names[indices[row].as_py()].as_py())[:60]
                raise self.fail(which_where, row, f"{name!r} is not a member of the oneof "
                                                  f"(one of {', '.join(column.names)[:120]})")
        members = pc.take(pa.array([max(p, 0) for p in lookup], pa.int32()), indices)
        self.check_nulls(col.Scalar("int32", False), members, which_where)
        out = [pa.DictionaryArray.from_arrays(members.fill_null(0), column.dictionary)]
        for p, (name, child) in enumerate(zip(column.names, column.columns, strict=True)):
            value = self.array(child, array.field(t.get_field_index(name)), where.struct_child(name, valid))
            if value.null_count:  # the member set must hold its value
                row = self.first(which_where, pc.and_(pc.equal(members, p), value.is_null()))
                if row is not None:
                    raise self.fail(which_where, row, f"the member set is {name!r}, whose value is null")
            if value.null_count < len(value):  # another member's value would be lost
                row = self.first(which_where, pc.and_(pc.not_equal(members, p), value.is_valid()))
                if row is not None:
                    raise self.fail(which_where, row, f"the member set is {column.names[members[row].as_py()]!r}, "
                                                      f"but {name!r} holds a value too")
            out.append(value)
        fields = [pa.field(column.which_name, out[0].type, nullable=False),
                  *(pa.field(n, a.type, nullable=True) for n, a in zip(column.names, out[1:], strict=True))]
        return pa.StructArray.from_arrays(out, fields=fields, mask=array.is_null() if valid is not None else None)

    def lists(self, array: pa.Array, where: _Where, what: str) -> tuple[pa.Array, pa.Array, pa.Array | None]:
        """A list-like array's int32 offsets from 0, its items (sliced to them) and its null mask."""
        t = array.type
        if pa.types.is_fixed_size_list(t):
            array = array.cast(pa.list_(t.value_field))
        elif pa.types.is_list_view(t) or pa.types.is_large_list_view(t):  # views may share or reorder items
            lengths = pc.if_else(array.is_null(), 0, array.sizes).cast(pa.int64())
            ends = pc.cumulative_sum(lengths)
            if len(ends) and ends[len(ends) - 1].as_py() > _INT32_MAX:
                raise TooLarge
            offsets = pa.concat_arrays([pa.array([0], pa.int64()), ends]).cast(pa.int32())
            return offsets, pc.list_flatten(array), (array.is_null() if array.null_count else None)
        t = array.type
        if not (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t)):
            raise self.wrong_type(where, t, what)
        offsets = array.offsets
        start = offsets[0].as_py()
        end = offsets[len(offsets) - 1].as_py()
        if end - start > _INT32_MAX:
            raise TooLarge
        items = array.values.slice(start, end - start)
        offsets = pc.subtract(offsets, start).cast(pa.int32()) if start or offsets.type != pa.int32() else offsets
        return offsets, items, (array.is_null() if array.null_count else None)

    def list_(self, column: col.List, array: pa.Array, where: _Where) -> pa.Array:
        offsets, items, mask = self.lists(array, where, "a list")
        item_where = where.items("[]", offsets, None if mask is None else pc.invert(mask))
        items = self.array(column.item, items, item_where)
        return pa.ListArray.from_arrays(offsets, items, type=pa.list_(pa.field("item", items.type, nullable=False)),
                                        mask=mask)

    def map_(self, column: col.Map, array: pa.Array, where: _Where) -> pa.Array:
        offsets, entries, mask = self.lists(array, where, "a map (or a list of struct<key, value>)")
        t = entries.type
        if not (pa.types.is_struct(t) and t.num_fields == 2):
            raise self.wrong_type(where, array.type, "a map (or a list of struct<key, value>)")
        kidx = t.get_field_index("key")
        vidx = t.get_field_index("value")
        if kidx < 0 or vidx < 0:
            kidx, vidx = 0, 1
        entry_where = where.items("[]", offsets, None if mask is None else pc.invert(mask))
        keys = self.array(column.key, entries.field(kidx), entry_where.struct_child("key", None))
        values = self.array(column.value, entries.field(vidx), entry_where.struct_child("value", None))
        if entries.null_count:
            row = self.first(entry_where, entries.is_null())
            if row is not None:
                raise self.fail(entry_where, row, "a null map entry")
        return pa.MapArray.from_arrays(offsets, keys, values, type=column.type, mask=mask)


def _stringy(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _binary(t: pa.DataType) -> bool:
    return (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t)
            or pa.types.is_fixed_size_binary(t))


def _names_enum(column: col.Enum, name: str) -> bool:
    if name in column.by_name:
        return True
    try:
        number = int(name, 10)
    except ValueError:
        return False
    return -(1 << 31) <= number < (1 << 31) and str(number) == name


# Columns whose Arrow type does not bound their values: enum names and a oneof's member names (a
# dictionary may hold any string, or indices past its end), and the nested columns, whose children
# may hold nulls (or such names) where the field has no presence. With ``check_values`` (the
# pure-Python path, which builds messages from the values) they are checked even when their type is
# the plan's own; the native writer checks each value it reads, so its path skips this pass (on the
# shipped block's table it costs about 13 times the native encode_from_arrow).
_VALUES_CHECKED: frozenset[type] = frozenset({col.Enum, col.Oneof, col.Struct, col.List, col.Map})

_CONVERT: dict[type, Callable[[_Conformer, Any, pa.Array, _Where], pa.Array]] = {
    col.Scalar: _Conformer.scalar, col.Float32: _Conformer.scalar, col.Enum: _Conformer.enum,
    col.Struct: _Conformer.struct, col.Oneof: _Conformer.oneof, col.List: _Conformer.list_, col.Map: _Conformer.map_,
    col.Timestamp: _Conformer.timestamp, col.Duration: _Conformer.duration, col.Wrapper: _Conformer.wrapper,
    col.Encoded: _Conformer.encoded, col.Present: _Conformer.present,
}


def conform_batch(batch: pa.RecordBatch, plan: col.Struct, cls_name: str, first_row: int, *,
                  check_values: bool = True) -> list[pa.Array]:
    """The arrays of ``plan``'s columns, taken by name from ``batch`` and rebuilt with the plan's types.

    Args:
        batch: a record batch whose columns hold the values of ``plan``'s
            fields (other columns are ignored).
        plan: the column plan of the message class.
        cls_name: the class's name, for errors.
        first_row: the table row of the batch's first row, for errors.
        check_values: also check the values of a column whose type is the plan's own (enum and
            oneof member names, dictionary indices, nulls under structs, lists and maps); ``False``
            where the native writer reads the arrays, as it checks each value itself.

    Returns:
        One array per column of ``plan``, in its order.

    Raises:
        ValueError: a column is missing, of a type that cannot hold the
            field's values, or holds a value the field cannot take; the text
            names the column and the first offending row.
        TooLarge: a string, bytes or list column holds more than 2**31-1
            bytes or items (the caller splits the batch).
    """
    conformer = _Conformer(cls_name, check_values)
    schema = batch.schema
    out = []
    for name, column in zip(plan.names, plan.columns, strict=True):
        idx = schema.get_field_index(name)
        where = _Where([name], lambda i: first_row + i, lambda: None)
        if idx < 0:
            raise ValueError(f"{cls_name}: the table has no column {name!r} (it has {batch.num_columns} columns)")
        out.append(conformer.array(column, batch.column(idx), where))
    return out
