"""JavaScript clients of pbj.connect: ``buf curl``, connect-es on Node.js, and connect-web in headless Chromium.

The npm packages are in ``tests/web/connect`` (``package.json`` and its lockfile: ``npm ci``
there); Chromium is Debian's (``/usr/bin/chromium``), driven by playwright-core with no browser
of its own. Every server is started here on 127.0.0.1 and stopped here; no page or script
reaches anything else. Marked ``web`` (outside the default selection; ``pytest -m web``): where
node, the packages or Chromium are missing the tests skip, saying what to install, unless
``PBJ_REQUIRE_WEB_TESTS=1`` (CI sets it), where a missing tool fails them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import pbj.connect
from pbj.connect.health import Health, ServingStatus
from tests.connect_support import (
    SERVICE,
    AsyncEcho,
    descriptor_set,
    hypercorn_server,
    load_pbj,
    uvicorn_server,
)

pytestmark = pytest.mark.web

WEB = Path(__file__).parent / "web" / "connect"
MODULES = WEB / "node_modules"
BUF = MODULES / ".bin" / "buf"
ESBUILD = MODULES / ".bin" / "esbuild"
#: Each JavaScript process gets this long at most, in seconds.
PROCESS_TIMEOUT = 120

ns = load_pbj()
echo = ns.service(SERVICE)


def _need(what: str, present: bool, hint: str) -> None:
    if present:
        return
    text = f"{what} is missing: {hint}"
    if os.environ.get("PBJ_REQUIRE_WEB_TESTS") == "1":
        pytest.fail(f"{text} (PBJ_REQUIRE_WEB_TESTS=1: CI must run these tests)")
    pytest.skip(text)


def _node() -> str:
    node = shutil.which("node")
    _need("Node.js", node is not None, "install Node.js 20 or newer")
    _need("tests/web/connect/node_modules", MODULES.is_dir(), "run `npm ci` in tests/web/connect")
    return node  # type: ignore[return-value]


def _chromium() -> str:
    path = os.environ.get("PBJ_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    _need("Chromium", Path(path).exists(), "apt-get install chromium (Debian's package), or set PBJ_CHROMIUM")
    return path


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True, timeout=PROCESS_TIMEOUT, cwd=WEB)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture(scope="module")
def schema_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("schema") / "echo.binpb"
    path.write_bytes(descriptor_set(ns))
    return path


@pytest.fixture(scope="module")
def h2_app():
    """The echo service with reflection and health on hypercorn (cleartext HTTP/2 for gRPC and bidi streams)."""
    app = pbj.connect.ASGIApplication((echo, AsyncEcho(ns)), reflection=[ns],
                                      health=Health({"": ServingStatus.SERVING}))
    with hypercorn_server(app) as url:
        yield url


# ------------------------------------------------------------------ buf curl

@pytest.mark.parametrize("protocol", ["connect", "grpc", "grpcweb"])
def test_buf_curl_with_reflection(h2_app, protocol):
    _node()
    curl = [str(BUF), "curl", "--http2-prior-knowledge", "--protocol", protocol]
    listed = _run(*curl, "--list-methods", h2_app).stdout.split()
    assert listed == ["grpc.health.v1.Health/Check", "grpc.health.v1.Health/List", "grpc.health.v1.Health/Watch",
                      "grpc.reflection.v1.ServerReflection/ServerReflectionInfo", "pbjtest.echo.v1.Echo/Bidi",
                      "pbjtest.echo.v1.Echo/ClientStream", "pbjtest.echo.v1.Echo/Missing",
                      "pbjtest.echo.v1.Echo/ServerStream", "pbjtest.echo.v1.Echo/Unary"]
    reply = json.loads(_run(*curl, "-H", "x-trace: curl", f"{h2_app}/pbjtest.echo.v1.Echo/Unary",
                            "-d", '{"text": "curl", "blob": "AQI="}').stdout)
    assert (reply["text"], reply["blob"], "x-trace=curl" in reply["metadata"]) == ("curl", "AQI=", True)
    out = _run(*curl, f"{h2_app}/pbjtest.echo.v1.Echo/ServerStream", "-d", '{"text": "s", "count": 3}').stdout
    assert [json.loads(part).get("index", 0) for part in out.replace("}\n{", "}\x00{").split("\x00")] == [0, 1, 2]
    failed = _run(*curl, f"{h2_app}/pbjtest.echo.v1.Echo/Unary", "-d", '{"fail": "details"}', check=False)
    error = json.loads(failed.stderr)
    assert failed.returncode != 0
    assert (error["code"], error["message"], [d["type"] for d in error["details"]]) == (
        "failed_precondition", "not now", ["pbjtest.common.v1.Detail"])
    health = json.loads(_run(*curl, f"{h2_app}/grpc.health.v1.Health/Check", "-d", "{}").stdout)
    assert health == {"status": "SERVING"}


def _documents(out: str) -> list[dict]:
    """The JSON documents ``buf curl`` printed one after another (a stream's replies)."""
    decoder, text, at, found = json.JSONDecoder(), out.strip(), 0, []
    while at < len(text):
        document, at = decoder.raw_decode(text, at)
        found.append(document)
        at += len(text[at:]) - len(text[at:].lstrip())
    return found


@pytest.mark.parametrize("protocol", ["connect", "grpc", "grpcweb"])
def test_buf_curl_streams_from_the_client_and_a_deadline(h2_app, schema_file, protocol):
    """The client-streaming and bidirectional methods (several request documents), and a deadline that expires
    (``--timeout``, sent as the protocol's timeout header) while the handler waits."""
    _node()
    curl = [str(BUF), "curl", "--http2-prior-knowledge", "--schema", str(schema_file), "--protocol", protocol]
    gathered = json.loads(_run(*curl, f"{h2_app}/pbjtest.echo.v1.Echo/ClientStream",
                               "-d", '{"text": "a"} {"text": "b"} {"text": "c"}').stdout)
    assert (gathered["text"], gathered["index"]) == ("a,b,c", 3)
    chat = _documents(_run(*curl, f"{h2_app}/pbjtest.echo.v1.Echo/Bidi", "-d", '{"text": "x"} {"text": "y"}').stdout)
    assert [(r["text"], r.get("index", 0)) for r in chat] == [("x", 0), ("y", 1)]
    late = _run(str(BUF), "--timeout", "2s", *curl[1:], f"{h2_app}/pbjtest.echo.v1.Echo/Unary",
                "-d", '{"delay": 30}', check=False)
    assert late.returncode != 0
    assert json.loads(late.stderr)["code"] == "deadline_exceeded"


@pytest.mark.parametrize("protocol", ["connect", "grpcweb"])
def test_buf_curl_with_a_schema_file_over_http1(schema_file, protocol):
    _node()
    with uvicorn_server(pbj.connect.ASGIApplication((echo, AsyncEcho(ns)))) as url:  # no reflection served
        curl = [str(BUF), "curl", "--schema", str(schema_file), "--protocol", protocol]
        assert json.loads(_run(*curl, f"{url}/pbjtest.echo.v1.Echo/Unary", "-d", '{"text": "file"}').stdout)[
            "text"] == "file"
        out = _run(*curl, f"{url}/pbjtest.echo.v1.Echo/ServerStream", "-d", '{"count": 2}').stdout
        assert out.count('"index": 1') == 1
        missing = _run(*curl, f"{url}/pbjtest.echo.v1.Echo/Missing", "-d", "{}", check=False)
        assert json.loads(missing.stderr)["code"] == "unimplemented"


# ------------------------------------------------------------------ connect-es on Node.js

@pytest.mark.parametrize("protocol", ["connect", "grpc", "grpc-web"])
def test_connect_es_on_node_calls_every_kind(h2_app, schema_file, protocol):
    node = _node()
    out = json.loads(_run(node, "node_client.mjs", h2_app, str(schema_file), protocol).stdout)
    assert out["unary"]["text"] == "node" and out["unary"]["blob"] == "AQI="
    assert "x-trace=es" in out["unary"]["metadata"]
    assert [(r["text"], r.get("index", 0)) for r in out["serverStream"]] == [("s", 0), ("s", 1), ("s", 2)]
    assert (out["clientStream"]["text"], out["clientStream"]["index"]) == ("a,b,c", 3)
    assert [r["text"] for r in out["bidi"]] == ["x", "y"]
    assert out["error"] == {"code": "FailedPrecondition", "message": "not now",
                            "details": [{"reason": "busy", "meta": {"retry": "1s"}}]}
    assert out["deadline"] == "DeadlineExceeded"
    assert out["trailers"] == {"unary": "t"}


# ------------------------------------------------------------------ connect-web in Chromium

def test_a_browser_page_calls_the_service(tmp_path):
    """A page served beside the service (Starlette: the page's files mounted next to pbj's app, one origin)."""
    node, chromium = _node(), _chromium()
    from starlette.applications import Starlette
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles
    _run(str(ESBUILD), "page/app.mjs", "--bundle", "--format=esm", "--target=es2022",
         f"--outfile={tmp_path / 'bundle.js'}", "--log-level=warning")
    shutil.copy(WEB / "page" / "index.html", tmp_path)
    (tmp_path / "echo.binpb").write_bytes(descriptor_set(ns))
    site = Starlette(routes=[Mount("/page", StaticFiles(directory=tmp_path, html=True)),
                             Mount("/", app=pbj.connect.ASGIApplication((echo, AsyncEcho(ns))))])
    with uvicorn_server(site) as url:
        shown = json.loads(_run(node, "browser_check.mjs", f"{url}/page/", chromium).stdout)
    assert shown["errors"] == []
    assert shown["status"] == "done"
    assert shown["unary"] == "from the browser"
    assert shown["stream"] == ["tick 0", "tick 1", "tick 2"]
    assert shown["error"] == "PermissionDenied: no"
