"""Protobuf's text format: ``pbj.to_text`` and ``pbj.from_text``.

The text format (protobuf.dev "Text Format Language Specification") is what
``protoc --decode`` prints and what test fixtures and configuration files are
written in::

    transfer {
      amount: -5
      memo: "caf\\303\\251"
    }

``to_text(obj)`` writes a message the way Google's C++ printer does, so the
two can be compared with ``diff``; ``from_text(cls, text)`` reads one back,
raising :class:`TextError` with the line, column and field path of the first
problem. One module per concern:

* :mod:`~pbj.textformat.tokenizer`: the lexical elements, one compiled regex;
* :mod:`~pbj.textformat.escapes`: string literals, C escapes both ways;
* :mod:`~pbj.textformat.numbers`: how floats are written and narrowed;
* :mod:`~pbj.textformat.plan`: what the format needs from a message's schema;
* :mod:`~pbj.textformat.printer` and :mod:`~pbj.textformat.parser` (on the
  token cursor and value readers of :mod:`~pbj.textformat.reader`);
* :mod:`~pbj.textformat.raw`: fields without a schema (unknown fields,
  ``pbj decode-raw``);
* :mod:`~pbj.textformat.extensions`: ``[pkg.ext]`` names from a loaded schema;
* :mod:`~pbj.textformat.errors`: :class:`TextError`.
"""

from pbj.textformat.errors import TextError
from pbj.textformat.parser import from_text
from pbj.textformat.printer import to_text

__all__ = ["TextError", "from_text", "to_text"]
