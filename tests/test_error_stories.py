"""Errors that tell the right story (issue 34): the error a user sees names what went wrong.

* a map key whose ``__lt__`` re-enters ``encode`` without end: the ``RecursionError`` of that
  code comes out unchanged (it was ``EncodeError: map field needs a FrozenMap, got dict``, a
  dict the writers accept); a list or dict stored behind the constructor's back is not blamed
  for a bad value inside it;
* a ``SchemaError`` names a type by kind and name, never as the repr of an internal lambda;
* what a new user met: Google's ``json_format`` option names (``ignore_unknown_fields`` …) are
  taken; a message instance given where its class goes gets one line with the call written
  right, not the instance's whole repr; gzip input is named as such; ``unpack_details``
  suggests its own call form.
"""

from __future__ import annotations

import gzip
import traceback

import pytest

import pbj
from pbj.testing import unchecked

descriptor_pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
F = descriptor_pb2.FieldDescriptorProto


@pbj.message
class Counts:
    xs: tuple[int, ...] = pbj.field(1, "int32", repeated=True)
    m: dict[str, int] = pbj.map_field(2, "string", "int32")


class EndlessKey(str):
    """A map key whose comparison encodes a message keyed by its like: a recursion without end."""

    def __lt__(self, other: object) -> bool:
        pbj.encode(unchecked(Counts, m={EndlessKey("x"): 1, EndlessKey("y"): 2}))
        return str.__lt__(self, other)  # type: ignore[operator]


class OnceKey(str):
    """A map key whose comparison encodes another message once (re-entrant, not endless)."""

    seen: list[bytes] = []

    def __lt__(self, other: object) -> bool:
        OnceKey.seen.append(pbj.encode(Counts(xs=[len(self)])))
        return str.__lt__(self, other)  # type: ignore[operator]


PLAIN = bytes.fromhex("12050a016110011205 0a01621002".replace(" ", ""))  # m = {"a": 1, "b": 2}


@pytest.mark.parametrize("reverse", [False, True])
def test_a_map_key_re_entering_encode_endlessly_raises_its_own_recursion_error(reverse: bool) -> None:
    assert pbj.encode(unchecked(Counts, m={"a": 1, "b": 2}), reverse=reverse) == PLAIN  # a dict is written
    with pytest.raises(RecursionError) as caught:
        pbj.encode(unchecked(Counts, m={EndlessKey("a"): 1, EndlessKey("b"): 2}), reverse=reverse)
    frames = [f.name for f in traceback.extract_tb(caught.value.__traceback__)]
    assert "__lt__" in frames  # the user's code, where the recursion goes round


@pytest.mark.parametrize("reverse", [False, True])
def test_a_map_key_re_entering_encode_once_is_written(reverse: bool) -> None:
    OnceKey.seen = []
    assert pbj.encode(unchecked(Counts, m={OnceKey("a"): 1, OnceKey("b"): 2}), reverse=reverse) == PLAIN
    assert OnceKey.seen and set(OnceKey.seen) == {b"\x0a\x01\x01"}


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize(("stored", "path", "reason"), [
    ({"xs": [1, "x"]}, "$.xs[1]", "int32 field needs an int, got str 'x'"),
    ({"m": {"a": "x"}}, "$.m['a']", "int32 field needs an int, got str 'x'"),
    ({"m": [("a", 1)]}, "$.m", "map field needs a FrozenMap, got list"),
    ({"xs": 5}, "$.xs", "repeated field needs a tuple, got int"),
])
def test_a_container_stored_behind_the_constructor_is_blamed_only_when_it_is_the_problem(
        stored: dict, path: str, reason: str, reverse: bool) -> None:
    with pytest.raises(pbj.EncodeError) as caught:
        pbj.encode(unchecked(Counts, **stored), reverse=reverse)
    assert str(caught.value) == f"{reason} - at `{path}`"


def _map_keyed_by(key_type: int, type_name: str | None) -> bytes:
    fds = descriptor_pb2.FileDescriptorSet()
    f = fds.file.add(name="keys.proto", package="keys", syntax="proto3")
    f.message_type.add(name="Key").field.add(name="a", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    f.enum_type.add(name="Color").value.add(name="RED", number=0)
    m = f.message_type.add(name="M")
    entry = m.nested_type.add(name="XEntry")
    entry.options.map_entry = True
    key = entry.field.add(name="key", number=1, type=key_type, label=F.LABEL_OPTIONAL)
    if type_name:
        key.type_name = type_name
    entry.field.add(name="value", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    m.field.add(name="x", number=1, type=F.TYPE_MESSAGE, type_name=".keys.M.XEntry", label=F.LABEL_REPEATED)
    return fds.SerializeToString()


@pytest.mark.parametrize(("key_type", "type_name", "named"), [
    (F.TYPE_MESSAGE, ".keys.Key", "message keys.Key"),
    (F.TYPE_ENUM, ".keys.Color", "enum Color"),
    (F.TYPE_DOUBLE, None, "'double'"),
])
def test_a_loaded_map_key_of_a_wrong_type_is_named(key_type: int, type_name: str | None, named: str) -> None:
    with pytest.raises(pbj.SchemaError) as caught:
        pbj.load_descriptor_set(_map_keyed_by(key_type, type_name))
    assert str(caught.value) == f"M.x: map key type {named} is not allowed (integral types, bool or string only)"


@pbj.message
class Key:
    a: int = pbj.field(1, "int32")


@pytest.mark.parametrize(("key", "named"), [
    (lambda: Key, "a message (given by a lambda)"),
    (Key, "message tests.test_error_stories.Key"),
    (float, "float (a Python class)"),
])
def test_a_declared_map_key_of_a_wrong_type_is_named(key: object, named: str) -> None:
    with pytest.raises(pbj.SchemaError) as caught:
        pbj.message(type("M", (), {"__annotations__": {"x": dict}, "x": pbj.map_field(1, key, "int32")}))
    assert str(caught.value) == f"M.x: map key type {named} is not allowed (integral types, bool or string only)"


def test_a_forward_reference_that_fails_is_named_without_a_function_repr() -> None:
    cls = pbj.message(type("Holder", (), {"__annotations__": {"k": object},
                                          "k": pbj.field(1, lambda: undefined_name)}))  # type: ignore[name-defined]  # noqa: F821
    with pytest.raises(pbj.SchemaError) as caught:
        cls()
    assert str(caught.value) == ("Holder.k: cannot resolve a message (given by a lambda): "
                                 "NameError: name 'undefined_name' is not defined")


@pbj.message
class Note:
    memo: str = pbj.field(1, "string")
    count: int = pbj.field(2, "int32")
    blob: bytes = pbj.field(3, "bytes")


def test_googles_json_option_names_are_taken() -> None:
    assert pbj.from_json(Note, '{"memo": "x", "extra": 1}', ignore_unknown_fields=True) == Note(memo="x")
    assert pbj.from_dict(Note, {"memo": "x", "extra": 1}, ignore_unknown_fields=True) == Note(memo="x")
    assert pbj.to_json(Note(memo="x"), always_print_fields_with_no_presence=True) == '{"memo":"x","count":0,"blob":""}'
    assert pbj.to_dict(Note(), preserving_proto_field_name=True, always_print_fields_with_no_presence=True,
                       use_integers_for_enums=True) == {"memo": "", "count": 0, "blob": ""}
    with pytest.raises(pbj.JSONError, match="extra"):
        pbj.from_json(Note, '{"extra": 1}', ignore_unknown_fields=False)
    with pytest.raises(TypeError) as caught:
        pbj.from_json(Note, "{}", ignore_unknown=True, ignore_unknown_fields=False)
    assert str(caught.value) == ("pbj.from_json: give ignore_unknown (or Google's name for it, "
                                 "ignore_unknown_fields), not both")


@pytest.mark.parametrize(("call", "text"), [
    (lambda m: pbj.decode(m, b""), "pbj.decode takes a message class, not a Note message: pbj.decode(Note, ...)"),
    (lambda m: pbj.from_json(m, "{}"),
     "pbj.from_json takes a message class, not a Note message: pbj.from_json(Note, ...)"),
    (lambda m: pbj.from_dict(m, {}),
     "pbj.from_dict takes a message class, not a Note message: pbj.from_dict(Note, ...)"),
    (lambda m: pbj.from_text(m, ""),
     "pbj.from_text takes a message class, not a Note message: pbj.from_text(Note, ...)"),
    (lambda m: pbj.decode(m.blob, b""), "pbj.decode takes a pbj message class, not bytes b'" + "x" * 35 + "..."),
    (lambda m: pbj.decode(int, b""), "pbj.decode takes a pbj message class, not the class int"),
])
def test_a_message_given_for_its_class_gets_one_line(call, text: str) -> None:
    with pytest.raises(TypeError) as caught:
        call(Note(memo="m" * 1000, blob=b"x" * 1000))
    assert str(caught.value) == text


def test_gzip_input_is_named_as_such() -> None:
    data = gzip.compress(pbj.encode(Note(memo="x")))
    with pytest.raises(pbj.DecodeError) as caught:
        pbj.decode(Note, data)
    assert str(caught.value) == ("wire type 7 is not a valid wire type (the input starts with 1f 8b, as gzip data "
                                 "does: decompress it first, gzip.decompress(data)) - at `$` at byte 0")
    with pytest.raises(pbj.DecodeError) as caught:
        pbj.decode(Note, b"\x1f\x8c")  # the same first byte, not gzip
    assert str(caught.value) == "wire type 7 is not a valid wire type - at `$` at byte 0"


def test_unpack_details_suggests_its_own_call_form() -> None:
    pytest.importorskip("grpc")
    from pbj.grpc.status import Status, unpack_details
    from pbj.wkt import UnknownTypeError, pack

    @pbj.message
    class Hidden:
        a: int = pbj.field(1, "int32")
    Hidden.__pbj_info__.full_name = "nowhere.Hidden"  # a type no schema or registry knows
    status = Status(code=9, message="no", details=[pack(Hidden(a=1))])
    with pytest.raises(UnknownTypeError) as caught:
        unpack_details(status)
    assert str(caught.value).endswith("or pass the class: pbj.grpc.unpack_details(status, Hidden)")
    assert unpack_details(status, Hidden) == [Hidden(a=1)]
