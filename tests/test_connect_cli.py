"""``pbj call --protocol connect|grpc-web``: the command line client over plain HTTP, run in the test's process."""

from __future__ import annotations

import json
import socket

import pytest

import pbj.connect
from pbj.cli import main
from tests.connect_support import SERVICE, AsyncEcho, descriptor_set, hypercorn_server, load_pbj, uvicorn_server

ns = load_pbj()
echo = ns.service(SERVICE)


@pytest.fixture(scope="module")
def reflecting():
    with hypercorn_server(pbj.connect.ASGIApplication((echo, AsyncEcho(ns)), reflection=[ns])) as url:
        yield url.removeprefix("http://")


def call(capsys, *argv):
    status = main(["call", *argv])
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("protocol", ["connect", "grpc-web"])
def test_calls_with_the_schema_from_reflection(reflecting, capsys, protocol):
    p = ["--protocol", protocol]
    assert call(capsys, reflecting, "--list", *p) == (0, f"{SERVICE}\ngrpc.reflection.v1.ServerReflection\n", "")
    status, out, _ = call(capsys, reflecting, "--describe", f"{SERVICE}.Unary", *p)
    assert (status, out) == (0, "rpc Unary(pbjtest.echo.v1.EchoRequest) returns (pbjtest.echo.v1.EchoReply);\n")
    status, out, err = call(capsys, reflecting, f"{SERVICE}/Unary", "--json", '{"text": "cli"}', "-H", "x-a: 1", "-v",
                            *p)
    assert (status, json.loads(out)) == (0, {"text": "cli", "metadata": ["x-a=1"]})
    assert "Request metadata to send:\nx-a: 1\n" in err and "x-header: h" in err
    assert "Response trailers received:\n" in err and "x-trailer: t" in err and err.endswith("Status: OK\n")
    status, out, _ = call(capsys, reflecting, f"{SERVICE}/ServerStream", "--json", '{"text": "s", "count": 2}', *p)
    assert (status, [json.loads(line) for line in out.splitlines()]) == (
        0, [{"text": "s"}, {"text": "s", "index": 1}])
    status, out, _ = call(capsys, reflecting, f"{SERVICE}/Bidi", "--json", '{"text": "a"}\n{"text": "b"}', "--http2",
                          *p)
    assert (status, [json.loads(line)["text"] for line in out.splitlines()]) == (0, ["a", "b"])


@pytest.mark.parametrize("protocol", ["connect", "grpc-web"])
def test_failures_are_one_line(reflecting, capsys, protocol):
    p = ["--protocol", protocol]
    assert call(capsys, reflecting, f"{SERVICE}/Unary", "--json", '{"fail": "details"}', *p) == (
        1, "", 'pbj: error: FAILED_PRECONDITION: not now (details: {"reason":"busy","meta":{"retry":"1s"}})\n')
    assert call(capsys, reflecting, f"{SERVICE}/Unary", "--json", '{"delay": 5}', "--timeout", "0.3", *p) == (
        1, "", "pbj: error: DEADLINE_EXCEEDED: Request timed out\n")
    status, _, err = call(capsys, reflecting, f"{SERVICE}/Nope", *p)
    assert (status, err) == (1, f"pbj: error: service {SERVICE} has no method 'Nope' (its methods: Unary, "
                                "ServerStream, ClientStream, Bidi, Missing)\n")


def test_a_schema_file_and_a_server_without_reflection(tmp_path, capsys):
    schema = tmp_path / "echo.binpb"
    schema.write_bytes(descriptor_set(ns))
    with uvicorn_server(pbj.connect.ASGIApplication((echo, AsyncEcho(ns)))) as url:
        status, out, _ = call(capsys, url, f"{SERVICE}/Unary", "--json", '{"text": "f"}', "--descriptor-set",
                              str(schema), "--protocol", "connect")
        assert (status, json.loads(out)) == (0, {"text": "f"})
        status, _, err = call(capsys, url, "--list", "--protocol", "grpc-web")
        assert (status, err) == (1, f"pbj: error: {url} does not serve reflection: give the schema with "
                                    "--descriptor-set or --proto; if its services are mounted below a path, end the "
                                    "target with it: http://HOST:PORT/PREFIX\n")  # a plain 404: no route, or no path


def test_an_unreachable_server_and_arguments_that_do_not_go_together(capsys):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    status, _, err = call(capsys, f"127.0.0.1:{port}", "--list", "--protocol", "connect", "--timeout", "5")
    assert status == 1 and err.startswith(f"pbj: error: 127.0.0.1:{port} is unavailable: ")
    assert call(capsys, "127.0.0.1:1", "--list", "--protocol", "connect", "--authority", "x") == (
        1, "", "pbj: error: --authority is for --protocol grpc (grpcio) only\n")
    with pytest.raises(SystemExit) as exited:
        main(["call", "127.0.0.1:1", "--list", "--protocol", "http3"])
    assert exited.value.code == 2


def test_a_url_with_the_default_protocol_names_protocol_connect(capsys):
    status, out, err = call(capsys, "http://127.0.0.1:9/rpc/", "--list")
    assert (status, out) == (1, "")
    assert "http://127.0.0.1:9/rpc/ is a URL: --protocol grpc (the default) takes HOST:PORT" in err
    assert "add --protocol connect" in err
