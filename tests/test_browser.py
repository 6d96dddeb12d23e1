"""pbj in a browser: headless Chromium loads Pyodide, installs pbj's pure wheel with micropip, decodes a message.

The page (``tests/pyodide/page.html``) and its driver (``tests/pyodide/browser.mjs``, Playwright's
``playwright-core`` from that folder's npm lockfile, Debian's ``/usr/bin/chromium``) are served from
127.0.0.1 by this test, with Pyodide from the npm package and the wheels from ``PBJ_WHEELS_DIR`` (pbj's
pure wheel, its dependencies' and micropip's: ``.ci/run``'s ``browser`` step makes that folder). Nothing
else is reachable: the driver refuses any request to another host and reports it.

Skipped when the npm packages, Chromium or the wheels are not there (a plain checkout); with
``PBJ_REQUIRE_BROWSER=1`` (CI's browser step) that is a failure instead.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import shutil
import subprocess
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path

import pytest

import pbj
from pbj.cli import BLOCK_FILE, SCHEMA_FILE
from tests.conftest import REPO

HERE = REPO / "tests" / "pyodide"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ITEM_TYPE = "com.hedera.hapi.block.stream.BlockItem"
#: How long the page may take (Pyodide's start and a pure-Python decode in WebAssembly, on a busy machine).
PAGE_SECONDS = 600


def missing() -> str | None:
    """Why the browser test cannot run here, or None."""
    for need in ("pyodide/pyodide.js", "playwright-core/package.json"):
        if not (HERE / "node_modules" / need).is_file():
            return f"tests/pyodide's npm packages are not installed (npm ci --prefix tests/pyodide): no {need}"
    if shutil.which("node") is None:
        return "no node"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (Debian's chromium package)"
    wheels = os.environ.get("PBJ_WHEELS_DIR")
    if not wheels:
        return "PBJ_WHEELS_DIR (pbj's pure wheel and its dependencies' wheels) is not set"
    for prefix in ("pbj_protobuf-", "attrs-", "cattrs-", "typing_extensions-", "micropip-"):
        if not any(p.name.startswith(prefix) and p.name.endswith("-none-any.whl") for p in Path(wheels).iterdir()):
            return f"no {prefix}*-none-any.whl in {wheels}"
    return None


@pytest.fixture
def server():
    """The page, Pyodide and the wheels on 127.0.0.1 (a free port), stopped when the test ends."""
    why = missing()
    if why is not None:
        if os.environ.get("PBJ_REQUIRE_BROWSER", "") not in ("", "0"):
            pytest.fail(why)
        pytest.skip(why)
    wheels = Path(os.environ["PBJ_WHEELS_DIR"])
    roots = {"/pyodide/": HERE / "node_modules" / "pyodide", "/wheels/": wheels}
    index = json.dumps(sorted(p.name for p in wheels.glob("*.whl"))).encode()

    class Handler(SimpleHTTPRequestHandler):
        extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                          ".mjs": "text/javascript", ".whl": "application/zip", ".zip": "application/zip"}

        def translate_path(self, path: str) -> str:
            path = path.split("?", 1)[0]
            for prefix, root in roots.items():
                if path.startswith(prefix):
                    return str(root / path[len(prefix):])
            return str(HERE / "page.html")

        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] == "/wheels/index.json":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(index)))
                self.end_headers()
                self.wfile.write(index)
                return
            super().do_GET()

        def log_message(self, format: str, *args: object) -> None:  # the test reads the page, not the log
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(HERE)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=30)


def test_the_page_decodes_a_message_with_the_pure_wheel(server):
    shipped = files("pbj") / "data"
    ns = pbj.load_descriptor_set((shipped / SCHEMA_FILE).read_bytes())
    block = pbj.decode(ns["com.hedera.hapi.block.stream.Block"], gzip.decompress((shipped / BLOCK_FILE).read_bytes()))
    item = block.items[0]
    data = pbj.encode(item)
    url = f"{server}/page.html?type={ITEM_TYPE}&hex={data.hex()}"
    out = subprocess.run(["node", str(HERE / "browser.mjs"), url, str(PAGE_SECONDS)], capture_output=True, text=True,
                         timeout=PAGE_SECONDS + 120)
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout.strip().splitlines()[-1])
    assert shown["refused"] == []  # nothing but the test's server was asked
    assert shown["status"] == "done", shown
    result = json.loads(shown["result"])
    assert result["platform"] == "emscripten" and result["python"].startswith("3.14.")
    assert result["engine"] == "python"
    assert result["byte_exact"] is True
    assert result["json"] == pbj.to_json(item)
