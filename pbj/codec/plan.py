"""The codec plan: what the codec of a message class does, as plain data.

At first use of a message class the compiler builds one :class:`BatchPlan`
for the class and every class it reaches that has no codec yet; the three
emitters (:mod:`~pbj.codec.forward`, :mod:`~pbj.codec.reverse`,
:mod:`~pbj.codec.parse`) only turn it into source. Everything that depends
on the schema alone is decided here: the write order, tag bytes, constant
sizes, presence rules, the members of each oneof run, map-entry layouts, the
tags the parser accepts, group and closed-enum rules.

The plan is made of tuples (``NamedTuple`` records), ints, strings and bytes,
plus the few Python objects a decoder must produce (the classes, enum
classes, default values), so a native engine can walk it without calling
back into Python. Its fields and their meaning:

``BatchPlan``
    ``messages``: a :class:`MessagePlan` per class of the batch.
    ``classes``: every message class a plan refers to; ``classes[i]`` is the
    class of ``messages[i]`` for ``i < len(messages)``, and classes compiled
    by earlier batches follow. A field's ``sub`` indexes this tuple.

``MessagePlan``
    ``idx``: its index in ``BatchPlan.messages``.
    ``full_name``: the protobuf full name. ``cls``: the frozen class.
    ``slots_class``: its hidden base owning the slots (the parser fills an
    instance of it and then switches its ``__class__`` to ``cls``).
    ``slots``: the attribute names in slot order; a field's ``slot``
    indexes it (``_pbj_unknown`` and ``_pbj_size`` are not listed).
    ``fields``: every field and oneof member, in field-number order; a field's
    ``idx`` is its position here.
    ``writes``: the write order, ascending field number: ``(FIELD, i, ())``
    writes ``fields[i]``; ``(RUN, j, members)`` writes the member of oneof
    ``j`` that is set if it is one of ``members`` (field indexes). A oneof
    appears once per run of its members between two regular fields, so a
    set member is written exactly where its number falls ("Field Order").
    ``(EXTENSIONS, k, ())`` writes the extensions present whose field
    number is in ``extension_ranges[k]`` (in number order), where that range
    falls among the fields: no field number can be inside an extension
    range, so the step never splits one (added with extensions; a class
    without extension ranges has none).
    ``oneofs``: a :class:`OneofPlan` per oneof, in declaration order.
    ``dispatch``: ``(tag, field index, form)`` for every tag the parser
    knows, sorted by tag; ``form`` is :data:`VALUE` (the field's own wire
    type), :data:`PACKED_RUN` (a LEN run of a repeated scalar, accepted
    packed or not) or :data:`GROUP_START`. Any other tag, including a known
    field number with a wire type that does not fit, is an unknown field.
    ``leaf``: no field is a message or a map, and the class has no
    extension ranges (a candidate for inlining).
    ``extension_ranges``: the class's extension ranges, ``(start, end)``
    with ``end`` exclusive, ascending; ``()`` for most classes. A class with
    ranges stores its extensions in the hidden attribute ``_pbj_extensions``
    (a tuple of holder messages, :mod:`pbj.extensions`): its parser passes
    the unknown fields to :func:`pbj.codec.extensions.take`, which decodes the
    extensions registered for it, and its writers call the range writers of
    :mod:`pbj.codec.extensions` at each ``EXTENSIONS`` step.
    ``message_set``: the class has ``message_set_wire_format`` (its
    extensions are message-set items).
    ``slot_kinds``: per slot, what it holds while a message is decoded:
    :data:`S_SINGULAR` (a field's value), :data:`S_REPEATED` (a repeated
    field's tuple), :data:`S_MAP` (a map's ``FrozenMap``), :data:`S_ONEOF` (a
    oneof's ``OneOf`` or ``None``); -1 for a slot no field holds (an engine
    declines such a plan). ``slot_defaults``: per slot, its value when nothing
    is on the wire: the field's ``default``, ``()``, ``EMPTY_MAP`` or ``None``.
    ``extension_number``: the number of the extension whose hidden holder class
    this is (:mod:`pbj.extensions`), else -1. ``extension_registry``: with
    extension ranges, the class's registry of extensions (number -> extension,
    the dict itself: an engine reads it at each decode, so extensions registered
    later are read too), else ``None``. ``read_by_slot``: the attributes whose
    class attribute gives a declared default when the field is unset (proto2
    ``[default = ...]``, :mod:`pbj.schema.presence`): a writer reads them
    through their slot, never as ``o.<name>``.

``FieldPlan``
    ``name``: the attribute name (a oneof member's name for a member);
    ``proto_name``: the schema's name; ``number``: the field number;
    ``idx``: position in ``MessagePlan.fields``; ``slot``: position in
    ``MessagePlan.slots`` of the attribute holding it (a member: its
    oneof's); ``label``: :data:`IMPLICIT`, :data:`EXPLICIT`,
    :data:`REPEATED`, :data:`PACKED`, :data:`MAP` or :data:`MEMBER`;
    ``type``: the scalar code (:attr:`pbj.scalars.ScalarType.code`) or
    :data:`MESSAGE` (for a map: the value's type); ``group``: written as a
    group (wire types 3 and 4); ``tag``: the tag bytes written before each
    value (LEN for packed and map fields, start-group for groups);
    ``end_tag``: the end-group tag bytes, else ``b""``; ``width``: the
    constant size of one value (4 or 8 fixed-width, 1 ``bool``), else 0;
    ``sub``: index in ``BatchPlan.classes`` of the message type (a map's
    value type), else -1; ``enum``: the ``IntEnum`` class of an enum field
    (or map value), else ``None``; ``closed``: that enum is closed (a number
    that is not a member goes to the unknown fields); ``key``: a map's key
    scalar code, else -1; ``default``: the value of the field when it is not
    on the wire (``None`` for a field without one: explicit presence,
    repeated, map, message); ``oneof``: index in ``MessagePlan.oneofs``,
    else -1. ``declared_default`` (added with proto2 defaults; last, so
    positional readers of the older fields are unchanged): the default a
    proto2/editions field declares (``[default = 5]``), else ``None``. It
    changes nothing on the wire: such a field is :data:`EXPLICIT`, its slot
    holds ``None`` when it is unset and the writers read the slot, never the
    attribute (the class's attribute gives the declared default when the
    slot holds ``None``, see :mod:`pbj.schema.presence`); the parser stores
    ``None`` for an absent field as for any explicit field. A oneof member's
    declared default is listed too (the member is stored in its oneof).
    ``utf8``: a ``string`` field (a map's string key or value too) whose
    values must be valid UTF-8 (``utf8_validation = VERIFY``: proto3 and
    editions' default); when false (proto2, ``utf8_validation = NONE``) any
    bytes are accepted and kept: the Python value is the ``str`` decoded with
    ``errors="surrogateescape"`` (each byte of an invalid sequence becomes
    U+DC80..U+DCFF) and the writers encode it back the same way, so the bytes
    round-trip exactly. Always true for other types.
    ``key_tag``: a map's key tag (field 1 of the entry, the key's wire type),
    else 0; ``value_tag``: a map's value tag bytes (field 2 of the entry), else
    ``b""``; ``value_default``: a map's value when an entry has none (the zero
    of a scalar, an enum's default member), else ``None`` (a message value: the
    empty message). ``enum_members``: an enum field's (or map value's) members
    by number (``{int: member}``), else ``None``.

``OneofPlan``
    ``name``: the attribute name; ``slot``: its slot; ``members``: field
    indexes of the members, in field-number order.

Presence ("Field Presence" on protobuf.dev): an :data:`IMPLICIT` scalar is
written when it is not its zero value (``-0.0`` is written); an
:data:`EXPLICIT` field (and every singular message) when it is not
``None``; a repeated field or map when it is not empty; a oneof when set.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pbj import scalars, wire
from pbj.schema import EMPTY_MAP, FieldInfo, MessageInfo, enum_default

__all__ = [
    "BatchPlan", "MessagePlan", "FieldPlan", "OneofPlan", "build_batch", "build_message",
    "MESSAGE", "IMPLICIT", "EXPLICIT", "REPEATED", "PACKED", "MAP", "MEMBER",
    "FIELD", "RUN", "EXTENSIONS", "VALUE", "PACKED_RUN", "GROUP_START", "S_SINGULAR", "S_REPEATED", "S_MAP",
    "S_ONEOF", "row_of", "type_code",
]

#: The type code of a message (the scalar codes are 0 to 15, ``enum`` 15).
MESSAGE = len(scalars.BY_CODE)

# labels
IMPLICIT, EXPLICIT, REPEATED, PACKED, MAP, MEMBER = range(6)
# write steps
FIELD, RUN, EXTENSIONS = 0, 1, 2
# parse forms
VALUE, PACKED_RUN, GROUP_START = 0, 1, 2
# slot kinds (what a slot holds while a message is decoded)
S_SINGULAR, S_REPEATED, S_MAP, S_ONEOF = range(4)


class FieldPlan(NamedTuple):
    """One field or oneof member (see the module docstring)."""

    name: str
    proto_name: str
    number: int
    idx: int
    slot: int
    label: int
    type: int
    group: bool
    tag: bytes
    end_tag: bytes
    width: int
    sub: int
    enum: Any
    closed: bool
    key: int
    default: Any
    oneof: int
    declared_default: Any = None
    utf8: bool = True
    key_tag: int = 0
    value_tag: bytes = b""
    value_default: Any = None
    enum_members: Any = None


class OneofPlan(NamedTuple):
    """One oneof (see the module docstring)."""

    name: str
    slot: int
    members: tuple[int, ...]


class MessagePlan(NamedTuple):
    """The plan of one message class (see the module docstring)."""

    idx: int
    full_name: str
    cls: Any
    slots_class: Any
    slots: tuple[str, ...]
    fields: tuple[FieldPlan, ...]
    writes: tuple[tuple[int, int, tuple[int, ...]], ...]
    oneofs: tuple[OneofPlan, ...]
    dispatch: tuple[tuple[int, int, int], ...]
    leaf: bool
    extension_ranges: tuple[tuple[int, int], ...] = ()
    message_set: bool = False
    slot_kinds: tuple[int, ...] = ()
    slot_defaults: tuple[Any, ...] = ()
    extension_number: int = -1
    extension_registry: Any = None
    read_by_slot: tuple[str, ...] = ()


class BatchPlan(NamedTuple):
    """The plans of one compile batch (see the module docstring)."""

    messages: tuple[MessagePlan, ...]
    classes: tuple[Any, ...]


def row_of(code: int) -> scalars.ScalarType:
    """The scalar row of a type code (not :data:`MESSAGE`)."""
    return scalars.BY_CODE[code]


def type_code(t: Any) -> int:
    """The type code of a field's type: a scalar's row code, ``ENUM``'s for an enum class, :data:`MESSAGE`
    for a message class."""
    if isinstance(t, str):
        return scalars.SCALARS[t].code
    if isinstance(t, type) and hasattr(t, "__pbj_info__"):
        return MESSAGE
    return scalars.ENUM.code


def _default(f: FieldInfo, code: int) -> Any:
    if f.repeated or f.optional or code == MESSAGE:
        return None
    if code == scalars.ENUM.code:
        return enum_default(f.type)
    return scalars.BY_CODE[code].zero


def _field(f: FieldInfo, index: int, slot: int, oneof: int, sub_index: Any) -> FieldPlan:
    value_type = f.map_value if f.is_map else f.type
    code = type_code(value_type)
    if f.is_map:
        label = MAP
    elif oneof >= 0:
        label = MEMBER
    elif f.repeated:
        label = PACKED if f.packed else REPEATED
    else:
        label = EXPLICIT if (f.optional or code == MESSAGE) else IMPLICIT
    if f.group:
        tag, end_tag = wire.tag_bytes(f.number, wire.WIRE_SGROUP), wire.tag_bytes(f.number, wire.WIRE_EGROUP)
    elif label in (MAP, PACKED) or code == MESSAGE:
        tag, end_tag = wire.tag_bytes(f.number, wire.WIRE_LEN), b""
    else:
        tag, end_tag = wire.tag_bytes(f.number, scalars.BY_CODE[code].wire_type), b""
    width = 0
    if code != MESSAGE:
        r = scalars.BY_CODE[code]
        width = r.width or (1 if r.op == scalars.OP_BOOL else 0)
    enum_cls = value_type if code == scalars.ENUM.code else None
    key_tag, value_tag, value_default = 0, b"", None
    if f.is_map and f.map_key is not None:
        key_tag = wire.make_tag(1, scalars.SCALARS[f.map_key].wire_type)
        value_tag = wire.tag_bytes(2, wire.WIRE_LEN if code == MESSAGE else scalars.BY_CODE[code].wire_type)
        if code == scalars.ENUM.code:
            value_default = enum_default(enum_cls)
        elif code != MESSAGE:
            value_default = scalars.BY_CODE[code].zero
    return FieldPlan(
        name=f.name, proto_name=f.proto_name or f.name, number=f.number, idx=index, slot=slot,
        label=label, type=code, group=f.group, tag=tag, end_tag=end_tag, width=width,
        sub=sub_index(value_type) if code == MESSAGE else -1, enum=enum_cls,
        closed=bool(getattr(enum_cls, "__pbj_closed__", False)),
        key=scalars.SCALARS[f.map_key].code if f.map_key is not None else -1,
        default=_default(f, code) if not f.is_map else None, oneof=oneof,
        declared_default=f.default, utf8=f.utf8, key_tag=key_tag, value_tag=value_tag, value_default=value_default,
        enum_members={int(m): m for m in enum_cls} if enum_cls is not None else None)


def _dispatch(fields: tuple[FieldPlan, ...]) -> tuple[tuple[int, int, int], ...]:
    out = []
    for f in fields:
        if f.group:
            out.append((wire.make_tag(f.number, wire.WIRE_SGROUP), f.idx, GROUP_START))
        elif f.type == MESSAGE or f.label == MAP:
            out.append((wire.make_tag(f.number, wire.WIRE_LEN), f.idx, VALUE))
        else:
            r = scalars.BY_CODE[f.type]
            out.append((wire.make_tag(f.number, r.wire_type), f.idx, VALUE))
            if f.label in (REPEATED, PACKED) and r.packable:
                out.append((wire.make_tag(f.number, wire.WIRE_LEN), f.idx, PACKED_RUN))
    return tuple(sorted(out))


def _writes(mi: MessageInfo, fields: tuple[FieldPlan, ...]) -> tuple:
    oneof_of = {f.idx: f.oneof for f in fields}
    out: list[tuple[int, int, tuple[int, ...]]] = []
    run: list[int] = []
    for f in fields:
        if f.oneof < 0:
            if run:
                out.append((RUN, oneof_of[run[0]], tuple(run)))
                run = []
            out.append((FIELD, f.idx, ()))
            continue
        if run and oneof_of[run[0]] != f.oneof:
            out.append((RUN, oneof_of[run[0]], tuple(run)))
            run = []
        run.append(f.idx)
    if run:
        out.append((RUN, oneof_of[run[0]], tuple(run)))
    if mi.extension_ranges:
        def first_number(step: tuple[int, int, tuple[int, ...]]) -> int:
            return fields[step[1]].number if step[0] == FIELD else fields[step[2][0]].number
        merged: list[tuple[int, int, tuple[int, ...]]] = []
        ranges = list(enumerate(mi.extension_ranges))
        for step in out:
            while ranges and ranges[0][1][0] < first_number(step):
                merged.append((EXTENSIONS, ranges.pop(0)[0], ()))
            merged.append(step)
        merged.extend((EXTENSIONS, k, ()) for k, _ in ranges)
        out = merged
    return tuple(out)


def _slot_table(nslots: int, fields: tuple[FieldPlan, ...],
                oneofs: tuple[OneofPlan, ...]) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """``(slot_kinds, slot_defaults)`` (see the module docstring)."""
    kinds: list[int] = [-1] * nslots
    defaults: list[Any] = [None] * nslots
    for o in oneofs:
        kinds[o.slot] = S_ONEOF
    for f in fields:
        if f.oneof >= 0:
            continue
        if f.label == MAP:
            kinds[f.slot], defaults[f.slot] = S_MAP, EMPTY_MAP
        elif f.label in (REPEATED, PACKED):
            kinds[f.slot], defaults[f.slot] = S_REPEATED, ()
        else:
            kinds[f.slot], defaults[f.slot] = S_SINGULAR, f.default
    return tuple(kinds), tuple(defaults)


def build_message(mi: MessageInfo, index: int, sub_index: Any) -> MessagePlan:
    """The plan of one resolved message class.

    Args:
        mi: the class's resolved schema.
        index: its index in the batch.
        sub_index: ``sub_index(cls) -> int``, the index in ``BatchPlan.classes``
            of a message class a field refers to.
    """
    slots = tuple(mi.attr_order)
    slot_of = {name: i for i, name in enumerate(slots)}
    entries: list[tuple[FieldInfo, int]] = [(f, -1) for f in mi.fields]
    for j, o in enumerate(mi.oneofs):
        entries.extend((m, j) for m in o.members)
    entries.sort(key=lambda e: e[0].number)
    fields = tuple(
        _field(f, i, slot_of[mi.oneofs[j].name] if j >= 0 else slot_of[f.name], j, sub_index)
        for i, (f, j) in enumerate(entries))
    oneofs = tuple(
        OneofPlan(o.name, slot_of[o.name], tuple(f.idx for f in fields if f.oneof == j))
        for j, o in enumerate(mi.oneofs))
    leaf = all(f.type != MESSAGE and f.label != MAP for f in fields) and not mi.extension_ranges
    kinds, defaults = _slot_table(len(slots), fields, oneofs)
    holder_of = mi.cls.__dict__.get("__pbj_extension__")  # a holder class: its extension
    return MessagePlan(idx=index, full_name=mi.full_name, cls=mi.cls, slots_class=mi.cls.__pbj_slots__,
                       slots=slots, fields=fields, writes=_writes(mi, fields), oneofs=oneofs,
                       dispatch=_dispatch(fields), leaf=leaf, extension_ranges=tuple(mi.extension_ranges),
                       message_set=mi.message_set, slot_kinds=kinds, slot_defaults=defaults,
                       extension_number=holder_of.number if holder_of is not None else -1,
                       extension_registry=mi.extensions if mi.extension_ranges else None,
                       read_by_slot=tuple(f.name for f in fields if f.declared_default is not None and f.oneof < 0))


def build_batch(infos: list[MessageInfo]) -> BatchPlan:
    """The plan of a compile batch: ``infos`` are the batch's resolved classes.

    Message classes a field refers to that are not in ``infos`` (compiled
    by an earlier batch) are listed after the batch's own in ``classes``.
    """
    classes: list[Any] = [mi.cls for mi in infos]
    index_of: dict[Any, int] = {c: i for i, c in enumerate(classes)}

    def sub_index(cls: Any) -> int:
        i = index_of.get(cls)
        if i is None:
            i = index_of[cls] = len(classes)
            classes.append(cls)
        return i

    messages = tuple(build_message(mi, i, sub_index) for i, mi in enumerate(infos))
    return BatchPlan(messages, tuple(classes))
