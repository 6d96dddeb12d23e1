"""What text from a schema may become in generated source: the one rule both code generators follow.

pbj generates Python source twice over: the codec compiler (:mod:`pbj.codec`)
and the checking ``__init__`` of every message class
(:mod:`pbj.schema.constructor`). Names in a schema come from users and from
descriptor sets, which may hold any string (a descriptor set is bytes anyone can
write). Such text reaches generated source only through these functions, so no
name can start a new line of code or reach another attribute than its own.
"""

from __future__ import annotations

import keyword

__all__ = ["attr_ok", "comment"]


def attr_ok(name: str) -> bool:
    """True when ``o.<name>`` in source reaches the attribute named ``name``.

    Python NFKC-normalises identifiers in source but not attribute names held
    as strings ("Identifiers and keywords" in the Python reference), so only an
    ASCII identifier that is not a keyword is written as ``o.name``; generated
    code reaches any other through its slot.
    """
    return name.isascii() and name.isidentifier() and not keyword.iskeyword(name)


def comment(text: str) -> str:
    """``text`` made safe for a ``#`` comment in generated source: one printable line.

    Text with a character that is not printable (a newline, a line separator,
    a control character) is written escaped, as ``ascii()`` writes it.
    """
    return text if text.isprintable() else ascii(text)[1:-1]
