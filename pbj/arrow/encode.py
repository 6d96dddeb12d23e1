"""Arrow columns to encoded messages: :func:`encode_from_arrow`, and the native path of ``from_arrow``.

``encode_from_arrow(table, cls)`` gives, for each row, the bytes
``pbj.encode`` gives for the message :func:`pbj.arrow.from_arrow` builds from
that row. On the native engine the columns are read by
``pbj/_native/arrow_encode.c`` (the module ``pbj._native._arrow``), which
writes each row's encoding straight from the Arrow buffers with no message
object; ``from_arrow`` then decodes those bytes with the native decoder, so
the messages come from the one place messages are built. Elsewhere (the
pure-Python engine, no extension, a class the writer does not take)
``encode_from_arrow`` is ``[pbj.encode(m) for m in from_arrow(...)]``, the
reference the native writer is tested against.

The column tree of :mod:`pbj.arrow.mapping` and each class's codec plan
(:mod:`pbj.codec.plan`: field numbers, labels, groups, packed forms, the
field-number order of the writes) are flattened once per class and option set
into node records (``KINDS`` order; the C side checks every one)::

    (kind, type code, nullable, children, steps, extra, column path)

``steps`` (a struct, a Timestamp/Duration, a wrapper) are ``(child, member or
-1, field number, label, group)`` in field-number order; ``extra``: enum
``(as_names, numbers, names, closed)``, oneof ``(member names,)``, time
``(is_duration,)``. A class that reaches a proto2 ``required`` field is not
flattened (``pbj.encode`` refuses such messages when a required field is unset,
and only it says which).
"""

from __future__ import annotations

import functools
import threading
import weakref
from typing import Any

import pyarrow as pa

from pbj import _native, scalars
from pbj.arrow import columns as col
from pbj.arrow.mapping import DEFAULT_RECURSION_DEPTH, Options, plan_of
from pbj.arrow.native import Unsupported
from pbj.codec import plan as P
from pbj.codec.compiler import codec_of
from pbj.schema import info, is_message

__all__ = ["KINDS", "encode_from_arrow", "explain", "batch_encodings", "messages_of_encodings", "shift_row",
           "writer_plan"]

#: The node kinds, in the order of their codes: ``pbj._native.ARROW_KINDS``, engine.h's ``AK_*``
#: (arrow_encode.c checks them with the rest of :func:`pbj._native.layout` when it is set up).
KINDS = _native.ARROW_KINDS
(_SCALAR, _ENUM, _STRUCT, _ONEOF, _LIST, _MAP, _TIME, _WRAPPER, _ENCODED, _PRESENT) = (
    KINDS.index(kind) for kind in ("scalar", "enum", "struct", "oneof", "list", "map", "time", "wrapper", "encoded",
                                   "present"))


_plans: weakref.WeakKeyDictionary[type, dict[Options, Any]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _module() -> Any:
    """``pbj._native._arrow`` when the native engine is in use and the module was built, else ``None``.

    Raises:
        ImportError: the module was built for other codes than :func:`pbj._native.layout` sends.
    """
    if _native._engine is None or _native.engine() != "native":
        return None
    return _arrow_module()


@functools.cache
def _arrow_module() -> Any:
    """``pbj._native._arrow``, its layout checked (once), or ``None`` when it was not built."""
    try:
        from pbj._native import _arrow  # type: ignore[attr-defined]
    except ImportError:
        return None
    _arrow.setup(_native.layout())
    return _arrow


def writer_plan(cls: type, options: Options) -> Any:
    """The native writer's plan of ``cls`` (a capsule), or the reason there is none (a ``str``); built once.

    The engine is asked first, on every call: a plan kept while the native engine ran is not used
    after ``pbj.use_engine("python")``, and the pure-Python engine's reason is not kept.
    """
    module = _module()
    if module is None:
        return "the native engine (with its Arrow writer) is not in use"
    with _lock:
        found = _plans.get(cls, {}).get(options)
    if found is not None:
        return found
    try:
        from pbj.required import reaches_required

        if reaches_required(cls):
            raise Unsupported(f"{info(cls).full_name} can reach a required field (pbj.encode checks them)")
        flat = _Flat()
        flat.struct(plan_of(cls, options), "")
        try:
            built: Any = module.plan(tuple(flat.nodes))
        except ValueError as exc:
            raise Unsupported(f"the writer refused the plan ({exc})") from None
    except Unsupported as exc:
        built = str(exc)
    with _lock:
        return _plans.setdefault(cls, {}).setdefault(options, built)


def explain(cls: type, *, enums: str = "name", well_known_types: bool = True,
            recursion_depth: int = DEFAULT_RECURSION_DEPTH) -> str:
    """How :func:`encode_from_arrow` (and ``from_arrow``) read columns of ``cls`` with these options.

    Returns:
        ``"native"`` (the C writer), or ``"python: "`` and the reason messages are built in Python instead.

    Raises:
        TypeError: ``cls`` is not a pbj message class.
        ValueError: an option is not one of its values.
    """
    if not (isinstance(cls, type) and is_message(cls)):
        raise TypeError(f"{cls!r} is not a pbj message class")
    found = writer_plan(cls, Options(enums, well_known_types, recursion_depth))
    return f"python: {found}" if isinstance(found, str) else "native"


def batch_encodings(cls: type, options: Options, arrays: list[pa.Array]) -> list[bytes] | None:
    """Each row's encoding from conformed column ``arrays`` (:func:`pbj.arrow.conform.conform_batch`), natively;
    ``None`` when the native writer does not take the class.

    Raises:
        ValueError: a value the field cannot take (a null where it has no presence, an enum or oneof
            member name that names nothing, a string that is not UTF-8), naming the column and row.
    """
    found = writer_plan(cls, options)
    if isinstance(found, str):
        return None
    if not arrays:
        return None
    module = _module()
    if module is None:  # use_engine("python") since writer_plan
        return None
    rows = len(arrays[0])
    if any(len(a) != rows for a in arrays):
        raise ValueError("the table's columns differ in length")
    # the arrays as records (their buffers as pyarrow.Buffer objects, whose sizes the C side checks every read
    # against), leaving out what is under a struct whose rows are all null: most of a wide table, which the
    # Arrow C Data Interface would export and Arrow's validation visit whole
    records = _Records()
    columns = tuple(records.add(a) for a in arrays)
    return module.encode(found, tuple(records.records), columns, rows)  # type: ignore[no-any-return]


class _Records:
    """Arrays as the records ``pbj._native._arrow.encode`` reads (arrow_encode.c's ``read_record``).

    A record is ``(length, offset, null_count, buffers, children, dictionary)``:
    the buffers in the Arrow C Data Interface's order (``pyarrow.Buffer`` or
    ``None``), the children and the dictionary as indices of later records.
    A struct's children are its fields as ``StructArray.field`` gives them
    (sliced to the struct's rows, so the struct's own offset is 0 and its
    validity comes from ``is_valid``); a struct whose rows are all null
    has no children (``-1``: the writer never reads under a null row).
    """

    def __init__(self) -> None:
        self.records: list[tuple] = []
        self.keep: list[Any] = []  # the arrays made here, alive until the call returns

    def add(self, a: pa.Array) -> int:
        me = len(self.records)
        self.records.append(())
        n = len(a)
        nulls = a.null_count
        if isinstance(a, pa.StructArray):
            k = a.type.num_fields
            if nulls == n:
                self.records[me] = (n, 0, nulls, (None,), (-1,) * k, -1)
                return me
            validity = None if nulls == 0 else self._bits(a)
            fields = tuple(self.add(a.field(i)) for i in range(k))
            self.records[me] = (n, 0, nulls, (validity,), fields, -1)
            return me
        if isinstance(a, pa.ListArray):  # and MapArray
            offsets = a.offsets
            validity = None
            if nulls:
                validity = self._bits(a)
                if offsets.offset:  # the validity starts at row 0: so must the offsets
                    offsets = pa.concat_arrays([offsets, pa.array([], pa.int32())])
            self.keep.append(offsets)
            if isinstance(a, pa.MapArray):
                keys, items = a.keys, a.items
                entries = len(self.records)
                self.records.append(())
                self.records[entries] = (len(keys), 0, 0, (None,), (self.add(keys), self.add(items)), -1)
                children: tuple[int, ...] = (entries,)
            else:
                children = (self.add(a.values),)
            self.records[me] = (n, offsets.offset, nulls, (validity, offsets.buffers()[1]), children, -1)
            return me
        if isinstance(a, pa.DictionaryArray):
            indices = a.indices
            self.keep.append(indices)
            self.records[me] = (n, indices.offset, nulls, tuple(indices.buffers()), (), self.add(a.dictionary))
            return me
        self.keep.append(a)
        self.records[me] = (n, a.offset, nulls, tuple(a.buffers()), (), -1)
        return me

    def _bits(self, a: pa.Array) -> Any:
        """The validity bitmap of ``a``'s rows from row 0.

        A struct's is the validity of a leaf reached through fields with no
        nulls of their own (``_flattened_field`` ANDs each level's validity
        into its field's: with as many nulls as the struct, it is the
        struct's), which costs what the path does; else, and for a list,
        ``is_valid()`` (a new buffer, but a compute call over the whole subtree).
        """
        flat = a
        while isinstance(flat, pa.StructArray) and hasattr(flat, "_flattened_field"):
            fields = list(flat.type)
            order = [i for i, f in enumerate(fields) if not pa.types.is_nested(f.type)]
            order += [i for i, f in enumerate(fields) if pa.types.is_struct(f.type)]
            for i in order[:4]:
                below = flat._flattened_field(i)
                if below.null_count == a.null_count:
                    break
            else:
                break
            flat = below
            if not pa.types.is_nested(flat.type):
                found = flat.buffers()[0] if flat.offset == 0 else None
                if found is None:
                    break
                self.keep.append(flat)
                return found
        valid = a.is_valid()
        self.keep.append(valid)
        return valid.buffers()[1]


def encode_from_arrow(data: Any, cls: type, *, enums: str = "name", well_known_types: bool = True,
                      recursion_depth: int = DEFAULT_RECURSION_DEPTH) -> list[bytes]:
    """The encoding of each row of a table: ``[pbj.encode(m) for m in from_arrow(data, cls)]``, from the columns.

    On the native engine the columns are read in C and each row's bytes are
    written straight from them, with no message object (byte-exact with
    ``pbj.encode`` of :func:`pbj.arrow.from_arrow`'s messages: fields in
    field-number order, map entries sorted by key, "Encoding" on
    protobuf.dev). A message past the recursion depth (a ``binary`` column) is
    copied as it is: tables :func:`pbj.arrow.to_arrow` and
    :func:`pbj.arrow.decode_to_arrow` make hold pbj's own encoding there.
    Elsewhere the messages are built and encoded.

    Args:
        data: what :func:`pbj.arrow.from_arrow` takes (a table, record batch,
            reader or Arrow PyCapsule object; read one batch at a time).
        cls: the message class of the rows.
        enums, well_known_types, recursion_depth: the options the table was made with.

    Returns:
        One ``bytes`` per row, in row order.

    Raises:
        TypeError: ``cls`` is not a message class, or ``data`` is no table.
        ValueError: as :func:`pbj.arrow.from_arrow` (the column and the first offending row).
        EncodeError: a message ``pbj.encode`` refuses (a proto2 ``required`` field unset).
    """
    from pbj.api import encode
    from pbj.arrow.convert import _batch_messages, record_batches

    if not (isinstance(cls, type) and is_message(cls)):
        raise TypeError(f"{cls!r} is not a pbj message class")
    batches = record_batches(data, "encode_from_arrow")
    options = Options(enums, well_known_types, recursion_depth)
    plan = plan_of(cls, options)
    out: list[bytes] = []
    row = 0
    for batch in batches:
        native = _native_batch(cls, options, plan, batch, row)
        if native is None:
            native = [encode(m) for m in _batch_messages(cls, plan, batch, row)]
        out.extend(native)
        row += batch.num_rows
    return out


def _native_batch(cls: type, options: Options, plan: col.Struct, batch: pa.RecordBatch,
                  first_row: int) -> list[bytes] | None:
    """One batch's encodings from the C writer (its halves while a column is past int32 offsets), or ``None``."""
    from pbj.arrow.conform import TooLarge, conform_batch

    if isinstance(writer_plan(cls, options), str) or not plan.columns:
        return None
    try:
        arrays = conform_batch(batch, plan, cls.__qualname__, first_row, check_values=False)  # the writer checks
    except TooLarge:
        n = batch.num_rows
        if n < 2:
            return None
        first = _native_batch(cls, options, plan, batch.slice(0, n // 2), first_row)
        second = _native_batch(cls, options, plan, batch.slice(n // 2), first_row + n // 2)
        return None if first is None or second is None else first + second
    try:
        return batch_encodings(cls, options, arrays)
    except ValueError as exc:
        raise shift_row(exc, cls, first_row) from None


def shift_row(exc: ValueError, cls: type, first_row: int) -> ValueError:
    """The C writer's error (``column 'x' row R: ...``, R in the batch) with the table's row and the class."""
    text = str(exc)
    head, sep, rest = text.partition(" row ")
    if sep and head.startswith("column "):
        number, colon, tail = rest.partition(":")
        if colon and number.isdigit():
            text = f"{head} row {int(number) + first_row}:{tail}"
    return ValueError(f"{cls.__qualname__}: {text}")


class _Flat:
    """The node records of one column tree (node 0: the table); children always come after their parent."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []

    def reserve(self) -> int:
        self.nodes.append(None)
        return len(self.nodes) - 1

    def add(self, record: tuple) -> int:
        self.nodes.append(record)
        return len(self.nodes) - 1

    def struct(self, column: col.Struct, path: str) -> int:
        me = self.reserve()
        mp = codec_of(column.cls).plan
        position = {attr: i for i, attr in enumerate(column.attrs)}
        if len(position) != len(column.columns):
            raise Unsupported(f"{mp.full_name}: the column plan has no attribute names")
        by_name = {f.name: f for f in mp.fields}
        children: list[int] = []
        for attr, name, child in zip(column.attrs, column.names, column.columns, strict=True):
            here = f"{path}.{name}" if path else name
            if isinstance(child, col.Oneof):
                fields = [by_name.get(m) for m in child.members]
                if any(f is None for f in fields):
                    raise Unsupported(f"{mp.full_name}.{attr}: a member has no field in the codec plan")
                oneof = self.reserve()
                members = [self.single(mc, f, f"{here}.{mn}")  # type: ignore[arg-type]
                           for mc, f, mn in zip(child.columns, fields, child.names, strict=True)]
                self.nodes[oneof] = (_ONEOF, P.MESSAGE, 1, tuple(members), (), (tuple(child.names),), here)
                children.append(oneof)
                continue
            f = by_name.get(attr)
            if f is None:
                raise Unsupported(f"{mp.full_name}.{attr}: no field of the codec plan")
            children.append(self.field(child, f, here))
        steps = []
        for f in mp.fields:  # field-number order: the writers' order
            if f.oneof >= 0:
                oneof_attr = mp.oneofs[f.oneof].name
                oneof_column = column.columns[position[oneof_attr]]
                assert isinstance(oneof_column, col.Oneof)
                steps.append((position[oneof_attr], oneof_column.members.index(f.name), f.number, f.label,
                              int(f.group)))
            else:
                steps.append((position[f.name], -1, f.number, f.label, int(f.group)))
        self.nodes[me] = (_STRUCT, P.MESSAGE, int(column.nullable), tuple(children), tuple(steps), (), path or "")
        return me

    def field(self, column: col.Column, f: P.FieldPlan, path: str) -> int:
        if isinstance(column, col.List):
            me = self.reserve()
            item = self.single(column.item, f, f"{path}[]")
            self.nodes[me] = (_LIST, f.type, 0, (item,), (), (), path)
            return me
        if isinstance(column, col.Map):
            me = self.reserve()
            key = self.single(column.key, f, f"{path}.key", code=f.key)
            value = self.single(column.value, f, f"{path}.value")
            self.nodes[me] = (_MAP, f.type, 0, (key, value), (), (), path)
            return me
        return self.single(column, f, path)

    def single(self, column: col.Column, f: P.FieldPlan, path: str, code: int | None = None) -> int:
        code = f.type if code is None else code
        nullable = int(column.nullable)
        if isinstance(column, col.Scalar | col.Float32):
            return self.add((_SCALAR, code, nullable, (), (), (), path))
        if isinstance(column, col.Enum):
            members = list(column.enum_cls)  # type: ignore[call-overload]
            numbers = tuple(int(m) for m in members)
            names = tuple(column.names) if column.as_names else tuple(m.name for m in members)
            extra = (int(column.as_names), numbers, names, int(bool(f.closed)))
            return self.add((_ENUM, scalars.ENUM.code, nullable, (), (), extra, path))
        if isinstance(column, col.Struct):
            return self.struct(column, path)
        if isinstance(column, col.Timestamp | col.Duration):
            mp = codec_of(column.cls).plan
            steps = []
            for g in mp.fields:
                which = 0 if g.name == column.seconds else 1
                want = scalars.SCALARS["int64" if which == 0 else "int32"].code
                if g.type != want or g.label not in (P.IMPLICIT, P.EXPLICIT):
                    raise Unsupported(f"{mp.full_name}.{g.name} is not the int64/int32 of the well-known type")
                steps.append((which, -1, g.number, g.label, 0))
            return self.add((_TIME, P.MESSAGE, nullable, (), tuple(steps),
                             (int(isinstance(column, col.Duration)),), path))
        if isinstance(column, col.Wrapper):
            mp = codec_of(column.cls).plan
            if len(mp.fields) != 1 or mp.fields[0].label not in (P.IMPLICIT, P.EXPLICIT):
                raise Unsupported(f"{mp.full_name} is not a wrapper of one scalar value")
            g = mp.fields[0]
            me = self.reserve()
            value = self.single(column.value, g, path)
            self.nodes[me] = (_WRAPPER, P.MESSAGE, nullable, (value,), ((0, -1, g.number, g.label, 0),), (), path)
            return me
        if isinstance(column, col.Encoded):
            return self.add((_ENCODED, P.MESSAGE, nullable, (), (), (), path))
        if isinstance(column, col.Present):
            return self.add((_PRESENT, P.MESSAGE, nullable, (), (), (), path))
        raise Unsupported(f"{path}: a {type(column).__name__} column")


def messages_of_encodings(cls: type, encodings: list[bytes], first_row: int) -> list[Any]:
    """The messages of the native writer's encodings, decoded by the engine (what ``from_arrow`` returns).

    The engine decodes them in one call (``decode_many``: a sub-message equal to an earlier one is
    the same object, and messages that can never be part of a reference cycle are left untracked
    by the cyclic garbage collector, as CPython leaves such tuples); one it leaves to the Python
    parser is decoded by ``pbj.decode``; an encoding the decoder refuses is decoded again alone,
    to name its row.
    """
    from pbj.api import DEFAULT_MAX_DEPTH, decode
    from pbj.errors import DecodeError

    codec = codec_of(cls)
    engine = _native._engine
    if engine is not None and codec.native is not None and _native.engine() == "native":
        try:
            found = engine.decode_many(codec.native, encodings, DEFAULT_MAX_DEPTH)
        except DecodeError:
            found = None  # the loop below names the row
        if found is not None:
            return [decode(cls, data, allow_partial=True) if m is None else m
                    for m, data in zip(found, encodings, strict=True)]
    out: list[Any] = []
    for i, data in enumerate(encodings):
        try:
            out.append(decode(cls, data, allow_partial=True))
        except DecodeError as exc:  # a value the class refuses (a closed enum's number ...), seen by the decoder
            raise ValueError(f"{cls.__qualname__}: row {first_row + i}: {exc}") from None
    return out
