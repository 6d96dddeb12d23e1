"""ProtoJSON of loaded schemas against Google's ``json_format``, message by message.

For every message of the schemas the loader tests (HAPI v0.55.0, ``pbj-it``,
``test_messages_proto3.proto``; loaded as in ``tests/test_loaded_differential.py``)
and values from :func:`pbj.testing.values`: Google's message is parsed from
``pbj.encode(x)`` and printed with ``json_format.MessageToJson`` (options
matched to pbj's); ``pbj.to_json(x)`` must parse to the same JSON value, and
``pbj.from_json`` of Google's text must give ``x`` back, but for what JSON
cannot hold (unknown fields, NaN payloads, a ``NullValue`` number other than 0;
beyond those, only where Google's own ``json_format.Parse`` of its text loses the
same detail, and then pbj must read what Google reads).
Where Google cannot print a value (an ``Any`` of an unknown type, a Timestamp
out of range), pbj must raise ``pbj.EncodeError``.
"""

from __future__ import annotations

import enum
import json
import math

import pytest
from google.protobuf import json_format

import pbj
from pbj.schema import OneOf, info, is_message
from tests.oracle import google_class
from tests.test_loaded_differential import CASES, DEFAULT_CASES, _run

#: pbj option sets and the ``json_format`` keywords that mean the same.
OPTION_SETS = [
    ({}, {}),
    ({"emit_defaults": True, "proto_names": True, "enums_as_numbers": True},
     {"always_print_fields_with_no_presence": True, "preserving_proto_field_name": True,
      "use_integers_for_enums": True}),
]
EXAMPLES = 3


def _same(a, b) -> bool:
    """Equal as JSON can carry them: unknown fields ignored, every NaN equal, NullValue numbers equal,
    a ``Value`` without a kind equal to a null ``Value``.

    ``-0.0`` differs from ``0.0`` (JSON writes ``-0.0``).
    """
    if is_message(a) or is_message(b):
        if type(a) is type(b) and info(type(a)).full_name == "google.protobuf.Value" and None in (a.kind, b.kind):
            return {a.kind and a.kind.which, b.kind and b.kind.which} <= {None, "null_value"}  # both write null
        return type(a) is type(b) and all(_same(getattr(a, n), getattr(b, n)) for n in info(type(a)).attr_order)
    if isinstance(a, enum.IntEnum) and type(a).__name__ == "NullValue":
        return isinstance(b, int)  # JSON null has one value: NULL_VALUE (0)
    if isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, int | float) and isinstance(b, int | float)):
            return False
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, OneOf) or isinstance(b, OneOf):
        return (isinstance(a, OneOf) and isinstance(b, OneOf) and a.which == b.which
                and _same(a.value, b.value))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def check(cls, gcls, x) -> None:
    """The differential check of one value ``x`` of ``cls`` (Google's class ``gcls``) under every option set."""
    g = gcls.FromString(pbj.encode(x))
    for opts, gopts in OPTION_SETS:
        try:
            expected = json_format.MessageToJson(g, **gopts)
        except Exception:  # Google cannot print it (unknown Any type, Timestamp out of range)
            with pytest.raises(pbj.EncodeError):
                pbj.to_json(x, **opts)
            continue
        mine = pbj.to_json(x, **opts)
        assert json.loads(mine) == json.loads(expected), (opts, mine, expected)
        back = pbj.from_json(cls, expected)
        assert _same(pbj.from_json(cls, mine), back)
        if _same(back, x):
            continue
        # What JSON cannot carry (a FieldMask path "", ...): Google's own round trip loses it too.
        google_back = pbj.decode(cls, json_format.Parse(expected, gcls()).SerializeToString(deterministic=True))
        assert not _same(google_back, x), (opts, expected, back, x)
        assert _same(back, google_back), (opts, expected, back, google_back)


@pytest.mark.parametrize("suite, name", DEFAULT_CASES, ids=[f"{s}:{n}" for s, n in DEFAULT_CASES])
def test_json_matches_google(suite, name):
    _run(suite, name, EXAMPLES, check)


@pytest.mark.slow
@pytest.mark.parametrize("suite, name", CASES, ids=[f"{s}:{n}" for s, n in CASES])
def test_json_matches_google_long(suite, name):
    _run(suite, name, 200, check)


CLOSED_PROTOS = {
    "closed2.proto": """
        syntax = "proto2";
        package pbjjsonclosed.p2;
        enum Color { RED = 0; BLUE = 1; }
        message Paint { optional Color color = 1; repeated Color more = 2; }
    """,
    "closed_editions.proto": """
        edition = "2023";
        package pbjjsonclosed.ed;
        enum Color { option features.enum_type = CLOSED; RED = 0; BLUE = 1; }
        enum Open { OPEN_ZERO = 0; OPEN_ONE = 1; }
        message Paint { Color color = 1; repeated Color more = 2; Open open = 3; }
    """,
}


@pytest.fixture(scope="module")
def closed_schemas(tmp_path_factory):
    """The proto2 and editions schemas with closed enums, loaded by pbj and by Google."""
    import textwrap

    from tests.oracle import protoc

    tmp = tmp_path_factory.mktemp("closed")
    for name, text in CLOSED_PROTOS.items():
        (tmp / name).write_text(textwrap.dedent(text))
    protoc(sorted(CLOSED_PROTOS), [tmp])
    return pbj.load_proto([tmp / n for n in sorted(CLOSED_PROTOS)], include=[tmp])


@pytest.mark.parametrize("package", ["p2", "ed"])
@pytest.mark.parametrize("text, path", [('{"color": 7}', ["color"]), ('{"more": [1, 7]}', ["more", 1])])
def test_closed_enum_rejects_unknown_numbers_as_google_does(closed_schemas, package, text, path):
    name = f"pbjjsonclosed.{package}.Paint"
    with pytest.raises(json_format.ParseError):
        json_format.Parse(text, google_class(name)())
    with pytest.raises(pbj.JSONError) as err:
        pbj.from_json(closed_schemas[name], text)
    assert err.value.path == path
    assert "unknown number 7 for closed enum Color" in str(err.value)
    # a member's number is read as that member, as Google reads it
    good = text.replace("7", "1")
    expected = json_format.Parse(good, google_class(name)()).SerializeToString(deterministic=True)
    assert pbj.encode(pbj.from_json(closed_schemas[name], good)) == expected
    assert pbj.encode(pbj.from_json(closed_schemas[name], good), reverse=True) == expected


def test_open_enum_of_an_editions_file_keeps_unknown_numbers(closed_schemas):
    name = "pbjjsonclosed.ed.Paint"
    expected = json_format.Parse('{"open": 7}', google_class(name)()).SerializeToString(deterministic=True)
    value = pbj.from_json(closed_schemas[name], '{"open": 7}')
    assert value.open == 7
    assert pbj.encode(value) == expected
    assert pbj.encode(value, reverse=True) == expected
    assert json.loads(pbj.to_json(value)) == {"open": 7}
