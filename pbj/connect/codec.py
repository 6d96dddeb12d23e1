"""pbj's codecs for connectrpc: the binary encoding (``proto``) and ProtoJSON (``json``).

connectrpc's ``Codec`` protocol is three methods: ``name()`` (the part of the content type
after ``application/``, ``application/connect+``, ``application/grpc+`` or
``application/grpc-web+``), ``encode(message) -> bytes`` and ``decode(data,
message_class)``. Every connectrpc application and client takes its codecs (``codecs=`` on a
server, ``codec=`` on a client); these two put pbj's encoder and decoder there, so the protocol
code is connectrpc's and the message code is pbj's:

* :class:`ProtoCodec`: :func:`pbj.encode` and :func:`pbj.decode` (with the native engine, a
  decoder with its class bound, kept per class: no look-up per message);
* :class:`JSONCodec`: :func:`pbj.to_json` and :func:`pbj.from_json` ("ProtoJSON Format"); an
  ``Any`` is resolved by pbj's registry of classes (loaded schemas, classes given to
  :func:`pbj.protojson.register_types`, the well-known types).

A decode error is raised as the :class:`pbj.DecodeError` (or :class:`pbj.JSONError`) itself;
connectrpc answers it as ``invalid_argument`` on a server and raises it as such on a client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pbj.api import decoder_of, encode
from pbj.protojson import from_json, to_json
from pbj.schema import is_message

__all__ = ["ProtoCodec", "JSONCodec", "default_codecs"]


def _message_class(cls: Any) -> type:
    if not (isinstance(cls, type) and is_message(cls)):
        raise TypeError(f"pbj's codecs read pbj message classes, not {cls!r}")
    return cls


class ProtoCodec:
    """The protobuf binary encoding with pbj's codec, connectrpc's codec named ``proto``.

    Thread-safe: the decoders it keeps per class are immutable once made.
    """

    __slots__ = ("_decoders",)

    def __init__(self) -> None:
        self._decoders: dict[type, Callable[[Any], Any]] = {}  # decoder_of(cls), which reads any buffer

    def name(self) -> str:
        """``"proto"`` (``application/proto``, ``application/connect+proto``, ``application/grpc+proto`` ...)."""
        return "proto"

    def encode(self, message: Any) -> bytes:
        """:func:`pbj.encode` of ``message``.

        Raises:
            TypeError: ``message`` is not a pbj message.
            EncodeError: as :func:`pbj.encode`.
        """
        return encode(message)

    def decode(self, data: bytes | bytearray | memoryview, message_class: type) -> Any:
        """:func:`pbj.decode` of ``data`` as ``message_class``.

        Raises:
            TypeError: ``message_class`` is not a pbj message class.
            DecodeError: ``data`` is not a valid encoding (field path and byte offset).
        """
        decoder = self._decoders.get(message_class)
        if decoder is None:
            made: Callable[[Any], Any] = decoder_of(_message_class(message_class))  # reads any buffer
            decoder = self._decoders[message_class] = made
        if data.__class__ is not bytes:  # a stream's messages come as bytearray slices; the engine reads bytes
            data = bytes(data)  # fastest (a copy, then its fast path: a third of the time the buffer path takes)
        return decoder(data)


class JSONCodec:
    """ProtoJSON with pbj's converter, connectrpc's codec named ``json``.

    Args:
        ignore_unknown: skip object members the message has no field for (what Connect's
            servers and clients do by default, so that a peer with a newer schema can talk to
            an older one); ``False`` refuses them with a :class:`pbj.JSONError`.
        emit_defaults: write fields that hold their default value too.
        name: the codec's name in content types (``"json"``).
    """

    __slots__ = ("_emit_defaults", "_ignore_unknown", "_name")

    def __init__(self, *, ignore_unknown: bool = True, emit_defaults: bool = False, name: str = "json") -> None:
        self._ignore_unknown = ignore_unknown
        self._emit_defaults = emit_defaults
        self._name = name

    def name(self) -> str:
        """The codec's name (``"json"``: ``application/json``, ``application/connect+json`` ...)."""
        return self._name

    def encode(self, message: Any) -> bytes:
        """The ProtoJSON text of ``message``, UTF-8.

        Raises:
            TypeError, EncodeError: as :func:`pbj.to_json`.
        """
        return to_json(message, emit_defaults=self._emit_defaults).encode()

    def decode(self, data: bytes | bytearray | memoryview, message_class: type) -> Any:
        """The message of ``message_class`` that the ProtoJSON text ``data`` (UTF-8) holds.

        Raises:
            TypeError: ``message_class`` is not a pbj message class.
            JSONError: ``data`` is not JSON, or not a valid ProtoJSON form of the class (with the path).
        """
        return from_json(_message_class(message_class), bytes(data), ignore_unknown=self._ignore_unknown)


def default_codecs() -> list[Any]:
    """The codecs a pbj application serves by default: ``[ProtoCodec(), JSONCodec()]``."""
    return [ProtoCodec(), JSONCodec()]
