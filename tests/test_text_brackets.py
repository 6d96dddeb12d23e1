"""Names in brackets in the text format: ``Any`` type URLs and extension names, against Google's parser.

protobuf.dev "Text Format Language Specification": a field name in brackets
is an extension name or an ``Any`` type URL; whitespace and comments may
stand between its pieces (the conformance tests ``AnyFieldWithWhitespaceInTypeUrl``
and ``AnyFieldWithCommentsInTypeUrl`` join them, as C++ does). The URL prefix
holds RFC 3986's unreserved characters, sub-delimiters (less ``'``), ``%``
escapes and ``/``: ``:`` and ``@`` are refused, as Google's parsers refuse
them. Each case is read by pbj and by Google's ``text_format``, which must agree.
"""

from __future__ import annotations

import pytest
from google.protobuf import text_format

import pbj
from pbj import conformance
from tests.oracle import google_class
from tests.test_conformance import _google

T = "protobuf_test_messages.proto3.TestAllTypesProto3"
URL = f"type.googleapis.com/{T}"
ODD = f"non.default.domain/sub-path_0/~!$&()*+,;=/{T}"

CASES = {
    # (text inside the brackets, the type URL read, or None: refused)
    "plain": (URL, URL),
    "colon in the domain": (f"type.googleapis.c:om/{T}", None),
    "at sign in the domain": (f"type.googleapis.c@om/{T}", None),
    "colon in a path segment": (f"type.googleapis.com/sub:path/{T}", None),
    "only a colon": (f":/{T}", None),
    "question mark": (f"a?b.com/{T}", None),
    "comment before the closing bracket": (f"{URL} # comment\n", URL),
    "comment with words before the closing bracket": (f"{URL}# c d e\n", URL),
    "comment after the opening bracket": (f"# comment\n {URL}", URL),
    "comment after the slash": (f"type.googleapis.com/ # c\n {T}", URL),
    "whitespace inside pieces": (f"ty pe.googleapis.com/\n {T[:12]}\t{T[12:]} ", URL),
    "sub-delimiters": (ODD, ODD),
    "percent escape": (f"a.com/%2F/{T}", f"a.com/%2F/{T}"),
    "trailing dot in the type name": (f"{URL}.", None),
    "leading dot in the type name": (f"type.googleapis.com/.{T}", None),
}


@pytest.fixture(scope="module")
def classes():
    _google()
    return conformance.schema()[T], google_class(T)


@pytest.mark.parametrize("name", list(CASES))
def test_any_type_url_in_brackets(classes, name):
    ours, google = classes
    inside, want = CASES[name]
    text = "optional_any { [" + inside + "] { optional_int32: 5 } }"
    try:
        text_format.Parse(text, google())
        google_accepts = True
    except text_format.ParseError:
        google_accepts = False
    assert google_accepts == (want is not None), "Google's parser disagrees with the table"
    if want is None:
        with pytest.raises(pbj.TextError):
            pbj.from_text(ours, text)
        return
    got = pbj.from_text(ours, text)
    assert got.optional_any.type_url == want
    assert pbj.decode(ours, got.optional_any.value).optional_int32 == 5


def test_a_colon_is_refused_with_a_reason(classes):
    ours, _ = classes
    with pytest.raises(pbj.TextError, match=r'found ":" \(a name in brackets holds letters, digits and') as err:
        pbj.from_text(ours, f"optional_any {{ [type.googleapis.c:om/{T}] {{ }} }}")
    assert (err.value.line, err.value.column) == (1, 34)


def test_a_comment_inside_an_extension_name_is_dropped_whole(classes):
    ours, _ = classes
    with pytest.raises(pbj.TextError, match=r'no extension named "pkg\.ext" of message'):
        pbj.from_text(ours, "[pkg.ext # a comment\n]: 1")
