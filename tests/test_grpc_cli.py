"""``pbj call``: the command line gRPC client, against a pbj server with reflection on 127.0.0.1."""

from __future__ import annotations

import io
import json

import pytest

import pbj
import pbj.grpc
from pbj.cli import main
from pbj.grpc.reflection import add_reflection
from tests.grpc_support import FILES, PROTOS, SERVICE, PbjEcho, load_pbj, serving

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def address():
    ns = load_pbj()
    with serving(lambda s: (pbj.grpc.add_to_server(s, ns.service(SERVICE), PbjEcho(ns)), add_reflection(s, ns))) as a:
        yield a


@pytest.fixture(scope="module")
def bare_address():
    """A server without reflection."""
    ns = load_pbj()
    with serving(lambda s: pbj.grpc.add_to_server(s, ns.service(SERVICE), PbjEcho(ns))) as a:
        yield a


def call(capsys, *argv, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    status = main(["call", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_unary_json_lines_and_metadata(capsys, address):
    status, out, err = call(capsys, address, f"{SERVICE}/Unary", "--json", '{"text": "hi", "blob": "AAE="}',
                            "-H", "x-user: ann", "-H", "x-raw-bin: AAE=", "--timeout", "10")
    assert (status, err) == (0, "")
    assert json.loads(out) == {"text": "hi", "blob": "AAE=", "metadata": ["x-user=ann", "x-raw-bin=b'\\x00\\x01'"]}


def test_server_stream_pretty(capsys, address):
    status, out, _ = call(capsys, address, f"{SERVICE}.ServerStream", "--json", '{"text": "s", "count": 2}', "--pretty")
    assert status == 0
    assert out == '{\n  "text": "s"\n}\n{\n  "text": "s",\n  "index": 1\n}\n'


def test_client_stream_from_stdin(capsys, address, monkeypatch):
    status, out, _ = call(capsys, address, f"{SERVICE}/ClientStream", "--json", "-",
                          stdin='{"text": "a"}\n\n{"text": "b"}\n', monkeypatch=monkeypatch)
    assert (status, out) == (0, '{"text":"a,b","index":2}\n')


def test_text_format_request(capsys, address):
    status, out, _ = call(capsys, address, f"{SERVICE}/Bidi", "--text", 'text: "t"')
    assert (status, out) == (0, '{"text":"t"}\n')


def test_list_and_describe(capsys, address):
    status, out, _ = call(capsys, address, "--list")
    assert (status, out.split()) == (0, [SERVICE, "grpc.reflection.v1.ServerReflection"])
    status, out, _ = call(capsys, address, "--describe", f"{SERVICE}/ServerStream")
    assert out == "rpc ServerStream(pbjtest.echo.v1.EchoRequest) returns (stream pbjtest.echo.v1.EchoReply);\n"
    status, out, _ = call(capsys, address, "--describe", "pbjtest.common.v1.Money")
    assert out == "message pbjtest.common.v1.Money {\n  string currency = 1;\n  int64 units = 2;\n}\n"


def test_schema_from_proto_files(capsys, bare_address):
    status, out, _ = call(capsys, bare_address, f"{SERVICE}/Unary", "--json", '{"text": "p"}',
                            "--proto", *(str(PROTOS / f) for f in FILES), "-I", str(PROTOS))
    assert (status, json.loads(out)["text"]) == (0, "p")


@pytest.mark.parametrize(("argv", "message"), [
    ([f"{SERVICE}/Unary", "--json", '{"fail": "details"}'], "pbj: error: FAILED_PRECONDITION: not now (details: "
                                                   '{"reason":"busy","meta":{"retry":"1s"}})\n'),
    ([f"{SERVICE}/Unary", "--json", '{"delay": 2}', "--timeout", "0.1"],
     "pbj: error: DEADLINE_EXCEEDED: Deadline Exceeded\n"),
    ([f"{SERVICE}/Nope"], f"pbj: error: service {SERVICE} has no method 'Nope' (its methods: Unary, ServerStream, "
                          "ClientStream, Bidi, Missing)\n"),
    ([f"{SERVICE}/Missing"], f"pbj: error: UNIMPLEMENTED: method {SERVICE}/Missing is not implemented\n"),
    ([f"{SERVICE}/Unary", "--json", '{"txt": 1}'],
     "pbj: error: request: unknown field 'txt' in message pbjtest.echo.v1.EchoRequest; did you mean 'text'? "
     "- at `$.txt`\n"),
    (["Unary"], "pbj: error: 'Unary' is not SERVICE/METHOD (pkg.Service/Method)\n"),
    ([f"{SERVICE}/Unary", "-H", "novalue"], "pbj: error: metadata 'novalue' is not KEY:VALUE\n"),
    (["--describe", "no.Such"], "pbj: error: no service, method, message or enum named 'no.Such' on this server\n"),
])
def test_one_line_errors(capsys, address, argv, message):
    status, out, err = call(capsys, address, *argv)
    assert (status, out, err) == (1, "", message)


def test_unknown_service_suggests(capsys, address):
    status, _, err = call(capsys, address, "pbjtest.echo.v1.Ech/Unary")
    assert status == 1 and err.startswith("pbj: error: no service named 'pbjtest.echo.v1.Ech' in this schema; "
                                          "did you mean 'pbjtest.echo.v1.Echo'?")


def test_unreachable_and_no_reflection(capsys, bare_address):
    status, _, err = call(capsys, "127.0.0.1:1", "--list", "--timeout", "2")
    assert status == 1 and err.startswith("pbj: error: 127.0.0.1:1 is unavailable: ") and err.count("\n") == 1
    status, _, err = call(capsys, bare_address, "--list")
    assert (status, err) == (1, f"pbj: error: {bare_address} does not serve reflection: give the schema with "
                                "--descriptor-set or --proto\n")


# ------------------------------------------------------------------ TLS and call credentials

@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    """A pbj server with TLS (a self-signed certificate for 127.0.0.1 made by openssl); yields (address, cert path)."""
    import shutil
    import subprocess

    import grpc
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True, timeout=60)
    ns = load_pbj()
    creds = grpc.ssl_server_credentials([(key.read_bytes(), cert.read_bytes())])
    from concurrent import futures
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pbj.grpc.add_to_server(server, ns.service(SERVICE), PbjEcho(ns))
    add_reflection(server, ns)
    port = server.add_secure_port("127.0.0.1:0", creds)
    server.start()
    try:
        yield f"127.0.0.1:{port}", cert, ns
    finally:
        server.stop(None).wait(10)


def test_tls_with_a_ca_file(capsys, tls_server):
    address, cert, _ = tls_server
    status, out, err = call(capsys, address, f"{SERVICE}/Unary", "--json", '{"text": "tls"}', "--ca", str(cert),
                            "--timeout", "10")
    assert (status, json.loads(out), err) == (0, {"text": "tls"}, "")
    status, _, err = call(capsys, address, "--list", "--timeout", "5")  # plaintext to a TLS server
    assert status == 1 and err.startswith("pbj: error: ") and err.count("\n") == 1


def test_call_credentials_pass_through(tls_server):
    import grpc
    address, cert, ns = tls_server

    def plugin(context, callback):
        callback((("x-token", "secret"),), None)
    creds = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
    with grpc.secure_channel(address, creds) as channel:
        stub = pbj.grpc.Stub(channel, ns.service(SERVICE))
        reply = stub.Unary(ns["pbjtest.echo.v1.EchoRequest"](text="c"), timeout=10,
                           credentials=grpc.metadata_call_credentials(plugin))
    assert list(reply.metadata) == ["x-token=secret"]


@pytest.mark.parametrize(("header", "message"), [
    ("Bad Key:1", "pbj: error: metadata key 'bad key' is not a gRPC metadata key (letters, digits, '-', '_' and '.', "
                  "not starting with 'grpc-')\n"),
    ("grpc-timeout:1S", "pbj: error: metadata key 'grpc-timeout' is not a gRPC metadata key (letters, digits, '-', "
                        "'_' and '.', not starting with 'grpc-')\n"),
    ("x-name:caf\u00e9", "pbj: error: metadata x-name: its value must be printable ASCII (a key ending in -bin takes "
                         "base64)\n"),
])
def test_bad_metadata_is_refused_before_the_call(capsys, address, header, message):
    # grpcio would log a multi-line core error and answer INTERNAL "Invalid metadata"
    status, out, err = call(capsys, address, f"{SERVICE}/Unary", "-H", header)
    assert (status, out, err) == (1, "", message)


@pytest.mark.parametrize("timeout", ["-1", "0", "nan", "soon", "inf", "1e10", "1e300"])
def test_timeout_must_be_positive_seconds(capsys, address, timeout):
    with pytest.raises(SystemExit) as exc:
        main(["call", address, f"{SERVICE}/Unary", "--timeout", timeout])
    _, err = capsys.readouterr()
    assert exc.value.code == 2 and "--timeout" in err and err.count("pbj call: error:") == 1


@pytest.mark.parametrize("option", ["--ca", "--cert"])
def test_a_tls_file_that_is_not_pem_is_one_line(capsys, address, tmp_path, option):
    # grpcio would log core errors ("Could not load any root certificate") and fail the handshake as UNAVAILABLE
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    extra = ["--key", str(junk)] if option == "--cert" else []
    status, out, err = call(capsys, address, f"{SERVICE}/Unary", option, str(junk), *extra, "--timeout", "5")
    assert (status, out, err) == (1, "", f"pbj: error: {option} {junk}: not a PEM file with a CERTIFICATE block\n")


def test_json_lines_to_a_unary_method(capsys, address, monkeypatch):
    # was "request: invalid JSON: Extra data at line 2 column 1"; a pretty-printed object still parses
    status, out, err = call(capsys, address, f"{SERVICE}/Unary", "--json", "-", stdin='{"text": "a"}\n{"text": "b"}\n',
                            monkeypatch=monkeypatch)
    assert (status, out, err) == (1, "", "pbj: error: Unary takes one request, not 2 lines of JSON (only a "
                                         "client-streaming method reads one message per line)\n")
    status, out, _ = call(capsys, address, f"{SERVICE}/Unary", "--json", "-", stdin='{\n  "text": "p"\n}\n',
                          monkeypatch=monkeypatch)
    assert (status, json.loads(out)["text"]) == (0, "p")


def test_ctrl_c_during_a_stream_cancels_it_without_a_traceback(address):
    import os
    import signal
    import subprocess
    import sys

    from tests.conftest import REPO
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    # Ctrl-C raises KeyboardInterrupt, as in a terminal, even when this test runs with SIGINT ignored (a
    # background job, nohup): Python keeps an ignored SIGINT ignored, and the child would inherit it
    start = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
             "sys.argv[0] = 'pbj'; runpy.run_module('pbj', run_name='__main__', alter_sys=True)")
    proc = subprocess.Popen([sys.executable, "-c", start, "call", address, f"{SERVICE}/ServerStream", "--json",
                             '{"text": "s", "count": 1000, "delay": 0.05}', "--timeout", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = proc.stdout.readline()  # the stream is running
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert json.loads(first)["text"] == "s"
    assert (proc.returncode, err) == (130, "pbj: interrupted\n")
    assert out.count("\n") < 999


def test_describe_maps_oneofs_and_enums(capsys, tmp_path):
    # was "repeated map things", "optional string s" for a oneof member and "Outer.Color" (the Python name)
    (tmp_path / "m.proto").write_text('syntax = "proto3"; package m;\n'
                                      'message Outer { message Inner { int32 a = 1; } enum Color { RED = 0; }\n'
                                      '  map<string, Inner> things = 1; oneof pick { string s = 2; Inner i = 3; }\n'
                                      '  repeated Color colors = 4; optional int64 o = 5; map<int32, Color> c = 6; }\n')
    status, out, err = call(capsys, "127.0.0.1:1", "--describe", "m.Outer", "--proto", str(tmp_path / "m.proto"),
                            "-I", str(tmp_path))  # a given schema: no server is asked
    assert (status, err) == (0, "")
    assert out == ("message m.Outer {\n"
                   "  map<string, m.Outer.Inner> things = 1;\n"
                   "  string s = 2;  // oneof pick\n"
                   "  m.Outer.Inner i = 3;  // oneof pick\n"
                   "  repeated m.Outer.Color colors = 4;\n"
                   "  optional int64 o = 5;\n"
                   "  map<int32, m.Outer.Color> c = 6;\n"
                   "}\n")


def test_verbose_prints_metadata_headers_trailers_and_status(capsys, address):
    """-v: the request metadata, response headers and trailers and the status on stderr; stdout stays JSON Lines."""
    status, out, err = call(capsys, address, f"{SERVICE}/Unary", "--json", '{"text": "v"}', "-v",
                            "-H", "x-user: ann", "-H", "x-raw-bin: AAE=")
    assert status == 0 and json.loads(out)["text"] == "v"
    assert err.startswith("Request metadata to send:\nx-user: ann\nx-raw-bin: AAE=\n\nResponse headers received:\n")
    assert err.endswith("Response trailers received:\nx-trailer: t\n\nStatus: OK\n")
    status, out, err = call(capsys, address, f"{SERVICE}/ServerStream", "--json", '{"text": "s", "count": 2}',
                            "--verbose")
    assert status == 0 and len(out.splitlines()) == 2
    assert err.startswith("Request metadata to send:\n(empty)\n\nResponse headers received:\n")
    assert err.endswith("Response trailers received:\nx-trailer: t\n\nStatus: OK\n")
    status, out, err = call(capsys, address, f"{SERVICE}/Unary", "--json", '{"fail": "abort"}', "-v")
    assert (status, out) == (1, "")
    assert "Response trailers received:\n(empty)\n\nStatus: PERMISSION_DENIED: no\n" in err
    assert err.endswith("pbj: error: PERMISSION_DENIED: no\n")
    status, out, err = call(capsys, address, f"{SERVICE}/Unary", "--json", '{"text": "q"}')
    assert (status, err) == (0, "")  # not asked: nothing on stderr
