"""copy.replace on every message (Python 3.13's ``__replace__``; ``pbj.replace`` on 3.11 and 3.12), and
the Python-typed dict form ``pbj.to_python``/``pbj.from_python`` against ProtoJSON's ``pbj.to_dict``."""

from __future__ import annotations

import copy
import enum
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbj
from pbj import descriptor, wellknown
from pbj.testing import equivalent, values
from tests import everything_classes as ec


def _replace(obj: Any, **changes: Any) -> Any:
    """``copy.replace`` where Python has it (3.13), else the protocol method it calls."""
    if sys.version_info >= (3, 13):
        return copy.replace(obj, **changes)  # type: ignore[attr-defined]
    return type(obj).__replace__(obj, **changes)


class Mood(enum.IntEnum):
    CALM = 0
    ANGRY = 1


@pbj.message(full_name="pbjtest.ergo.Settings", syntax="proto2")
class Settings:
    volume: int | None = pbj.field(1, "int32", optional=True, default=7)
    name: str | None = pbj.field(2, "string", optional=True)
    mood: Mood | None = pbj.field(3, Mood, optional=True)


def test_copy_replace_is_pbj_replace_on_declared_loaded_and_well_known_messages() -> None:
    leaf = ec.Leaf(s="a")
    assert _replace(leaf, s="b") == pbj.replace(leaf, s="b") == ec.Leaf(s="b")
    stamp = wellknown.Timestamp(seconds=1)
    assert _replace(stamp, nanos=5) == wellknown.Timestamp(seconds=1, nanos=5)
    opts = descriptor.FieldOptions(packed=True)
    assert _replace(opts, deprecated=True) == descriptor.FieldOptions(packed=True, deprecated=True)
    d = descriptor
    fds = d.FileDescriptorSet(file=(d.FileDescriptorProto(
        name="t.proto", package="pbjtest.ergo", syntax="proto3", message_type=(d.DescriptorProto(
            name="Pair", field=(d.FieldDescriptorProto(name="a", number=1, label=1, type=5),)),)),))
    pair_cls = pbj.load_descriptor_set(pbj.encode(fds))["pbjtest.ergo.Pair"]
    pair = pair_cls(a=1)
    assert _replace(pair, a=2) == pair_cls(a=2) and type(_replace(pair, a=2)) is pair_cls


def test_copy_replace_keeps_presence_unknown_fields_and_checks_values() -> None:
    s = pbj.decode(Settings, b"\x12\x01x" + b"\xf8\x01\x01")  # name = "x", and an unknown field 31
    changed = _replace(s, mood=Mood.ANGRY)
    assert changed.mood is Mood.ANGRY and changed.name == "x"
    assert not pbj.has(changed, "volume") and changed.volume == 7  # unset stays unset (attrs.evolve would set 7)
    assert pbj.unknown_fields(changed) == b"\xf8\x01\x01"
    assert _replace(s, name=None).name is None  # None unsets
    with pytest.raises(TypeError, match="volume"):
        _replace(s, volume="loud")
    with pytest.raises(ValueError, match="volume"):
        _replace(s, volume=1 << 40)
    with pytest.raises(TypeError, match="colour"):
        _replace(s, colour=1)


def test_to_python_keeps_python_types_where_protojson_writes_text() -> None:
    e = ec.Everything(int64Number=-(1 << 62), uint64Number=(1 << 64) - 1, bytesField=b"\x00\xff",
                      enumSuit=ec.Suit.CLUBS, doubleNumber=float("inf"), subObject=ec.TimestampTest(seconds=5),
                      mapInt64ToBool={-1: True})
    py, js = pbj.to_python(e), pbj.to_dict(e)
    assert py["int64Number"] == -(1 << 62) and js["int64Number"] == str(-(1 << 62))
    assert py["uint64Number"] == (1 << 64) - 1 and js["uint64Number"] == str((1 << 64) - 1)
    assert py["bytesField"] == b"\x00\xff" and js["bytesField"] == "AP8="
    assert py["enumSuit"] is ec.Suit.CLUBS and js["enumSuit"] == "CLUBS"
    assert py["doubleNumber"] == float("inf") and js["doubleNumber"] == "Infinity"
    assert py["subObject"] == {"seconds": 5, "nanos": 0} and js["subObject"] == {"seconds": "5"}
    assert py["mapInt64ToBool"] == {-1: True} and js["mapInt64ToBool"] == {"-1": True}
    assert py["int32Number"] == 0 and "int32Number" not in js  # every field, its zero included
    assert py["innerEverything"] is None and py["int32NumberList"] == []
    assert pbj.from_python(ec.Everything, py) == e


def test_oneofs_presence_and_nesting_in_the_python_form() -> None:
    choice = ec.Choice(pick=pbj.OneOf("leaf_b", ec.Leaf(n=1, s="t")), sign=ec.Sign.SIGN_NEG)
    py = pbj.to_python(choice)
    assert py == {"leaf_b": {"n": 1, "s": "t"}, "sign": ec.Sign.SIGN_NEG, "signs": []}
    assert pbj.from_python(ec.Choice, py) == choice
    assert pbj.from_python(ec.Choice, {"leaf_b": ec.Leaf(n=1, s="t"), "sign": -1}) == choice  # a message, a number
    presence = ec.Presence(i64=0)
    py = pbj.to_python(presence)
    assert py["i64"] == 0 and py["i32"] is None  # set to zero and unset stay apart
    assert pbj.from_python(ec.Presence, py) == presence and pbj.has(pbj.from_python(ec.Presence, py), "i64")
    maps = ec.Maps(bool_key={True: ec.Leaf(n=2)}, string_to_enum={"a": ec.Sign.SIGN_MAX})
    py = pbj.to_python(maps)
    assert py["bool_key"] == {True: {"n": 2, "s": ""}} and py["string_to_enum"]["a"] is ec.Sign.SIGN_MAX
    assert pbj.from_python(ec.Maps, py) == maps


def test_from_python_names_what_is_wrong() -> None:
    with pytest.raises(TypeError, match=r"pbjtest\.Choice has no field 'nope'"):
        pbj.from_python(ec.Choice, {"nope": 1})
    with pytest.raises(TypeError, match="members of one oneof"):
        pbj.from_python(ec.Choice, {"first": "a", "second": "b"})
    with pytest.raises(TypeError, match="takes a mapping"):
        pbj.from_python(ec.Choice, [("first", "a")])
    with pytest.raises(TypeError, match="to_python takes a pbj message"):
        pbj.to_python({"first": "a"})
    with pytest.raises(TypeError, match="repeated field takes a list"):
        pbj.from_python(ec.Choice, {"signs": "AB"})
    with pytest.raises(ValueError, match="n"):
        pbj.from_python(ec.Choice, {"leaf_a": {"n": 1 << 40}})


@pytest.mark.parametrize("cls", [ec.Everything, ec.Presence, ec.Unpacked, ec.Maps, ec.Node, ec.Choice],
                         ids=lambda c: pbj.schema.info(c).full_name)
def test_the_python_form_round_trips_random_messages(cls: type) -> None:
    @settings(max_examples=8, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.data())
    def run(data: Any) -> None:
        msg = data.draw(values(cls, max_depth=2, unknown_fields=False))
        assert equivalent(pbj.from_python(cls, pbj.to_python(msg)), msg)

    run()


@pbj.message(full_name="pbjtest.ergo.Box", syntax="proto2", extensions=[range(100, 200)])
class Box:
    size: int | None = pbj.field(1, "int32", optional=True)


LABELS = pbj.extension(Box, 100, "string", name="pbjtest.ergo.labels", repeated=True)


def test_extensions_travel_in_the_python_form_under_their_full_names() -> None:
    box = pbj.with_extensions(Box(size=1), {LABELS: ("a", "b")})
    py = pbj.to_python(box)
    assert py == {"size": 1, "[pbjtest.ergo.labels]": ["a", "b"]}
    assert pbj.from_python(Box, py) == box
    with pytest.raises(TypeError, match=r"no extension \[pbjtest\.ergo\.nope\] registered"):
        pbj.from_python(Box, {"[pbjtest.ergo.nope]": 1})
