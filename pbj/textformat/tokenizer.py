"""The lexical elements of the text format, read by one compiled regular expression.

protobuf.dev "Text Format Language Specification", "Lexical Elements":
whitespace (space, ``\\n``, ``\\t``, ``\\v``, ``\\f``, ``\\r``) and ``#`` comments
separate tokens; the tokens are identifiers, the numeric literals (``FLOAT``,
``DEC_INT``, ``OCT_INT``, ``HEX_INT``), string literals in single or double
quotes, and the symbols ``{ } < > [ ] : ; , - /``. The longest match wins
(``10f`` is one ``FLOAT``), and a number may not run into an identifier
(``10bar`` is an error, ``10 bar`` and ``10,bar`` are not).

An identifier is the spec's ``[A-Za-z_][A-Za-z0-9_]*``, and also any other Unicode
letter, digit (not first) or underscore run, as Python identifiers are (``\\w`` of
:mod:`re`): a declared class's field named ``höhe`` is printed as such, and must read back.
protoc refuses such names, so no text a Google runtime writes or reads changes.

:data:`TOKEN` matches the whitespace and comments before a token together with
the token, in one call from any position: ``m.lastgroup`` names the kind of
token, one of :data:`KINDS`. It matches at every position (the ``end`` kind at
the end of the text, the error kinds on anything else), so the parser never
needs a second pattern or a character loop. :data:`NAME_PIECE` reads what sits
between the brackets of an extension name or an ``Any`` type URL (the spec's
``TypeName`` and ``Domain``), where whitespace and comments may separate the
pieces, as in C++.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol, cast

__all__ = ["TOKEN", "NAME_PIECE", "KINDS", "ERROR_KINDS", "line_and_column"]

_SKIP = r"(?:[ \t\n\v\f\r]+|\#[^\n]*)*"
_DEC_LIT = r"(?:0|[1-9][0-9]*)"
_EXP = r"[eE][+-]?[0-9]+"
_NOT_IDENT = r"(?!\w)"


class _TokenMatch(Protocol):
    """What :data:`TOKEN` returns: never ``None``, and always in exactly one named group."""

    @property
    def lastgroup(self) -> str: ...

    def span(self, group: str) -> tuple[int, int]: ...


#: Whitespace and comments, then one token; ``m.lastgroup`` is its kind.
#: (Typed as ``_TokenMatch``: the pattern matches at every position, in one named group.)
TOKEN: Callable[[str, int], _TokenMatch] = cast("Callable[[str, int], _TokenMatch]", re.compile(_SKIP + rf"""(?:
    (?P<ident>[^\W\d]\w*)
  | (?P<sym>[{{}}<>\[\]:;,\-/])
  | (?P<str>"[^"\\\n]*(?:\\[^\n][^"\\\n]*)*"|'[^'\\\n]*(?:\\[^\n][^'\\\n]*)*')
  | (?P<float>(?:\.[0-9]+(?:{_EXP})?|{_DEC_LIT}(?:\.[0-9]*(?:{_EXP})?|{_EXP}))[fF]?|{_DEC_LIT}[fF]){_NOT_IDENT}
  | (?P<hex>0[xX][0-9a-fA-F]+){_NOT_IDENT}
  | (?P<oct>0[0-7]+){_NOT_IDENT}
  | (?P<dec>{_DEC_LIT}){_NOT_IDENT}
  | (?P<end>\Z)
  | (?P<badnum>[0-9.][\w.]*)
  | (?P<badstr>["'])
  | (?P<bad>.)
)""", re.VERBOSE | re.DOTALL).match)

#: Whitespace and comments, then a run of the characters of a type name or type URL: RFC 3986's
#: unreserved characters and sub-delimiters (less ``'``, a string quote here), ``%`` and ``/``, as
#: C++ and Google's Python parser take them (the conformance tests
#: ``AnyFieldWithSpecialCharactersInTypeUrlPrefix``, ``...PercentEscape...``); ``:`` and ``@`` are
#: refused as they refuse them. The skip is atomic (``(?>...)``): a comment is dropped whole, never
#: cut short by backtracking so that its last word became a piece of the name.
NAME_PIECE = re.compile("(?>" + _SKIP + r")([A-Za-z0-9_.\-~!$&()*+,;=%/]+)").match

#: Every token kind :data:`TOKEN` reports.
KINDS = frozenset({"ident", "float", "hex", "oct", "dec", "str", "sym", "end", "badnum", "badstr", "bad"})
#: The kinds that are errors wherever they appear, with what is wrong.
ERROR_KINDS = {
    "badnum": "a number may not run into letters, digits or dots",
    "badstr": "a string with no closing quote on its line",
    "bad": "a character that starts no token",
}


def line_and_column(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column (in characters) of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - text.rfind("\n", 0, offset)
