"""``pbj call --protocol connect|grpc-web|grpc``: the command line client over Connect and gRPC-Web too.

::

    pbj call localhost:8080 pkg.Service/Method --json '{"name": "ann"}' --protocol connect
    pbj call http://localhost:8080/api pkg.Service/Method --protocol grpc-web --json -
    pbj call localhost:8080 --list --protocol connect --http2

``--protocol grpc`` (the default) is :mod:`pbj.grpc.cli`'s client on grpcio, unchanged;
``connect`` and ``grpc-web`` call through :class:`pbj.connect.ClientSync` (connectrpc), with
the same arguments, output (JSON Lines), ``--verbose`` sections, errors and exit statuses:
the schema from ``--descriptor-set``/``--proto`` or from the server's reflection
(:func:`pbj.connect.reflect`, over the same protocol), ``-H`` request headers, ``--timeout``
(sent as ``connect-timeout-ms`` or ``grpc-timeout``), ``--tls``/``--ca``/``--cert``/``--key``.
The target is ``HOST:PORT`` (``http://``, or ``https://`` with TLS) or a URL, whose path is
the prefix the service is mounted below. ``--http2`` speaks cleartext HTTP/2 from the first
byte (what a bidirectional stream needs); without it, HTTP/1.1 (HTTP/2 when TLS negotiates it).
``--authority`` is grpcio's only.

This module builds the parser without importing connectrpc or grpcio; running the command
imports the one its protocol needs.
"""

from __future__ import annotations

import argparse
import base64
import sys
from typing import Any

from pbj.grpc.cli import CallError
from pbj.grpc.cli import add_call_parser as _grpc_call_parser

__all__ = ["add_call_parser", "run"]


def add_call_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``call`` command (:mod:`pbj.grpc.cli`'s, with ``--protocol`` and ``--http2``) to ``pbj``'s parser."""
    p = _grpc_call_parser(sub)
    p.add_argument("--protocol", choices=["grpc", "connect", "grpc-web"], default="grpc",
                   help="grpc (default: grpcio), or connect or grpc-web over plain HTTP (connectrpc: "
                        "pip install 'pbj-protobuf[connect]')")
    p.add_argument("--http2", action="store_true",
                   help="with --protocol connect or grpc-web: cleartext HTTP/2 from the first byte (a bidirectional "
                        "stream needs it, and so does a server that speaks HTTP/2 only; a server that speaks "
                        "HTTP/1.1 only, as uvicorn, closes the connection)")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``pbj call`` over the protocol ``args.protocol`` names; returns the exit status.

    Raises:
        CallError: any failure (printed as one line by ``pbj``'s main).
    """
    if args.protocol == "grpc":
        if args.target.startswith(("http://", "https://")):  # grpcio would say "Misformatted domain name"
            raise CallError(f"{args.target} is a URL: --protocol grpc (the default) takes HOST:PORT; for a Connect "
                            f"or gRPC-Web server at a URL add --protocol connect (or grpc-web)")
        from pbj.grpc.cli import run as run_grpc
        return run_grpc(args)
    if args.authority:
        raise CallError("--authority is for --protocol grpc (grpcio) only")
    try:
        import pbj.connect._require  # noqa: F401  (the ImportError naming the extra)
    except ImportError:
        raise CallError(f"pbj call --protocol {args.protocol} needs connectrpc: "
                        f"pip install 'pbj-protobuf[connect]'") from None
    return _Call(args).run()


def _read(path: str | None, option: str) -> bytes | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise CallError(f"cannot read {option} {path}: {exc.strerror or exc}") from None


class _Call:
    """One run of the command over Connect or gRPC-Web."""

    def __init__(self, args: argparse.Namespace) -> None:
        from pbj.grpc.cli import _metadata
        self.args = args
        tls = bool(args.tls or args.ca or args.cert or args.key)
        if bool(args.cert) != bool(args.key):
            raise CallError("--cert and --key go together")
        target = args.target
        if not target.startswith(("http://", "https://")):
            target = f"{'https' if tls else 'http'}://{target}"
        self.url = target.rstrip("/")
        self.metadata = _metadata(args.header)
        # HTTP headers carry text: a -bin value goes as gRPC's binary metadata does, in base64
        self.headers = [(k, base64.b64encode(v).decode() if isinstance(v, bytes) else v) for k, v in self.metadata]
        self.tls = tls

    def http_client(self) -> Any:
        from pbj.connect._require import HTTPVersion, SyncHTTPClient, SyncHTTPTransport
        a = self.args
        options: dict[str, Any] = {}
        if self.tls:
            options.update(tls_ca_cert=_read(a.ca, "--ca"), tls_include_system_certs=not a.ca,
                           tls_cert=_read(a.cert, "--cert"), tls_key=_read(a.key, "--key"))
        if a.http2:
            options["http_version"] = HTTPVersion.HTTP2
        self.transport = SyncHTTPTransport(**options)
        return SyncHTTPClient(self.transport)

    def run(self) -> int:
        from pbj.connect._require import ConnectError
        args = self.args
        if not args.list and not args.describe and not args.method:
            raise CallError("give SERVICE/METHOD, --list or --describe NAME")
        http = self.http_client()
        ns = None
        try:
            ns = self.schema(http)
            from pbj.grpc.cli import listed_or_described
            if not listed_or_described(args, ns):
                self.call(ns, http)
            return 0
        except ConnectError as exc:
            raise self.error(exc, ns) from None
        except KeyboardInterrupt:  # the command's end, as a shell expects it: no traceback, status 128 + SIGINT
            print("pbj: interrupted", file=sys.stderr)
            return 130
        finally:
            self.transport.close()

    def schema(self, http: Any) -> Any:
        from pbj.connect._require import Code, ConnectError
        args = self.args
        if args.descriptor_set or args.proto:
            from pbj.user_input import load_schema
            return load_schema(args)
        from pbj.connect.reflection import ReflectionError, reflect
        try:
            return reflect(self.url, protocol=args.protocol, timeout=args.timeout if args.timeout is not None else 10.0,
                           headers=self.headers or None, http_client=http)
        except ReflectionError as exc:
            raise CallError(f"{args.target}: {exc}") from None
        except ConnectError as exc:
            if exc.code in (Code.UNIMPLEMENTED, Code.NOT_FOUND):
                path = "" if exc.message != "Not Found" else (  # a plain HTTP 404: perhaps no route at all
                    f"; if its services are mounted below a path, end the target with it: "
                    f"{self.url.partition(':')[0]}://HOST:PORT/PREFIX")
                raise CallError(f"{args.target} does not serve reflection: give the schema with --descriptor-set "
                                f"or --proto{path}") from None
            raise

    def call(self, ns: Any, http: Any) -> None:
        import pbj
        from pbj.connect._require import ConnectError, ResponseMetadata
        from pbj.connect.client import ClientSync
        from pbj.grpc.cli import _Verbose, method_and_requests
        args = self.args
        svc, method, requests = method_and_requests(args, ns)
        verbose = _Verbose(args.verbose)
        verbose.section("Request metadata to send", self.metadata)
        indent = 2 if args.pretty else None
        client = ClientSync(self.url, svc, protocol=args.protocol, http_client=http)
        meta = ResponseMetadata()
        try:
            with meta:
                result = client[method.name](requests if method.client_streaming else requests[0],
                                             timeout=args.timeout, headers=self.headers or None)
                replies = result if method.server_streaming else [result]
                for reply in replies:
                    verbose.section("Response headers received", list(meta.headers.allitems()))
                    print(pbj.to_json(reply, indent=indent, emit_defaults=args.emit_defaults), flush=True)
        except ConnectError as exc:
            self.verbose_end(verbose, meta, exc)
            raise
        self.verbose_end(verbose, meta, None)

    @staticmethod
    def verbose_end(verbose: Any, meta: Any, exc: Any) -> None:
        if not verbose.on:
            return
        verbose.section("Response headers received", list(meta.headers.allitems()))
        verbose.section("Response trailers received", list(meta.trailers.allitems()))
        status = "OK" if exc is None else f"{exc.code.name}" + (f": {exc.message}" if exc.message else "")
        print(f"Status: {status}", file=sys.stderr, flush=True)

    def error(self, exc: Any, ns: Any) -> CallError:
        from pbj.connect._require import Code
        hint = self.hint(exc)
        if exc.code is Code.UNAVAILABLE:
            return CallError(f"{self.args.target} is unavailable: {exc.message}{hint}")
        from pbj.grpc.cli import details_text
        return CallError(f"{exc.code.name}: {exc.message}"
                         f"{details_text([(d.type_name, d.message_bytes) for d in exc.details], ns)}{hint}")

    def hint(self, exc: Any) -> str:
        """What to try, for the failures whose cause is the target or the HTTP version rather than the call:
        an HTTP 404 with no Connect error (no route there: the mount path), a server that answers another
        HTTP version than the one ``--http2`` chose, a gRPC-only server."""
        from pbj.connect._require import Code
        text = str(exc.message)
        if exc.code is Code.UNIMPLEMENTED and text == "Not Found":  # connectrpc's text for a plain HTTP 404
            return (f" (nothing answers the method below {self.url}: if the service is mounted below a path, "
                    f"end the target with it: {self.url.partition(':')[0]}://HOST:PORT/PREFIX)")
        if "'application/grpc'" in text:  # connectrpc's words for an answer in gRPC's own protocol
            return " (the server answered in the gRPC protocol: use --protocol grpc)"
        if not self.tls and "(SendRequest)" in text:  # connected, but the HTTP exchange failed (the transport's words)
            if self.args.http2:
                return (" (--http2 speaks cleartext HTTP/2 from the first byte, and a server that speaks HTTP/1.1 "
                        "only, as uvicorn and WSGI servers, closes the connection: leave out --http2)")
            return (" (the server did not answer HTTP/1.1: if it speaks HTTP/2 only, as gRPC servers do, add --http2, "
                    "or use --protocol grpc)")
        if self.args.http2 and not self.tls and "stream error" in text:
            return (f" (the server speaks HTTP/2 but refused the {self.args.protocol} request: if it is a "
                    f"gRPC-only server, use --protocol grpc)")
        return ""
