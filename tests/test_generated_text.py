"""No text from a schema can become code: names with newlines, in every place generated source shows them.

A descriptor set is bytes anyone can write, so a message, enum, field or
oneof name may hold any string. pbj either loads it and works, or refuses it
with SchemaError; in no case does the text run (found by a newcomer's probe:
a message name with a newline ran as a line of the generated ``__init__``).
"""

from __future__ import annotations

import linecache

import pytest
from google.protobuf import descriptor_pb2 as d

import pbj
from pbj.generated_text import comment

F = d.FieldDescriptorProto
# no dot in it: a dot would split the name where pbj reads full names
PAYLOAD = "\n    print('PBJ-INJECTED')\n    #"


@pytest.fixture(autouse=True)
def _no_injection(capsys):
    yield
    assert "PBJ-INJECTED" not in capsys.readouterr().out, "text from a schema ran as code"


def _use(cls) -> None:
    """Build, encode both ways, decode, and read the generated source of ``cls``."""
    obj = cls()
    assert pbj.decode(cls, pbj.encode(obj)) == obj
    assert pbj.encode(obj, reverse=True) == pbj.encode(obj)
    source = pbj.source_of(cls)
    init_file = cls.__init__.__code__.co_filename
    for text in (source, "".join(linecache.getlines(init_file))):
        assert not any(line.strip().startswith("print(") for line in text.splitlines())


def _load_or_refuse(fs: d.FileDescriptorSet, full_name: str) -> None:
    try:
        ns = pbj.load_descriptor_set(fs.SerializeToString())
    except pbj.SchemaError:
        return  # refused at load: fine
    _use(ns[full_name])


def test_a_message_name_with_a_newline():
    fs = d.FileDescriptorSet()
    f = fs.file.add(name="m.proto", package="p", syntax="proto3")
    evil = "X" + PAYLOAD
    m = f.message_type.add(name=evil)
    m.field.add(name="s", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL, type_name=".p." + evil)
    _load_or_refuse(fs, "p." + evil)


def test_an_enum_name_with_a_newline():
    fs = d.FileDescriptorSet()
    f = fs.file.add(name="e.proto", package="p", syntax="proto3")
    evil = "E" + PAYLOAD
    f.enum_type.add(name=evil).value.add(name="ZERO", number=0)
    f.message_type.add(name="M").field.add(name="e", number=1, type=F.TYPE_ENUM, label=F.LABEL_OPTIONAL,
                                           type_name=".p." + evil)
    _load_or_refuse(fs, "p.M")


def test_hand_declared_proto_names_with_newlines():
    @pbj.message
    class Inner:
        x: int = pbj.field(1, "int32", name="x" + PAYLOAD)

    @pbj.message
    class Outer:
        inner: Inner | None = pbj.field(1, Inner, name="i" + PAYLOAD)
        pick: pbj.OneOf | None = pbj.oneof(a=(2, "string", {"name": "a" + PAYLOAD}), b=(3, Inner))

    _use(Inner)
    _use(Outer)
    value = Outer(inner=Inner(x=5), pick=pbj.OneOf("a", "z"))
    assert pbj.decode(Outer, pbj.encode(value)) == value


@pytest.mark.parametrize("text", ["plain", "a\nb", "a\rb", "a\u2028b", "a\x0cb", "a\x00b", "ünï"])
def test_comment_text_is_one_printable_line(text):
    out = comment(text)
    assert out.isprintable() and len(out.splitlines()) == 1
    assert out == text if text.isprintable() else out == ascii(text)[1:-1]
