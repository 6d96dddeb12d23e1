"""The text format's rules one by one: pbj.to_text output, pbj.from_text input, every error kind.

Expected texts are what Google's C++ printer writes (``protoc --decode`` of the
same bytes gives them, see ``tests/test_text_differential.py``); expected
values are what protobuf.dev "Text Format Language Specification" says the
input means.
"""

from __future__ import annotations

import enum
import math

import pytest

import pbj
from pbj import conformance
from pbj.testing import unchecked
from pbj.wellknown import Any, Timestamp

P2 = "protobuf_test_messages.proto2.TestAllTypesProto2"
P3 = "protobuf_test_messages.proto3.TestAllTypesProto3"


class Color(enum.IntEnum):
    RED = 0
    GREEN = 1
    BLUE = 2


@pbj.message(full_name="tt.Inner")
class Inner:
    s: str = pbj.field(1, "string")
    n: int = pbj.field(2, "int32")


@pbj.message(full_name="tt.Outer")
class Outer:
    i32: int = pbj.field(1, "int32")
    u64: int = pbj.field(2, "uint64")
    s64: int = pbj.field(3, "sint64")
    f: float = pbj.field(4, "float")
    d: float = pbj.field(5, "double")
    b: bool = pbj.field(6, "bool")
    s: str = pbj.field(7, "string")
    raw: bytes = pbj.field(8, "bytes")
    color: Color = pbj.field(9, Color)
    inner: Inner | None = pbj.field(10, Inner)
    nums: tuple[int, ...] = pbj.field(11, "int32", repeated=True)
    inners: tuple[Inner, ...] = pbj.field(12, Inner, repeated=True)
    names: pbj.FrozenMap = pbj.map_field(13, "string", "int32")
    by_id: pbj.FrozenMap = pbj.map_field(14, "int64", Inner)
    choice: pbj.OneOf | None = pbj.oneof(word=(20, "string"), number=(15, "int64"))
    maybe: int | None = pbj.field(16, "int32", optional=True)
    fixed: int = pbj.field(17, "fixed32")
    colors: tuple[Color, ...] = pbj.field(18, Color, repeated=True)
    stamp: Timestamp | None = pbj.field(19, Timestamp)
    anything: Any | None = pbj.field(21, Any)


def _p3():
    return conformance.schema()[P3]


def _p2():
    return conformance.schema()[P2]


# ---------------------------------------------------------------- printing

def test_layout_field_order_and_nesting():
    obj = Outer(i32=-5, inner=Inner(s="hi"), nums=(1, 2), inners=(Inner(), Inner(n=3)), b=True)
    assert pbj.to_text(obj) == (
        "i32: -5\n"
        "b: true\n"
        "inner {\n"
        '  s: "hi"\n'
        "}\n"
        "nums: 1\n"
        "nums: 2\n"
        "inners {\n"
        "}\n"
        "inners {\n"
        "  n: 3\n"
        "}\n")
    assert pbj.to_text(obj, one_line=True) == (
        'i32: -5 b: true inner { s: "hi" } nums: 1 nums: 2 inners { } inners { n: 3 }')
    assert pbj.to_text(Outer()) == ""
    assert pbj.to_text(Outer(), one_line=True) == ""


def test_presence():
    # implicit presence: zero values are absent, but -0.0 has bits set; explicit presence: a set zero is written
    assert pbj.to_text(Outer(i32=0, f=0.0, d=-0.0, s="", maybe=0)) == "d: -0\nmaybe: 0\n"
    assert pbj.to_text(Outer(d=math.nan)) == "d: nan\n"
    assert pbj.to_text(Outer(choice=pbj.OneOf("number", 0))) == "number: 0\n"


def test_oneof_members_and_fields_by_number():
    # "number" is field 15, "word" field 20: each is written where its number puts it
    obj = Outer(maybe=1, fixed=2, choice=pbj.OneOf("number", 7))
    assert pbj.to_text(obj).splitlines() == ["number: 7", "maybe: 1", "fixed: 2"]
    obj = Outer(maybe=1, fixed=2, choice=pbj.OneOf("word", "w"), anything=Any())
    assert pbj.to_text(obj).splitlines() == ["maybe: 1", "fixed: 2", 'word: "w"', "anything {", "}"]


@pytest.mark.parametrize("value, text", [
    (0.1, "0.1"), (-0.0, "-0"), (1e100, "1e+100"), (4294967296.0, "4294967296"), (1 / 3, "0.33333333333333331"),
    (5e-324, "4.94065645841247e-324"), (math.inf, "inf"), (-math.inf, "-inf"), (-math.nan, "nan"),
    (123456789012345680.0, "1.2345678901234568e+17"), (100.0, "100"),
])
def test_double_as_cpp(value, text):
    assert pbj.to_text(Outer(d=value)) == f"d: {text}\n"


@pytest.mark.parametrize("value, text", [
    (4294967296.0, "4.2949673e+09"), (3.3, "3.3"), (3.4028234663852886e38, "3.40282347e+38"),
    (1e-45, "1.40129846e-45"), (1.1754943508222875e-38, "1.17549435e-38"), (9.8e-39, "9.80000043e-39"),
    (0.1, "0.1"), (16777217.0, "16777216"), (1.5, "1.5"),
])
def test_float_as_cpp(value, text):
    assert pbj.to_text(Outer(f=value)) == f"f: {text}\n"


def test_strings_and_bytes_are_c_escaped():
    obj = Outer(s="h\u00e9\x00'\"\\\t\n\r\x7f\U0001f600", raw=bytes(range(0, 256, 51)) + b"\n")
    assert pbj.to_text(obj) == ('s: "h\\303\\251\\000\\\'\\"\\\\\\t\\n\\r\\177\\360\\237\\230\\200"\n'
                                'raw: "\\0003f\\231\\314\\377\\n"\n')
    assert pbj.to_text(obj, utf8=True).splitlines()[0] == 's: "h\u00e9\\000\\\'\\"\\\\\\t\\n\\r\\177\U0001f600"'


def test_maps_sorted_by_key_with_key_and_value():
    obj = Outer(names={"b": 0, "a": 2}, by_id={5: Inner(), -1: Inner(n=1)})
    assert pbj.to_text(obj) == (
        'names {\n  key: "a"\n  value: 2\n}\n'
        'names {\n  key: "b"\n  value: 0\n}\n'
        "by_id {\n  key: -1\n  value {\n    n: 1\n  }\n}\n"
        "by_id {\n  key: 5\n  value {\n  }\n}\n")


def test_enums_by_name_or_number():
    assert pbj.to_text(Outer(color=Color.BLUE, colors=(Color.RED, 7))) == "color: BLUE\ncolors: RED\ncolors: 7\n"


def test_group_like_fields_by_type_name():
    cls = _p2()
    value = pbj.decode(cls, bytes.fromhex("cb0cd00c01cc0c"))  # Data { group_int32: 1 }
    assert pbj.to_text(value) == "Data {\n  group_int32: 1\n}\n"
    ed = conformance._editions()["protobuf_test_messages.editions.TestAllTypesEdition2023"]
    g = ed.GroupLikeType(group_int32=3)
    assert pbj.to_text(ed(groupliketype=g, delimited_field=g)) == (
        "GroupLikeType {\n  group_int32: 3\n}\ndelimited_field {\n  group_int32: 3\n}\n")


def test_any_expanded_or_not():
    inner = Timestamp(seconds=5)
    obj = Outer(anything=Any(type_url="type.googleapis.com/google.protobuf.Timestamp", value=pbj.encode(inner)))
    assert pbj.to_text(obj) == (
        "anything {\n  [type.googleapis.com/google.protobuf.Timestamp] {\n    seconds: 5\n  }\n}\n")
    assert pbj.to_text(obj, expand_any=False) == (
        'anything {\n  type_url: "type.googleapis.com/google.protobuf.Timestamp"\n  value: "\\010\\005"\n}\n')
    unknown = Outer(anything=Any(type_url="type.googleapis.com/no.Such", value=b"\x08\x05"))
    assert "type_url" in pbj.to_text(unknown)


def test_unknown_fields_on_request():
    # Recommended.Proto3.ProtobufInput.RepeatedUnknownFields_Print.TextFormatOutput
    value = pbj.decode(_p3(), bytes.fromhex("e33e08c102e43e983f01983f02983f03"))
    assert pbj.to_text(value) == ""
    assert pbj.to_text(value, print_unknown_fields=True) == "1004 {\n  1: 321\n}\n1011: 1\n1011: 2\n1011: 3\n"
    value = pbj.decode(_p3(), bytes.fromhex("c83e7bd23e0568656c6c6ff03e01d93e0100000000000000dd3e02000000da3e00"))
    assert pbj.to_text(value, print_unknown_fields=True) == (
        '1001: 123\n1002: "hello"\n1006: 1\n1003: 0x0000000000000001\n1003: 0x00000002\n1003: ""\n')


def test_extensions_by_name():
    ns = conformance.schema()
    value = pbj.decode(_p2(), bytes.fromhex("c0072a") + bytes.fromhex("cb07d00701cc07"))
    assert pbj.unknown_fields(value) == b""  # the load registered them: decoded as extensions
    assert pbj.get_extension(value, ns.extension("protobuf_test_messages.proto2.extension_int32")) == 42
    assert pbj.to_text(value) == pbj.to_text(value, extensions=ns) == (
        "[protobuf_test_messages.proto2.extension_int32]: 42\n"
        "[protobuf_test_messages.proto2.groupfield] {\n  group_int32: 1\n}\n")


@pytest.mark.parametrize("values, path", [
    # built without the constructor's checks (which refuse these values first), to test the printer's own
    (lambda: {"i32": "1"}, "$.i32"),
    (lambda: {"i32": 2**31}, "$.i32"),
    (lambda: {"nums": (1, "x")}, "$.nums[1]"),
    (lambda: {"inner": unchecked(Inner, n=2**40)}, "$.inner.n"),
    (lambda: {"by_id": pbj.FrozenMap({3: unchecked(Inner, s=1)})}, "$.by_id[3].s"),
    (lambda: {"s": "\ud800"}, "$.s"),
    (lambda: {"f": 1e300}, "$.f"),
    (lambda: {"inner": "no"}, "$.inner"),
])
def test_bad_values_raise_encode_error_with_path(values, path):
    with pytest.raises(pbj.EncodeError) as info:
        pbj.to_text(unchecked(Outer, **values()))
    assert pbj.errors.format_path(info.value.path) == path


def test_to_text_needs_a_message():
    with pytest.raises(TypeError):
        pbj.to_text(Outer)
    with pytest.raises(TypeError):
        pbj.to_text({"a": 1})


# ---------------------------------------------------------------- parsing: what each form means

@pytest.mark.parametrize("text, expected", [
    # integers: decimal, octal, hex, signs (spec "Numeric Literals", "Value Types")
    ("i32: 17", Outer(i32=17)), ("i32: 017", Outer(i32=15)), ("i32: 0x1F", Outer(i32=31)),
    ("i32: -0x80000000", Outer(i32=-(2**31))), ("i32: - 5", Outer(i32=-5)), ("i32: -\n # c\n 5", Outer(i32=-5)),
    ("u64: 0xFFFFFFFFFFFFFFFF", Outer(u64=2**64 - 1)), ("s64: -9223372036854775808", Outer(s64=-(2**63))),
    ("fixed: 0", Outer(fixed=0)),
    # floats: exponent, suffix, no leading digit, integers, inf/infinity/nan in any case
    ("d: 1e5", Outer(d=1e5)), ("d: .5", Outer(d=0.5)), ("d: 5.", Outer(d=5.0)), ("d: 10f", Outer(d=10.0)),
    ("d: 1.5F", Outer(d=1.5)), ("d: -2.5e-3", Outer(d=-0.0025)), ("d: 7", Outer(d=7.0)),
    ("d: -INFINITY", Outer(d=-math.inf)), ("d: Inf", Outer(d=math.inf)), ("d: -0", Outer(d=-0.0)),
    ("d: 1e400", Outer(d=math.inf)), ("d: 123456789012345678901234567890", Outer(d=1.2345678901234568e29)),
    ("f: 3.4028235e+38", Outer(f=3.4028234663852886e38)), ("f: 3.5e38", Outer(f=math.inf)),
    ("f: 0.1", Outer(f=0.10000000149011612)),
    # bool
    ("b: true", Outer(b=True)), ("b: True", Outer(b=True)), ("b: t", Outer(b=True)), ("b: 1", Outer(b=True)),
    ("b: 0x1", Outer(b=True)), ("b: false", Outer()), ("b: f", Outer()), ("b: 00", Outer()),
    # enums by name or number (open enum: any int32)
    ("color: BLUE", Outer(color=Color.BLUE)), ("color: 2", Outer(color=Color.BLUE)), ("color: -7", Outer(color=-7)),
    # strings: both quotes, adjacent literals joined, every escape
    ("s: 'a' \"b\"\n'c'", Outer(s="abc")), ('s: "a""b"', Outer(s="ab")),
    (r"raw: '\a\b\f\n\r\t\v\?\\\'\"'", Outer(raw=b"\a\b\f\n\r\t\v?\\'\"")),
    (r"raw: '\0\12\1234\x4\x41g'", Outer(raw=b"\x00\n\x534\x04Ag")),
    (r"s: '\u00e9\U0001F600'", Outer(s="\u00e9\U0001f600")), (r"s: '\303\251'", Outer(s="\u00e9")),
    ('s: "\u00e9"', Outer(s="\u00e9")),
    # messages: {} or <>, optional colon, separators, comments
    ("inner { s: 'x' }", Outer(inner=Inner(s="x"))), ("inner: < n: 1; s: 'y', >", Outer(inner=Inner(s="y", n=1))),
    ("inner {}", Outer(inner=Inner())), ("# c\ni32: 1 # c\n,b: true;", Outer(i32=1, b=True)),
    # repeated: repeated fields and lists, in order; [] is empty
    ("nums: 1 nums: [2, 3] nums: 4", Outer(nums=(1, 2, 3, 4))), ("nums: []", Outer()),
    ("inners [{n: 1}, <n: 2>] inners {}", Outer(inners=(Inner(n=1), Inner(n=2), Inner()))),
    ("colors: [RED, 1]", Outer(colors=(Color.RED, Color.GREEN))),
    # maps: entries, missing key or value is zero, the last entry of a key wins, list form
    ('names { key: "a" value: 1 } names { key: "a" value: 2 } names { value: 3 } names {}',
     Outer(names={"a": 2, "": 0})),
    ("by_id: [{key: 1}, {key: 2 value { n: 5 }}]", Outer(by_id={1: Inner(), 2: Inner(n=5)})),
    # oneof
    ("word: 'w'", Outer(choice=pbj.OneOf("word", "w"))), ("number: 0", Outer(choice=pbj.OneOf("number", 0))),
    # Any, expanded, with whitespace and comments inside the brackets
    ("anything { [type.googleapis.com/ google.protobuf. # c\n Timestamp] { seconds: 3 } }",
     Outer(anything=Any(type_url="type.googleapis.com/google.protobuf.Timestamp", value=b"\x08\x03"))),
    ("stamp { seconds: 1 nanos: 2 }", Outer(stamp=Timestamp(seconds=1, nanos=2))),
])
def test_parse(text, expected):
    value = pbj.from_text(Outer, text)
    assert value == expected
    assert pbj.encode(value) == pbj.encode(expected)
    assert pbj.from_text(Outer, text.encode()) == expected


def test_parse_reads_what_to_text_writes():
    obj = Outer(i32=-1, u64=2**64 - 1, s64=-3, f=0.5, d=1 / 3, b=True, s="\u00e9\n", raw=b"\x00", color=Color.GREEN,
                inner=Inner(s="x"), nums=(1, -1), inners=(Inner(),), names={"k": 1}, by_id={2: Inner(n=2)},
                choice=pbj.OneOf("word", ""), maybe=0, fixed=7, colors=(Color.BLUE, 9), stamp=Timestamp(seconds=2))
    for options in ({}, {"one_line": True}, {"utf8": True}):
        assert pbj.from_text(Outer, pbj.to_text(obj, **options)) == obj


def test_conformance_messages():
    ns = conformance.schema()
    assert pbj.from_text(_p2(), "data { group_int32: 1 }").data.group_int32 == 1
    assert pbj.from_text(_p2(), "Data { group_int32: 1 }").data.group_int32 == 1
    assert pbj.from_text(_p2(), "MultiWordGroupField { group_int32: 2 }").multiwordgroupfield.group_int32 == 2
    # reserved names are skipped with whatever value they have
    p3 = pbj.from_text(_p3(), "reserved_field: { a: [1, {b: 2}] } optional_int32: 1 reserved_field: -inf "
                              "reserved_field < [x.y]: 'z' > reserved_field: [[1, [2]], [], 'x' \"y\"]")
    assert p3 == _p3()(optional_int32=1)
    with pytest.raises(pbj.TextError, match='expected a value, found "]"'):
        pbj.from_text(_p3(), "reserved_field: [1,]")
    with pytest.raises(pbj.TextError, match='"-foo" is not a value'):
        pbj.from_text(_p3(), "reserved_field: -foo")
    # extensions are set as pbj.decode sets them, and written in field-number order
    ext = pbj.from_text(_p2(), "[protobuf_test_messages.proto2.groupfield] { group_int32: 1 }\n"
                               "[protobuf_test_messages.proto2.extension_int32]: 42", extensions=ns)
    assert pbj.unknown_fields(ext) == b""
    assert pbj.get_extension(ext, ns.extension("protobuf_test_messages.proto2.extension_int32")) == 42
    for reverse in (False, True):
        assert pbj.encode(ext, reverse=reverse) == bytes.fromhex("c0072a") + bytes.fromhex("cb07d00701cc07")
    assert pbj.to_text(pbj.decode(_p2(), pbj.encode(ext)), extensions=ns, one_line=True) == (
        "[protobuf_test_messages.proto2.extension_int32]: 42 [protobuf_test_messages.proto2.groupfield] "
        "{ group_int32: 1 }")
    # a closed enum takes member numbers only
    assert pbj.from_text(_p2(), "optional_nested_enum: 1").optional_nested_enum.name == "BAR"


def test_required_fields():
    r2 = conformance.schema()["protobuf_test_messages.proto2.TestAllRequiredTypesProto2"]
    with pytest.raises(pbj.TextError) as info:
        pbj.from_text(r2, "required_int32: 1")
    assert "required field" in info.value.reason
    partial = pbj.from_text(r2, "required_int32: 1", allow_partial=True)
    assert partial.required_int32 == 1 and partial.required_int64 is None


# ---------------------------------------------------------------- errors: one kind each, with where

ERRORS = [
    # (text, words of the reason, line, column, path)
    ("i32: 1\nnope: 2", 'no field named "nope" in message tt.Outer', 2, 1, "$"),
    ("inner { s: 'x'\n  zz: 1 }", 'no field named "zz"', 2, 3, "$.inner"),
    ("i32 1", 'expected ":" after field name "i32", found "1"', 1, 5, "$"),
    ("i32: 10bar", "expected an integer for int32, found '10bar' (a number may not run into letters", 1, 6, "$.i32"),
    ("s: 'abc\n'", "expected a string for string, found \"'\" (a string with no closing quote on its line)",
     1, 4, "$.s"),
    ("i32: 1 \u00a7", "expected a field name, found '\u00a7' (a character that starts no token)", 1, 8, "$"),
    ("i32: 2147483648", "2147483648 is out of range for int32", 1, 6, "$.i32"),
    ("nums: [1, -2147483649]", "-2147483649 is out of range for int32", 1, 11, "$.nums[1]"),
    ("u64: -1", "uint64 cannot be negative", 1, 6, "$.u64"),
    ("i32: 1.5", "expected an integer for int32, found \"1.5\"", 1, 6, "$.i32"),
    ("d: 0x10", "hexadecimal and octal numbers are for integer types only", 1, 4, "$.d"),
    ("d: -foo", 'expected a number for double, found "foo"', 1, 5, "$.d"),
    ("b: yes", "expected true or false for bool", 1, 4, "$.b"),
    ("b: 2", "only 0 and 1 are booleans", 1, 4, "$.b"),
    ("color: PURPLE", 'unknown name "PURPLE" for enum Color', 1, 8, "$.color"),
    (r"s: 'a\zb'", r"unknown escape \z", 1, 6, "$.s"),
    (r"s: '\x'", r"escape \x needs one or two hex digits", 1, 5, "$.s"),
    (r"s: '\ud800'", "surrogate code point", 1, 5, "$.s"),
    (r"s: '\U00110000'", r"above \U0010ffff", 1, 5, "$.s"),
    (r"raw: '\777'", r"above \377", 1, 7, "$.raw"),
    (r"s: '\300'", "not valid UTF-8", 1, 4, "$.s"),
    ("i32: 1 i32: 2", 'field "i32" is set twice', 1, 8, "$"),
    ("inner {} inner {}", 'field "inner" is set twice', 1, 10, "$"),
    ("word: 'a' number: 1", 'field "number" and field "word" are members of the same oneof "choice"', 1, 11, "$"),
    ("i32: [1]", 'field "i32" is not repeated', 1, 6, "$.i32"),
    ("nums: [1 2]", 'expected "," or "]" in the list of "nums"', 1, 10, "$.nums"),
    ("nums: [1,]", "expected an integer for int32, found \"]\"", 1, 10, "$.nums[1]"),
    ("i32: 1,,", 'expected a field name, found ","', 1, 8, "$"),
    ("inner { n: 1", 'expected "}" to close the message, found the end of the text', 1, 13, "$.inner"),
    ("inner < n: 1 }", 'expected ">" to close the message, found "}"', 1, 14, "$.inner"),
    ("inner 5", 'expected "{" or "<" to open a tt.Inner message', 1, 7, "$.inner"),
    ("}", 'expected a field name, found "}"', 1, 1, "$"),
    ("names { key: 'a' other: 1 }", 'expected "key" or "value" in an entry of map field "names"', 1, 18, "$.names[0]"),
    ("names { key: 1 }", 'expected a string for string, found "1"', 1, 14, "$.names[0].key"),
    ("anything { [google.protobuf.Timestamp] {} }", "needs a type URL", 1, 12, "$.anything"),
    ("anything { [type.googleapis.com/no.Such] {} }", 'cannot resolve the Any type "type.googleapis.com/no.Such"',
     1, 12, "$.anything"),
    ("anything { [a/%ZZ/x.Y] {} }", 'invalid percent escape "%ZZ"', 1, 12, "$.anything"),
    ("anything { [type.googleapis.com/google.protobuf.Timestamp] { nanos: 'x' } }",
     'expected an integer for int32, found the string', 1, 69,
     "$.anything.[type.googleapis.com/google.protobuf.Timestamp].nanos"),
    ("[pkg.ext]: 1", 'no extension named "pkg.ext" of message tt.Outer (declare it with pbj.extension', 1, 1, "$"),
    ("[a/b.C]: 1", "is a type URL, which only a google.protobuf.Any may hold", 1, 1, "$"),
    ("[a..b]: 1", "is not a valid extension name or type URL", 1, 1, "$"),
]


@pytest.mark.parametrize("text, reason, line, column, path", ERRORS, ids=[e[1][:40] for e in ERRORS])
def test_error(text, reason, line, column, path):
    with pytest.raises(pbj.TextError) as info:
        pbj.from_text(Outer, text, max_depth=2)
    err = info.value
    assert reason in err.reason
    assert (err.line, err.column) == (line, column)
    assert pbj.errors.format_path(err.path) == path
    assert str(err) == f"{err.reason} - at `{path}` (line {line}, column {column})"
    assert isinstance(err, pbj.PbjError) and isinstance(err, ValueError)


def test_nesting_deeper_than_max_depth():
    text = "recursive_message { recursive_message { recursive_message {} } }"
    assert pbj.from_text(_p3(), text, max_depth=3).recursive_message.recursive_message.recursive_message is not None
    with pytest.raises(pbj.TextError) as info:
        pbj.from_text(_p3(), text, max_depth=2)
    err = info.value
    assert err.reason == "messages are nested deeper than max_depth (2)"
    assert (err.line, err.column, err.path) == (1, 59, ["recursive_message"] * 3)
    deep = "recursive_message {" * 200 + "}" * 200
    with pytest.raises(pbj.TextError, match="max_depth"):
        pbj.from_text(_p3(), deep)
    with pytest.raises(pbj.TextError, match="max_depth"):  # a reserved field's value is skipped, not recursed into
        pbj.from_text(_p3(), "reserved_field " + "{ a " * 200 + "}" * 200)


def test_closed_enum_number_error():
    with pytest.raises(pbj.TextError) as info:
        pbj.from_text(_p2(), "\n        optional_nested_enum: 42\n        ")
    err = info.value
    assert "42 is not a number of closed enum" in err.reason
    assert (err.line, err.column, err.path) == (2, 31, ["optional_nested_enum"])


def test_bad_utf8_bytes_error():
    with pytest.raises(pbj.TextError) as info:
        pbj.from_text(Outer, b"s: 'a'\ni32: \xff")
    assert "not valid UTF-8 (byte 0xff)" in info.value.reason
    assert (info.value.line, info.value.column) == (2, 6)


def test_text_error_pickles():
    import pickle
    with pytest.raises(pbj.TextError) as info:
        pbj.from_text(Outer, "inner { n: x }")
    again = pickle.loads(pickle.dumps(info.value))
    assert (again.reason, again.line, again.column, again.path) == (info.value.reason, 1, 12, ["inner", "n"])


def test_from_text_argument_checks():
    with pytest.raises(TypeError):
        pbj.from_text(Outer(), "")
    with pytest.raises(TypeError):
        pbj.from_text(Outer, 5)
    with pytest.raises(TypeError):
        pbj.from_text(Outer, "", extensions={"not": "a namespace"})


class Stufe(enum.IntEnum):
    NULL = 0
    ÜBER = 1


@pbj.message(full_name="tt.Größe")
class Größe:
    höhe: int = pbj.field(1, "int32")
    名前: str = pbj.field(2, "string")
    stufe: Stufe = pbj.field(3, Stufe)


def test_non_ascii_names_read_back():
    """A declared class may name fields and enum values with any Python identifier: the printer
    writes the names as they are, and the parser reads them back (it read ``höhe`` as ``h`` and
    refused ``ö``). A number still may not run into such a name."""
    value = Größe(höhe=3, 名前="x", stufe=Stufe.ÜBER)
    text = pbj.to_text(value)
    assert text == 'höhe: 3\n名前: "x"\nstufe: ÜBER\n'
    assert pbj.from_text(Größe, text) == value
    with pytest.raises(pbj.TextError, match="may not run into"):
        pbj.from_text(Größe, "höhe: 3höhe")
