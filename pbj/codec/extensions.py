"""Extensions on the wire: what the generated codec of a class with extension ranges calls.

Part of the codec (generated code binds these functions as globals), so it imports nothing
above it; ``pbj.extensions.wire`` names the same functions.

protobuf.dev "Encoding": an extension is encoded as a field of its number;
Google's runtimes write the extensions among the known fields, in
field-number order. Since no regular field's number can fall inside an
extension range, the codec plan has one write step per extension range
(:data:`pbj.codec.plan.EXTENSIONS`), where the generated writers call
:func:`size_range`, :func:`write_range`, :func:`write_fresh_range` and
:func:`write_reverse_range`: each writes the holders (see
:mod:`pbj.extensions.declare`) whose number is in the range, with the
holder's compiled codec, so every encoding rule of a regular field applies.

Decoding: the generated parser keeps every field it does not know as an
unknown field; at the end, a class with extension ranges calls
:func:`take` on them. The fields whose number is an extension registered
for the class are decoded (all occurrences of a number together, so a
message merges and a repeated extension accumulates, as for a regular
field); everything else stays as it arrived, byte for byte. What an
extension's holder cannot read (a wire type that does not fit, a closed
enum's unknown number) also stays an unknown field.

Message sets (``message_set_wire_format``; Google's ``message_set.proto``):
each extension is an item, a group of field 1 holding ``type_id`` (field 2,
varint) and ``message`` (field 3, LEN). Items are written ``type_id`` first,
then ``message``, as upb and C++ write them, whatever order they arrived in,
and in ``type_id`` order (C++ order; upb's order of items is not defined).
Reading follows upb, the runtime of Google's Python package (checked in
``tests/test_extensions_message_set.py``): the fields of an item may come in
either order; the first ``type_id`` and the first ``message`` of an item
count, other fields of the item are dropped; items with the same registered
``type_id`` are merged (their messages parsed as one, "Last One Wins" for a
singular message), as C++ merges them; here upb keeps the last item's message
only, and pbj follows C++ and the spec. An
item without a ``message``, or without a ``type_id``, is dropped, as upb
drops it (and C++: it creates no extension and keeps nothing). An item whose
``type_id`` is not registered is kept among the unknown fields in the form upb
writes back: ``type_id``, then ``message``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pbj import wire
from pbj.codec.plan import MESSAGE, row_of, type_code
from pbj.errors import DecodeError

__all__ = ["take", "size_range", "write_range", "write_fresh_range", "write_reverse_range", "use_compiler"]

_ITEM_START = wire.make_tag(1, wire.WIRE_SGROUP)
_ITEM_END = wire.make_tag(1, wire.WIRE_EGROUP)
_TYPE_ID = wire.make_tag(2, wire.WIRE_VARINT)
_MESSAGE = wire.make_tag(3, wire.WIRE_LEN)


#: The codec compiler's ``codec_of`` (``cls -> Codec``, compiled if need be), which the compiler gives
#: this module when it is imported (:func:`use_compiler`): this module never imports the compiler, so
#: pbj.codec has no circle (the compiler's emitters refer to these helpers).
_compile: Callable[[type], Any] | None = None


def use_compiler(codec_of: Callable[[type], Any]) -> None:
    """Give this module the compiler's ``codec_of`` (called once, by :mod:`pbj.codec.compiler`)."""
    global _compile
    _compile = codec_of


def _codec(cls: type) -> Any:
    codec = cls.__dict__.get("__pbj_codec__")
    if codec is None:
        if _compile is None:  # pragma: no cover - the compiler registers when it is imported
            raise RuntimeError("pbj.codec.extensions: the codec compiler is not loaded")
        codec = _compile(cls)
    return codec


def _item(data: bytes, pos: int, end: int, depth: int) -> tuple[int, int | None, tuple[int, int] | None]:
    """Read one message-set item body at ``pos`` (after its start tag), as upb reads it.

    The first ``type_id`` and the first ``message`` count; other fields of the item are skipped.

    Returns:
        ``(pos after the end tag, type_id or None, (start, end) of the message or None)``.
    """
    type_id = None
    span: tuple[int, int] | None = None
    while True:
        if pos >= end:
            raise DecodeError("message-set item has no end tag")
        tag, pos = wire.read_varint(data, pos)
        if tag == _ITEM_END:
            return pos, type_id, span
        if tag == _TYPE_ID:
            value, pos = wire.read_varint(data, pos)
            if type_id is None:
                type_id = value & 0xFFFFFFFF
        elif tag == _MESSAGE:
            n, pos = wire.read_varint(data, pos)
            if pos + n > end:
                raise DecodeError("truncated input: message-set item message runs past the end")
            if span is None:
                span = (pos, pos + n)
            pos += n
        else:
            pos = wire.skip_field(data, pos, tag, end, depth - 1)


def _canonical_item(type_id: int, message: bytes) -> bytes:
    """An item as upb writes it back when nobody registered its ``type_id``: ``type_id``, then ``message``."""
    head = bytes([_ITEM_START, _TYPE_ID]) + wire.encode_varint(type_id)
    return head + bytes([_MESSAGE]) + wire.encode_varint(len(message)) + message + bytes([_ITEM_END])


def _take_message_set(registry: dict, data: bytes, depth: int) -> tuple[tuple, bytearray | None]:
    rest = bytearray()
    found: dict[int, list[bytes]] = {}
    pos, end = 0, len(data)
    while pos < end:
        start = pos
        tag, pos = wire.read_varint(data, pos)
        if tag == _ITEM_START:
            if depth <= 0:
                raise DecodeError("nesting too deep: the depth limit was reached")
            pos, type_id, span = _item(data, pos, end, depth)
            if span is None or type_id is None:
                continue  # an item without a message or without a type_id is dropped (upb, C++)
            message = data[span[0]:span[1]]
            if type_id in registry:
                found.setdefault(type_id, []).append(message)
            else:
                rest += _canonical_item(type_id, message)
            continue
        after_tag = pos
        pos = wire.skip_field(data, pos, tag, end, depth)
        if tag & 7 == wire.WIRE_LEN and (tag >> 3) in registry:
            # an extension in the regular encoding (a LEN field of its number) is read too, as upb does
            n, at = wire.read_varint(data, after_tag)
            found.setdefault(tag >> 3, []).append(data[at:at + n])
            continue
        rest += data[start:pos]
    holders = []
    for type_id in sorted(found):
        ext = registry[type_id]
        sub = ext.type
        body = b"".join(found[type_id])
        try:
            value = _codec(sub).parse(body, 0, len(body), depth - 2, None, 0)
        except DecodeError as exc:
            raise DecodeError(f"extension {ext.full_name}: {exc.reason}", path=[f"[{ext.full_name}]", *exc.path],
                              offset=None) from None
        holders.append(_set_holder(ext, value))
    return tuple(holders), (rest if rest else None)


def _set_holder(ext: Any, value: Any) -> Any:
    """The holder of a message set's extension ``ext`` holding ``value``; its class compiled first,
    as :func:`pbj.schema.extension_holders.holder_of` does, so the native writers can write it."""
    from pbj.schema import info
    _codec(ext.holder)
    item_cls = info(ext.holder).fields[0].type
    return ext.holder(item=item_cls(type_id=ext.number, message=value))


def take(registry: dict[int, Any], message_set: bool, unk: bytearray, depth: int) -> tuple[tuple, bytearray | None]:
    """Split the unknown fields of a just-parsed message into its extensions and the rest.

    Args:
        registry: the class's registry of extensions, number -> extension (the plan's
            ``extension_registry``: the class's own dict, read now, so extensions
            registered after the class was compiled are read too).
        message_set: the class has ``message_set_wire_format`` (the plan's ``message_set``).
        unk: the unknown fields' bytes, in arrival order.
        depth: the parse's remaining nesting depth at this message.

    Returns:
        ``(holders, rest)``: the holders of the extensions found, sorted by
        number, and the unknown fields left (``None`` if none).

    Raises:
        DecodeError: an extension's value is malformed (the path names it).
    """
    if not registry:
        return (), unk
    data = bytes(unk)
    if message_set:
        return _take_message_set(registry, data, depth)
    rest = bytearray()
    found: dict[int, list[bytes]] = {}
    pos, end = 0, len(data)
    while pos < end:
        start = pos
        tag, pos = wire.read_varint(data, pos)
        pos = wire.skip_field(data, pos, tag, end, depth)
        ext = registry.get(tag >> 3)
        # a registered number with a wire type its extension cannot read stays an unknown field,
        # where it arrived among the others (upb keeps unknown fields in arrival order)
        if ext is not None and (tag & 7) in _wire_types(ext):
            found.setdefault(tag >> 3, []).append(data[start:pos])
            if getattr(ext.field.type, "__pbj_closed__", False):
                # a closed enum's non-members stay unknown fields where they arrived (upb)
                rest += _parse_holder(ext, data[start:pos], depth)._pbj_unknown
        else:
            rest += data[start:pos]
    if not found:
        return (), unk
    holders = []
    left = bytearray()
    for number in sorted(found):
        ext = registry[number]
        h = _parse_holder(ext, b"".join(found[number]), depth)
        if h._pbj_unknown:
            if not getattr(ext.field.type, "__pbj_closed__", False):  # (kept above, in arrival order)
                left += h._pbj_unknown  # what the holder could not read stays unknown, after the rest
            _clear_unknown(h)
        v = h.value
        if v is not None and not (ext.repeated and not v):
            holders.append(h)
    rest += left
    return tuple(holders), (rest if rest else None)


def _parse_holder(ext: Any, body: bytes, depth: int) -> Any:
    """The holder of ``ext`` parsed from ``body`` (its occurrences, in order).

    Raises:
        DecodeError: a value is malformed; the path starts at ``[ext.full_name]``.
    """
    try:
        return _codec(ext.holder).parse(body, 0, len(body), depth, None, 0)
    except DecodeError as exc:
        path = exc.path[1:] if exc.path[:1] == ["value"] else exc.path
        raise DecodeError(f"extension {ext.full_name}: {exc.reason}", path=[f"[{ext.full_name}]", *path],
                          offset=None) from None


def _wire_types(ext: Any) -> tuple[int, ...]:
    """The wire types an extension's value is read from ("Encoding"): its own, and LEN for packed repeated."""
    f = ext.field
    if f.group:
        return (wire.WIRE_SGROUP,)
    code = type_code(f.type)
    if code == MESSAGE:
        return (wire.WIRE_LEN,)
    row = row_of(code)
    if f.repeated and row.packable:
        return (row.wire_type, wire.WIRE_LEN)
    return (row.wire_type,)


def _clear_unknown(h: Any) -> None:
    type(h).__pbj_slots__._pbj_unknown.__set__(h, b"")


# ---------------------------------------------------------------- writing (plan step EXTENSIONS)

def size_range(holders: tuple, lo: int, hi: int) -> int:
    """The encoded size of the extensions numbered ``lo`` to ``hi - 1`` (sizes cached on the holders)."""
    n = 0
    for h in holders:
        number = h.__pbj_extension__.number
        if lo <= number < hi:
            s = h._pbj_size
            n += s if s >= 0 else _codec(h.__class__).size(h)
    return n


def write_range(holders: tuple, lo: int, hi: int, ap: Any) -> int:
    """Append the extensions numbered ``lo`` to ``hi - 1`` (sizes cached: :func:`size_range` ran);
    return the bytes appended (a holder writes its extension's tag and length itself)."""
    n = 0
    for h in holders:
        if lo <= h.__pbj_extension__.number < hi:
            n += _codec(h.__class__).write(h, ap)
    return n


def write_fresh_range(holders: tuple, lo: int, hi: int, parts: list, ap: Any) -> int:
    """Append the extensions numbered ``lo`` to ``hi - 1`` in one pass; return the bytes appended."""
    n = 0
    for h in holders:
        if lo <= h.__pbj_extension__.number < hi:
            codec = _codec(h.__class__)
            n += codec.write_fresh(h, parts, ap) if h._pbj_size < 0 else codec.write(h, ap)
    return n


def write_reverse_range(holders: tuple, lo: int, hi: int, rb: Any, pos: int) -> int:
    """Write the extensions numbered ``lo`` to ``hi - 1`` back to front in front of ``pos``; return the new pos."""
    for h in reversed(holders):
        if lo <= h.__pbj_extension__.number < hi:
            pos = _codec(h.__class__).write_reverse(h, rb, pos)
    return pos
