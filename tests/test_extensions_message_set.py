"""Message sets (``message_set_wire_format``) against Google's protobuf (upb, the runtime of its
Python package): every case is checked against the bytes Google writes for the same input.

pbj.codec.extensions documents the rules: items written ``type_id`` then ``message``, in
``type_id`` order; on reading, the first ``type_id`` and ``message`` of an item count, items with
the same registered ``type_id`` merge (as C++ merges them; upb keeps the last one only), an item
without a message or a ``type_id`` is dropped, an item nobody registered stays unknown in the
form upb writes back.
"""

from __future__ import annotations

import pytest

import pbj
from pbj import wire
from tests.oracle import google_class
from tests.test_extensions import both_writers, loaded


@pbj.message(full_name="pbjext.Set", syntax="proto2", message_set=True)
class Set:
    pass


@pbj.message(full_name="pbjext.ItemA", syntax="proto2")
class ItemA:
    x: int | None = pbj.field(1, "int32", optional=True)
    z: int | None = pbj.field(2, "int32", optional=True)


@pbj.message(full_name="pbjext.ItemB", syntax="proto2")
class ItemB:
    y: str | None = pbj.field(1, "string", optional=True)


A = pbj.extension(Set, 1000, ItemA, name="pbjext.ItemA.ext")
B = pbj.extension(Set, 2000, ItemB, name="pbjext.ItemB.ext")


def item(*parts: bytes) -> bytes:
    return b"\x0b" + b"".join(parts) + b"\x0c"


def tid(n: int) -> bytes:
    return b"\x10" + wire.encode_varint(n)


def msg(body: bytes) -> bytes:
    return b"\x1a" + wire.encode_varint(len(body)) + body


A1, A2 = b"\x08\x01", b"\x10\x02"  # ItemA { x: 1 }, ItemA { z: 2 }
B1 = b"\x0a\x02hi"                 # ItemB { y: "hi" }

CASES = {
    "one": item(tid(1000), msg(A1)),
    "message before type_id": item(msg(A1), tid(1000)),
    "two items in reverse type_id order": item(tid(2000), msg(B1)) + item(tid(1000), msg(A1)),
    "same type_id twice: merged": item(tid(1000), msg(A1)) + item(msg(A2), tid(1000)),
    "an item without a message": item(tid(1000)),
    "an item without a type_id": item(msg(A1)),
    "an unregistered type_id": item(tid(999), msg(A1)),
    "an unregistered type_id, message first": item(msg(A1), tid(999)),
    "an unregistered type_id without a message": item(tid(999)),
    "another field inside an item": item(tid(1000), b"\x20\x01", msg(A1)),
    "two type_ids: the first counts": item(tid(999), tid(1000), msg(A1)),
    "two messages: the first counts": item(tid(1000), msg(A1), msg(A2)),
    "the regular encoding of the extension": b"\xc2\x3e" + wire.encode_varint(len(A1)) + A1,
    "a field that is not an item": b"\x28\x05",
}


@pytest.mark.parametrize("source", ["hand", "loaded"])
@pytest.mark.parametrize("name", list(CASES))
def test_reading_and_writing_as_google_does(source, name):
    data = CASES[name]
    ns = loaded()  # also puts the schema in Google's pool
    cls = ns["pbjext.Set"] if source == "loaded" else Set
    google = google_class("pbjext.Set").FromString(data).SerializeToString(deterministic=True)
    ours = pbj.decode(cls, data)
    out = both_writers(ours)
    if name == "same type_id twice: merged":
        # C++ merges the messages of items with the same type_id, as the spec merges a singular message
        # that occurs twice ("Last One Wins"); upb keeps the last one only. pbj follows C++ and the spec.
        assert google == item(tid(1000), msg(A2))
        assert out == item(tid(1000), msg(A1 + A2))
    elif name == "two items in reverse type_id order":
        assert google_class("pbjext.Set").FromString(out) == google_class("pbjext.Set").FromString(google)
        assert out == item(tid(1000), msg(A1)) + item(tid(2000), msg(B1))  # type_id order (C++), upb's is undefined
    else:
        assert out == google
    assert pbj.decode(cls, out) == ours


def test_values_and_merge():
    value = pbj.decode(Set, CASES["same type_id twice: merged"])
    assert pbj.get_extension(value, A) == ItemA(x=1, z=2) and not pbj.has_extension(value, B)
    value = pbj.decode(Set, CASES["an unregistered type_id"])
    assert not pbj.extensions_of(value) and pbj.unknown_fields(value) == CASES["an unregistered type_id"]


def test_building_a_message_set():
    loaded()
    s = pbj.with_extensions(Set(), {B: ItemB(y="hi"), A: ItemA(x=1)})
    g = google_class("pbjext.Set")()
    pool = g.DESCRIPTOR.file.pool
    g.Extensions[pool.FindExtensionByName("pbjext.ItemA.ext")].x = 1
    g.Extensions[pool.FindExtensionByName("pbjext.ItemB.ext")].y = "hi"
    data = both_writers(s)
    assert data == item(tid(1000), msg(A1)) + item(tid(2000), msg(B1))
    assert google_class("pbjext.Set").FromString(data) == g
    assert pbj.decode(Set, g.SerializeToString()) == s
    assert pbj.to_dict(s) == {"[pbjext.ItemA.ext]": {"x": 1}, "[pbjext.ItemB.ext]": {"y": "hi"}}
    assert pbj.from_dict(Set, pbj.to_dict(s)) == s
    # protoc and Google's Python print a canonical message-set extension under its type's name
    assert pbj.to_text(s) == '[pbjext.ItemA] {\n  x: 1\n}\n[pbjext.ItemB] {\n  y: "hi"\n}\n'
    assert pbj.from_text(Set, pbj.to_text(s)) == s


@pytest.mark.parametrize("source", ["hand", "loaded"])
def test_text_format_names_message_set_extensions_as_protoc(source):
    from google.protobuf import text_format

    ns = loaded()
    cls = ns["pbjext.Set"] if source == "loaded" else Set
    data = item(tid(1000), msg(A1)) + item(tid(2000), msg(B1))
    google = google_class("pbjext.Set").FromString(data)
    ours = pbj.decode(cls, data)
    printed = text_format.MessageToString(google)
    assert pbj.to_text(ours) == printed == '[pbjext.ItemA] {\n  x: 1\n}\n[pbjext.ItemB] {\n  y: "hi"\n}\n'
    assert pbj.to_text(ours, one_line=True) == text_format.MessageToString(google, as_one_line=True)
    for text in (printed, '[pbjext.ItemA.ext] { x: 1 } [pbjext.ItemB] { y: "hi" }'):  # both names are read
        assert pbj.from_text(cls, text) == ours
        assert both_writers(pbj.from_text(cls, text)) == data
        assert text_format.Parse(text, google_class("pbjext.Set")()) == google
    with pytest.raises(pbj.TextError, match="set twice"):
        pbj.from_text(cls, "[pbjext.ItemA] { x: 1 } [pbjext.ItemA.ext] { x: 2 }")


def test_message_set_extensions_must_be_singular_messages():
    with pytest.raises(pbj.SchemaError, match="must be a singular message"):
        pbj.extension(Set, 3000, "int32")
    with pytest.raises(pbj.SchemaError, match="must be a singular message"):
        pbj.extension(Set, 3000, ItemA, repeated=True)
