"""Errors of Connect calls with rich details: :class:`RpcError`, :func:`abort`, :func:`unpack_details`.

A Connect, gRPC or gRPC-Web call ends with a status: a code (``not_found``, gRPC's 5), a
message and details, each a ``google.protobuf.Any`` ("Connect Protocol", "Error end-stream";
gRPC's ``grpc-status-details-bin``, a ``google.rpc.Status``). connectrpc carries it as a
``ConnectError``; :class:`RpcError` is one that takes pbj messages as details (packed into
``Any`` with pbj's encoder) and the code in any of the forms pbj's gRPC code uses, so a
handler raises the same thing on both transports:

* server: ``raise pbj.connect.RpcError("not_found", "no such user", details=[ErrorInfo(...)])``
  (or :func:`abort`); connectrpc writes it in the form of the call's protocol;
* client: a failed call raises connectrpc's ``ConnectError`` (``.code``, ``.message``,
  ``.details``); :func:`unpack_details` decodes its details as pbj messages.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

from pbj.api import encode
from pbj.connect._require import Code, ConnectError, ErrorDetail
from pbj.connect._require import ProtobufPyAny as _PyAny
from pbj.errors import PbjError
from pbj.schema import info, is_message
from pbj.wellknown import Any as AnyMessage
from pbj.wkt.anys import DEFAULT_TYPE_URL_PREFIX, unpack

__all__ = ["RpcError", "abort", "code_of", "grpc_code", "unpack_details", "Code"]

#: gRPC's status numbers ("Status codes and their use in gRPC"), in connectrpc's ``Code`` order.
_NUMBERS = {code: number for number, code in enumerate(Code, start=1)}
_BY_NUMBER = {number: code for code, number in _NUMBERS.items()}


def code_of(code: Any) -> Code:
    """The connectrpc ``Code`` named by ``code``.

    Args:
        code: a ``connectrpc.code.Code``; its gRPC number (``5``); its name in either spelling
            (``"not_found"``, ``"NOT_FOUND"``); or an object with such a ``name``
            (``grpc.StatusCode.NOT_FOUND``).

    Raises:
        ValueError: ``code`` names no error status (``OK``, ``0`` and unknown names among them).
    """
    if isinstance(code, Code):
        return code
    if isinstance(code, int) and not isinstance(code, bool):
        found = _BY_NUMBER.get(code)
    else:
        name = code if isinstance(code, str) else getattr(code, "name", None)
        found = None
        if isinstance(name, str):
            try:
                found = Code(name.lower())
            except ValueError:
                found = None
    if found is None:
        raise ValueError(f"{code!r} is not an error status code (a connectrpc.code.Code, its name, or a gRPC "
                         f"status number from 1 to 16)")
    return found


def grpc_code(code: Code) -> int:
    """The gRPC status number of a connectrpc ``Code`` (``Code.NOT_FOUND`` -> ``5``)."""
    return _NUMBERS[code]


def _detail(value: Any) -> ErrorDetail:
    if isinstance(value, ErrorDetail):
        return value
    if is_message(type(value)):
        if isinstance(value, AnyMessage):
            return ErrorDetail(_PyAny(type_url=value.type_url, value=value.value))
        url = DEFAULT_TYPE_URL_PREFIX + info(type(value)).full_name
        return ErrorDetail(_PyAny(type_url=url, value=encode(value)))
    if hasattr(value, "to_binary"):  # a protobuf-py message, as connectrpc's own details are
        return ErrorDetail(value)
    raise TypeError(f"an error detail must be a pbj message (or a connectrpc ErrorDetail), not "
                    f"{type(value).__qualname__}")


class RpcError(ConnectError, PbjError):
    """Raised by a handler to end its call with an error status and rich details.

    A ``connectrpc.errors.ConnectError`` (connectrpc writes it as the call's protocol says:
    a Connect error JSON, ``grpc-status``/``grpc-message``/``grpc-status-details-bin``).

    Args:
        code: the status (see :func:`code_of`: ``"not_found"``, ``Code.NOT_FOUND``, ``5``,
            ``grpc.StatusCode.NOT_FOUND``); not ``OK``.
        message: the status message.
        details: pbj messages (each packed into an ``Any`` with type URL
            ``type.googleapis.com/<full name>``), ``pbj.wellknown.Any`` messages sent as they
            are, or connectrpc ``ErrorDetail``\\ s.
        metadata: trailing metadata sent with the status, ``(key, value)`` pairs (a ``bytes``
            value, for a key ending in ``-bin``, is sent in base64 as gRPC's binary metadata is).

    Attributes:
        code: the ``connectrpc.code.Code``; ``message``; ``details`` (``ErrorDetail``\\ s);
        metadata: the pairs given.

    Raises:
        ValueError: ``code`` is not an error status.
        TypeError: a detail is none of the above.
    """

    def __init__(self, code: Any, message: str = "", *, details: Iterable[Any] = (),
                 metadata: Sequence[tuple[str, str | bytes]] = ()) -> None:
        super().__init__(code_of(code), message, [_detail(d) for d in details])
        self.metadata = tuple(metadata)

    def __str__(self) -> str:
        return f"{self.code.name}: {self.message}"


def abort(context: Any, code: Any, message: str = "", *, details: Iterable[Any] = ()) -> NoReturn:
    """End the call of a handler with a status and rich details (raises :class:`RpcError`).

    The spelling of ``pbj.grpc.abort``, for handlers shared by both transports; ``context`` (the
    handler's ``RequestContext``) is not needed by Connect.

    Raises:
        RpcError: always.
    """
    raise RpcError(code, message, details=details)


def unpack_details(error: ConnectError, *classes: type) -> list[Any]:
    """The details of a failed call's error, each decoded as the pbj class its type URL names.

    Args:
        error: the ``ConnectError`` a call raised (or an :class:`RpcError`).
        classes: message classes to decode details with, by full name (classes declared with
            ``@pbj.message``); other details are looked up among loaded schemas, registered
            classes and the well-known types (:func:`pbj.wkt.unpack`).

    Raises:
        pbj.wkt.UnknownTypeError: no class is known for a detail's type.
        DecodeError: a detail's value is not a valid encoding of its type.
    """
    by_name = {info(c).full_name: c for c in classes}
    return [unpack(AnyMessage(type_url=DEFAULT_TYPE_URL_PREFIX + d.type_name, value=d.message_bytes),
                   by_name.get(d.type_name)) for d in error.details]


def from_grpc_error(exc: BaseException) -> RpcError | None:
    """The :class:`RpcError` for a ``pbj.grpc.RpcError`` (a handler shared with grpcio raised it), else ``None``.

    ``pbj.grpc`` is not imported here: an exception of it can only exist once it is.
    """
    status = sys.modules.get("pbj.grpc.status")
    grpc_error = getattr(status, "RpcError", None)
    if grpc_error is None or not isinstance(exc, grpc_error):
        return None
    return RpcError(exc.code.name, exc.message, details=exc.details,  # type: ignore[attr-defined]
                    metadata=exc.metadata)  # type: ignore[attr-defined]
