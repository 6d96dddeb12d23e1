"""Hand-declared ``syntax="proto2"`` classes follow proto2's rules as the loaded class and
Google's protobuf do: repeated scalars unpacked unless ``packed=True`` ("Encoding", "Packed
Repeated Fields"), enums closed ("Language Guide (proto2)", "Enumerations"; "Enum Behavior").
"""

from __future__ import annotations

import enum
from functools import cache
from pathlib import Path

import pytest

import pbj
from tests.oracle import google_class, protoc

PROTOS = Path(__file__).parent / "protos"


class Shade(enum.IntEnum):
    DARK = 0
    LIGHT = 1


@pbj.message(full_name="pbjp2.Rules", syntax="proto2")
class Rules:
    loose: tuple[int, ...] = pbj.field(1, "int32", repeated=True)
    tight: tuple[int, ...] = pbj.field(2, "sint64", repeated=True, packed=True)
    shades: tuple[Shade, ...] = pbj.field(3, Shade, repeated=True)
    shade: Shade | None = pbj.field(4, Shade, optional=True)
    fixed: tuple[int, ...] = pbj.field(5, "fixed32", repeated=True, packed=False)


@cache
def loaded() -> pbj.Namespace:
    return pbj.load_descriptor_set(protoc(["proto2_hand.proto"], [PROTOS]))


def _classes():
    return [pytest.param(lambda: Rules, id="hand"), pytest.param(lambda: loaded()["pbjp2.Rules"], id="loaded")]


def both_writers(msg) -> bytes:
    forward, reverse = pbj.encode(msg), pbj.encode(msg, reverse=True)
    assert forward == reverse
    assert pbj.encoded_size(msg) == len(forward)
    return forward


@pytest.mark.parametrize("cls", _classes())
def test_repeated_scalars_are_unpacked_unless_declared_packed(cls):
    loaded()  # Google knows the schema from here on
    cls = cls()
    enum_type = pbj.fields(cls)[2].type
    msg = cls(loose=(1, 2), tight=(-1, 1), shades=(enum_type(1), enum_type(0)), fixed=(7,))
    google = google_class("pbjp2.Rules")(loose=[1, 2], tight=[-1, 1], shades=[1, 0], fixed=[7])
    expected = bytes.fromhex("0801 0802" "12020102" "1801 1800" "2d07000000")
    assert both_writers(msg) == google.SerializeToString() == expected
    assert [f.packed for f in pbj.fields(cls)] == [False, True, False, False, False]
    assert pbj.decode(cls, bytes.fromhex("0a020102")).loose == (1, 2)  # packed input is read too


@pytest.mark.parametrize("cls", _classes())
def test_enums_are_closed(cls):
    loaded()
    cls = cls()
    shade = pbj.fields(cls)[3].type
    assert shade.__pbj_closed__ is True
    data = bytes.fromhex("2005" "1801 1807 1800")  # shade = 5, shades = [1, 7, 0]: 5 and 7 are not members
    google = google_class("pbjp2.Rules").FromString(data)
    msg = pbj.decode(cls, data)
    assert msg.shade is None and not google.HasField("shade")
    assert [int(s) for s in msg.shades] == list(google.shades) == [1, 0]
    # the numbers that are not members are unknown fields, as Google keeps them
    assert both_writers(msg) == google.SerializeToString() == bytes.fromhex("1801 1800 2005 1807")
    with pytest.raises(ValueError, match="closed enum"):
        cls(shade=5)
    with pytest.raises(pbj.JSONError):
        pbj.from_json(cls, '{"shade": 5}')


def test_an_enum_marked_open_stays_open_in_a_proto2_class():
    @pbj.enum_features(enum_type="OPEN")
    class Loose(enum.IntEnum):
        ZERO = 0

    @pbj.message(syntax="proto2")
    class UsesLoose:
        v: Loose | None = pbj.field(1, Loose, optional=True)

    assert pbj.decode(UsesLoose, bytes.fromhex("0805")).v == 5


def test_a_non_member_default_is_refused():
    class Plain(enum.IntEnum):
        ONE = 1

    with pytest.raises(pbj.SchemaError, match="closed enum"):
        @pbj.message(syntax="proto2")
        class BadDefault:
            v: Plain = pbj.field(1, Plain, optional=True, default=7)
