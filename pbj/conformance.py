"""A testee for protobuf's conformance suite: ``python -m pbj.conformance``.

Protobuf's conformance runner (``conformance_test_runner`` in
protocolbuffers/protobuf, see ``conformance/conformance.proto``) starts the
testee as a program and talks to it over its standard input and output: each
request is a 4-byte little-endian length followed by a
``conformance.ConformanceRequest``; the testee answers each with a 4-byte
little-endian length followed by a ``conformance.ConformanceResponse``, and
stops at end of input with status 0.

Everything here is pbj itself: the request and response messages and the test
messages (``protobuf_test_messages.proto3.TestAllTypesProto3``,
``protobuf_test_messages.proto2.TestAllTypesProto2`` and the rest of their
files) are loaded at run time from a ``FileDescriptorSet`` shipped inside the
package (``pbj/data/conformance/``), so no protoc is needed.

What the testee answers (the ``result`` oneof of ``ConformanceResponse``):

* ``protobuf_payload``, ``json_payload`` or ``text_payload``: the input
  parsed as the requested message type and written in the requested output
  format (text format with :func:`pbj.to_text`, unknown fields included when
  the request sets ``print_unknown_fields``; extensions of the test messages
  are read and written by name);
* ``parse_error``: the input is not a valid encoding of the message type;
* ``serialize_error``: the parsed value cannot be written in the output
  format (a Timestamp out of range in JSON …), or a proto2 ``required``
  field is not set in binary or JSON output (Google's runtimes refuse to
  write such a message);
* ``skipped``: JSPB, input or output (not supported);
* ``runtime_error``: anything unexpected, with the exception text. The testee
  never dies mid-run.

A request for ``conformance.FailureSet`` (the runner asks for the testee's
list of known failures) is answered with an empty ``protobuf_payload``.
"""

from __future__ import annotations

import struct
import sys
import threading
from functools import cache
from importlib import resources
from typing import Any, BinaryIO

from pbj.api import decode, encode
from pbj.errors import DecodeError, EncodeError
from pbj.loader import Namespace, load_descriptor_set
from pbj.protojson import JSONError, from_json, to_json
from pbj.schema import OneOf
from pbj.textformat import TextError, from_text, to_text

__all__ = ["schema", "handle", "handle_bytes", "serve", "main"]

#: ``conformance.WireFormat`` numbers.
_PROTOBUF, _JSON, _JSPB, _TEXT_FORMAT = 1, 2, 3, 4
#: ``conformance.TestCategory.JSON_IGNORE_UNKNOWN_PARSING_TEST``.
_JSON_IGNORE_UNKNOWN = 3
_LEN = struct.Struct("<I")
_lock = threading.Lock()


@cache
def _load(resource: str) -> Namespace:
    data = resources.files("pbj").joinpath("data", "conformance", resource).read_bytes()
    return load_descriptor_set(data)


def schema() -> Namespace:
    """The classes of ``conformance.proto`` and the proto2/proto3 test messages.

    Loaded once from ``pbj/data/conformance/conformance.binpb`` (a
    ``FileDescriptorSet`` of protobuf v36.0's files, imports included).

    Returns:
        A :class:`pbj.Namespace`.
    """
    with _lock:
        return _load("conformance.binpb")


def _editions() -> Namespace:
    """The editions test messages (2023, proto2 and proto3 as editions, UNSTABLE), loaded on first use."""
    with _lock:
        return _load("editions.binpb")


#: ``_message_class``'s answers, by full name (a run asks for a few types thousands of times).
_classes: dict[str, tuple[type | None, Namespace]] = {}


def _message_class(full_name: str) -> tuple[type | None, Namespace]:
    """The class of ``full_name`` (or ``None``) and the namespace it comes from (for its extensions)."""
    found = _classes.get(full_name)
    if found is not None:
        return found
    ns = schema()
    cls = ns.get(full_name)
    # editions.binpb: packages protobuf_test_messages.editions[.proto2|.proto3] and .edition_unstable
    if cls is None and full_name.startswith("protobuf_test_messages.edition"):
        ns = _editions()
        cls = ns.get(full_name)
    found = (cls if isinstance(cls, type) and hasattr(cls, "__pbj_info__") else None), ns
    if len(_classes) < 64:  # (the names come from the requests: a bounded table)
        _classes[full_name] = found
    return found


_protocol: list[tuple[type, type]] = []


def _request_response() -> tuple[type, type]:
    """The classes ``conformance.ConformanceRequest`` and ``conformance.ConformanceResponse``."""
    if not _protocol:
        ns = schema()
        _protocol.append((ns["conformance.ConformanceRequest"], ns["conformance.ConformanceResponse"]))
    return _protocol[0]


def handle(request: Any) -> Any:
    """Answer one decoded ``conformance.ConformanceRequest``.

    Args:
        request: an instance of the loaded ``conformance.ConformanceRequest``.

    Returns:
        A ``conformance.ConformanceResponse`` instance. Never raises for a
        bad payload: failures are answers (``parse_error``,
        ``serialize_error``, ``runtime_error``, ``skipped``).
    """
    response_cls = _request_response()[1]

    def answer(which: str, value: Any) -> Any:
        return response_cls(result=OneOf(which, value))

    try:
        if request.message_type == "conformance.FailureSet":
            return answer("protobuf_payload", b"")
        payload = request.payload
        if payload is None:
            return answer("runtime_error", "the request has no payload")
        if payload.which == "jspb_payload":
            return answer("skipped", "jspb input is not supported")
        output = int(request.requested_output_format)
        if output not in (_PROTOBUF, _JSON, _TEXT_FORMAT):
            return answer("skipped", f"output format {request.requested_output_format!r} is not supported")
        cls, ns = _message_class(request.message_type)
        if cls is None:
            return answer("runtime_error", f"unknown message type {request.message_type!r}")
        obj: Any  # an instance of cls
        try:
            # a missing required field is refused when writing binary or JSON, not when reading,
            # as Google's Python testee (the reference the runner's answers come from) does
            if payload.which == "protobuf_payload":
                obj = decode(cls, payload.value, allow_partial=True)
            elif payload.which == "text_payload":
                obj = from_text(cls, payload.value, extensions=ns, allow_partial=True)
            else:
                ignore = int(request.test_category) == _JSON_IGNORE_UNKNOWN
                obj = from_json(cls, payload.value, ignore_unknown=ignore, allow_partial=True)
        except (DecodeError, TextError, RecursionError) as exc:  # JSONError is a DecodeError
            return answer("parse_error", str(exc))
        try:
            if output == _TEXT_FORMAT:  # the text format can show a missing required field
                return answer("text_payload", to_text(obj, print_unknown_fields=bool(request.print_unknown_fields),
                                                      extensions=ns))
            if output == _PROTOBUF:  # encode and to_json refuse a missing required field (EncodeError)
                return answer("protobuf_payload", encode(obj))
            return answer("json_payload", to_json(obj))
        except (EncodeError, JSONError, ValueError) as exc:
            return answer("serialize_error", str(exc))
    except Exception as exc:
        return answer("runtime_error", f"{type(exc).__name__}: {exc}")


def handle_bytes(request: bytes) -> bytes:
    """Answer one serialized ``ConformanceRequest`` with a serialized ``ConformanceResponse``.

    Args:
        request: the request's bytes (without the 4-byte length).

    Returns:
        The response's bytes (without the length). A request that cannot be
        decoded is answered with ``runtime_error``.
    """
    request_cls, response_cls = _request_response()
    req: Any
    try:
        req = decode(request_cls, request)
    except Exception as exc:
        resp = response_cls(result=OneOf("runtime_error", f"cannot decode the ConformanceRequest: {exc}"))
    else:
        resp = handle(req)
    return encode(resp)


def _read_exactly(stream: BinaryIO, n: int) -> bytes | None:
    chunks = []
    while n:
        chunk = stream.read(n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def serve(stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Answer requests from ``stdin`` on ``stdout`` until end of input.

    Each request and each response is a 4-byte little-endian length, then
    the message. The output is flushed after each response.

    Args:
        stdin, stdout: binary streams (``sys.stdin.buffer``, ``sys.stdout.buffer``).

    Returns:
        The number of requests answered.

    Raises:
        EOFError: the input ends inside a request (after its length).
    """
    count = 0
    while True:
        head = _read_exactly(stdin, 4)
        if head is None:
            return count
        (n,) = _LEN.unpack(head)
        body = _read_exactly(stdin, n) if n else b""
        if body is None:
            raise EOFError(f"input ended inside request {count + 1} ({n} bytes announced)")
        out = handle_bytes(body)
        stdout.write(_LEN.pack(len(out)))
        stdout.write(out)
        stdout.flush()
        count += 1


def main(argv: list[str] | None = None) -> int:
    """Run the testee on the process's standard input and output.

    Returns:
        The exit status: 0 at end of input, 1 if the input ends inside a request.
    """
    del argv
    try:
        serve(sys.stdin.buffer, sys.stdout.buffer)
    except EOFError as exc:
        print(f"pbj.conformance: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
