"""Wide messages: the writers of a message with many fields are tables (pbj.codec.wide), so the
generated source does not grow with the number of fields, and the bytes stay Google's.

Linearity is asserted by counting work (lines of generated source per function, number of
functions), never by timing.
"""

from __future__ import annotations

import re

import pytest
from google.protobuf import descriptor_pb2 as d
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbj
from pbj.codec import codec_of, wide
from pbj.codec.compiler import PARTS
from pbj.codec.wide import WIDE_STEPS, is_wide
from pbj.testing import equivalent, values
from tests.oracle import google_class, suite_set

_T = d.FieldDescriptorProto
_SCALARS = [_T.TYPE_INT32, _T.TYPE_INT64, _T.TYPE_UINT32, _T.TYPE_UINT64, _T.TYPE_SINT32, _T.TYPE_SINT64,
            _T.TYPE_FIXED32, _T.TYPE_FIXED64, _T.TYPE_SFIXED32, _T.TYPE_SFIXED64, _T.TYPE_FLOAT, _T.TYPE_DOUBLE,
            _T.TYPE_BOOL, _T.TYPE_STRING, _T.TYPE_BYTES]


def _wide_set(width: int, complex_fields: int = 6) -> bytes:
    """A proto3 file: message ``w.Wide`` with ``width`` singular scalar fields of every type, then
    ``complex_fields`` repeated / message fields (the steps that keep generated code)."""
    fds = d.FileDescriptorSet()
    f = fds.file.add(name=f"wide{width}.proto", package="w", syntax="proto3")
    sub = f.message_type.add(name="Sub")
    sub.field.add(name="x", number=1, type=_T.TYPE_INT32, label=_T.LABEL_OPTIONAL)
    m = f.message_type.add(name="Wide")
    for i in range(1, width + 1):
        m.field.add(name=f"f{i}", number=i, type=_SCALARS[i % len(_SCALARS)], label=_T.LABEL_OPTIONAL)
    for k in range(complex_fields):
        number = width + 1 + k
        if k % 2:
            m.field.add(name=f"r{number}", number=number, type=_T.TYPE_INT64, label=_T.LABEL_REPEATED)
        else:
            m.field.add(name=f"s{number}", number=number, type=_T.TYPE_MESSAGE, type_name=".w.Sub",
                        label=_T.LABEL_OPTIONAL)
    return fds.SerializeToString()


def _functions(source: str) -> dict[str, int]:
    """Each top-level function of ``source`` -> its number of lines."""
    out = {}
    for chunk in re.split(r"(?m)^(?=def )", source):
        if chunk.startswith("def "):
            body = chunk.split("\n")
            # the lines after the function (table rows filled at module level) are not its own
            lines = [line for line in body if line.startswith(("def ", " "))]
            out[chunk[4:chunk.index("(")]] = len(lines)
    return out


def _writer_source(cls) -> str:
    codec = codec_of(cls)
    codec._made(0)
    codec._made(1)
    return codec._python.source(codec.plan.idx)


@pytest.mark.parametrize("width", [WIDE_STEPS + 20, 3000])
def test_wide_writers_have_as_much_source_whatever_the_width(width):
    """The writers' source of a wide message is the same size at any width: its scalar fields are
    table rows; only its 6 other fields have code, one short function per field and role."""
    cls = pbj.load_descriptor_set(_wide_set(width))["w.Wide"]
    assert is_wide(codec_of(cls).plan)
    source = _writer_source(cls)
    functions = _functions(source)
    stem = codec_of(cls).name
    assert set(functions) >= {f"size_{stem}", f"write_{stem}", f"write_fresh_{stem}", f"write_reverse_{stem}"}
    # 4 roles x 6 step functions, the 4 loops: nothing per scalar field
    assert len(functions) == 4 * 6 + 4, sorted(functions)
    assert max(functions.values()) <= 80, functions  # the longest: a sub-message written inline
    narrow = _writer_source(pbj.load_descriptor_set(_wide_set(WIDE_STEPS + 1))["w.Wide"])
    assert len(source.splitlines()) == len(narrow.splitlines())


def test_a_narrow_message_keeps_its_inline_writers():
    cls = pbj.load_descriptor_set(_wide_set(WIDE_STEPS - 6, complex_fields=6))["w.Wide"]
    assert not is_wide(codec_of(cls).plan)
    functions = _functions(_writer_source(cls))
    assert len(functions) == 4  # size, write, write_fresh, write_reverse: every field inline


def test_a_first_encode_compiles_only_the_forward_writer(python_engine):
    """Each part of a class's Python code is compiled on its first need: an encode makes no parser."""
    cls = pbj.load_descriptor_set(_wide_set(WIDE_STEPS + 10))["w.Wide"]
    obj = cls(f1=5, f13="é", f30=-1)
    data = pbj.encode(obj)
    assert codec_of(cls)._python.made == {0}
    assert pbj.decode(cls, data) == obj
    assert codec_of(cls)._python.made == {0, 2}
    assert pbj.encode(obj, reverse=True) == data
    assert codec_of(cls)._python.made == {0, 1, 2} and len(PARTS) == 3


def _check_every_writer(cls, inline_cls, gcls, value) -> None:
    fresh = pbj.encode(value)  # write_fresh: nothing measured yet
    assert pbj.encoded_size(value) == len(fresh)  # the size write_fresh cached
    assert pbj.encode(value) == fresh  # write: sizes cached
    assert pbj.encode(value, reverse=True) == fresh
    back = pbj.decode(cls, fresh)
    assert equivalent(back, value)
    assert pbj.encoded_size(back) == len(fresh)  # size: nothing cached on a decoded object
    assert pbj.encode(back) == fresh and pbj.encode(back, reverse=True) == fresh
    # the inline writers of the same schema write the same bytes
    inline = pbj.decode(inline_cls, fresh)
    assert pbj.encode(inline) == fresh and pbj.encode(inline, reverse=True) == fresh
    # and Google reads them as the message (upb writes maps of 2+ entries in an order of its own,
    # so its bytes are compared as a message: tests/test_loaded_differential.py)
    expected = gcls.FromString(fresh).SerializeToString(deterministic=True)
    assert len(expected) == len(fresh) and gcls.FromString(expected) == gcls.FromString(fresh)


@pytest.mark.parametrize("suite, name", [("proto3", "protobuf_test_messages.proto3.TestAllTypesProto3"),
                                         ("proto2", "protobuf_test_messages.proto2.TestAllTypesProto2")])
def test_wide_conformance_messages_write_what_the_inline_writers_write(python_engine, monkeypatch, suite, name):
    """The conformance messages (every field kind: oneofs, maps, groups, extensions, defaults,
    closed enums) are wide: all four table writers write the bytes of the inline writers, which
    Google reads as the same message."""
    cls = pbj.load_descriptor_set(suite_set(suite))[name]
    assert is_wide(codec_of(cls).plan)
    inline_cls = pbj.load_descriptor_set(suite_set(suite))[name]
    monkeypatch.setattr(wide, "WIDE_STEPS", 10 ** 9)
    assert not is_wide(codec_of(inline_cls).plan)
    codec_of(inline_cls)._made()  # emitted and compiled while the threshold is out of reach
    monkeypatch.undo()
    gcls = google_class(name)

    @settings(max_examples=10, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.data())
    def run(data):
        _check_every_writer(cls, inline_cls, gcls, data.draw(values(cls, max_depth=1)))

    run()


def test_wide_rows_write_presence_and_edge_values(python_engine):
    """Zero values of implicit presence are not written, -0.0 and NaN bits are, out-of-range values fail."""
    raw = _wide_set(WIDE_STEPS + 20)
    cls = pbj.load_descriptor_set(raw)["w.Wide"]
    fds = d.FileDescriptorSet.FromString(raw)
    from google.protobuf import descriptor_pool, message_factory
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    gcls = message_factory.GetMessageClass(pool.FindMessageTypeByName("w.Wide"))
    kinds = {f"f{i}": _SCALARS[i % len(_SCALARS)] for i in range(1, WIDE_STEPS + 21)}
    by_kind = {k: name for name, k in reversed(kinds.items())}
    assert pbj.encode(cls(**{by_kind[_T.TYPE_INT32]: 0, by_kind[_T.TYPE_STRING]: ""})) == b""
    cases = {by_kind[_T.TYPE_DOUBLE]: -0.0, by_kind[_T.TYPE_FLOAT]: float("nan"), by_kind[_T.TYPE_INT32]: -1,
             by_kind[_T.TYPE_SINT64]: -(2 ** 63), by_kind[_T.TYPE_UINT64]: 2 ** 64 - 1,
             by_kind[_T.TYPE_BOOL]: True, by_kind[_T.TYPE_BYTES]: b"\x00" * 200, by_kind[_T.TYPE_STRING]: "ü" * 70}
    obj = cls(**cases)
    g = gcls()
    for k, v in cases.items():
        setattr(g, k, v)
    expected = g.SerializeToString()
    assert pbj.encode(obj) == expected and pbj.encode(obj, reverse=True) == expected
    with pytest.raises(pbj.EncodeError) as err:
        pbj.encode(_with(cls, by_kind[_T.TYPE_UINT32], 2 ** 32))
    assert err.value.path == [by_kind[_T.TYPE_UINT32]]


def _with(cls, name, value):
    """An instance of ``cls`` holding ``value`` in field ``name`` behind the constructor's back."""
    obj = cls()
    object.__setattr__(obj, name, value)
    return obj
