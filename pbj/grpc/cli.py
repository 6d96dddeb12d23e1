"""``pbj call``: call a gRPC method from the command line, with the schema from the server's reflection.

::

    pbj call HOST:PORT pkg.Service/Method --json '{"name": "ann"}'
    pbj call HOST:PORT pkg.Service/Method --json - < requests.jsonl   # one message per line when the client streams
    pbj call HOST:PORT pkg.Service/Method --text 'name: "ann"'
    pbj call HOST:PORT --list                  # the services
    pbj call HOST:PORT --describe pkg.Service  # a service, a method or a message

The schema comes from the server's reflection (v1, then v1alpha) unless
``--descriptor-set`` or ``--proto`` gives it. Every response is printed as one
ProtoJSON object per line (JSON Lines); ``--pretty`` indents them. Metadata is
``-H key:value`` (repeatable), ``--timeout`` is in seconds. TLS:
``--tls`` (the system's roots), ``--ca FILE``, ``--cert FILE --key FILE`` (a
client certificate), ``--authority NAME`` (the name checked in the server's
certificate). ``-v``/``--verbose`` also prints, on stderr (stdout stays JSON
Lines), the request metadata sent, the response headers and trailers received
(a ``-bin`` value in base64) and the status, as grpcurl's ``-v`` shows them.
Failures are one line on stderr and a non-zero exit status:
1 for an unreachable server, a bad request, an unknown name or an error
status (its code name and message, and the messages of its rich details
as ProtoJSON), 2 for bad arguments, 130 when interrupted (Ctrl-C) during the
call, which is cancelled.

This module builds the parser without importing grpcio; running the command needs it.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from pbj.errors import PbjError

__all__ = ["add_call_parser", "CallError"]


class CallError(PbjError):
    """A ``pbj call`` failure, reported as one line (``pbj: error: ...``)."""


def add_call_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``call`` command to the ``pbj`` parser's subparsers; returns its parser."""
    p = sub.add_parser("call", help="call a gRPC method (schema from the server's reflection, or given)",
                       description="Call a gRPC method with a ProtoJSON (or text format) request; each response "
                                   "is printed as one JSON object per line.")
    p.add_argument("target", metavar="HOST:PORT", help="the server's address (with --protocol connect or grpc-web, "
                                                      "also a URL ending with the path the service is mounted "
                                                      "below: http://HOST:PORT/PREFIX)")
    p.add_argument("method", nargs="?", metavar="SERVICE/METHOD", help="pkg.Service/Method (or pkg.Service.Method)")
    req = p.add_mutually_exclusive_group()
    req.add_argument("--json", metavar="JSON", help="the request as ProtoJSON; '-' reads stdin (one message per "
                                                   "line when the client streams); none sends an empty message")
    req.add_argument("--text", metavar="TEXT", help="the request in the text format; '-' reads stdin")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--descriptor-set", metavar="FILE", help="the schema from a FileDescriptorSet, not reflection")
    src.add_argument("--proto", metavar="FILE", nargs="+", help="the schema from .proto files, not reflection")
    p.add_argument("-I", "--include", metavar="DIR", action="append", help="import directory for --proto")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="list the services")
    what.add_argument("--describe", metavar="NAME", help="describe a service, method or message")
    p.add_argument("-H", "--header", metavar="KEY:VALUE", action="append", default=[],
                   help="request metadata (repeatable); a key ending in -bin takes base64")
    p.add_argument("--timeout", metavar="SECONDS", type=_positive_seconds, default=None,
                   help="the call's deadline, in seconds (> 0, at most 9,999,999.999: about 115 days)")
    p.add_argument("--pretty", action="store_true", help="indent each JSON response")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also print the request metadata, the response headers and trailers and the status "
                        "(on stderr)")
    p.add_argument("--emit-defaults", action="store_true", help="print fields that hold their default value")
    p.add_argument("--tls", action="store_true", help="connect with TLS (the system's root certificates)")
    p.add_argument("--ca", metavar="FILE", help="root certificates (PEM) to check the server with (implies --tls)")
    p.add_argument("--cert", metavar="FILE", help="client certificate chain (PEM), with --key (implies --tls)")
    p.add_argument("--key", metavar="FILE", help="client private key (PEM)")
    p.add_argument("--authority", metavar="NAME", help="the server name to check (TLS) and send as :authority")
    p.set_defaults(run=run)
    return p


def _read(path: str | None, option: str = "", pem: bytes = b"") -> bytes | None:
    """The bytes of ``path`` (``None`` for none); with ``pem``, refused unless they hold that PEM block
    (grpcio would log several core lines and fail the handshake)."""
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise CallError(f"cannot read {path}: {exc.strerror or exc}") from None
    if pem and pem not in data:
        raise CallError(f"{option} {path}: not a PEM file with a {pem.decode().strip('-').strip()} block")
    return data


def _channel(args: argparse.Namespace) -> Any:
    import grpc
    options = [("grpc.default_authority", args.authority)] if args.authority else []
    if args.ca or args.cert or args.key or args.tls:
        if bool(args.cert) != bool(args.key):
            raise CallError("--cert and --key go together")
        if args.authority:
            options.append(("grpc.ssl_target_name_override", args.authority))
        roots = _read(args.ca, "--ca", b"CERTIFICATE-----")
        chain = _read(args.cert, "--cert", b"CERTIFICATE-----")
        key = _read(args.key, "--key", b"PRIVATE KEY-----")
        creds = grpc.ssl_channel_credentials(root_certificates=roots, private_key=key, certificate_chain=chain)
        return grpc.secure_channel(args.target, creds, options=options)
    return grpc.insecure_channel(args.target, options=options)


#: gRPC over HTTP/2 ("Requests", Custom-Metadata): the key's characters (lower-cased here), a text value's.
_KEY = re.compile(r"[0-9a-z_.\-]+")
_VALUE = re.compile(r"[\x20-\x7e]*")


# The longest --timeout: 10 digits of milliseconds, what Connect's connect-timeout-ms holds
# (pbj.connect.client.MAX_TIMEOUT); grpcio's clock overflows near 8.5e9 s (DEADLINE_EXCEEDED at once).
MAX_SECONDS = 9_999_999.999


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= MAX_SECONDS:  # also refuses nan and the infinities
        raise argparse.ArgumentTypeError(f"{text!r}: the deadline must be a positive number of seconds, "
                                         f"at most {MAX_SECONDS:,}")
    return value


def _metadata(headers: list[str]) -> list[tuple[str, str | bytes]]:
    import base64
    import binascii
    out: list[tuple[str, str | bytes]] = []
    for h in headers:
        key, sep, value = h.partition(":")
        key = key.strip().lower()
        if not sep or not key:
            raise CallError(f"metadata {h!r} is not KEY:VALUE")
        if not _KEY.fullmatch(key) or key.startswith("grpc-"):
            raise CallError(f"metadata key {key!r} is not a gRPC metadata key (letters, digits, '-', '_' and '.', "
                            f"not starting with 'grpc-')")
        value = value.strip()
        if key.endswith("-bin"):
            try:
                out.append((key, base64.b64decode(value, validate=True)))
            except binascii.Error:
                raise CallError(f"metadata {key} ends in -bin: its value must be base64") from None
        elif not _VALUE.fullmatch(value):
            raise CallError(f"metadata {key}: its value must be printable ASCII (a key ending in -bin takes base64)")
        else:
            out.append((key, value))
    return out


def _schema(args: argparse.Namespace, channel: Any, metadata: list) -> Any:
    if args.descriptor_set or args.proto:
        from pbj.user_input import load_schema
        return load_schema(args)
    from pbj.grpc.reflection import NO_REFLECTION, ReflectionError, reflect
    try:
        return reflect(channel, timeout=args.timeout if args.timeout is not None else 10.0, metadata=metadata)
    except ReflectionError as exc:
        if str(exc) == NO_REFLECTION:
            raise CallError(f"{args.target} does not serve reflection: give the schema with "
                            f"--descriptor-set or --proto") from None
        raise CallError(f"{args.target}: {exc}") from None


def _split(method: str) -> tuple[str, str]:
    name = method.lstrip("/")
    if "/" in name:
        service, _, m = name.rpartition("/")
    else:
        service, _, m = name.rpartition(".")
    if not service or not m:
        raise CallError(f"{method!r} is not SERVICE/METHOD (pkg.Service/Method)")
    return service, m


def _service(ns: Any, name: str) -> Any:
    try:
        return ns.service(name)
    except KeyError as exc:
        raise CallError(str(exc.args[0]) + f" (its services: {', '.join(ns.services) or 'none'})") from None


def _describe(ns: Any, name: str) -> str:
    from pbj.schema import fields, info, is_message
    name = name.lstrip(".").replace("/", ".")
    if name in ns.services:
        svc = ns.services[name]
        return "\n".join([f"service {svc.full_name} {{", *(f"  {_signature(m)}" for m in svc), "}"])
    service, _, method = name.rpartition(".")
    if service in ns.services and method in ns.services[service].methods:
        return _signature(ns.services[service].methods[method])
    cls = ns.messages.get(name)
    if cls is not None:
        enums = {e: n for n, e in ns.enums.items()}

        def type_name(t: Any) -> str:
            if isinstance(t, str):
                return t
            if t in enums:
                return enums[t]
            return getattr(getattr(t, "__pbj_info__", None), "full_name", getattr(t, "__qualname__", str(t)))

        lines = [f"message {info(cls).full_name} {{"]
        for f in fields(cls):
            if f.map_key is not None:
                kind, label = f"map<{f.map_key}, {type_name(f.map_value)}>", ""
            else:
                kind = type_name(f.type)
                label = ("repeated " if f.repeated else "required " if f.required
                         else "optional " if f.optional and not f.oneof and not is_message(f.type) else "")
            oneof = f"  // oneof {f.oneof}" if f.oneof else ""
            lines.append(f"  {label}{kind} {f.proto_name} = {f.number};{oneof}")
        return "\n".join([*lines, "}"])
    if name in ns.enums:
        return "\n".join([f"enum {name} {{", *(f"  {m.name} = {int(m)};" for m in ns.enums[name]), "}"])
    raise CallError(f"no service, method, message or enum named {name!r} on this server")


def _signature(m: Any) -> str:
    from pbj.schema import info
    arg = ("stream " if m.client_streaming else "") + info(m.input).full_name
    ret = ("stream " if m.server_streaming else "") + info(m.output).full_name
    return f"rpc {m.name}({arg}) returns ({ret});"


def listed_or_described(args: argparse.Namespace, ns: Any) -> bool:
    """Print the services (``--list``) or what ``--describe`` names; whether the arguments asked for one."""
    if args.list:
        for name in ns.services:
            print(name)
    elif args.describe:
        print(_describe(ns, args.describe))
    return bool(args.list or args.describe)


def method_and_requests(args: argparse.Namespace, ns: Any) -> tuple[Any, Any, list[Any]]:
    """The service and method ``args.method`` names in ``ns``, and the requests the arguments give.

    Raises:
        CallError: no such service or method, a request that does not parse, or several requests
            to a method that takes one.
    """
    service_name, method_name = _split(args.method)
    svc = _service(ns, service_name)
    if method_name not in svc.methods:
        raise CallError(f"service {svc.full_name} has no method {method_name!r} (its methods: "
                        f"{', '.join(svc.methods)})")
    method = svc.methods[method_name]
    requests = _requests(args, method)
    if not method.client_streaming and len(requests) != 1:
        raise CallError(f"{method.name} takes one request, not {len(requests)}")
    return svc, method, requests


def _requests(args: argparse.Namespace, method: Any) -> list[Any]:
    import pbj
    text = args.json if args.json is not None else args.text
    if text is None:
        return [method.input()]
    if text == "-":
        text = sys.stdin.read()
    chunks = [line for line in text.splitlines() if line.strip()] if method.client_streaming else [text]
    out = []
    for i, chunk in enumerate(chunks):
        where = f"request {i + 1}: " if method.client_streaming else "request: "
        try:
            out.append(pbj.from_json(method.input, chunk) if args.json is not None
                       else pbj.from_text(method.input, chunk))
        except (pbj.JSONError, pbj.TextError) as exc:
            lines = [line for line in chunk.splitlines() if line.strip()]
            if args.json is not None and not method.client_streaming and len(lines) > 1 and _is_json(lines[0]):
                raise CallError(f"{method.name} takes one request, not {len(lines)} lines of JSON "
                                f"(only a client-streaming method reads one message per line)") from None
            raise CallError(where + str(exc)) from None
    return out


def _is_json(text: str) -> bool:
    import json
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _rpc_error(exc: Any, target: str, ns: Any = None) -> CallError:
    import grpc
    code = exc.code() if isinstance(exc, grpc.Call) else None
    details = exc.details() if isinstance(exc, grpc.Call) else str(exc)
    name = code.name if code is not None else "ERROR"
    if code is grpc.StatusCode.UNAVAILABLE:
        hint = ""
        if "Failed parsing HTTP/2" in details or "http1.x server" in details:  # grpcio's words for an HTTP/1.1 answer
            hint = (" (the server answers HTTP/1.1, which gRPC cannot use: for a Connect or gRPC-Web server add "
                    "--protocol connect or --protocol grpc-web)")
        return CallError(f"{target} is unavailable: {details}{hint}")
    return CallError(f"{name}: {details}{_rich_details(exc, ns)}")


def _rich_details(exc: Any, ns: Any) -> str:
    """`` (details: {...}; {...})``: the messages of a ``grpc-status-details-bin`` trailer, as ProtoJSON
    when the schema has their type (else the type's name); ``""`` without one."""
    from pbj.grpc.status import status_of
    try:
        rich = status_of(exc) if hasattr(exc, "trailing_metadata") else None
    except (ValueError, PbjError):
        return " (details: unreadable grpc-status-details-bin)"
    if rich is None:
        return ""
    return details_text([(d.type_url.rpartition("/")[2], d.value) for d in rich.details], ns)


def details_text(details: list[tuple[str, bytes]], ns: Any) -> str:
    """`` (details: {...}; {...})``: an error's details, ``(type full name, encoded value)`` pairs, as ProtoJSON
    when the schema ``ns`` has their type (else the type's name); ``""`` for none."""
    import pbj
    parts = []
    for type_name, value in details:
        cls = ns.messages.get(type_name) if ns is not None else None
        try:
            parts.append(pbj.to_json(pbj.decode(cls, value)) if cls is not None else type_name)
        except PbjError:
            parts.append(type_name)
    return f" (details: {'; '.join(parts)})" if parts else ""


class _Verbose:
    """``--verbose``: the metadata of a call, on stderr, in grpcurl's sections (each printed once)."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self.shown: set[str] = set()

    def section(self, title: str, metadata: Any) -> None:
        if not self.on or title in self.shown:
            return
        self.shown.add(title)
        import base64
        lines = [f"{title}:"]
        for key, value in metadata or ():
            lines.append(f"{key}: {base64.b64encode(value).decode() if isinstance(value, bytes) else value}")
        if len(lines) == 1:
            lines.append("(empty)")
        print("\n".join(lines) + "\n", file=sys.stderr, flush=True)

    def headers(self, call: Any) -> None:
        if self.on and hasattr(call, "initial_metadata"):
            self.section("Response headers received", call.initial_metadata())

    def end(self, call: Any) -> None:
        if not self.on or not hasattr(call, "trailing_metadata"):
            return
        self.section("Response trailers received", call.trailing_metadata())
        code = call.code()
        details = call.details()
        print(f"Status: {code.name if code is not None else 'UNKNOWN'}" + (f": {details}" if details else ""),
              file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Run ``pbj call`` (see the module docstring); returns the exit status.

    Raises:
        CallError: any failure (printed as one line by ``pbj``'s main).
    """
    try:
        import grpc
    except ImportError:
        raise CallError("pbj call needs grpcio: pip install 'pbj-protobuf[grpc]'") from None
    import pbj
    from pbj.grpc.client import Stub
    metadata = _metadata(args.header)
    if not args.list and not args.describe and not args.method:
        raise CallError("give SERVICE/METHOD, --list or --describe NAME")
    channel = _channel(args)
    try:
        try:
            ns = _schema(args, channel, metadata)
        except grpc.RpcError as exc:
            raise _rpc_error(exc, args.target) from None
        if listed_or_described(args, ns):
            return 0
        svc, method, requests = method_and_requests(args, ns)
        call = Stub(channel, svc)[method.name]
        argument: Any = iter(requests) if method.client_streaming else requests[0]
        indent = 2 if args.pretty else None
        result = None
        verbose = _Verbose(args.verbose)
        verbose.section("Request metadata to send", metadata)
        try:
            if method.server_streaming:
                result = call(argument, timeout=args.timeout, metadata=metadata or None)
                replies = result
            else:  # .future: a Ctrl-C while waiting can cancel the call
                result = call.future(argument, timeout=args.timeout, metadata=metadata or None)
                replies = [result.result()]
            verbose.headers(result)
            for reply in replies:
                print(pbj.to_json(reply, indent=indent, emit_defaults=args.emit_defaults), flush=True)
            verbose.end(result)
        except grpc.RpcError as exc:
            verbose.headers(exc)
            verbose.end(exc)
            raise _rpc_error(exc, args.target, ns) from None
        except KeyboardInterrupt:
            if result is not None:
                result.cancel()
            raise
        return 0
    except KeyboardInterrupt:  # the command's end, as a shell expects it: no traceback, status 128 + SIGINT
        print("pbj: interrupted", file=sys.stderr)
        return 130
    finally:
        channel.close()
