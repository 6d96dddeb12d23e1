"""The scalar-type table against Google's own tables (wire types, packability, ranges)."""

from __future__ import annotations

import struct

import pytest
from google.protobuf import descriptor as gd
from google.protobuf.internal import type_checkers, wire_format

from pbj import scalars

_GOOGLE_TYPE = {name: getattr(gd.FieldDescriptor, f"TYPE_{name.upper()}") for name in scalars.SCALAR_NAMES}


@pytest.mark.parametrize("name", sorted(scalars.SCALAR_NAMES))
def test_wire_type_matches_google(name):
    assert scalars.SCALARS[name].wire_type == type_checkers.FIELD_TYPE_TO_WIRE_TYPE[_GOOGLE_TYPE[name]]


@pytest.mark.parametrize("name", sorted(scalars.SCALAR_NAMES))
def test_packable_matches_google(name):
    assert scalars.SCALARS[name].packable == wire_format.IsTypePackable(_GOOGLE_TYPE[name])


@pytest.mark.parametrize("name", sorted(n for n in scalars.SCALAR_NAMES if scalars.SCALARS[n].is_fixed))
def test_fixed_width_is_the_struct_size(name):
    t = scalars.SCALARS[name]
    assert struct.calcsize(t.struct_format) == t.width == t.packer.size


@pytest.mark.parametrize("name", sorted(scalars.INTEGER_NAMES))
def test_integer_ranges_are_their_bit_widths(name):
    lo, hi = scalars.SCALARS[name].range
    width = 32 if "32" in name else 64
    assert (hi - lo + 1) == 1 << width
    assert (lo == 0) == name.startswith(("uint", "fixed"))


def test_enum_row_is_an_int32_varint():
    assert scalars.row("enum") is scalars.ENUM
    assert (scalars.ENUM.wire_type, scalars.ENUM.range, scalars.ENUM.signed_varint) == (
        scalars.WIRE_VARINT, scalars.SCALARS["int32"].range, True)


def test_codes_are_distinct_and_stable():
    codes = [scalars.row(n).code for n in [*sorted(scalars.SCALAR_NAMES), "enum"]]
    assert sorted(codes) == list(range(16))
    assert scalars.ENUM.code == 15


def test_map_keys_are_the_integral_types_bool_and_string():
    assert scalars.MAP_KEY_NAMES == scalars.INTEGER_NAMES | {"bool", "string"}
