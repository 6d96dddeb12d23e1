"""Extensions: fields declared outside the message they extend (protobuf.dev "Language
Guide (proto2)", "Extensions"; "Encoding"; "ProtoJSON Format").

* :mod:`~pbj.extensions.declare`: :class:`Extension`, :func:`extension` (by hand),
  the registry of each extended class and the hidden holder classes;
* :mod:`~pbj.extensions.values`: :func:`get_extension`, :func:`has_extension`,
  :func:`extensions_of`, :func:`with_extensions` (frozen messages);
* :mod:`~pbj.codec.extensions` (also importable as ``pbj.extensions.wire``):
  what the generated codec calls (decoding the registered extensions out of
  the unknown fields, writing them in field-number order, message sets);
* the extensions of a loaded schema (``Namespace.extension("pkg.ext")``) are
  declared by the loader, :mod:`pbj.loader.extensions`.
"""

from pbj.extensions.declare import Extension, extension
from pbj.extensions.values import extensions_of, get_extension, has_extension, with_extensions

__all__ = ["Extension", "extension", "get_extension", "has_extension", "extensions_of", "with_extensions"]
