"""pbj.validate: buf.validate rules of a schema, held to protovalidate itself.

The differential test builds one random value of ``tests/protos/validate_cases.proto``'s
``Root`` (every scalar kind, repeated fields, maps, oneofs, required fields, field, message
and predefined CEL rules: tests/validation_cases.py) as a pbj message and as a Google message,
independently (``pbj.from_python`` and Google's constructor), and compares pbj.validate's
violations with protovalidate's on the Google message: the same ``buf.validate.Violation``
messages (field path, rule path, rule id, text, for_key), and for each, pbj's own path leads
to the value protovalidate saw. A deterministic slice runs in the default selection; the
10,000-message run is ``-m slow``.
"""

from __future__ import annotations

import math
import struct
import textwrap
from typing import Any

import pytest
from hypothesis import given, settings

import pbj
from pbj.errors import format_path
from pbj.python_dict import from_python
from pbj.testing import equivalent
from pbj.validation import PROTO_INCLUDE, ValidationError, Violation, validate, validate_on_build, violations
from pbj.validation.messages import ViolationMessage
from tests import validation_cases as vc
from tests.conftest import SUMMARY_PROPERTY

protovalidate = pytest.importorskip("protovalidate")


def _same(ours: Any, theirs: Any) -> bool:
    """pbj's value at a violation's path equals the value protovalidate read from the Google message."""
    from google.protobuf.message import Message

    if isinstance(theirs, Message):
        if ours is None:
            return theirs.ByteSize() == 0  # an unset message field reads as the empty message
        return equivalent(ours, pbj.decode(type(ours), theirs.SerializeToString()))
    if isinstance(theirs, float) or isinstance(ours, float):
        if math.isnan(theirs) and math.isnan(ours):
            return True
        return theirs == ours or struct.pack("<f", theirs) == struct.pack("<f", ours)
    if hasattr(theirs, "items") and hasattr(theirs, "keys"):  # a map
        return set(ours) == set(theirs.keys()) and all(_same(ours[k], theirs[k]) for k in ours)
    if hasattr(theirs, "__len__") and not isinstance(theirs, (str, bytes)):
        return len(ours) == len(theirs) and all(_same(a, b) for a, b in zip(ours, theirs, strict=True))
    return ours == theirs  # type: ignore[no-any-return]


def _follow(msg: Any, path: tuple) -> Any:
    """The value at pbj path ``path`` inside ``msg`` (attribute names, indexes, one-element key tuples)."""
    value = msg
    for step in path:
        if isinstance(step, int):
            value = value[step]
        elif isinstance(step, tuple):
            value = value[step[0]]
        else:
            chosen = next((o for o in pbj.schema.info(type(value)).oneofs
                           if any(m.name == step for m in o.members)), None)
            value = getattr(value, chosen.name).value if chosen is not None else getattr(value, step)
    return value


def check_one(value: dict) -> int:
    """Compare pbj.validate with protovalidate on one value; return the number of violations."""
    root = vc.namespace()[f"{vc.PKG}.Root"]
    msg = from_python(root, value)
    gmsg = vc.google_root()(**vc.google_kwargs(value))
    ours = violations(msg)
    theirs = protovalidate.collect_violations(gmsg)
    expected = sorted((pbj.decode(ViolationMessage, v.proto.to_binary()) for v in theirs), key=pbj.encode)
    assert sorted((v.proto for v in ours), key=pbj.encode) == expected
    by_proto = {pbj.encode(pbj.decode(ViolationMessage, v.proto.to_binary())): v for v in theirs}
    for v in ours:
        # each violation is explained with its path, which leads to the value protovalidate judged
        assert str(v).startswith(format_path(list(v.path)) if v.path else "$")
        assert v.message in str(v) and v.rule_id in str(v)
        if v.path and not v.for_key:
            assert _follow(msg, v.path) is v.field_value
        assert _same(v.field_value, by_proto[pbj.encode(v.proto)].field_value), v
    return len(ours)


_counts: dict[str, int] = {"messages": 0, "violations": 0, "invalid": 0}


@settings(max_examples=30)
@given(vc.roots())
def test_pbj_validate_agrees_with_protovalidate(value: dict) -> None:
    """The default-selection slice of the differential test (deterministic under the ``ci`` profile)."""
    n = check_one(value)
    _counts["messages"] += 1
    _counts["violations"] += n
    _counts["invalid"] += n > 0


@pytest.mark.slow
@pytest.mark.timeout(7200)  # minutes of CPU; on a loaded machine, many more of wall time
def test_pbj_validate_agrees_with_protovalidate_on_10000_messages(record_property) -> None:
    """The whole differential run: 10,000 random messages, every one agreeing."""
    seen = {"messages": 0, "violations": 0, "invalid": 0}

    @settings(max_examples=10_000)
    @given(vc.roots())
    def run(value: dict) -> None:
        n = check_one(value)
        seen["messages"] += 1
        seen["violations"] += n
        seen["invalid"] += n > 0

    run()
    assert seen["messages"] >= 10_000
    assert seen["invalid"] < seen["messages"] and seen["invalid"] > 0  # both sides of the rules are met
    record_property(SUMMARY_PROPERTY, f"pbj.validate == protovalidate on {seen['messages']} messages "
                                      f"({seen['messages'] - seen['invalid']} valid, {seen['invalid']} invalid with "
                                      f"{seen['violations']} violations)")


def _ns() -> Any:
    return vc.namespace()


def _scalars(**values: Any) -> Any:
    base = {"name": "n", "f": 0.5, "i32": 2, "u32": 1, "fx64": 11, "flag": True, "text": "ab", "blob": b"x"}
    return from_python(_ns()[f"{vc.PKG}.Scalars"], {**base, **values})


def _valid_root(**values: Any) -> Any:
    root = _ns()[f"{vc.PKG}.Root"]
    return from_python(root, {"scalars": pbj.python_dict.to_python(_scalars()), "choice": {"text": "ab"},
                              **values})


def test_a_valid_message_has_no_violations_and_validate_returns_it() -> None:
    msg = _valid_root()
    assert violations(msg) == []
    assert validate(msg) is msg


@pytest.mark.parametrize(("change", "path", "rule_id", "text"), [
    ({"i32": 8}, ("scalars", "i32"), "int32.gte_lte",
     "must be greater than or equal to -6 and less than or equal to 6"),
    ({"i32": 3}, ("scalars", "i32"), "int32.even", "must be even"),
    ({"i64": 10**12}, ("scalars", "i64"), "int64.gt_lt",
     "must be greater than -1000000000000 and less than 1000000000000"),
    ({"u32": 4}, ("scalars", "u32"), "uint32.in", "must be in list [0, 1, 2, 3, 7]"),
    ({"fx64": 7}, ("scalars", "fx64"), "fixed64.gt_lt_exclusive", "must be greater than 10 or less than 5"),
    ({"d": 100.0}, ("scalars", "d"), "double.gte_lt",
     "must be greater than or equal to -10.5 and less than 100"),
    ({"text": "ABC"}, ("scalars", "text"), "string.pattern", "does not match regex pattern `^[a-z]*$`"),
    ({"blob": b"12345"}, ("scalars", "blob"), "bytes.max_len", "must be at most 4 bytes"),
    ({"color": 7}, ("scalars", "color"), "enum.defined_only", "value must be one of the defined enum values"),
    ({"email": "x@"}, ("scalars", "email"), "string.email", "must be a valid email address"),
    ({"opt": 10}, ("scalars", "opt"), "int32.gt", "must be greater than 10"),
    ({"name": ""}, ("scalars", "name"), "required", "value is required"),
])
def test_each_kind_of_rule_names_its_field_and_rule(change: dict, path: tuple, rule_id: str, text: str) -> None:
    root = _ns()[f"{vc.PKG}.Root"]
    msg = pbj.replace(_valid_root(), scalars=_scalars(**change))
    found = violations(msg)
    assert [(v.path, v.rule_id, v.message) for v in found] == [(path, rule_id, text)]
    assert found[0].field_path == ".".join(path)
    with pytest.raises(ValidationError) as err:
        validate(msg)
    assert err.value.violations == found and err.value.type_name == f"{vc.PKG}.Root"
    assert f"$.{'.'.join(path)}: {text} [{rule_id}]" in str(err.value)
    assert isinstance(err.value, pbj.PbjError) and isinstance(err.value, ValueError)
    assert type(msg) is root


def test_repeated_map_and_oneof_paths_carry_indexes_and_keys() -> None:
    msg = _valid_root(collections={"nums": [0, -1], "counts": {"abcde": 1}, "flags": {True: ""}},
                      choice={"number": 0, "a": "x", "b": "y"}, lo=2, hi=1)
    found = {(v.field_path, v.rule_id, v.for_key): v for v in violations(msg)}
    assert set(found) == {
        ("collections.nums[1]", "int32.gte", False), ("collections.counts[\"abcde\"]", "string.max_len", True),
        ("collections.flags[true]", "string.min_len", False), ("choice", "message.oneof", False),
        ("choice.number", "int64.gt", False), ("", "root.lo_le_hi", False)}
    assert found["collections.nums[1]", "int32.gte", False].path == ("collections", "nums", 1)
    assert found["collections.nums[1]", "int32.gte", False].field_value == -1
    key = found["collections.counts[\"abcde\"]", "string.max_len", True]
    assert key.path == ("collections", "counts", ("abcde",)) and key.field_value == "abcde" and key.rule_value == 4
    assert "$.collections.counts['abcde'] (key): must be at most 4 characters [string.max_len]" == str(key)
    assert found["", "root.lo_le_hi", False].path == () and str(found["", "root.lo_le_hi", False]).startswith("$: ")


def test_a_field_cel_rule_reports_its_rule_as_a_pbj_message() -> None:
    (v,) = violations(_valid_root(code="abc"))
    assert (v.rule_id, v.message, v.rule_path) == ("code.even_length", "code must have an even length", "cel[0]")
    rule_cls = _ns()["buf.validate.Rule"]
    assert v.rule_value == rule_cls(id="code.even_length", message="code must have an even length",
                                    expression="this.size() % 2 == 0")


def test_fail_fast_stops_at_the_first_violation() -> None:
    msg = _valid_root(lo=2, hi=1, code="abc")
    assert len(violations(msg)) == 2 and len(violations(msg, fail_fast=True)) == 1


def test_the_violations_travel_as_buf_validate_messages() -> None:
    with pytest.raises(ValidationError) as err:
        validate(_valid_root(code="abc", lo=1, hi=0))
    data = pbj.encode(err.value.to_proto())
    again = pbj.decode(_ns()["buf.validate.Violations"], data)  # the schema's own class reads pbj's bytes
    assert [v.rule_id for v in again.violations] == [v.rule_id for v in err.value.violations]


def test_validate_on_build_checks_construction_and_replace_not_decoding() -> None:
    ns = vc.namespace()
    item = ns[f"{vc.PKG}.Item"]
    bad = pbj.encode(item(id="", qty=3))
    validate_on_build(item)
    try:
        with pytest.raises(ValidationError, match=r"an item with a quantity needs an id \[item.qty_needs_id\]"):
            item(qty=3)
        ok = item(id="a", qty=3)
        with pytest.raises(ValidationError, match=r"\$\.id: must be at most 3 characters"):
            pbj.replace(ok, id="abcd")
        assert pbj.decode(item, bad).qty == 3  # decoding never validates: the program chooses where
        with pytest.raises(TypeError):  # the constructor's own checks still come first
            item(qty="3")
    finally:
        validate_on_build(item, enabled=False)
    assert item(qty=3).qty == 3


def test_validate_on_build_leaves_every_parser_unvalidated() -> None:
    """ProtoJSON, text format, from_dict, from_python and unpickling read data as decode does: unchecked."""
    import pickle

    ns = vc.namespace()
    item = ns[f"{vc.PKG}.Item"]
    bad = item(id="", qty=3)
    validate_on_build(item)
    try:
        with pytest.raises(ValidationError):
            item(id="", qty=3)
        assert pbj.from_json(item, pbj.to_json(bad)) == bad
        assert pbj.from_dict(item, pbj.to_dict(bad)) == bad
        assert pbj.from_text(item, pbj.to_text(bad)) == bad
        assert from_python(item, {"qty": 3}) == bad
        assert pickle.loads(pickle.dumps(bad)) == bad
        with pytest.raises(pbj.JSONError):  # the constructor's own checks still apply
            pbj.from_json(item, '{"qty": "x"}')
    finally:
        validate_on_build(item, enabled=False)


def test_validate_on_build_of_a_namespace_and_bad_arguments() -> None:
    ns = vc.namespace()
    validate_on_build(ns)
    try:
        with pytest.raises(ValidationError):
            ns[f"{vc.PKG}.Item"](qty=1)
    finally:
        validate_on_build(ns, False)
    ns[f"{vc.PKG}.Item"](qty=1)
    with pytest.raises(TypeError, match=r"Namespace or a message class"):
        validate_on_build(42)


def test_a_declared_class_has_no_rules_and_validates() -> None:
    @pbj.message(full_name="pbjtest.validate.Declared")
    class Declared:
        x: int = pbj.field(1, "int32")

    assert violations(Declared(x=-1)) == [] and validate(Declared(x=-1)) == Declared(x=-1)
    with pytest.raises(TypeError, match="takes a pbj message"):
        violations(Declared)


def test_a_rule_that_does_not_compile_is_a_schema_error(tmp_path) -> None:
    (tmp_path / "bad.proto").write_text(textwrap.dedent("""
        syntax = "proto3";
        package pbjtest.bad;
        import "buf/validate/validate.proto";
        message Bad { string s = 1 [(buf.validate.field).cel = {id: "x", expression: "this +"}]; }
    """))
    from tests.oracle import GOOGLE_PROTOS

    ns = pbj.load_proto(tmp_path / "bad.proto", include=[tmp_path, PROTO_INCLUDE, GOOGLE_PROTOS])
    with pytest.raises(pbj.SchemaError, match=r"pbjtest\.bad\.Bad: a buf\.validate rule does not compile"):
        violations(ns["pbjtest.bad.Bad"](s="a"))


def test_a_cel_type_error_is_a_value_error_when_a_message_is_validated(tmp_path) -> None:
    """As docs/validation.md says: protovalidate finds a CEL type error when the rule runs, not at load."""
    (tmp_path / "typed.proto").write_text(textwrap.dedent("""
        syntax = "proto3";
        package pbjtest.typed;
        import "buf/validate/validate.proto";
        message Typed {
          int32 n = 1 [(buf.validate.field).cel = {id: "x", message: "m", expression: "this.size() > 0"}];
        }
    """))
    from tests.oracle import GOOGLE_PROTOS

    ns = pbj.load_proto(tmp_path / "typed.proto", include=[tmp_path, PROTO_INCLUDE, GOOGLE_PROTOS])
    with pytest.raises(ValueError, match=r"^pbjtest\.typed\.Typed: a buf\.validate rule failed to run: ") as err:
        violations(ns["pbjtest.typed.Typed"](n=1))
    assert not isinstance(err.value, pbj.SchemaError)


def test_violation_is_a_frozen_record() -> None:
    v = violations(_valid_root(code="a"))[0]
    assert isinstance(v, Violation)
    with pytest.raises(AttributeError):
        v.message = "x"  # type: ignore[misc]
