"""pbj.features against Google's descriptors and protoc ("Feature Settings for Editions").

* Every field, extension, oneof, message, enum, enum value and file of every
  schema in ``../shared`` (HAPI, the conformance and editions sets, pbj-it's
  and Google's editions ``.proto`` files, ``tests/protos``) and of the
  inheritance cases below: pbj's resolved :class:`pbj.features.Features` must
  equal Google's (``_GetFeatures()``), and what applies to each field must
  match ``has_presence``, ``is_packed``, ``is_required``, ``type == TYPE_GROUP``,
  the enum's ``is_closed`` and, for strings, ``utf8_validation``.
* Every error rule: the descriptor (written by hand) raises ``SchemaError``
  naming the file, the message and the field, and protoc rejects the same
  schema written as ``.proto`` with the same text.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, text_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.internal import python_edition_defaults

import pbj
from pbj import descriptor as pd
from pbj.features import EDITION_DEFAULTS, Features, resolve
from tests.conftest import REPO
from tests.oracle import GOOGLE_PROTOS, PBJ_IT, protoc

DATA = REPO / "pbj" / "data"


def _google_pool(data: bytes):
    pool = descriptor_pool.DescriptorPool()
    fds = descriptor_pb2.FileDescriptorSet.FromString(data)
    for fd in fds.file:
        pool.Add(fd)
    return pool, [fd.name for fd in fds.file]


def _google_features(d) -> tuple[int, ...]:
    gf = d._GetFeatures()
    return tuple(getattr(gf, n) for n in Features._fields)


def _walk(pool, names):
    """(kind, full name, Google descriptor) of every element of the files ``names``."""
    out = []

    def message(m):
        out.append(("message", m.full_name, m))
        for f in (*m.fields, *m.extensions):
            out.append(("field", f.full_name, f))
        for o in m.oneofs:
            out.append(("oneof", o.full_name, o))
        for e in m.enum_types:
            enum(e)
        for n in m.nested_types:
            message(n)

    def enum(e):
        out.append(("enum", e.full_name, e))
        for v in e.values:
            out.append(("enum value", f"{e.full_name}.{v.name}", v))

    for name in names:
        fdesc = pool.FindFileByName(name)
        out.append(("file", name, fdesc))
        for e in fdesc.enum_types_by_name.values():
            enum(e)
        for m in fdesc.message_types_by_name.values():
            message(m)
        for f in fdesc.extensions_by_name.values():
            out.append(("field", f.full_name, f))
    return out


def compare_with_google(data: bytes) -> dict[str, int]:
    """Resolve a ``FileDescriptorSet`` with pbj and check every element against Google's pool.

    Returns:
        How many elements of each kind were checked.
    """
    pool, names = _google_pool(data)
    r = resolve(pbj.decode(pd.FileDescriptorSet, data))
    counts: dict[str, int] = {}
    for kind, full, g in _walk(pool, names):
        counts[kind] = counts.get(kind, 0) + 1
        want = _google_features(g)
        if kind == "file":
            assert tuple(r.files[full][1]) == want, full
        elif kind == "message":
            assert tuple(r.messages[full].features) == want, full
            assert r.messages[full].json_format == want[5], full
        elif kind == "enum":
            e = r.enums[full]
            assert tuple(e.features) == want, full
            assert e.closed == g.is_closed, full
        elif kind == "enum value":
            assert tuple(r.enum_values[full]) == want, full
        elif kind == "oneof":
            assert tuple(r.oneofs[full]) == want, full
        else:
            f = r.fields[full]
            assert tuple(f.features) == want, full
            assert f.has_presence == g.has_presence, full
            assert f.packed == g.is_packed, full
            assert f.required == g.is_required, full
            assert f.delimited == (g.type == FieldDescriptor.TYPE_GROUP), full
            if g.enum_type is not None:
                assert f.enum_type == (pd.EnumType.CLOSED if g.enum_type.is_closed else pd.EnumType.OPEN), full
            else:
                assert f.enum_type is None, full
            if g.type == FieldDescriptor.TYPE_STRING:
                assert f.utf8_validation == want[3], full
            elif g.message_type is None or not g.message_type.GetOptions().map_entry:
                assert f.utf8_validation == pd.Utf8Validation.NONE, full
            assert f.json_format == want[5], full
    assert len(r.fields) == counts.get("field", 0)
    assert len(r.messages) == counts.get("message", 0)
    return counts


# ------------------------------------------------------------------ the shared schemas

def _pbj_it_sets() -> list[bytes]:
    return [protoc([p], [PBJ_IT, GOOGLE_PROTOS]) for p in sorted(PBJ_IT.glob("*.proto"))]


SCHEMAS = {
    "hapi": lambda: (DATA / "hapi-v0.55.0.binpb").read_bytes(),
    "conformance": lambda: (DATA / "conformance" / "conformance.binpb").read_bytes(),
    "editions": lambda: (DATA / "conformance" / "editions.binpb").read_bytes(),
    "google-editions": lambda: protoc(sorted((GOOGLE_PROTOS / "editions").glob("*.proto")), [GOOGLE_PROTOS]),
    "tests-protos": lambda: protoc(sorted((REPO / "tests" / "protos").glob("*.proto")),
                                   [REPO / "tests" / "protos", REPO / "pbj" / "data" / "protovalidate"]),
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_shared_schema_matches_google(name: str) -> None:
    counts = compare_with_google(SCHEMAS[name]())
    assert counts["field"] > 10
    assert counts["message"] > 2


def test_pbj_it_schemas_match_google() -> None:
    total = 0
    for data in _pbj_it_sets():
        total += compare_with_google(data).get("field", 0)
    assert total > 100


def test_conformance_types_have_the_features_of_their_syntax() -> None:
    """Known answers from the test schemas themselves, beside the differential check."""
    r = resolve(pbj.decode(pd.FileDescriptorSet, (DATA / "conformance" / "editions.binpb").read_bytes()))
    f = r.fields
    m23 = "protobuf_test_messages.editions.TestAllTypesEdition2023"
    assert f[f"{m23}.optional_int32"].field_presence == pd.FieldPresence.EXPLICIT
    assert f[f"{m23}.groupliketype"].delimited  # the file says DELIMITED
    assert not f[f"{m23}.optional_nested_message"].delimited  # the field says LENGTH_PREFIXED
    assert f[f"{m23}.packed_int32"].packed and not f[f"{m23}.unpacked_int32"].packed
    assert not f[f"{m23}.map_string_nested_message"].delimited
    p2 = "protobuf_test_messages.editions.proto2.TestAllTypesProto2"
    assert f[f"{p2}.optional_int32"].has_presence
    assert f[f"{p2}.optional_nested_enum"].enum_type == pd.EnumType.CLOSED
    assert f[f"{p2}.optional_string"].utf8_validation == pd.Utf8Validation.NONE
    p3 = "protobuf_test_messages.editions.proto3.TestAllTypesProto3"
    assert f[f"{p3}.optional_int32"].field_presence == pd.FieldPresence.IMPLICIT
    assert f[f"{p3}.optional_string"].utf8_validation == pd.Utf8Validation.VERIFY
    assert f[f"{p3}.repeated_int32"].packed
    assert r.enums[f"{p3}.NestedEnum"].enum_type == pd.EnumType.OPEN
    unstable = "protobuf_test_messages.edition_unstable.TestAllTypesEditionUnstable"
    assert not f[f"{unstable}.optional_foreign_message"].delimited
    assert r.files["editions/test_messages_edition_unstable.proto"][0] == 9999


def test_defaults_table_is_googles() -> None:
    """EDITION_DEFAULTS equals the FeatureSetDefaults Google's Python runtime ships."""
    defaults = descriptor_pb2.FeatureSetDefaults.FromString(
        python_edition_defaults._PROTOBUF_INTERNAL_PYTHON_EDITION_DEFAULTS)
    rows = sorted((d.edition, d) for d in defaults.defaults)
    for edition, ours in EDITION_DEFAULTS.items():
        if edition == pd.Edition.EDITION_PROTO2:
            edition = pd.Edition.EDITION_LEGACY  # proto2 files resolve to the legacy row
        row = [d for e, d in rows if e <= edition][-1]
        merged = descriptor_pb2.FeatureSet()
        merged.MergeFrom(row.fixed_features)
        merged.MergeFrom(row.overridable_features)
        assert tuple(ours) == tuple(getattr(merged, n) for n in Features._fields), edition


# ------------------------------------------------------------------ inheritance cases (protoc + Google)

INHERITANCE = {
    "file-json-to-nested-message-and-enum": """
        edition = "2023";
        option features.json_format = LEGACY_BEST_EFFORT;
        message A { message B { option features.json_format = ALLOW; message C { int32 x = 1; } enum E { E0 = 0; } }
                    enum F { option features.json_format = ALLOW; F0 = 0; } int32 y = 1; }
    """,
    "file-enum-type-to-nested-enum-and-values": """
        edition = "2023";
        option features.enum_type = CLOSED;
        enum Top { T1 = 1; }
        message M { enum In { I0 = 0; I1 = 1; } enum Open { option features.enum_type = OPEN; O0 = 0; }
                    In a = 1; Open b = 2; repeated In c = 3; Top d = 4; map<int32, In> e = 5; }
    """,
    "file-implicit-presence": """
        edition = "2023";
        option features.field_presence = IMPLICIT;
        message M { int32 a = 1; int32 b = 2 [features.field_presence = EXPLICIT]; M m = 3; repeated int32 r = 4;
                    oneof o { int32 x = 5; string s = 6; } string t = 7; map<string, M> mm = 8;
                    extensions 100 to 200; }
        extend M { int32 ext = 100; }
    """,
    "file-expanded": """
        edition = "2023";
        option features.repeated_field_encoding = EXPANDED;
        enum E { E0 = 0; }
        message M { repeated int32 a = 1; repeated int32 b = 2 [features.repeated_field_encoding = PACKED];
                    repeated string s = 3; repeated E e = 4; repeated M m = 5;
                    repeated double d = 6 [features.repeated_field_encoding = PACKED]; map<int32, int32> mm = 7; }
    """,
    "file-utf8-none": """
        edition = "2023";
        option features.utf8_validation = NONE;
        message M { string a = 1; string b = 2 [features.utf8_validation = VERIFY]; repeated string r = 3;
                    map<string, string> m = 4; map<string, int32> n = 5 [features.utf8_validation = VERIFY];
                    oneof o { string x = 6; } bytes y = 7; }
    """,
    "file-delimited": """
        edition = "2023";
        option features.message_encoding = DELIMITED;
        message M { M a = 1; M b = 2 [features.message_encoding = LENGTH_PREFIXED]; repeated M r = 3;
                    map<string, M> m = 4; oneof o { M x = 5; } extensions 100 to 200; }
        extend M { M ext = 100; repeated M rext = 101; }
        message N { extend M { M nested_ext = 102 [features.message_encoding = LENGTH_PREFIXED]; } }
    """,
    "proto2-legacy": """
        syntax = "proto2";
        enum E { E1 = 1; }
        enum Z { Z0 = 0; }
        message M { optional int32 a = 1; required int32 b = 2; repeated int32 c = 3;
                    repeated int32 d = 4 [packed = true]; repeated int32 e = 5 [packed = false];
                    optional group G = 6 { optional int32 x = 7; }
                    repeated group R = 8 { optional int32 y = 9; } optional E f = 10; optional string s = 11;
                    oneof o { int32 z = 12; } map<string, Z> m = 13; extensions 100 to 200; }
        extend M { optional int32 ext = 100; repeated int32 pext = 101 [packed = true];
                   optional group GE = 102 { optional int32 w = 1; } }
    """,
    "proto3-legacy": """
        syntax = "proto3";
        enum E { E0 = 0; }
        message M { int32 a = 1; optional int32 b = 2; repeated int32 c = 3; repeated int32 d = 4 [packed = false];
                    repeated int32 e = 5 [packed = true]; M m = 6; oneof o { int32 z = 7; M zm = 8; }
                    E f = 9; optional E g = 10; string s = 11; map<string, E> mm = 12; repeated string rs = 13; }
    """,
    "edition-2024": """
        edition = "2024";
        option features.enum_type = CLOSED;
        message M { int32 a = 1; repeated int32 r = 2; E e = 3; }
        enum E { E1 = 1; }
    """,
    "edition-unstable": """
        edition = "UNSTABLE";
        message M { int32 a = 1 [features.field_presence = IMPLICIT]; repeated int32 r = 2; }
    """,
}


def _compile_text(tmp_path: Path, name: str, text: str) -> tuple[bytes, str]:
    """protoc on ``text`` (as ``name.proto``): (the descriptor set, or b"" if it failed; protoc's stderr)."""
    src = tmp_path / f"{name}.proto"
    src.write_text(text)
    out = tmp_path / f"{name}.binpb"
    proc = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "--experimental_editions", "--include_imports",
                           f"-I{tmp_path}", f"--descriptor_set_out={out}", src.name],
                          capture_output=True, text=True, check=False, cwd=tmp_path)
    return (out.read_bytes() if proc.returncode == 0 else b""), proc.stderr


@pytest.mark.parametrize("name", sorted(INHERITANCE))
def test_inheritance_matches_google(tmp_path: Path, name: str) -> None:
    data, err = _compile_text(tmp_path, name.replace("-", "_"), INHERITANCE[name])
    assert data, err
    counts = compare_with_google(data)
    assert counts["field"] >= 2


def _resolve_text(tmp_path: Path, name: str):
    data, err = _compile_text(tmp_path, name.replace("-", "_"), INHERITANCE[name])
    assert data, err
    return resolve(pbj.decode(pd.FileDescriptorSet, data))


def test_inheritance_known_answers(tmp_path: Path) -> None:
    fp, et, rfe = pd.FieldPresence, pd.EnumType, pd.RepeatedFieldEncoding
    r = _resolve_text(tmp_path, "file-json-to-nested-message-and-enum")
    js = {k: v.json_format for k, v in r.messages.items()}
    assert js == {"A": pd.JsonFormat.LEGACY_BEST_EFFORT, "A.B": pd.JsonFormat.ALLOW, "A.B.C": pd.JsonFormat.ALLOW}
    assert r.enums["A.B.E"].json_format == pd.JsonFormat.ALLOW
    assert r.enums["A.F"].json_format == pd.JsonFormat.ALLOW
    assert r.fields["A.y"].json_format == pd.JsonFormat.LEGACY_BEST_EFFORT
    r = _resolve_text(tmp_path, "file-enum-type-to-nested-enum-and-values")
    assert {k: v.enum_type for k, v in r.enums.items()} == {"Top": et.CLOSED, "M.In": et.CLOSED, "M.Open": et.OPEN}
    assert r.enum_values["M.Open.O0"].enum_type == et.OPEN and r.enum_values["M.In.I0"].enum_type == et.CLOSED
    assert [r.fields[f"M.{n}"].enum_type for n in "abcd"] == [et.CLOSED, et.OPEN, et.CLOSED, et.CLOSED]
    assert r.fields["M.EEntry.value"].enum_type == et.CLOSED
    r = _resolve_text(tmp_path, "file-implicit-presence")
    presence = {n: r.fields[f"M.{n}"].field_presence for n in ("a", "b", "m", "r", "x", "s", "t", "mm")}
    assert presence == {"a": fp.IMPLICIT, "b": fp.EXPLICIT, "m": fp.EXPLICIT, "r": fp.IMPLICIT, "x": fp.EXPLICIT,
                        "s": fp.EXPLICIT, "t": fp.IMPLICIT, "mm": fp.IMPLICIT}
    assert r.fields["ext"].field_presence == fp.EXPLICIT
    assert r.oneofs["M.o"].field_presence == fp.IMPLICIT  # the oneof inherits; its members have presence
    r = _resolve_text(tmp_path, "file-expanded")
    assert {n: r.fields[f"M.{n}"].repeated_field_encoding for n in "abesmd"} == {
        "a": rfe.EXPANDED, "b": rfe.PACKED, "e": rfe.EXPANDED, "s": rfe.EXPANDED, "m": rfe.EXPANDED, "d": rfe.PACKED}
    r = _resolve_text(tmp_path, "file-utf8-none")
    u = pd.Utf8Validation
    assert {n: r.fields[f"M.{n}"].utf8_validation for n in "abrmnxy"} == {
        "a": u.NONE, "b": u.VERIFY, "r": u.NONE, "m": u.NONE, "n": u.VERIFY, "x": u.NONE, "y": u.NONE}
    assert r.fields["M.NEntry.key"].utf8_validation == u.VERIFY
    r = _resolve_text(tmp_path, "file-delimited")
    assert {n: r.fields[n].delimited for n in ("M.a", "M.b", "M.r", "M.m", "M.x", "ext", "rext", "N.nested_ext",
                                                "M.MEntry.value")} == {
        "M.a": True, "M.b": False, "M.r": True, "M.m": False, "M.x": True, "ext": True, "rext": True,
        "N.nested_ext": False, "M.MEntry.value": False}
    r = _resolve_text(tmp_path, "proto2-legacy")
    assert r.fields["M.b"].required and r.fields["M.g"].delimited and r.fields["M.r"].delimited
    assert r.fields["M.d"].packed and not r.fields["M.c"].packed and not r.fields["M.e"].packed
    assert r.fields["pext"].packed and r.fields["ge"].delimited and r.fields["M.f"].enum_type == et.CLOSED
    r = _resolve_text(tmp_path, "proto3-legacy")
    assert r.fields["M.c"].packed and not r.fields["M.d"].packed and r.fields["M.e"].packed
    assert [r.fields[f"M.{n}"].has_presence for n in ("a", "b", "m", "z", "zm", "f", "g", "s")] == [
        False, True, True, True, True, False, True, False]


# ------------------------------------------------------------------ error rules (protoc's, with its texts)

def _field(name: str, number: int, type_: str, label: str = "LABEL_OPTIONAL", extra: str = "") -> str:
    return f'field {{ name: "{name}" number: {number} label: {label} type: {type_} {extra} }}'


E23 = 'syntax: "editions" edition: EDITION_2023 '
P2 = 'syntax: "proto2" '
P3 = 'syntax: "proto3" '
INT = "TYPE_INT32"


def _msg(body: str, name: str = "M") -> str:
    return f'message_type {{ name: "{name}" {body} }}'


def _map_entry(name: str, key: str, value: str, value_extra: str = "", entry_extra: str = "") -> str:
    return (f'nested_type {{ name: "{name}" {_field("key", 1, key, extra=entry_extra)} '
            f'{_field("value", 2, value, extra=value_extra + " " + entry_extra)} options {{ map_entry: true }} }}')


CLOSED_E = 'enum_type { name: "E" value { name: "A" number: 0 } options { features { enum_type: CLOSED } } } '
ERRORS = {
    # name: (descriptor text of file x.proto, the error text, (message, field) named, the same as .proto or None)
    "message-sets-field-presence": (
        E23 + _msg('options { features { field_presence: IMPLICIT } } ' + _field("a", 1, INT)),
        "Option google.protobuf.FeatureSet.field_presence cannot be set on an entity of type `message`.", ("M", None),
        'edition = "2023"; message M { option features.field_presence = IMPLICIT; int32 a = 1; }'),
    "oneof-sets-utf8": (
        E23 + _msg(_field("a", 1, "TYPE_STRING", extra="oneof_index: 0")
                   + ' oneof_decl { name: "o" options { features { utf8_validation: NONE } } }'),
        "Option google.protobuf.FeatureSet.utf8_validation cannot be set on an entity of type `oneof`.", ("M", "o"),
        'edition = "2023"; message M { oneof o { option features.utf8_validation = NONE; string a = 1; } }'),
    "enum-value-sets-enum-type": (
        E23 + 'enum_type { name: "E" value { name: "A" number: 0 options { features { enum_type: CLOSED } } } }',
        "Option google.protobuf.FeatureSet.enum_type cannot be set on an entity of type `enum entry`.", ("E", "A"),
        'edition = "2023"; enum E { A = 0 [features.enum_type = CLOSED]; }'),
    "field-sets-enum-type": (
        E23 + _msg(_field("a", 1, INT, extra="options { features { enum_type: CLOSED } }")),
        "Option google.protobuf.FeatureSet.enum_type cannot be set on an entity of type `field`.", ("M", "a"),
        'edition = "2023"; message M { int32 a = 1 [features.enum_type = CLOSED]; }'),
    "proto2-sets-features": (
        P2 + 'options { features { enum_type: OPEN } } ' + _msg(_field("a", 1, INT)),
        "Features are only valid under editions.", (None, None),
        'syntax = "proto2"; option features.enum_type = OPEN; message M { optional int32 a = 1; }'),
    "proto3-field-sets-features": (
        P3 + _msg(_field("a", 1, INT, extra="options { features { field_presence: EXPLICIT } }")),
        "Features are only valid under editions.", ("M", "a"),
        'syntax = "proto3"; message M { int32 a = 1 [features.field_presence = EXPLICIT]; }'),
    "file-legacy-required": (
        E23 + 'options { features { field_presence: LEGACY_REQUIRED } } ' + _msg(_field("a", 1, INT)),
        "Required presence can't be specified by default.", (None, None),
        'edition = "2023"; option features.field_presence = LEGACY_REQUIRED; message M { int32 a = 1; }'),
    "implicit-message-field": (
        E23 + _msg(_field("m", 1, "TYPE_MESSAGE",
                          extra='type_name: ".M" options { features { field_presence: IMPLICIT } }')),
        "Message fields can't specify implicit presence.", ("M", "m"),
        'edition = "2023"; message M { M m = 1 [features.field_presence = IMPLICIT]; }'),
    "repeated-sets-presence": (
        E23 + _msg(_field("r", 1, INT, "LABEL_REPEATED", "options { features { field_presence: EXPLICIT } }")),
        "Repeated fields can't specify field presence.", ("M", "r"),
        'edition = "2023"; message M { repeated int32 r = 1 [features.field_presence = EXPLICIT]; }'),
    "oneof-member-sets-presence": (
        E23 + _msg(_field("r", 1, INT, extra="oneof_index: 0 options { features { field_presence: EXPLICIT } }")
                   + ' oneof_decl { name: "o" }'),
        "Oneof fields can't specify field presence.", ("M", "r"),
        'edition = "2023"; message M { oneof o { int32 r = 1 [features.field_presence = EXPLICIT]; } }'),
    "packed-string": (
        E23 + _msg(_field("r", 1, "TYPE_STRING", "LABEL_REPEATED",
                          "options { features { repeated_field_encoding: PACKED } }")),
        "Only repeated primitive fields can specify PACKED repeated field encoding.", ("M", "r"),
        'edition = "2023"; message M { repeated string r = 1 [features.repeated_field_encoding = PACKED]; }'),
    "singular-sets-encoding": (
        E23 + _msg(_field("r", 1, INT, extra="options { features { repeated_field_encoding: EXPANDED } }")),
        "Only repeated fields can specify repeated field encoding.", ("M", "r"),
        'edition = "2023"; message M { int32 r = 1 [features.repeated_field_encoding = EXPANDED]; }'),
    "int-sets-utf8": (
        E23 + _msg(_field("r", 1, INT, extra="options { features { utf8_validation: NONE } }")),
        "Only string fields can specify utf8 validation.", ("M", "r"),
        'edition = "2023"; message M { int32 r = 1 [features.utf8_validation = NONE]; }'),
    "int-sets-message-encoding": (
        E23 + _msg(_field("r", 1, INT, extra="options { features { message_encoding: DELIMITED } }")),
        "Only message fields can specify message encoding.", ("M", "r"),
        'edition = "2023"; message M { int32 r = 1 [features.message_encoding = DELIMITED]; }'),
    "map-sets-message-encoding": (
        E23 + _msg(_field("r", 1, "TYPE_MESSAGE", "LABEL_REPEATED",
                          'type_name: ".M.REntry" options { features { message_encoding: DELIMITED } }')
                   + " " + _map_entry("REntry", INT, "TYPE_MESSAGE", 'type_name: ".M"')),
        "Only message fields can specify message encoding.", ("M", "r"),
        'edition = "2023"; message M { map<int32, M> r = 1 [features.message_encoding = DELIMITED]; }'),
    "implicit-closed-enum": (
        E23 + CLOSED_E + _msg(_field("e", 1, "TYPE_ENUM",
                                     extra='type_name: ".E" options { features { field_presence: IMPLICIT } }')),
        "Implicit presence enum fields must always be open.", ("M", "e"),
        'edition = "2023"; enum E { option features.enum_type = CLOSED; A = 0; } '
        'message M { E e = 1 [features.field_presence = IMPLICIT]; }'),
    "implicit-closed-enum-map-value": (
        E23 + 'options { features { field_presence: IMPLICIT } } ' + CLOSED_E
        + _msg(_field("m", 1, "TYPE_MESSAGE", "LABEL_REPEATED", 'type_name: ".M.MEntry"') + " "
               + _map_entry("MEntry", INT, "TYPE_ENUM", 'type_name: ".E"')),
        "Implicit presence enum fields must always be open.", ("M.MEntry", "value"),
        'edition = "2023"; option features.field_presence = IMPLICIT; enum E { option features.enum_type = CLOSED; '
        'A = 0; } message M { map<int32, E> m = 1; }'),
    "implicit-default": (
        E23 + _msg(_field("e", 1, INT, extra='default_value: "3" options { features { field_presence: IMPLICIT } }')),
        "Implicit presence fields can't specify defaults.", ("M", "e"),
        'edition = "2023"; message M { int32 e = 1 [features.field_presence = IMPLICIT, default = 3]; }'),
    "required-extension": (
        E23 + _msg('extension_range { start: 10 end: 20 }')
        + ' extension { name: "e" number: 10 label: LABEL_OPTIONAL type: TYPE_INT32 extendee: ".M" '
          'options { features { field_presence: LEGACY_REQUIRED } } }',
        "Extensions can't be required.", ("", "e"),
        'edition = "2023"; message M { extensions 10 to 20; } '
        'extend M { int32 e = 10 [features.field_presence = LEGACY_REQUIRED]; }'),
    "extension-sets-presence": (
        E23 + _msg('extension_range { start: 10 end: 20 }')
        + ' extension { name: "e" number: 10 label: LABEL_OPTIONAL type: TYPE_INT32 extendee: ".M" '
          'options { features { field_presence: EXPLICIT } } }',
        "Extensions can't specify field presence.", ("", "e"),
        'edition = "2023"; message M { extensions 10 to 20; } '
        'extend M { int32 e = 10 [features.field_presence = EXPLICIT]; }'),
    "packed-option-under-editions": (
        E23 + _msg(_field("r", 1, INT, "LABEL_REPEATED", "options { packed: true }")),
        "Field option packed is not allowed under editions.", ("M", "r"),
        'edition = "2023"; message M { repeated int32 r = 1 [packed = true]; }'),
    "required-label-under-editions": (
        E23 + _msg(_field("r", 1, INT, "LABEL_REQUIRED")),
        "Required label is not allowed under editions.", ("M", "r"), None),
    "proto3-closed-enum": (
        'dependency: "p2e.proto" ' + P3 + _msg(_field("e", 1, "TYPE_ENUM", extra='type_name: ".E"')),
        'Enum type "E" is not an open enum, but is used in "M" which is a proto3 message type.', ("M", "e"),
        'syntax = "proto3"; import "p2e.proto"; message M { repeated E e = 1; }'),
    "proto3-default": (
        P3 + _msg(_field("e", 1, INT, extra='default_value: "1" oneof_index: 0 proto3_optional: true')
                  + ' oneof_decl { name: "_e" }'),
        "Explicit default values are not allowed in proto3.", ("M", "e"),
        'syntax = "proto3"; message M { optional int32 e = 1 [default = 1]; }'),
    "proto3-required": (
        P3 + _msg(_field("e", 1, INT, "LABEL_REQUIRED")),
        "Required fields are not allowed in proto3.", ("M", "e"),
        'syntax = "proto3"; message M { required int32 e = 1; }'),
    "proto3-group": (
        P3 + _msg(_field("g", 1, "TYPE_GROUP", extra='type_name: ".M"')),
        "Groups are not supported in proto3 syntax.", ("M", "g"),
        'syntax = "proto3"; message M { optional group G = 1 { int32 a = 2; } }'),
    "proto2-packed-string": (
        P2 + _msg(_field("s", 1, "TYPE_STRING", "LABEL_REPEATED", "options { packed: true }")),
        "[packed = true] can only be specified for repeated primitive fields.", ("M", "s"),
        'syntax = "proto2"; message M { repeated string s = 1 [packed = true]; }'),
    "closed-map-value-first-value": (
        P2 + 'enum_type { name: "E" value { name: "A" number: 1 } } '
        + _msg(_field("m", 1, "TYPE_MESSAGE", "LABEL_REPEATED", 'type_name: ".M.MEntry"') + " "
               + _map_entry("MEntry", INT, "TYPE_ENUM", 'type_name: ".E"')),
        "Enum value in map must define 0 as the first value.", ("M.MEntry", "value"),
        'syntax = "proto2"; enum E { A = 1; } message M { map<int32, E> m = 1; }'),
    "open-enum-first-value": (
        E23 + 'enum_type { name: "E" value { name: "A" number: 1 } }',
        "The first enum value must be zero for open enums.", ("E", "A"),
        'edition = "2023"; enum E { A = 1; }'),
    "unknown-edition": (
        'syntax: "editions" edition: EDITION_99997_TEST_ONLY ' + _msg(_field("a", 1, INT)),
        "edition 99997 is not supported", (None, None), None),
    "editions-without-edition": (
        'syntax: "editions" ' + _msg(_field("a", 1, INT)), "an editions file has no edition", (None, None), None),
    "unknown-syntax": (
        'syntax: "proto4" ' + _msg(_field("a", 1, INT)), "unknown syntax 'proto4'", (None, None), None),
}
P2E = descriptor_pb2.FileDescriptorProto(name="p2e.proto", syntax="proto2", enum_type=[
    descriptor_pb2.EnumDescriptorProto(name="E", value=[descriptor_pb2.EnumValueDescriptorProto(name="A", number=0)])])


def _error_of(text: str):
    fd = text_format.Parse(text, descriptor_pb2.FileDescriptorProto(name="x.proto"))
    files = [P2E, fd] if "p2e.proto" in fd.dependency else [fd]
    data = descriptor_pb2.FileDescriptorSet(file=files).SerializeToString()
    with pytest.raises(pbj.SchemaError) as info:
        resolve(pbj.decode(pd.FileDescriptorSet, data))
    return info.value


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_rule(tmp_path: Path, name: str) -> None:
    desc, text, (msg, field_name), proto = ERRORS[name]
    err = _error_of(desc)
    assert text in str(err)
    assert "(in x.proto)" in str(err)
    assert err.cls_name == (msg or "x.proto")
    assert err.field_name == field_name
    if msg and field_name:
        assert str(err).startswith(f"{msg}.{field_name}: ")
    if proto is not None:  # protoc rejects the same schema with the same text
        (tmp_path / "p2e.proto").write_text('syntax = "proto2"; enum E { A = 0; }\n')
        data, stderr = _compile_text(tmp_path, "x", proto)
        assert not data
        assert text in stderr, stderr


def test_unknown_feature_value() -> None:
    fd = descriptor_pb2.FileDescriptorProto(name="x.proto", syntax="editions", edition=descriptor_pb2.EDITION_2023)
    m = fd.message_type.add(name="M")
    m.field.add(name="a", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
                label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL).options.features.field_presence = 1
    files = pbj.decode(pd.FileDescriptorSet, descriptor_pb2.FileDescriptorSet(file=[fd]).SerializeToString())
    assert resolve(files).fields["M.a"].field_presence == pd.FieldPresence.EXPLICIT
    f = files.file[0].message_type[0].field[0]
    for bad in (0, 7):
        feats = attrs.evolve(f.options.features, field_presence=bad)
        bad_field = attrs.evolve(f, options=attrs.evolve(f.options, features=feats))
        bad_file = attrs.evolve(files.file[0], message_type=(attrs.evolve(files.file[0].message_type[0],
                                                                           field=(bad_field,)),))
        with pytest.raises(pbj.SchemaError, match=f"must resolve to a known value, found {bad}") as info:
            resolve([bad_file])
        assert (info.value.cls_name, info.value.field_name) == ("M", "a")


def test_every_error_case_is_valid_without_its_fault() -> None:
    """The schemas of the error cases are otherwise sound: the shared base resolves."""
    base = E23 + CLOSED_E + _msg(_field("a", 1, INT) + " " + _field("e", 2, "TYPE_ENUM", extra='type_name: ".E"'))
    fd = text_format.Parse(base, descriptor_pb2.FileDescriptorProto(name="x.proto"))
    data = descriptor_pb2.FileDescriptorSet(file=[fd]).SerializeToString()
    r = resolve(pbj.decode(pd.FileDescriptorSet, data))
    assert r.fields["M.e"].enum_type == pd.EnumType.CLOSED
    assert compare_with_google(data)["field"] == 2
