"""Rich errors: ``google.rpc.Status`` with details, in the ``grpc-status-details-bin`` trailer.

gRPC's "richer error model" (``google/rpc/status.proto``; grpc.io "Error
handling"): a server sends, beside the status code and message, a
``google.rpc.Status`` message (the same code and message, and ``details``: a
list of ``google.protobuf.Any``) encoded in the trailing metadata key
``grpc-status-details-bin``. This module does for pbj messages what
``grpcio-status``'s ``rpc_status`` does for ``_pb2`` messages, in both
directions, and the two interoperate byte for byte:

* server: raise :class:`RpcError` (``RpcError(grpc.StatusCode.NOT_FOUND, "no such
  user", details=[ErrorInfo(...)])``) from a handler of :mod:`pbj.grpc.server`,
  or call :func:`abort` with the handler's context;
* client: :func:`status_of` turns a ``grpc.RpcError`` (or an aio call's
  error) into a :class:`Status` whose details :func:`unpack_details` decodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pbj
from pbj.api import decode, encode
from pbj.errors import PbjError
from pbj.grpc._require import grpc
from pbj.schema import info
from pbj.wellknown import Any as AnyMessage
from pbj.wkt.anys import UnknownTypeError, pack, unpack

__all__ = ["Status", "RpcError", "DETAILS_KEY", "to_grpc_status", "abort", "status_of", "unpack_details"]

#: The trailing metadata key that carries the encoded ``google.rpc.Status``.
DETAILS_KEY = "grpc-status-details-bin"


@pbj.message(full_name="google.rpc.Status", syntax="proto3")
class Status:
    """``google.rpc.Status`` (``google/rpc/status.proto``).

    Attributes:
        code: the status code (a ``google.rpc.Code`` number: ``grpc.StatusCode.X.value[0]``).
        message: the developer-facing error message.
        details: ``google.protobuf.Any`` messages with more facts (``pbj.wkt.pack(msg)``).
    """

    code: int = pbj.field(1, "int32")
    message: str = pbj.field(2, "string")
    details: tuple[AnyMessage, ...] = pbj.field(3, AnyMessage, repeated=True)


_CODES = {c.value[0]: c for c in grpc.StatusCode}


def _code(code: Any) -> Any:
    """A ``grpc.StatusCode`` from itself or its number."""
    if isinstance(code, grpc.StatusCode):
        return code
    found = _CODES.get(code)
    if found is None:
        raise ValueError(f"{code!r} is not a gRPC status code")
    return found


class RpcError(PbjError):
    """Raised by a handler to end its RPC with a status (and rich details).

    Args:
        code: a ``grpc.StatusCode`` (or its number); not ``OK``.
        message: the status message (``details()`` to grpcio clients).
        details: pbj messages (each packed into an ``Any``) or ready ``Any``
            messages, sent in ``grpc-status-details-bin``; none sends no trailer.
        metadata: more trailing metadata, ``(key, value)`` pairs.

    Raises:
        ValueError: ``code`` is not a status code, or is ``OK``.
        TypeError: a detail is not a pbj message.
    """

    def __init__(self, code: Any, message: str = "", *, details: Iterable[Any] = (),
                 metadata: Sequence[tuple[str, str | bytes]] = ()) -> None:
        self.code = _code(code)
        if self.code is grpc.StatusCode.OK:
            raise ValueError("RpcError needs an error status, not OK")
        self.message = message
        self.details = tuple(d if isinstance(d, AnyMessage) else pack(d) for d in details)
        self.metadata = tuple(metadata)
        super().__init__(f"{self.code.name}: {message}")


def to_grpc_status(error: RpcError) -> Any:
    """The ``grpc.Status`` (code, details, trailing metadata) a server aborts with for ``error``.

    The trailing metadata holds ``grpc-status-details-bin`` when ``error`` has details.
    """
    trailer = tuple(error.metadata)
    if error.details:
        rich = Status(code=error.code.value[0], message=error.message, details=error.details)
        trailer += ((DETAILS_KEY, encode(rich)),)
    return _GrpcStatus(error.code, error.message, trailer)


class _GrpcStatus(grpc.Status):
    """A ``grpc.Status`` (grpcio gives only the abstract base)."""

    def __init__(self, code: Any, details: str, trailing_metadata: tuple) -> None:
        self.code = code
        self.details = details
        self.trailing_metadata = trailing_metadata


def abort(context: Any, code: Any, message: str = "", *, details: Iterable[Any] = ()) -> Any:
    """End the RPC of a handler's ``context`` with a status and rich details (raises; never returns).

    For a ``grpc.aio`` handler, ``await abort(context, ...)``. Same arguments as :class:`RpcError`.
    A context with no ``abort_with_status`` (connectrpc's, where :mod:`pbj.connect` serves the
    handler) is ended by raising the :class:`RpcError`, which pbj.connect sends as the status.

    Raises:
        RpcError: under pbj.connect (its context has no ``abort_with_status``).
        Exception: what ``context.abort_with_status`` raises to end the handler.
    """
    error = RpcError(code, message, details=details)
    abort_with_status = getattr(context, "abort_with_status", None)
    if abort_with_status is None:
        raise error
    return abort_with_status(to_grpc_status(error))


def status_of(error: Any) -> Status | None:
    """The rich status a failed call carried, or ``None`` when its trailers hold none.

    Args:
        error: a ``grpc.RpcError`` raised by a call (a ``grpc.Call``), or a
            ``grpc.aio.AioRpcError``.

    Returns:
        The decoded :class:`Status`, or ``None`` without a ``grpc-status-details-bin`` trailer.

    Raises:
        ValueError: the trailer's code or message differ from the call's status
            (as ``grpcio-status`` refuses them).
        DecodeError: the trailer is not a ``google.rpc.Status``.
    """
    trailing = error.trailing_metadata() or ()
    for key, value in trailing:
        if key == DETAILS_KEY:
            rich = decode(Status, value)
            if rich.code != error.code().value[0]:
                raise ValueError(f"the status details' code {rich.code} does not match the call's {error.code()}")
            if rich.message != (error.details() or ""):
                raise ValueError("the status details' message does not match the call's")
            return rich
    return None


def unpack_details(status: Status, *classes: type) -> list[Any]:
    """The messages in a :class:`Status`'s details, each decoded as the class its type URL names.

    Args:
        status: the rich status (:func:`status_of`).
        classes: message classes to decode details with, by full name (for classes declared
            with ``@pbj.message``); other details are looked up among loaded schemas and
            registered classes (:func:`pbj.wkt.unpack`).

    Raises:
        pbj.wkt.UnknownTypeError: no class is known for a detail's type URL.
        DecodeError: a detail's value is not a valid encoding of its type.
    """
    by_name = {info(c).full_name: c for c in classes}
    try:
        return [unpack(d, by_name.get(d.type_url.rpartition("/")[2])) for d in status.details]
    except UnknownTypeError as exc:
        name = exc.type_url.rpartition("/")[2].rpartition(".")[2] or "Cls"
        raise UnknownTypeError(exc.type_url, give_class=f"pbj.grpc.unpack_details(status, {name})") from None
