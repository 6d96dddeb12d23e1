"""Services from schemas (pbj.Service, pbj.Method), services declared by hand, and pbj.grpc's per-class codecs."""

from __future__ import annotations

import pytest

import pbj
import pbj.stubs
from pbj.descriptor import (
    FileDescriptorProto,
    FileDescriptorSet,
    MethodDescriptorProto,
    ServiceDescriptorProto,
)
from pbj.grpc._codec import decoder, encoder
from tests.grpc_support import SERVICE, load_pbj


@pytest.fixture(scope="module")
def ns():
    return load_pbj()


def test_a_loaded_service(ns):
    svc = ns.service(SERVICE)
    assert (svc.full_name, svc.package, svc.name) == (SERVICE, "pbjtest.echo.v1", "Echo")
    assert svc.file == "pbjtest/echo/v1/echo.proto"
    assert [(m.name, m.kind, m.path) for m in svc] == [
        ("Unary", "unary_unary", f"/{SERVICE}/Unary"), ("ServerStream", "unary_stream", f"/{SERVICE}/ServerStream"),
        ("ClientStream", "stream_unary", f"/{SERVICE}/ClientStream"), ("Bidi", "stream_stream", f"/{SERVICE}/Bidi"),
        ("Missing", "unary_unary", f"/{SERVICE}/Missing")]
    assert svc.Unary.input is ns["pbjtest.echo.v1.EchoRequest"]
    assert svc["Bidi"].output is ns["pbjtest.echo.v1.EchoReply"]
    assert (svc.Bidi.client_streaming, svc.Bidi.server_streaming) == (True, True)
    assert svc.Unary.options.idempotency_level.name == "NO_SIDE_EFFECTS"
    assert svc.ServerStream.options is None
    assert list(ns.services) == [SERVICE]
    assert repr(svc.ClientStream) == ("<pbj.Method /pbjtest.echo.v1.Echo/ClientStream("
                                      "stream pbjtest.echo.v1.EchoRequest)"
                                      " returns (pbjtest.echo.v1.EchoReply)>")


def test_lookup_errors(ns):
    with pytest.raises(KeyError, match=r"no service named 'pbjtest\.echo\.v1\.Ech' in this schema; did you mean "
                                       r"'pbjtest\.echo\.v1\.Echo'"):
        ns.service("pbjtest.echo.v1.Ech")
    with pytest.raises(KeyError, match=r"has no method 'Nope' \(its methods: Unary, ServerStream"):
        ns.service(SERVICE)["Nope"]
    with pytest.raises(AttributeError, match="has no method 'Nope'"):
        ns.service(SERVICE).Nope  # noqa: B018


def test_a_service_declared_by_hand_equals_the_loaded_one(ns):
    Req, Rep = ns["pbjtest.echo.v1.EchoRequest"], ns["pbjtest.echo.v1.EchoReply"]
    hand = pbj.service(SERVICE,
                       pbj.rpc("Unary", Req, Rep),
                       pbj.rpc("ServerStream", Req, Rep, server_streaming=True),
                       pbj.rpc("ClientStream", Req, Rep, client_streaming=True),
                       pbj.rpc("Bidi", Req, Rep, client_streaming=True, server_streaming=True),
                       pbj.rpc("Missing", Req, Rep))
    assert hand == ns.service(SERVICE)
    assert hand != pbj.service(SERVICE, pbj.rpc("Unary", Req, Rep))
    assert hand.file is None and hand.Unary.options is None

    @pbj.message(full_name="pbjtest.echo.v1.EchoRequest")
    class DeclaredRequest:
        text: str = pbj.field(1, "string")

    # the same full names make the same service, whatever the classes
    by_declared = pbj.service(SERVICE, pbj.rpc("Unary", DeclaredRequest, Rep))
    assert by_declared == pbj.service(SERVICE, pbj.rpc("Unary", Req, Rep))


def test_declaration_errors(ns):
    Req = ns["pbjtest.echo.v1.EchoRequest"]
    with pytest.raises(pbj.SchemaError, match="the input type <class 'int'> is not a pbj message class"):
        pbj.service("a.B", pbj.rpc("M", int, Req))
    with pytest.raises(pbj.SchemaError, match="method 'M' is declared twice"):
        pbj.service("a.B", pbj.rpc("M", Req, Req), pbj.rpc("M", Req, Req))
    with pytest.raises(pbj.SchemaError, match=r"service name 'a\.\.B' is not a dotted name"):
        pbj.service("a..B")
    with pytest.raises(pbj.SchemaError, match="method name '1x' is not an identifier"):
        pbj.service("a.B", pbj.rpc("1x", Req, Req))


def _set(*methods):
    fd = FileDescriptorProto(name="s.proto", package="p", syntax="proto3",
                             service=[ServiceDescriptorProto(name="S", method=list(methods))])
    return pbj.encode(FileDescriptorSet(file=[fd]))


def test_a_method_with_an_unknown_type_fails_the_load():
    with pytest.raises(pbj.SchemaError,
                       match=r"p\.S: method M: its input type '\.p\.Nope' is not a message of the schema"):
        pbj.load_descriptor_set(_set(MethodDescriptorProto(name="M", input_type=".p.Nope", output_type=".p.Nope")))


@pytest.mark.parametrize("engine", ["native", "python"])
def test_the_grpc_codecs_give_what_encode_and_decode_give(ns, engine):
    if engine == "native" and pbj.engine() != "native":
        pytest.skip("the native engine is not built")
    before = pbj.engine()
    pbj.use_engine(engine)
    try:
        Req = ns["pbjtest.echo.v1.EchoRequest"]
        msg = Req(text="é", count=-3, blob=b"\x00" * 20000, money=ns["pbjtest.common.v1.Money"](units=1))
        data = pbj.encode(msg)
        enc, dec = encoder(Req), decoder(Req)
        assert enc(msg) == data
        assert dec(data) == msg  # a large input: through pbj.decode
        small = Req(text="x")
        assert dec(enc(small)) == small and enc(small) == pbj.encode(small)
        with pytest.raises(pbj.DecodeError) as err:
            dec(b"\x0a\x05ab")
        assert str(err.value) == "truncated input: length runs past the end of the message - at `$.text` at byte 0"
        with pytest.raises(TypeError):
            enc(object())
        Money = ns["pbjtest.common.v1.Money"]
        with pytest.raises(TypeError) as wrong:  # another message type: its bytes would be read as an EchoRequest
            enc(Money(units=2))
        assert str(wrong.value) == ("expected a pbjtest.echo.v1.EchoRequest message, got a pbjtest.common.v1.Money "
                                    "message (Money)")

        @pbj.message(full_name="pbjtest.echo.v1.EchoRequest")
        class Declared:  # the same message type declared by hand
            text: str = pbj.field(1, "string")

        assert enc(Declared(text="d")) == pbj.encode(Req(text="d"))
    finally:
        pbj.use_engine(before)


def test_the_grpc_codecs_check_required_fields():
    @pbj.message(full_name="t.Req", syntax="proto2")
    class Req:
        a: int = pbj.field(1, "int32", required=True)

    with pytest.raises(pbj.DecodeError, match="required"):
        decoder(Req)(b"")
    with pytest.raises(pbj.EncodeError, match="required"):
        encoder(Req)(Req())


def test_written_service_stubs_serve_and_call(tmp_path, monkeypatch):
    import grpc

    from pbj.cli import main
    from tests.conftest import REPO
    from tests.grpc_support import serving
    programs = REPO / "tests" / "typing"
    assert main(["stubs", "--proto", str(programs / "typedemo.proto"), "-I", str(programs), "-o", str(tmp_path),
                 "--module", "typedemo_grpc_run"]) == 0
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    pkg = importlib.import_module("typedemo_grpc_run.demo.v1")
    Account = pkg.Account
    Money = importlib.import_module("typedemo_grpc_run.demo.common").Money

    class Impl(pkg.AccountsServicer):
        def Get(self, request, context):
            return Account(name=request.name.upper())

        def Upload(self, request_iterator, context):
            return Money(units=sum(a.balance for a in request_iterator))

    assert pkg.AccountsServicer.pbj_service is pkg._pbj_namespace.service("demo.v1.Accounts")
    with serving(Impl().add_to_server) as address, grpc.insecure_channel(address) as channel:
        stub = pkg.AccountsStub(channel)
        assert isinstance(stub, pbj.grpc.Stub)
        assert stub.Get(Account(name="ann"), timeout=10) == Account(name="ANN")
        assert stub.Upload(iter([Account(balance=2), Account(balance=3)]), timeout=10) == Money(units=5)
        with pytest.raises(grpc.RpcError) as err:
            list(stub.List(Account(), timeout=10))
        assert err.value.code() is grpc.StatusCode.UNIMPLEMENTED
    with pytest.raises(AttributeError, match="has no attribute 'AccountsStubb'"):
        pkg.AccountsStubb  # noqa: B018


def _python(code: str) -> str:
    import subprocess
    import sys

    from tests.conftest import REPO
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_pbj_imports_no_grpc():
    code = ("import sys, pbj, pbj.cli; from importlib.resources import files; "
            "ns = pbj.load_descriptor_set((files('pbj') / 'data' / 'hapi-v0.55.0.binpb').read_bytes()); "
            "pbj.cli._parser(); ns.service('proto.CryptoService'); "
            "print(sorted(m for m in sys.modules if m == 'grpc' or m.startswith(('grpc.', 'pbj.grpc.'))))")
    # the command line's parser reads pbj.grpc.cli (argparse only); nothing imports grpcio
    assert _python(code) == "['pbj.grpc.cli']"


def test_without_grpcio_the_error_names_the_extra():
    code = ("import sys; sys.modules['grpc'] = None\n"
            "import pbj.grpc\n"
            "try:\n    pbj.grpc.Stub\nexcept ImportError as exc:\n    print(str(exc).split(' (')[0])")
    assert _python(code) == "pbj.grpc needs grpcio: pip install 'pbj-protobuf[grpc]'"


def test_a_method_named_like_a_keyword(tmp_path):
    """protoc accepts ``rpc from(...)``: the stub reaches it by name, the written stubs stay valid Python."""
    import ast

    import grpc

    from tests.grpc_support import serving
    (tmp_path / "kw.proto").write_text('syntax = "proto3"; package kw.v1; message M { string from = 1; }\n'
                                       "service S { rpc from(M) returns (M); rpc ok(M) returns (M); }\n")
    ns = pbj.load_proto(tmp_path / "kw.proto")
    svc = ns.service("kw.v1.S")
    M = ns["kw.v1.M"]
    impl = {"from": lambda r, c: M(from_=r.from_ + "!")}
    with serving(lambda s: pbj.grpc.add_to_server(s, svc, impl)) as address, grpc.insecure_channel(address) as ch:
        assert pbj.grpc.Stub(ch, svc)["from"](M(from_="a"), timeout=10) == M(from_="a!")
    written = pbj.stubs.write_stubs(ns, tmp_path / "out", "kwp")
    pyi = next(p for p in written if p.name == "__init__.pyi" and p.parent.name == "v1")
    tree = ast.parse(pyi.read_text())  # valid Python: the keyword-named method is left out
    stub_class = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "SStub")
    assert [n.target.id for n in stub_class.body if isinstance(n, ast.AnnAssign)] == ["ok"]
