"""Names from a schema cannot break generated code (issue 11's reproducers).

Each schema is built by hand as a ``FileDescriptorSet`` (``descriptor_pb2``),
loaded into pbj and into Google's pure-Python runtime (which accepts every
name here; upb refuses non-ASCII names), and both writers must produce
Google's bytes; decoding Google's bytes must give the values back.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import pbj

descriptor_pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
F = descriptor_pb2.FieldDescriptorProto


def descriptor_set(messages: list[tuple[str, list[tuple]]], package: str = "names",
                   syntax: str = "proto3") -> bytes:
    """A one-file descriptor set: ``messages`` are ``(name, [(field, number, type, type_name, label)])``."""
    fds = descriptor_pb2.FileDescriptorSet()
    f = fds.file.add(name=f"{package}.proto", package=package, syntax=syntax)
    for mname, fields in messages:
        m = f.message_type.add(name=mname)
        for fname, number, ftype, type_name, label in fields:
            fd = m.field.add(name=fname, number=number, type=ftype, label=label or F.LABEL_OPTIONAL)
            if type_name:
                fd.type_name = type_name
    return fds.SerializeToString()


_GOOGLE = textwrap.dedent("""
    import sys, json
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, json_format
    data, full, js = sys.stdin.buffer.read().split(b"\\0", 2)
    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(data).file:
        pool.Add(fd)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(full.decode()))
    msg = json_format.Parse(js.decode(), cls(), descriptor_pool=pool)
    sys.stdout.write(msg.SerializeToString(deterministic=True).hex())
""")


def google_bytes(data: bytes, full_name: str, value_json: str) -> bytes:
    """Google's encoding (pure-Python runtime, in a subprocess) of a message given as ProtoJSON."""
    env = dict(os.environ, PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION="python")
    out = subprocess.run([sys.executable, "-c", _GOOGLE], input=data + b"\0" + full_name.encode() + b"\0"
                         + value_json.encode(), capture_output=True, env=env, check=True)
    return bytes.fromhex(out.stdout.decode())


def both_writers(obj) -> bytes:
    forward = pbj.encode(obj)
    assert pbj.encode(obj, reverse=True) == forward
    return forward


# ---------------------------------------------------------------- one namespace per batch

@pbj.message
class Card__owner:
    x: int = pbj.field(1, "int32")


@pbj.message
class Card:
    owner: pbj.OneOf | None = pbj.oneof(bank=(1, "bool"), person=(2, "string"))
    co: Card__owner | None = pbj.field(3, Card__owner)


def test_a_class_named_like_another_class_and_its_oneof():
    card = Card(owner=pbj.OneOf("bank", True), co=Card__owner(x=1))
    assert both_writers(card) == bytes.fromhex("0801 1a02 0801")
    assert pbj.decode(Card, bytes.fromhex("0801 1a02 0801")) == card
    card = Card(owner=pbj.OneOf("person", "ann"))
    assert both_writers(card) == bytes.fromhex("1203616e6e")
    assert pbj.encoded_size(Card__owner(x=300)) == 3


# ---------------------------------------------------------------- locals from field names

TS = ("Ts", [("seconds", 1, F.TYPE_INT64, None, None)])


def test_time_s_beside_time():
    data = descriptor_set([TS, ("Reading", [("time_s", 1, F.TYPE_INT64, None, None),
                                            ("time", 2, F.TYPE_MESSAGE, ".names.Ts", None)])])
    ns = pbj.load_descriptor_set(data)
    value = ns["names.Reading"](time_s=1234, time=ns["names.Ts"](seconds=5))
    expected = google_bytes(data, "names.Reading", '{"timeS": "1234", "time": {"seconds": "5"}}')
    assert both_writers(value) == expected
    back = pbj.decode(ns["names.Reading"], expected)
    assert back.time_s == 1234 and back.time.seconds == 5


def test_items_beside_items_more():
    data = descriptor_set([TS, ("Box", [("items", 1, F.TYPE_MESSAGE, ".names.Ts", None),
                                        ("items_more", 2, F.TYPE_INT32, None, F.LABEL_REPEATED),
                                        ("items_s", 3, F.TYPE_INT32, None, None),
                                        ("items_e", 4, F.TYPE_INT32, None, None)])])
    ns = pbj.load_descriptor_set(data)
    Box, Ts = ns["names.Box"], ns["names.Ts"]
    value = Box(items=Ts(seconds=7), items_more=(1, 2, 300), items_s=9, items_e=10)
    expected = google_bytes(data, "names.Box",
                            '{"items": {"seconds": "7"}, "itemsMore": [1, 2, 300], "itemsS": 9, "itemsE": 10}')
    assert both_writers(value) == expected
    assert pbj.decode(Box, expected) == value
    # a duplicate occurrence of the sub-message merges, beside the repeated field
    assert pbj.decode(Box, expected + bytes.fromhex("0a020808")).items == Ts(seconds=8)


#: every local and parameter name generated code uses, as field names
GENERATED_LOCALS = ["o", "v", "x", "k", "n", "e", "u", "ap", "rb", "mv", "pos", "data", "end", "depth",
                    "more", "group", "tag", "start", "unk", "exc", "f0", "f1", "f1_more", "t2", "o0", "_b",
                    "_l", "_s", "_z", "_r", "_q", "_m", "T_08", "TV_08", "size_Names", "parse_Names",
                    "DecodeError", "_locate", "_new", "Class_Names", "Slots_Names", "FIELDS_Names"]


def test_fields_named_like_generated_locals_and_globals():
    fields = [(name, i + 1, F.TYPE_INT32 if i % 2 else F.TYPE_STRING, None, None)
              for i, name in enumerate(GENERATED_LOCALS)]
    fields.append(("kids", 100, F.TYPE_MESSAGE, ".names.Names", F.LABEL_REPEATED))
    data = descriptor_set([("Names", fields)])
    ns = pbj.load_descriptor_set(data)
    Names = ns["names.Names"]
    values = {f.name: (i + 1 if i % 2 else f"s{i}") for i, f in enumerate(pbj.fields(Names)[:-1])}
    value = Names(**values, kids=(Names(**values),))
    js = "{" + ", ".join(f'"{f.json_name}": {v if isinstance(v, int) else chr(34) + v + chr(34)}'
                         for f, v in zip(pbj.fields(Names), values.values(), strict=False)) + "}"
    js = js[:-1] + ', "kids": [' + js + "]}"
    expected = google_bytes(data, "names.Names", js)
    assert both_writers(value) == expected
    assert pbj.decode(Names, expected) == value


def test_a_field_named_self():
    data = descriptor_set([("S", [("self", 1, F.TYPE_INT32, None, None)])])
    S = pbj.load_descriptor_set(data)["names.S"]
    assert both_writers(S(**{"self": 5})) == bytes.fromhex("0805")


# ---------------------------------------------------------------- non-ASCII names

def test_non_ascii_message_and_field_names():
    data = descriptor_set([("M²", [("ﬁ", 1, F.TYPE_INT64, None, None), ("M²", 2, F.TYPE_STRING, None, None),
                                   ("kid", 3, F.TYPE_MESSAGE, ".names.M²", None)]),
                           ("ﬁ", [("amount", 1, F.TYPE_INT64, None, None)])])
    ns = pbj.load_descriptor_set(data)
    M = ns["names.M²"]
    assert [(f.name, f.proto_name) for f in pbj.fields(M)] == [("fi", "ﬁ"), ("M2", "M²"), ("kid", "kid")]
    value = M(fi=7, M2="two", kid=M(fi=-1))
    expected = google_bytes(data, "names.M²", '{"ﬁ": "7", "M²": "two", "kid": {"ﬁ": "-1"}}')
    assert both_writers(value) == expected
    assert pbj.decode(M, expected) == value
    fi = ns["names.ﬁ"]
    assert pbj.decode(fi, both_writers(fi(amount=100))).amount == 100
    assert "def parse_M_(data" in pbj.source_of(M) and "def parse_fi(data" not in pbj.source_of(M)


def test_a_later_load_does_not_change_an_earlier_one():
    first = pbj.load_descriptor_set(descriptor_set([("fi", [("amount", 1, F.TYPE_INT64, None, None)])], "a"))
    second = pbj.load_descriptor_set(descriptor_set([("ﬁ", [("amount", 2, F.TYPE_SINT64, None, None)])], "b"))
    a, b = first["a.fi"], second["b.ﬁ"]
    pbj.decode(a, b"")
    assert pbj.decode(b, bytes.fromhex("10c801")).amount == 100
    assert pbj.decode(a, bytes.fromhex("0864")).amount == 100
    assert both_writers(a(amount=100)) == bytes.fromhex("0864")
    assert both_writers(b(amount=100)) == bytes.fromhex("10c801")


@pytest.mark.parametrize("name", ["1st", "a-b", "x y", "M\u00b2\u2044"])
def test_a_field_name_that_is_no_identifier_even_after_nfkc_is_refused(name):
    data = descriptor_set([("Odd", [(name, 1, F.TYPE_INT32, None, None)])])
    with pytest.raises(pbj.SchemaError, match="not an identifier"):
        pbj.load_descriptor_set(data, lazy=False)  # lazy=False: refused at the load, not at first use


def test_keywords_and_taken_names_get_underscores():
    data = descriptor_set([("Odd", [("from", 1, F.TYPE_INT32, None, None), ("fi", 2, F.TYPE_INT32, None, None),
                                    ("ﬁ", 3, F.TYPE_INT32, None, None)])])
    Odd = pbj.load_descriptor_set(data)["names.Odd"]
    assert [(f.name, f.proto_name) for f in pbj.fields(Odd)] == [("from_", "from"), ("fi", "fi"), ("fi_", "ﬁ")]
    value = Odd(from_=1, fi=2, fi_=3)
    assert both_writers(value) == bytes.fromhex("080110021803")
    assert pbj.decode(Odd, bytes.fromhex("080110021803")) == value


def test_generated_code_reaches_slots_whose_names_python_would_normalise():
    # a field and a oneof member whose attribute names are not NFKC-stable: the generated code
    # reads and stores the field through its slot, never as ``o.<name>`` in source (the
    # constructor is attrs' business; decoding builds objects without it)
    cls = type("Odd", (), {"__annotations__": {"ﬁ": int, "ch": "pbj.OneOf | None"},
                           "ﬁ": pbj.field(1, "int32"),
                           "ch": pbj.oneof(**{"ﬀ": (2, "int32"), "M²": (3, "string")})})
    Odd = pbj.message(cls)
    value = pbj.decode(Odd, bytes.fromhex("08051007"))
    assert getattr(value, "ﬁ") == 5 and value.ch == pbj.OneOf("ﬀ", 7)  # noqa: B009 (value.ﬁ is value.fi)
    assert both_writers(value) == bytes.fromhex("08051007")
    assert pbj.decode(Odd, bytes.fromhex("1a026869")).ch == pbj.OneOf("M²", "hi")
    source = pbj.source_of(Odd)
    assert "o.ﬁ" not in source and "set_attr" in source and "get_attr" in source


def test_names_with_line_breaks_stay_inside_comments():
    evil = "x\nraise SystemExit('injected')\n#"

    @pbj.message(full_name="evil.Leaf\nraise SystemExit('injected')")
    class Leaf:
        n: int = pbj.field(1, "int32", name=evil)

    @pbj.message(full_name="evil.Outer\u2028raise SystemExit('injected')")
    class Outer:
        leaf: Leaf | None = pbj.field(1, Leaf, name=evil)
        # (three names: two fields of one name are refused, as protoc refuses them)
        pick: pbj.OneOf | None = pbj.oneof(a=(2, "int32", {"name": evil + "a"}), b=(3, Leaf, {"name": evil + "b"}))

    value = Outer(leaf=Leaf(n=3), pick=pbj.OneOf("b", Leaf(n=4)))
    assert both_writers(value) == bytes.fromhex("0a020803 1a020804")
    assert pbj.decode(Outer, bytes.fromhex("0a020803 1a020804")) == value
    for cls in (Leaf, Outer):
        lines = pbj.source_of(cls).splitlines()
        assert not any(line.lstrip().startswith("raise SystemExit") for line in lines)
