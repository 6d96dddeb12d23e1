"""Messages to an Arrow table and back: :func:`to_arrow`, :func:`from_arrow`, :func:`decode_to_arrow`.

Each column is built at once from the Python values of its field over all
rows (see :mod:`pbj.arrow.columns`): a list per field, then one
``pa.array``/``StructArray.from_arrays``/``ListArray.from_arrays`` per
column, never an array per message.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from typing import Any, overload

import pyarrow as pa

from pbj.arrow.lost import counting
from pbj.arrow.mapping import DEFAULT_RECURSION_DEPTH, Options, plan_of
from pbj.schema import info, is_message
from pbj.schema.resolve import class_needed, google_hint, message_needed

__all__ = ["to_arrow", "from_arrow", "decode_to_arrow", "widen"]


@overload
def to_arrow(messages: Iterable[Any], cls: type | None = None, *, enums: str = ..., well_known_types: bool = ...,
             recursion_depth: int = ..., split: None = None, keep: Sequence[str] | None = ...,
             large_types: bool = ...) -> pa.Table: ...


@overload
def to_arrow(messages: Iterable[Any], cls: type | None = None, *, enums: str = ..., well_known_types: bool = ...,
             recursion_depth: int = ..., split: str | Sequence[str], keep: Sequence[str] | None = ...,
             large_types: bool = ...) -> dict[str, pa.Table]: ...


def to_arrow(messages: Iterable[Any], cls: type | None = None, *, enums: str = "name",
             well_known_types: bool = True, recursion_depth: int = DEFAULT_RECURSION_DEPTH,
             split: str | Sequence[str] | None = None, keep: Sequence[str] | None = None,
             large_types: bool = False) -> pa.Table | dict[str, pa.Table]:
    """The Arrow table of ``messages``: one row per message, one column per field (or one table per kind).

    The schema is :func:`pbj.arrow.arrow_schema` of the class (same options).
    Every value the mapping can hold comes back from :func:`from_arrow`
    unchanged; unknown fields and extensions are not columns: they are left
    out, and an :class:`~pbj.arrow.UnknownFieldsWarning` says how many
    (``docs/arrow.md``).

    Args:
        messages: pbj messages, all of class ``cls``.
        cls: the message class; default: the class of the first message
            (needed for an empty ``messages``).
        enums, well_known_types, recursion_depth: the mapping's options (see
            :func:`pbj.arrow.arrow_schema`).
        split: a split path (``"item"``: a oneof of ``cls``; ``"items.item"``:
            the oneof of a repeated field's elements; paths may go on through
            a member) or several: one narrow table per member instead of the
            wide table (:mod:`pbj.arrow.split`).
        keep: with ``split``, the fields of the message holding the oneof that
            each table keeps (default: all of them).
        large_types: ``large_string``, ``large_binary`` and ``large_list``
            instead of the 32-bit offset types (Polars' own types; a column
            then holds more than 2**31-1 bytes in one chunk).

    Returns:
        A ``pyarrow.Table`` with ``len(messages)`` rows; with ``split``, a
        ``dict`` of kind name (the members along the path, joined by ``.``)
        to table, one per member of each split oneof, in declaration order
        (a member no message sets has an empty table).

    Raises:
        TypeError: ``messages`` is one message (not a list of them) or not
            iterable, ``cls`` is not a message class, a message is not of class
            ``cls``, or ``messages`` is empty and ``cls`` not given.
        ValueError: an option is not one of its values, or a split path does
            not resolve (:func:`pbj.arrow.split.split_plan`).
        EncodeError: a value the Arrow type cannot hold (a ``Timestamp`` out
            of ``timestamp[ns]``'s range or not normalized, an invalid
            ``Duration``, a ``string`` holding bytes that are not UTF-8),
            with the field path.
    """
    if is_message(messages) and not isinstance(messages, type):
        name = type(messages).__qualname__
        raise TypeError(f"pbj.arrow.to_arrow takes a list of messages, not one {name} message: to_arrow([msg])")
    if isinstance(messages, str | bytes) or not isinstance(messages, Iterable):
        raise message_needed(messages, "pbj.arrow.to_arrow", "a list of messages")
    rows = list(messages)
    if cls is None:
        if not rows:
            raise TypeError("to_arrow needs cls= for an empty list of messages")
        cls = type(rows[0])
    if not (isinstance(cls, type) and is_message(cls)):
        raise class_needed(cls, "pbj.arrow.to_arrow")
    for i, m in enumerate(rows):
        if type(m) is not cls:
            raise TypeError(f"messages[{i}] is a {type(m).__qualname__}, not a {cls.__qualname__}{google_hint(m)}")
    options = Options(enums, well_known_types, recursion_depth)
    if split is not None:
        from pbj.arrow.split import split_plan, tables_of_messages

        plan = split_plan(cls, split, keep, options)
        with counting():
            tables = tables_of_messages(plan, rows)
        return {k: widen(t) for k, t in tables.items()} if large_types else tables
    with counting():
        table = _table(cls, options, rows)
    return widen(table) if large_types else table


def widen(table: pa.Table) -> pa.Table:
    """``table`` with ``large_string``, ``large_binary`` and ``large_list`` for every string, bytes and list."""
    return table.cast(pa.schema([pa.field(f.name, _wide(f.type), nullable=f.nullable) for f in table.schema],
                                metadata=table.schema.metadata))


def _wide(t: pa.DataType) -> pa.DataType:
    if pa.types.is_string(t):
        return pa.large_string()
    if pa.types.is_binary(t):
        return pa.large_binary()
    if pa.types.is_dictionary(t):
        return t  # enum names: a small dictionary
    if pa.types.is_list(t):
        f = t.value_field
        return pa.large_list(pa.field(f.name, _wide(f.type), nullable=f.nullable))
    if pa.types.is_map(t):
        k, v = t.key_field, t.item_field
        return pa.map_(pa.field(k.name, _wide(k.type), nullable=False), pa.field(v.name, _wide(v.type),
                                                                                 nullable=v.nullable))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _wide(f.type), nullable=f.nullable) for f in t])
    return t


def _table(cls: type, options: Options, rows: list) -> pa.Table:
    plan = plan_of(cls, options)
    schema = pa.schema(plan.fields, metadata={"pbj.message": info(cls).full_name})
    if not plan.columns:
        rows_only = pa.StructArray.from_arrays([], fields=[], mask=pa.array([False] * len(rows), pa.bool_()))
        return pa.Table.from_batches([pa.RecordBatch.from_struct_array(rows_only)], schema=schema)
    return pa.Table.from_arrays(plan.children(rows, []), schema=schema)


def from_arrow(data: Any, cls: type, *, enums: str = "name", well_known_types: bool = True,
               recursion_depth: int = DEFAULT_RECURSION_DEPTH) -> list[Any]:
    """The messages of the rows of a table, one per row: the inverse of :func:`to_arrow`.

    Takes what :func:`to_arrow` made and what engines give back after
    reading or rewriting it: the columns are found by name (others are
    ignored) and may differ from :func:`pbj.arrow.arrow_schema` in
    nullability (a null under a null struct is no value), in width
    (``large_string``, ``large_binary``, ``large_list``, views), in encoding
    (enum names as a dictionary of any index type or as plain strings), in
    their maps' form (a list of ``struct<key, value>``) and in the unit or time
    zone of timestamps and durations; :mod:`pbj.arrow.conform` lists every
    form taken. A stream is read one record batch at a time.

    Args:
        data: a ``pyarrow.Table``, ``RecordBatch`` or ``RecordBatchReader``, or
            any object with the Arrow PyCapsule interface
            (``__arrow_c_stream__``: a Polars ``DataFrame``, a DuckDB
            relation; ``__arrow_c_array__``: a record batch).
        cls: the message class of the rows.
        enums, well_known_types, recursion_depth: the options the table was made with.

    Returns:
        A list of ``cls`` messages, in row order.

    Raises:
        TypeError: ``cls`` is not a message class, or ``data`` is no table.
        ValueError: a column is missing or cannot hold its field's values, or
            a value does not fit its field (the text names the column and the
            first offending row).
    """
    if not (isinstance(cls, type) and is_message(cls)):
        raise class_needed(cls, "pbj.arrow.from_arrow")
    batches = record_batches(data, "from_arrow")
    options = Options(enums, well_known_types, recursion_depth)
    plan = plan_of(cls, options)
    out: list[Any] = []
    row = 0
    for batch in batches:
        out.extend(_batch_messages(cls, plan, batch, row, options))
        row += batch.num_rows
    return out


def record_batches(data: Any, caller: str) -> Iterable[pa.RecordBatch]:
    """The record batches of a table, batch, reader or Arrow PyCapsule object, read lazily from a stream.

    Raises:
        TypeError: ``data`` is none of them.
    """
    if isinstance(data, pa.Table):
        return data.to_batches()
    if isinstance(data, pa.RecordBatch):
        return [data]
    if isinstance(data, pa.RecordBatchReader):
        return data
    if hasattr(data, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data)
    if hasattr(data, "__arrow_c_array__"):
        return [pa.record_batch(data)]
    raise TypeError(f"{caller} needs a pyarrow.Table, RecordBatch or RecordBatchReader (or an object with "
                    f"__arrow_c_stream__), got {type(data).__name__}")


def _batch_messages(cls: type, plan: Any, batch: pa.RecordBatch, first_row: int,
                    options: Options | None = None) -> list[Any]:
    """The messages of one record batch (halved while a column is past 2**31-1 bytes or items).

    With ``options`` the native writer is tried first (:mod:`pbj.arrow.encode`):
    the rows' encodings are written from the columns in C and decoded by the
    engine; without it, or where the writer does not take the class, each
    column's values are read into Python and the messages are built from them.
    """
    from pbj.arrow.conform import TooLarge, conform_batch
    from pbj.arrow.encode import writer_plan

    n = batch.num_rows
    native = options is not None and not isinstance(writer_plan(cls, options), str)
    try:
        arrays = conform_batch(batch, plan, cls.__qualname__, first_row, check_values=not native)
    except TooLarge:
        if n < 2:
            raise ValueError(f"{cls.__qualname__}: row {first_row} holds more than 2**31-1 bytes in one "
                             f"column") from None
        half = n // 2
        return [*_batch_messages(cls, plan, batch.slice(0, half), first_row, options),
                *_batch_messages(cls, plan, batch.slice(half), first_row + half, options)]
    if not plan.columns:
        return [cls() for _ in range(n)]
    if options is not None:
        from pbj.arrow.encode import batch_encodings, messages_of_encodings, shift_row

        try:
            encodings = batch_encodings(cls, options, arrays)
        except ValueError as exc:
            raise shift_row(exc, cls, first_row) from None
        if encodings is not None:
            return messages_of_encodings(cls, encodings, first_row)
        if native:  # the engine changed since: the values the writer would have checked are read here
            return _batch_messages(cls, plan, batch, first_row)
    child_values = []
    for name, column, array in zip(plan.names, plan.columns, arrays, strict=True):
        try:
            child_values.append(column.from_array(array))
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"{cls.__qualname__}: column {name!r} does not fit the class: "
                             f"{str(exc)[:200]}") from exc
    return plan.build(n, child_values)


@overload
def decode_to_arrow(cls: type, payloads: Sequence[bytes | bytearray | memoryview], *, enums: str = ...,
                    well_known_types: bool = ..., recursion_depth: int = ..., max_depth: int | None = ...,
                    split: None = None, keep: Sequence[str] | None = ..., large_types: bool = ...,
                    unknown_fields: str = ...) -> pa.Table: ...


@overload
def decode_to_arrow(cls: type, payloads: Sequence[bytes | bytearray | memoryview], *, enums: str = ...,
                    well_known_types: bool = ..., recursion_depth: int = ..., max_depth: int | None = ...,
                    split: str | Sequence[str], keep: Sequence[str] | None = ...,
                    large_types: bool = ..., unknown_fields: str = ...) -> dict[str, pa.Table]: ...


def decode_to_arrow(cls: type, payloads: Sequence[bytes | bytearray | memoryview], *, enums: str = "name",
                    well_known_types: bool = True, recursion_depth: int = DEFAULT_RECURSION_DEPTH,
                    max_depth: int | None = None, split: str | Sequence[str] | None = None,
                    keep: Sequence[str] | None = None, large_types: bool = False,
                    unknown_fields: str = "warn") -> pa.Table | dict[str, pa.Table]:
    """The table :func:`to_arrow` gives for the messages ``payloads`` encode, straight from the bytes.

    On the native engine (``pbj.engine() == "native"``) the payloads are
    walked in C with the class's codec plan and each value is appended to its
    column's Arrow buffers: no message object is built (see
    :mod:`pbj.arrow.native`). The table is the one
    ``to_arrow([decode(cls, p) for p in payloads])`` gives: same schema,
    values, nulls, oneofs, enums and well-known types.

    What falls back to decoding the messages and running :func:`to_arrow` on
    them (same table, same errors), per class (:func:`pbj.arrow.native.explain`
    says which and why): the pure-Python engine; a class that is, or reaches,
    a message with extension ranges or the message-set wire format, or a proto2
    ``required`` field; a group past ``recursion_depth``. Per call: any input that is not a valid encoding, and the
    rare valid inputs the walker leaves to the decoder (a singular
    sub-message occurring twice, which the spec merges; a closed enum's
    non-member number; a map entry holding an unknown field or a key already
    in its map, a map of more than 1,024 entries; more than 4,096 distinct
    numbers no member names in one enum column; a oneof member replacing a
    sub-message member; nesting deeper than 200 levels). A message past ``recursion_depth`` (its column holds its
    encoding) is decoded and re-encoded by pbj, one message object each.

    Args:
        cls: the message class of every payload.
        payloads: encoded messages (``bytes``, ``bytearray`` or ``memoryview``), one per row.
        enums, well_known_types, recursion_depth: the mapping's options (see
            :func:`pbj.arrow.arrow_schema`).
        max_depth: the decoder's nesting limit (default ``pbj.DEFAULT_MAX_DEPTH``).
        split, keep, large_types: as for :func:`to_arrow`; with ``split`` each
            kind's bytes are cut out of the payloads at the wire level and
            decoded as a table of their own (:mod:`pbj.arrow.split`).
        unknown_fields: ``"warn"`` (default): an
            :class:`~pbj.arrow.UnknownFieldsWarning` says how many unknown
            fields the table has no column for (on the native engine the
            walker counts them as it reads each message, with no second
            pass); ``"ignore"``: no warning.

    Payloads of more than 2**30 bytes in all are decoded in parts, each a
    record batch of the table (a chunk of every column), so no string,
    bytes or list column needs offsets past 2**31-1 (``large_types`` gives
    one chunk per column instead).

    Returns:
        A ``pyarrow.Table`` with ``len(payloads)`` rows (with ``split``, a
        ``dict`` of tables as :func:`to_arrow` gives).

    Raises:
        TypeError: ``cls`` is not a pbj message class, ``payloads`` is one
            payload (not a list of them) or not iterable, a payload is not
            bytes-like, or ``max_depth`` is not an int.
        ValueError: an option is not one of its values, or ``max_depth`` is negative.
        DecodeError: a payload is not a valid encoding (protobuf.dev
            "Encoding"), as :func:`pbj.decode` raises it; its path starts
            with the payload's index.
        EncodeError: a decoded value the Arrow type cannot hold (see :func:`to_arrow`).
    """
    from pbj.api import DEFAULT_MAX_DEPTH
    from pbj.depth import check_max_depth

    if not (isinstance(cls, type) and is_message(cls)):
        raise class_needed(cls, "pbj.arrow.decode_to_arrow")
    payloads = _payload_list(payloads)
    options = Options(enums, well_known_types, recursion_depth)
    if unknown_fields not in ("warn", "ignore"):
        raise ValueError(f"unknown_fields must be 'warn' or 'ignore', got {unknown_fields!r}")
    depth = DEFAULT_MAX_DEPTH if max_depth is None else max_depth
    if depth is not DEFAULT_MAX_DEPTH:
        check_max_depth(depth, "decode_to_arrow")
    if split is not None:
        from pbj.arrow.split import split_plan, tables_of_payloads

        plan = split_plan(cls, split, keep, options)
        with counting() if unknown_fields == "warn" else contextlib.nullcontext():
            tables = tables_of_payloads(plan, payloads, depth, unknown_fields)
        return {k: widen(t) for k, t in tables.items()} if large_types else tables
    parts = []
    first = 0
    with counting() if unknown_fields == "warn" else contextlib.nullcontext():
        for last in _parts(payloads):
            parts.append(_decode_part(cls, options, payloads[first:last], depth, first))
            first = last
    table = parts[0] if len(parts) == 1 else pa.concat_tables(parts)
    return widen(table) if large_types else table


def _payload_list(payloads: Any) -> Sequence[Any]:
    """``payloads`` as a list or tuple (read once: the fallback may need them again).

    Raises:
        TypeError: ``payloads`` is one payload (bytes-like or ``str``), or not iterable.
    """
    if isinstance(payloads, bytes | bytearray | memoryview | str) or not isinstance(payloads, Iterable):
        raise TypeError(f"pbj.arrow.decode_to_arrow: payloads must be an iterable of bytes, not "
                        f"{type(payloads).__qualname__} (for one payload: [payload])")
    return payloads if isinstance(payloads, list | tuple) else list(payloads)


#: The input bytes decoded into one record batch at most (a column's offsets stay far from 2**31-1).
PART_BYTES = 1 << 30


def _parts(payloads: Sequence[Any]) -> list[int]:
    """The ends of the runs of payloads of at most :data:`PART_BYTES` in all (one run at least)."""
    ends = []
    total = 0
    for i, p in enumerate(payloads):
        try:
            size = len(p) if not isinstance(p, memoryview) else p.nbytes
        except TypeError:
            raise TypeError(f"pbj.arrow.decode_to_arrow: payloads[{i}] is {type(p).__qualname__}, not bytes"
                            f"{google_hint(p)}") from None
        if total and total + size > PART_BYTES:
            ends.append(i)
            total = 0
        total += size
    ends.append(len(payloads))
    return ends


def _decode_part(cls: type, options: Options, payloads: Sequence[Any], depth: int, first: int) -> pa.Table:
    from pbj.api import decode
    from pbj.arrow.native import decode_table
    from pbj.errors import DecodeError

    table = decode_table(cls, options, payloads, depth)  # (it counts what it leaves out, inside counting())
    if table is not None:
        return table
    rows: list[Any] = []
    for i, data in enumerate(payloads):
        try:
            rows.append(decode(cls, data, max_depth=depth))
        except DecodeError as exc:
            exc.path = [first + i, *exc.path]
            raise
    return _table(cls, options, rows)

