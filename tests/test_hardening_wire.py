"""Issue 20, items 5-10 (the parser's wire rules, copy and pickle of loaded classes, the wkt
helpers, duplicate names in descriptor sets, ``_pbj_unknown``, ProtoJSON's foreign errors).

Every test runs under both engines (the ``engine`` fixture switches with ``pbj.use_engine``);
the wire cases compare with Google's protobuf (upb) on the same bytes.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

import pbj
from pbj import wellknown
from tests import oracle

HARDENING_PROTO = """
syntax = "proto2";
package hw;
enum Closed { ZERO = 0; ONE = 1; }
message M {
  map<string, Closed> m = 1;
  optional int32 seven = 7;
  optional bytes b = 15;
  extensions 100 to 200;
}
extend M {
  optional string ext150 = 150;
  optional Closed ce = 160;
  repeated Closed rce = 161;
}
"""


@pytest.fixture(params=["native", "python"])
def engine(request):
    """Run the test on each engine (native skipped when it is not built)."""
    before = pbj.engine()
    try:
        pbj.use_engine(request.param)
    except Exception:  # the extension is not built
        pytest.skip("the native engine is not built")
    try:
        yield request.param
    finally:
        pbj.use_engine(before)


@pytest.fixture(scope="module")
def hw(tmp_path_factory):
    """The pbj class ``hw.M`` and Google's class of the same schema."""
    _, data = oracle.protoc_sources(tmp_path_factory.mktemp("hw"), {"hw_hardening.proto": HARDENING_PROTO})
    return pbj.load_descriptor_set(data)["hw.M"], oracle.google_class("hw.M")


# ---------------------------------------------------------------- item 8: the wire rules


@pytest.mark.parametrize("hexdata", ["7a808080808000", "7a" + "80" * 9 + "00", "7aff8080808000"])
def test_length_prefix_longer_than_5_bytes_is_refused(engine, hw, hexdata):
    """"Encoding": a length prefix is an int32 varint; 6 or more bytes is refused, as upb does."""
    cls, google = hw
    data = bytes.fromhex(hexdata)
    with pytest.raises(pbj.DecodeError) as info:
        pbj.decode(cls, data)
    assert "longer than 5 bytes" in info.value.reason
    assert info.value.path == ["b"] and info.value.offset == 0
    with pytest.raises(Exception):  # noqa: B017 - upb's own DecodeError class
        google.FromString(data)


def test_length_prefix_above_int32_is_refused(engine, hw):
    data = bytes.fromhex("7a8080808008") + bytes(8)  # 2**31 in 5 bytes
    with pytest.raises(pbj.DecodeError) as info:
        pbj.decode(hw[0], data)
    assert "above the maximum 2147483647" in info.value.reason


def test_length_prefix_of_5_bytes_is_accepted(engine, hw):
    cls, google = hw
    data = bytes.fromhex("7a8080808000")  # 0 in 5 bytes: upb accepts it too
    assert pbj.decode(cls, data).b == b""
    assert google.FromString(data).b == b""


def test_padded_length_of_an_unknown_field_is_refused(engine, hw):
    # field 20, LEN, length 0 in 6 bytes: an unknown field is skipped with the same rule
    data = bytes.fromhex("a201808080808000")
    with pytest.raises(pbj.DecodeError) as info:
        pbj.decode(hw[0], data)
    assert "longer than 5 bytes" in info.value.reason


def test_closed_enum_non_member_in_a_map_entry_keeps_the_entry_whole(engine, hw):
    """A map entry is a message ("Maps"): a non-member value is an unknown field of the entry,
    so the entry is kept whole as an unknown field, even when a member value follows (upb)."""
    cls, google = hw
    data = bytes.fromhex("0a070a016110081001")  # key "a", value 8 (not a member), value 1
    m = pbj.decode(cls, data)
    assert dict(m.m) == {}
    assert m._pbj_unknown == data
    assert pbj.encode(m) == data and pbj.encode(m, reverse=True) == data
    g = google.FromString(data)
    assert dict(g.m) == {}
    # upb writes the entry again (key, value, then its unknown field): the same values
    assert google.FromString(pbj.encode(m)) == g


def test_closed_enum_member_after_member_still_lands_in_the_map(engine, hw):
    m = pbj.decode(hw[0], bytes.fromhex("0a070a016110001001"))
    assert dict(m.m) == {"a": 1} and m._pbj_unknown == b""


@pytest.mark.parametrize("hexdata, expected", [
    # extension 150 (a string) arriving as a varint, then unknown field 5: arrival order kept
    ("b009052807", "b009052807"),
    # closed-enum extension 160 with a non-member, then field 5
    ("800a082807", "800a082807"),
    # repeated closed enum 161: non-member, member, field 5 (the member is written first: an extension)
    ("880a08880a012807", "880a01880a082807"),
    # the same values packed: the non-member gets a varint field of its own
    ("8a0a0208012807", "880a01880a082807"),
    ("b0090528078a0a0108", "b009052807880a08"),
])
def test_unknown_fields_keep_arrival_order_around_extensions(engine, hw, hexdata, expected):
    cls, google = hw
    data = bytes.fromhex(hexdata)
    m = pbj.decode(cls, data)
    assert pbj.encode(m).hex() == expected
    assert pbj.encode(m, reverse=True).hex() == expected
    assert google.FromString(data).SerializeToString().hex() == expected


def test_field_number_0_in_an_unknown_group_is_refused(engine, hw):
    """Field numbers start at 1 ("Assigning Field Numbers"): pbj refuses field 0 inside an
    unknown group as it does at the top level; upb accepts it there (docs/security.md)."""
    cls, google = hw
    data = bytes.fromhex("2b00002c")
    with pytest.raises(pbj.DecodeError) as info:
        pbj.decode(cls, data)
    assert "field number 0" in info.value.reason and info.value.offset == 0
    assert google.FromString(data).SerializeToString() == data  # the documented difference
    with pytest.raises(pbj.DecodeError):
        pbj.decode(cls, bytes.fromhex("0005"))
    with pytest.raises(Exception):  # noqa: B017 - at the top level upb refuses it too
        google.FromString(bytes.fromhex("0005"))


# ---------------------------------------------------------------- item 9: _pbj_unknown is checked


@pbj.message
class Plain:
    x: int = pbj.field(1, "int32")


@pytest.mark.parametrize("value", ["x", 5, None, [16, 5]])
def test_unknown_keyword_refuses_what_is_not_bytes(engine, value):
    with pytest.raises(TypeError, match=r"Plain\._pbj_unknown: expected the bytes of unknown fields, got"):
        Plain(x=1, _pbj_unknown=value)


@pytest.mark.parametrize("hexdata, reason", [
    ("0001", "field number 0 is not allowed (at byte 0)"),
    ("10", "truncated input"),
    ("2a056162", "past the end"),
    ("1b0801", "group 3 has no end tag"),
    ("1c", "end-group tag of field 3 without its start-group tag"),
    ("1b2c1c", "end-group tag of field 5 without its start-group tag (at byte 1)"),
    ("0f", "wire type 7"),
    ("0a808080808000", "longer than 5 bytes"),
])
def test_unknown_keyword_refuses_bytes_that_are_not_whole_fields(engine, hexdata, reason):
    with pytest.raises(ValueError, match=r"Plain\._pbj_unknown: not a run of whole fields") as info:
        Plain(x=1, _pbj_unknown=bytes.fromhex(hexdata))
    assert reason in str(info.value)


@pytest.mark.parametrize("value", [b"\x10\x05", bytearray(b"\x10\x05"), memoryview(b"\x10\x05"), b"\x1b\x2b\x2c\x1c"])
def test_unknown_keyword_keeps_whole_fields(engine, value):
    m = Plain(x=1, _pbj_unknown=value)
    assert type(m._pbj_unknown) is bytes and m._pbj_unknown == bytes(value)
    assert pbj.encode(m) == b"\x08\x01" + bytes(value) == pbj.encode(m, reverse=True)
    assert pbj.replace(m, x=2)._pbj_unknown == bytes(value)
    assert pbj.decode(Plain, pbj.encode(m)) == m


# ---------------------------------------------------------------- item 5: copy and pickle keep the class


def test_copy_and_pickle_give_the_class_of_the_load_they_came_from(engine, tmp_path):
    import copy
    import pickle
    _, data = oracle.protoc_sources(tmp_path, {"hw_money.proto": """
        syntax = "proto2";
        package hw.money;
        enum Kind { CASH = 0; CARD = 1; }
        message Money { optional int64 cents = 1; optional Kind kind = 2; repeated Money parts = 3;
                        extensions 100 to 110; }
        extend Money { optional string note = 100; }
    """})
    first, second = pbj.load_descriptor_set(data), pbj.load_descriptor_set(data)
    Money, Money2, Kind = first["hw.money.Money"], second["hw.money.Money"], first["hw.money.Kind"]
    assert Money is not Money2
    m = pbj.decode(Money, bytes.fromhex("0805 1001 1a02 0807 a20602 6869 f80601"))  # ext "hi", unknown 111
    assert pbj.get_extension(m, first.extension("hw.money.note")) == "hi"
    copies = {"copy": copy.copy(m), "deepcopy": copy.deepcopy(m), "pickle": pickle.loads(pickle.dumps(m))}
    for how, c in copies.items():
        assert type(c) is Money and isinstance(c, Money) and not isinstance(c, Money2), how
        assert c == m and c is not m, how
        assert type(c.parts[0]) is Money, how
        assert c._pbj_unknown == bytes.fromhex("f80601"), how
        assert pbj.encode(c) == pbj.encode(m) == pbj.encode(c, reverse=True), how
    k = pickle.loads(pickle.dumps(Kind.CARD))
    assert type(k) is Kind and k is Kind.CARD
    m2 = Money2(cents=1)
    assert type(pickle.loads(pickle.dumps(m2))) is Money2 and type(copy.copy(m2)) is Money2
    assert Money.__pbj_load__ != Money2.__pbj_load__  # each load draws its own token


# ---------------------------------------------------------------- item 6: the wkt helpers refuse a str for a sequence


@pytest.mark.parametrize("bad", ["name", b"name", bytearray(b"ab"), memoryview(b"ab"), {"a": 1}, 5, None])
def test_field_mask_refuses_what_is_not_a_sequence_of_paths(engine, bad):
    from pbj import wkt
    with pytest.raises(TypeError, match=rf"field_mask: paths must be a sequence \(a list or tuple\), "
                                        rf"not {type(bad).__name__}"):
        wkt.field_mask(bad)


@pytest.mark.parametrize("bad", ["abc", b"abc", {"a": 1}, 5, None])
def test_list_value_from_list_refuses_what_is_not_a_sequence(engine, bad):
    from pbj import wkt
    with pytest.raises(TypeError, match=rf"list_value_from_list: items must be a sequence \(a list or tuple\), "
                                        rf"not {type(bad).__name__}"):
        wkt.list_value_from_list(bad)


def test_wkt_sequence_helpers_still_take_sequences(engine):
    from pbj import wkt
    assert wkt.field_mask_paths(wkt.field_mask(["name"])) == ("name",)
    assert wkt.field_mask_paths(wkt.field_mask(("a.b", "c"))) == ("a.b", "c")
    assert wkt.field_mask_paths(wkt.field_mask(p for p in ["x", "y"])) == ("x", "y")
    assert wkt.list_value_to_list(wkt.list_value_from_list(["abc", {"a": 1}, [1]])) == ["abc", {"a": 1.0}, [1.0]]
    assert pbj.encode(wkt.list_value_from_list(["ab"])) == bytes.fromhex("0a041a026162")


@pytest.mark.parametrize("helper", ["duration_from_text", "timestamp_from_text", "field_mask_from_text"])
@pytest.mark.parametrize("bad", [b"1s", None, 5, ["a"]])
def test_wkt_text_helpers_refuse_what_is_not_a_str(engine, helper, bad):
    from pbj import wkt
    with pytest.raises(TypeError, match=rf"{helper}: text must be a str, not {type(bad).__name__}"):
        getattr(wkt, helper)(bad)


# ---------------------------------------------------------------- item 10: ProtoJSON raises JSONError only


@pbj.message
class Numbers:
    d: float = pbj.field(1, "double")
    f: float = pbj.field(2, "float")
    i: int = pbj.field(3, "int64")
    u: int = pbj.field(4, "uint32")
    fm: wellknown.FieldMask | None = pbj.field(5, wellknown.FieldMask)
    v: wellknown.Value | None = pbj.field(6, wellknown.Value)
    dv: wellknown.DoubleValue | None = pbj.field(7, wellknown.DoubleValue)
    r: tuple[float, ...] = pbj.field(8, "double", repeated=True)


@pytest.mark.parametrize("text, path, reason", [
    ('{"d": 2.5e99999999999999999999}', ["d"], "out of range for double"),
    ('{"d": -2.5e99999999999999999999}', ["d"], "out of range for double"),
    ('{"f": 2.5e99999999999999999999}', ["f"], "out of range for float"),
    ('{"i": 2.5e99999999999999999999}', ["i"], "out of range for int64"),
    ('{"i": "2.5e99999999999999999999"}', ["i"], "out of range for int64"),
    ('{"u": 1e-99999999999999999999}', ["u"], "expected an integer for uint32"),
    ('{"v": 2.5e99999999999999999999}', ["v"], "out of range for Value.number_value"),
    ('{"dv": 2.5e99999999999999999999}', ["dv"], "out of range for double"),
    ('{"r": [1, 2.5e99999999999999999999]}', ["r", 1], "out of range for double"),
    ('{"fm": "a\\udc00b"}', ["fm"], "FieldMask path holds a lone UTF-16 surrogate"),
    ('{"fm": "x,\\ud800"}', ["fm"], "FieldMask path holds a lone UTF-16 surrogate"),
])
def test_from_json_raises_json_error_with_the_path(engine, text, path, reason):
    with pytest.raises(pbj.JSONError) as info:
        pbj.from_json(Numbers, text)
    assert info.value.path == path and reason in info.value.reason


@pytest.mark.parametrize("text, expected", [
    ('{"d": 1e-99999999999999999999}', 0.0),    # rounds to 0 as a double, as 1e-400 does
    ('{"d": 0e99999999999999999999}', 0.0),
    ('{"d": 1e-400}', 0.0),
])
def test_from_json_tiny_exponents_read_as_zero(engine, text, expected):
    assert pbj.from_json(Numbers, text).d == expected


@pytest.mark.parametrize("value", [Decimal("sNaN"), Decimal("-sNaN"), Decimal("NaN")])
@pytest.mark.parametrize("key", ["d", "f", "dv", "v", "r"])
def test_from_dict_refuses_a_decimal_nan(engine, key, value):
    d = {key: [value] if key == "r" else value}
    with pytest.raises(pbj.JSONError) as info:
        pbj.from_dict(Numbers, d)
    assert info.value.path[0] == key


# ---------------------------------------------------------------- item 7: names protoc refuses


def _name_set(syntax: str, fields: list[tuple[str, str | None]], *, oneof: bool = False,
              legacy_json: bool = False, legacy_option: bool = False) -> bytes:
    """A descriptor set of one message ``M`` with int32 fields 1, 2 … of these names and json_names."""
    from google.protobuf import descriptor_pb2
    f = descriptor_pb2.FileDescriptorProto(name="names.proto", syntax=syntax)
    if syntax == "editions":
        f.edition = descriptor_pb2.EDITION_2023
    m = f.message_type.add(name="M")
    if legacy_json:
        m.options.features.json_format = descriptor_pb2.FeatureSet.LEGACY_BEST_EFFORT
    if legacy_option:
        m.options.deprecated_legacy_json_field_conflicts = True
    if oneof:
        m.oneof_decl.add(name="o")
    for number, (name, json_name) in enumerate(fields, 1):
        fd = m.field.add(name=name, number=number, type=5, label=1)
        if json_name is not None:
            fd.json_name = json_name
        if oneof:
            fd.oneof_index = 0
    return descriptor_pb2.FileDescriptorSet(file=[f]).SerializeToString()


#: (syntax, fields, the SchemaError's text or None when protoc accepts it): each checked with protoc
NAME_CASES = {
    "same name": ("proto3", [("a", None), ("a", None)], "fields 1 and 2 are both named 'a'"),
    "same name proto2": ("proto2", [("a", None), ("a", None)], "fields 1 and 2 are both named 'a'"),
    "default json proto3": ("proto3", [("foo_bar", None), ("fooBar", None)],
                            "the default JSON name of field 'fooBar' ('fooBar') conflicts with the default JSON "
                            "name of field 'foo_bar'"),
    "default json editions": ("editions", [("foo_bar", None), ("fooBar", None)], "conflicts with the default"),
    "default json hidden by a custom one": ("proto3", [("foo_bar", "q"), ("fooBar", None)],
                                            "the default JSON name of field 'fooBar'"),
    "custom json proto3": ("proto3", [("a", "x"), ("b", "x")],
                           "the custom JSON name of field 'b' ('x') conflicts with the custom JSON name of field 'a'"),
    "custom json proto2": ("proto2", [("a", "x"), ("b", "x")], "the custom JSON name of field 'b' ('x')"),
    "custom vs default proto3": ("proto3", [("a", "b"), ("b", None)],
                                 "the default JSON name of field 'b' ('b') conflicts with the custom JSON name of "
                                 "field 'a'"),
    "extension-like json name": ("proto3", [("a", "[x]")], "JSON names may not start with '[' and end with ']'"),
    "default json proto2 (a warning)": ("proto2", [("foo_bar", None), ("fooBar", None)], None),
    "custom vs default proto2 (a warning)": ("proto2", [("a", "b"), ("b", None)], None),
    "names differing in case": ("proto3", [("Foo", None), ("foo", None)], None),
    "json names differing in case": ("proto3", [("a", "X"), ("b", "x")], None),
    "json name of another field's name": ("proto3", [("a", "b_c"), ("b_c", None)], None),
}


@pytest.mark.parametrize("oneof", [False, True], ids=["fields", "oneof members"])
@pytest.mark.parametrize("case", list(NAME_CASES))
def test_loader_refuses_the_names_protoc_refuses(engine, case, oneof):
    syntax, fields, error = NAME_CASES[case]
    data = _name_set(syntax, fields, oneof=oneof)
    if error is None:
        assert len(pbj.load_descriptor_set(data, lazy=False)) == 1
        return
    with pytest.raises(pbj.SchemaError) as info:
        pbj.load_descriptor_set(data, lazy=False)  # lazy=False: refused at the load, not at the class's first use
    assert error in str(info.value) and info.value.cls_name == "M"
    names = {n for n, _ in fields}
    assert all(repr(n) in str(info.value) for n in names)  # both fields are named


def test_the_name_cases_follow_protoc(tmp_path):
    """Each case above as a .proto file: protoc refuses exactly the ones pbj refuses (same-name cases
    cannot be written as .proto text: protoc's parser refuses them, "already defined")."""
    from grpc_tools import protoc
    for i, (case, (syntax, fields, error)) in enumerate(NAME_CASES.items()):
        if case.startswith("same name"):
            continue
        head = 'edition = "2023";' if syntax == "editions" else f'syntax = "{syntax}";'
        label = "optional " if syntax == "proto2" else ""
        body = " ".join(f"{label}int32 {n} = {k}" + (f' [json_name = "{j}"]' if j is not None else "") + ";"
                        for k, (n, j) in enumerate(fields, 1))
        (tmp_path / f"c{i}.proto").write_text(f"{head} message M {{ {body} }}\n")
        rc = protoc.main(["protoc", "--experimental_editions", f"-I{tmp_path}",
                          f"--descriptor_set_out={tmp_path / f'c{i}.binpb'}", str(tmp_path / f"c{i}.proto")])
        assert (rc != 0) == (error is not None), case


@pytest.mark.parametrize("option", ["legacy_json", "legacy_option"])
def test_legacy_json_format_loads_default_conflicts(engine, option):
    data = _name_set("editions" if option == "legacy_json" else "proto3", [("foo_bar", None), ("fooBar", None)],
                     **{option: True})
    assert len(pbj.load_descriptor_set(data, lazy=False)) == 1
    custom = _name_set("editions" if option == "legacy_json" else "proto3", [("a", "x"), ("b", "x")],
                       **{option: True})
    if option == "legacy_json":  # two custom names: refused whatever json_format says
        with pytest.raises(pbj.SchemaError, match="the custom JSON name of field 'b'"):
            pbj.load_descriptor_set(custom, lazy=False)
    else:  # deprecated_legacy_json_field_conflicts skips every JSON check (protoc does)
        assert len(pbj.load_descriptor_set(custom, lazy=False)) == 1


def test_a_shared_json_name_is_refused_by_protojson_not_lost(engine):
    """protoc only warns (proto2): the class loads, binary and text keep both fields, ProtoJSON
    refuses what it cannot tell apart instead of dropping a value."""
    cls = pbj.load_descriptor_set(_name_set("proto2", [("foo_bar", None), ("fooBar", None)]))["M"]
    m = cls(foo_bar=1, fooBar=2)
    assert pbj.decode(cls, pbj.encode(m)) == m
    assert pbj.from_text(cls, pbj.to_text(m)) == m
    with pytest.raises(pbj.EncodeError, match=r"share the JSON name 'fooBar'.*proto_names=True"):
        pbj.to_json(m)
    text = pbj.to_json(m, proto_names=True)
    assert text == '{"foo_bar":1,"fooBar":2}' and pbj.from_json(cls, text) == m


def test_a_json_name_wins_over_another_fields_proto_name(engine):
    cls = pbj.load_descriptor_set(_name_set("proto3", [("a", "b_c"), ("b_c", None)]))["M"]
    m = cls(a=5, b_c=6)
    assert pbj.to_json(m) == '{"b_c":5,"bC":6}'
    assert pbj.from_json(cls, '{"b_c":5,"bC":6}') == m  # as upb reads it: "b_c" is a's JSON name


def test_hand_declared_classes_follow_the_same_rules(engine):
    with pytest.raises(pbj.SchemaError, match="fields 1 and 2 are both named 'x'"):
        @pbj.message
        class TwoX:
            a: int = pbj.field(1, "int32", name="x")
            b: int = pbj.field(2, "int32", name="x")
    with pytest.raises(pbj.SchemaError, match="the custom JSON name of field 'b' \\('q'\\) conflicts"):
        @pbj.message
        class TwoQ:
            a: int = pbj.field(1, "int32", json_name="q")
            b: int = pbj.field(2, "int32", json_name="q")
    with pytest.raises(pbj.SchemaError, match="the default JSON name of field 'fooBar'"):
        @pbj.message
        class Camel:
            foo_bar: int = pbj.field(1, "int32")
            fooBar: int = pbj.field(2, "int32")

    @pbj.message(syntax="proto2")
    class Legacy:  # a warning of protoc's in proto2: declared, ProtoJSON refuses the shared name
        foo_bar: int | None = pbj.field(1, "int32", optional=True)
        fooBar: int | None = pbj.field(2, "int32", optional=True)
    with pytest.raises(pbj.EncodeError):
        pbj.to_json(Legacy(foo_bar=1))


@pytest.mark.parametrize("prefix", [b"type.googleapis.com", None, 5])
def test_pack_refuses_a_type_url_prefix_that_is_not_a_str(engine, prefix):
    from pbj import wkt
    with pytest.raises(TypeError, match=rf"pack: type_url_prefix must be a str, not {type(prefix).__name__}"):
        wkt.pack(wellknown.Duration(), type_url_prefix=prefix)


def test_proto_names_output_of_a_json_name_equal_to_another_proto_name_is_refused_not_lost(engine):
    cls = pbj.load_descriptor_set(_name_set("proto3", [("a", "b_c"), ("b_c", None)]))["M"]
    text = pbj.to_json(cls(a=5, b_c=6), proto_names=True)
    assert text == '{"a":5,"b_c":6}'
    with pytest.raises(pbj.JSONError, match="field 'a' is given twice") as info:
        pbj.from_json(cls, text)
    assert info.value.path == ["b_c"]


def test_pickles_from_another_process_resolve_to_a_live_load_when_the_last_load_has_gone(engine, tmp_path):
    """A pickle from another process names no load of this one: it resolves to the last load
    still alive, even when a later load of the same schema has been garbage-collected."""
    import gc
    import pickle
    import subprocess
    import sys
    _, data = oracle.protoc_sources(tmp_path, {"hw_gone.proto": """
        syntax = "proto3";
        package hw.gone;
        message Outer { message Inner { int32 x = 1; enum E { A = 0; B = 1; } E e = 2; } Inner inner = 1; }
    """})
    (tmp_path / "set.binpb").write_bytes(data)
    code = ("import pbj, pickle, sys\n"
            "ns = pbj.load_descriptor_set(open(sys.argv[1], 'rb').read())\n"
            "Inner = ns['hw.gone.Outer.Inner']\n"
            "sys.stdout.buffer.write(pickle.dumps(ns['hw.gone.Outer'](inner=Inner(x=9, e=Inner.E.B))))\n")
    blob = subprocess.run([sys.executable, "-c", code, str(tmp_path / "set.binpb")], capture_output=True,
                          check=True, timeout=120, ).stdout
    first = pbj.load_descriptor_set(data)
    second = pbj.load_descriptor_set(data)
    Outer = first["hw.gone.Outer"]
    assert type(pickle.loads(blob)) is second["hw.gone.Outer"]
    del second
    gc.collect()
    m = pickle.loads(blob)  # was LookupError: the last load had gone, the first one lives
    assert type(m) is Outer and type(m.inner) is first["hw.gone.Outer.Inner"]
    assert m.inner.x == 9 and m.inner.e is first["hw.gone.Outer.Inner.E"].B
    assert pickle.loads(pickle.dumps(Outer)) is Outer  # the class itself pickles by name


@pbj.message
class Known:
    x: int = pbj.field(1, "int32")
    s: str = pbj.field(2, "string")
    r: tuple[int, ...] = pbj.field(3, "int32", repeated=True)
    sub: Plain | None = pbj.field(4, Plain)


@pytest.mark.parametrize("hexdata, field", [("0807", "x"), ("120161", "s"), ("1807", "r"), ("1a0107", "r"),
                                            ("2200", "sub"), ("30010807", "x")])
def test_unknown_keyword_refuses_a_field_the_parser_reads(engine, hexdata, field):
    """A tag the class's parser reads as one of its fields is not an unknown field: kept, the
    message would hold one value and decode to another (x=5 encoded, then x=7 read back)."""
    with pytest.raises(ValueError, match=rf"Known\._pbj_unknown: holds field {field} \(number"):
        Known(x=5, _pbj_unknown=bytes.fromhex(hexdata))


@pytest.mark.parametrize("hexdata", ["0d07000000", "0a0107", "1b1c", "2807", "2b2c", "2507000000", "1007"])
def test_unknown_keyword_keeps_known_numbers_of_another_wire_type(engine, hexdata):
    """A known field number with a wire type its field does not read is what the parser keeps."""
    data = bytes.fromhex(hexdata)
    m = Known(x=5, _pbj_unknown=data)
    assert m._pbj_unknown == data
    assert pbj.decode(Known, pbj.encode(m)) == m
    assert pbj.encode(m, reverse=True) == pbj.encode(m) == b"\x08\x05" + data


def test_unknown_keyword_keeps_what_the_parser_keeps_for_closed_enums_and_maps(engine, hw):
    """A closed enum's non-member and a map entry holding one keep their field's own tag."""
    cls, _ = hw
    m = pbj.decode(cls, bytes.fromhex("0a070a016110081001" "3805"))  # the entry of item 8, seven = 5
    assert m._pbj_unknown == bytes.fromhex("0a070a0161100810 01".replace(" ", ""))
    rebuilt = cls(seven=5, _pbj_unknown=m._pbj_unknown)
    assert rebuilt == m and pbj.decode(cls, pbj.encode(rebuilt)) == m


def test_unpickling_reads_each_value_by_field_number_with_another_version_of_the_schema(engine):
    """A pickle made with another version of the schema (another process): values are read by
    field number, as Google's runtimes read their pickles. A field this schema knows and the
    pickling one did not is read into it (was: kept as an unknown field the message disagreed
    with, or a ValueError from zip when the field count differed); fields declared in another
    order keep their values (was: assigned by position, silently swapped)."""
    import gc
    import pickle

    from google.protobuf import descriptor_pb2

    def schema(*fields):  # hw_evolve.proto: message Item { int32 <name> = <number>; ... }
        fds = descriptor_pb2.FileDescriptorSet()
        fd = fds.file.add(name="hw_evolve.proto", package="hw.evolve", syntax="proto3")
        item = fd.message_type.add(name="Item")
        for name, number in fields:
            item.field.add(name=name, number=number, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
                           label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL, json_name=name)
        return fds.SerializeToString()

    def pickled_with(data, *fields):
        old = pbj.load_descriptor_set(schema(*fields))["hw.evolve.Item"]
        blob = pickle.dumps(pbj.decode(old, data))
        del old
        gc.collect()  # another process: the pickling load is not alive here
        return blob

    one = pickled_with(bytes.fromhex("0801 1007 1805"), ("a", 1))
    two = pickled_with(bytes.fromhex("0801 1007"), ("a", 1), ("b", 2))
    new_item = pbj.load_descriptor_set(schema(("b", 2), ("a", 1)))["hw.evolve.Item"]
    m = pickle.loads(one)
    assert type(m) is new_item
    assert (m.a, m.b, m._pbj_unknown) == (1, 7, bytes.fromhex("1805"))
    m = pickle.loads(two)
    assert (m.a, m.b, m._pbj_unknown) == (1, 7, b"")


def test_pickles_of_values_from_earlier_versions_still_load(engine, hw):
    """The earlier pickle form (stored values by attribute order) is still read."""
    import pickle

    from pbj.loader import _restore_message
    cls = hw[0]
    m = pbj.decode(cls, bytes.fromhex("3805 f80601"))
    old_form = pickle.dumps(_restore_message)  # the target pickles by name, as old pickles name it
    assert pickle.loads(old_form) is _restore_message
    values = tuple(getattr(m, name) for name in cls.__pbj_info__.attr_order)
    c = _restore_message(cls.__pbj_info__.full_name, values, m._pbj_unknown, (), cls.__pbj_load__)
    assert type(c) is cls and c == m and c._pbj_unknown == bytes.fromhex("f80601")


@pbj.message
class EnumByName:
    e: tuple = pbj.field(2, "ColorForEnumByName", repeated=True)


class ColorForEnumByName(__import__("enum").IntEnum):
    RED = 0


def test_a_refused_forward_reference_to_an_enum_stays_refused(engine):
    """The SchemaError of a forward reference naming an enum was raised once: the field was left
    resolved, so the second use built and encoded the class the rule refuses."""
    for _ in range(2):
        with pytest.raises(pbj.SchemaError, match="must name a message class"):
            EnumByName(e=[0])


def test_any_resolves_an_earlier_load_alive_when_the_last_load_has_gone(tmp_path):
    """``Any`` resolution (ProtoJSON, text format) finds the last load of a name that is still alive,
    as unpickling does: a later load that was freed must not hide an earlier one still in use."""
    import gc

    from pbj.protojson.registry import resolve_any

    _, data = oracle.protoc_sources(tmp_path, {"anyload.proto": 'syntax = "proto3"; package anyload.v1; '
                                                                 "message Held { int32 a = 1; }\n"})
    kept = pbj.load_descriptor_set(data)["anyload.v1.Held"]
    later = pbj.load_descriptor_set(data)
    assert resolve_any("type.googleapis.com/anyload.v1.Held") is later["anyload.v1.Held"]
    del later
    gc.collect()
    assert resolve_any("type.googleapis.com/anyload.v1.Held") is kept
    any_json = {"@type": "type.googleapis.com/anyload.v1.Held", "a": 5}
    from pbj import wkt
    assert wkt.unpack(pbj.from_dict(wellknown.Any, any_json), kept) == kept(a=5)
