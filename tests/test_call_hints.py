"""``pbj call`` says what to try when a call fails because of where or how it was sent: a target without
the path the service is mounted below, and an HTTP version the server does not speak (``--http2`` or not,
``--protocol grpc`` against an HTTP/1.1 server). One uvicorn server (HTTP/1.1 only, the service mounted at
``/api``) and one grpcio server (HTTP/2 only), each started once."""

from __future__ import annotations

import pytest

import pbj.connect
import pbj.grpc
from pbj.cli import main
from pbj.grpc.reflection import add_reflection
from tests import connect_support as cs
from tests import grpc_support as gs

starlette_routing = pytest.importorskip("starlette.routing")


@pytest.fixture(scope="module")
def mounted():
    from starlette.applications import Starlette

    ns = cs.load_pbj()
    app = pbj.connect.ASGIApplication((ns.service(cs.SERVICE), cs.AsyncEcho(ns)), reflection=[ns])
    with cs.uvicorn_server(Starlette(routes=[starlette_routing.Mount("/api", app=app)])) as url:
        yield url, ns


@pytest.fixture(scope="module")
def grpc_only():
    ns = gs.load_pbj()
    with gs.serving(lambda s: (pbj.grpc.add_to_server(s, ns.service(gs.SERVICE), gs.PbjEcho(ns)),
                               add_reflection(s, ns))) as address:
        yield address


def failure(capsys, *argv: str) -> str:
    assert main(["call", *argv, "--timeout", "10"]) == 1
    out = capsys.readouterr()
    assert out.out == "" and out.err.startswith("pbj: error: ") and out.err.count("\n") == 1
    return out.err


def test_a_target_without_the_mount_path(mounted, capsys, tmp_path):
    url, ns = mounted
    assert main(["call", f"{url}/api", "--list", "--protocol", "connect"]) == 0  # the right target
    capsys.readouterr()
    err = failure(capsys, url, "--list", "--protocol", "connect")
    assert err.endswith(f"{url} does not serve reflection: give the schema with --descriptor-set or --proto; if "
                        f"its services are mounted below a path, end the target with it: http://HOST:PORT/PREFIX\n")
    schema = tmp_path / "echo.binpb"
    schema.write_bytes(cs.descriptor_set(ns))
    err = failure(capsys, url, f"{cs.SERVICE}/Unary", "--json", "{}", "--descriptor-set", str(schema),
                  "--protocol", "grpc-web")
    assert err == (f"pbj: error: UNIMPLEMENTED: Not Found (nothing answers the method below {url}: if the service "
                   f"is mounted below a path, end the target with it: http://HOST:PORT/PREFIX)\n")


def test_an_http_version_the_server_does_not_speak(mounted, grpc_only, capsys):
    url, _ = mounted
    err = failure(capsys, f"{url}/api", "--list", "--protocol", "connect", "--http2")
    assert err.endswith("closes the connection: leave out --http2)\n"), err
    err = failure(capsys, url.removeprefix("http://"), "--list")
    assert err.endswith("(the server answers HTTP/1.1, which gRPC cannot use: for a Connect or gRPC-Web server "
                        "add --protocol connect or --protocol grpc-web)\n"), err
    err = failure(capsys, grpc_only, "--list", "--protocol", "connect")
    assert err.endswith("(the server did not answer HTTP/1.1: if it speaks HTTP/2 only, as gRPC servers do, add "
                        "--http2, or use --protocol grpc)\n"), err
    err = failure(capsys, grpc_only, "--list", "--protocol", "connect", "--http2")
    assert err.endswith("refused the connect request: if it is a gRPC-only server, use --protocol grpc)\n"), err
    err = failure(capsys, grpc_only, "--list", "--protocol", "grpc-web", "--http2")
    assert err.endswith("(the server answered in the gRPC protocol: use --protocol grpc)\n"), err
