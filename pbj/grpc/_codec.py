"""grpcio's serializer and deserializer for one message class: :func:`pbj.encode` and :func:`pbj.decode`, less the call.

grpcio calls a serializer or deserializer with one argument per message. Both are made by
:mod:`pbj.api` (:func:`pbj.api.decoder_of`, :func:`pbj.api.encoder_of`): with the native engine
built, builtins of the extension that run ``pbj.decode(cls, data)`` / ``pbj.encode(obj)`` in C
with the class bound once (no Python frame per message), and hand every other case (the
pure-Python engine, an input the engine leaves to Python, an error) to the Python functions, so
results and errors are theirs exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pbj.api import decoder_of, encode, encoder_of
from pbj.schema import is_message

__all__ = ["decoder", "encoder", "type_check"]


def decoder(cls: type, catch: type[BaseException] | None = None,
            handler: Callable[[BaseException], Any] | None = None) -> Callable[[bytes], Any]:
    """``data -> pbj.decode(cls, data)``, for grpcio's ``request_deserializer``/``response_deserializer``.

    Nothing is compiled until the first message (as with :func:`pbj.decode`). ``catch`` and
    ``handler``: :func:`pbj.api.decoder_of` (a server's answer to bytes that do not decode).

    Raises (when called):
        DecodeError: as :func:`pbj.decode` (unless ``catch`` takes it).
    """
    return decoder_of(cls, catch, handler)


def encoder(cls: type) -> Callable[[Any], bytes]:
    """``obj -> pbj.encode(obj)``, for grpcio's ``request_serializer``/``response_serializer``.

    A message of another class than ``cls`` with the same full name (a declared class for a
    loaded one, a subclass) is encoded by :func:`pbj.encode`; a message of another message type
    is refused, as Google's serializers refuse it (grpcio passes whatever the caller or the
    handler gave, and its bytes would otherwise be read as the method's type at the other end).

    Raises (when called):
        TypeError: ``obj`` is not a pbj message of ``cls``'s full name (grpcio reports it as
            ``INTERNAL``, "Exception serializing request!" on a client).
        EncodeError: as :func:`pbj.encode`.
    """
    check = type_check(cls)

    def checked(obj: Any) -> bytes:
        check(obj)
        return encode(obj)
    checked.__qualname__ = checked.__name__ = f"encode_{cls.__name__}"
    return encoder_of(cls, checked)


def type_check(cls: type) -> Callable[[Any], None]:
    """``obj -> None`` for a pbj message of ``cls``'s full name (``cls`` itself, a declared class for a
    loaded one, a subclass); for anything else it raises.

    Raises (when called):
        TypeError: ``obj`` is not a pbj message of ``cls``'s full name (``"expected a pkg.Request
            message, got a pkg.Other message (Other)"``).
    """
    expected = _full_name(cls)

    def check(obj: Any) -> None:
        if obj.__class__ is not cls and (not is_message(obj) or _full_name(type(obj)) != expected):
            raise TypeError(f"expected a {expected} message, got {_what(obj)}")
    return check


def _full_name(cls: type) -> str:
    return cls.__pbj_info__.full_name  # type: ignore[attr-defined,no-any-return]  # unresolved is enough


def _what(obj: Any) -> str:
    if is_message(obj):
        return f"a {_full_name(type(obj))} message ({type(obj).__qualname__})"
    return f"{type(obj).__qualname__} {obj!r:.60}"
