"""The error of the text format: :class:`TextError` (defined in :mod:`pbj.errors`, with the others).

Raised by :func:`pbj.from_text` for text that is not a valid text-format
encoding of the requested message (protobuf.dev "Text Format Language
Specification"). Like every pbj error it carries its facts as attributes and
renders its message from them, so code can act on an error without parsing
its text::

    no field named "amout" in message example.Transfer - at `$.transfers[2]` (line 7, column 5)
"""

from __future__ import annotations

from pbj.errors import TextError, _rebuild_text_error

_rebuild = _rebuild_text_error  # the name pickles of earlier versions refer to

__all__ = ["TextError"]
