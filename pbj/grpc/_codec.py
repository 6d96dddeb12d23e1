"""grpcio's serializer and deserializer for one message class: :func:`pbj.encode` and :func:`pbj.decode`, less the call.

grpcio calls a serializer with one argument per message. ``functools.partial(pbj.decode, cls)``
gives the same result, but pays on every message for what does not change between messages of
one class: finding the codec, the keyword defaults, the engine in use, whether the class can
hold a ``required`` field. These functions look that up once and, for the common case (the native
engine, a class with no required field at any depth, a small input), call the engine directly;
every other case (the pure-Python engine, an input the native engine leaves to Python, an error,
a class that needs the required check) goes through :func:`pbj.decode` /
:func:`pbj.encode` themselves, so results and errors are theirs exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pbj.api import DEFAULT_MAX_DEPTH, decode, encode
from pbj.engines import CURRENT
from pbj.required import FREE
from pbj.schema import is_message

__all__ = ["decoder", "encoder"]


def _adoptable(cls: type) -> Any:
    """The native codec of ``cls`` once it is compiled, if the engine can take every message of it, else ``None``."""
    codec = cls.__dict__.get("__pbj_codec__")
    if codec is not None and codec.native is not None and getattr(cls, FREE, None) is cls:
        return codec.native
    return None


def decoder(cls: type) -> Callable[[bytes], Any]:
    """``data -> pbj.decode(cls, data)``, for grpcio's ``request_deserializer``/``response_deserializer``.

    Nothing is compiled until the first message (as with :func:`pbj.decode`); the first message
    goes through :func:`pbj.decode`, which compiles the class, and the native codec is kept then.

    Raises (when called):
        DecodeError: as :func:`pbj.decode`.
    """
    adopted: list[Any] = [None]

    def decode_fast(data: bytes, cls: type = cls, adopted: list[Any] = adopted, current: Any = CURRENT,
                    depth: int = DEFAULT_MAX_DEPTH, bytes_: type = bytes) -> Any:
        native = adopted[0]
        if native is not None:
            engine = current.engine.decode  # read per call: pbj.use_engine may switch it
            if engine is not None and data.__class__ is bytes_:
                result = engine(native, data, depth)
                if result is not None:
                    return result
            return decode(cls, data)
        result = decode(cls, data)
        adopted[0] = _adoptable(cls)
        return result
    decode_fast.__qualname__ = decode_fast.__name__ = f"decode_{cls.__name__}"
    return decode_fast


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
    adopted: list[Any] = [None]
    expected = _full_name(cls)

    def checked(obj: Any) -> bytes:
        if not is_message(obj) or _full_name(type(obj)) != expected:
            raise TypeError(f"expected a {expected} message, got {_what(obj)}")
        return encode(obj)

    def encode_fast(obj: Any, cls: type = cls, adopted: list[Any] = adopted, current: Any = CURRENT) -> bytes:
        native = adopted[0]
        if native is not None:
            engine = current.engine.encode  # read per call: pbj.use_engine may switch it
            if engine is not None and obj.__class__ is cls:
                # None: declined (a value pbj.encode explains with its path); NotImplemented: sizes to measure again
                out = engine(native, obj)
                if out is not None and out is not NotImplemented:
                    return out  # type: ignore[no-any-return]
            return encode(obj) if obj.__class__ is cls else checked(obj)
        if obj.__class__ is not cls:
            return checked(obj)
        out = encode(obj)
        adopted[0] = _adoptable(cls)
        return out
    encode_fast.__qualname__ = encode_fast.__name__ = f"encode_{cls.__name__}"
    return encode_fast


def _full_name(cls: type) -> str:
    return cls.__pbj_info__.full_name  # type: ignore[attr-defined,no-any-return]  # unresolved is enough


def _what(obj: Any) -> str:
    if is_message(obj):
        return f"a {_full_name(type(obj))} message ({type(obj).__qualname__})"
    return f"{type(obj).__qualname__} {obj!r:.60}"
