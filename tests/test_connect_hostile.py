"""Hostile input to pbj.connect's applications: the protocol's error, the server goes on, nothing piles up.

Raw HTTP/1.1 on 127.0.0.1 (``http.client`` and sockets, no Connect client that would refuse to
send such bytes): bytes that are no message, malformed and truncated envelopes, a length
prefix past the read limit, a compressed flag with no compression, a body that does not
inflate, wrong content types, an oversized message, and clients that go away in the middle of
a server stream. Each gets the error the Connect protocol names; a valid call right after
answers; over 1,000 rounds the server's threads stay as many and the objects the garbage
collector tracks do not grow with the rounds.
"""

from __future__ import annotations

import gc
import http.client
import json
import socket
import struct
import threading
import time
import urllib.parse

import pytest

import pbj
import pbj.connect
from tests.connect_support import SERVICE, TIMEOUT, AsyncEcho, SyncEcho, load_pbj, uvicorn_server, wsgi_server

ns = load_pbj()
echo = ns.service(SERVICE)
Request, Reply = ns["pbjtest.echo.v1.EchoRequest"], ns["pbjtest.echo.v1.EchoReply"]
LIMIT = 4096  # the applications' read limit, in bytes


def envelope(data: bytes, flags: int = 0, length: int | None = None) -> bytes:
    return struct.pack(">BI", flags, len(data) if length is None else length) + data


def _end_error(body: bytes) -> dict:
    """The error of a Connect stream's end message (the last envelope, flag 0x02)."""
    at, error = 0, None
    while at + 5 <= len(body):
        flags, length = struct.unpack(">BI", body[at:at + 5])
        if flags & 0x02:
            error = json.loads(body[at + 5:at + 5 + length]).get("error")
        at += 5 + length
    assert error is not None, body
    return error


UNARY, STREAM, CLIENT = "/pbjtest.echo.v1.Echo/Unary", "/pbjtest.echo.v1.Echo/ServerStream", \
    "/pbjtest.echo.v1.Echo/ClientStream"
GOOD = pbj.encode(Request(text="ok"))

#: (name, method path, content type, extra headers, body, what the answer must be)
#: the answer: ("unary", HTTP status, Connect code) or ("stream", Connect code of the end message)
CASES = [
    ("not a message", UNARY, "application/proto", {}, b"\x0a\x05ab", ("unary", 400, "invalid_argument")),
    ("not JSON", UNARY, "application/json", {}, b"{nope", ("unary", 400, "invalid_argument")),
    ("a wrong JSON type", UNARY, "application/json", {}, b'{"count": "x"}', ("unary", 400, "invalid_argument")),
    ("a content type no codec has", UNARY, "text/plain", {}, GOOD, ("unary", 415, None)),
    ("an oversized message", UNARY, "application/proto", {}, pbj.encode(Request(blob=b"x" * (LIMIT + 10))),
     ("unary", 429, "resource_exhausted")),
    ("a body that does not inflate", UNARY, "application/proto", {"content-encoding": "gzip"}, b"\x1f\x8bnope",
     ("unary", 400, "invalid_argument")),
    ("an unknown compression", UNARY, "application/proto", {"content-encoding": "lzma"}, GOOD,
     ("unary", 501, "unimplemented")),
    ("invalid envelope flags", STREAM, "application/connect+proto", {}, envelope(GOOD, flags=0x40),
     ("stream", "invalid_argument")),
    ("a truncated envelope", STREAM, "application/connect+proto", {}, envelope(GOOD, length=100),
     ("stream", "invalid_argument")),
    ("half an envelope prefix", STREAM, "application/connect+proto", {}, b"\x00\x00", ("stream", "invalid_argument")),
    ("a length prefix past the limit", CLIENT, "application/connect+proto", {}, envelope(b"", length=2**31),
     ("stream", "resource_exhausted")),
    ("a compressed flag with no compression", STREAM, "application/connect+proto", {}, envelope(GOOD, flags=0x01),
     ("stream", "internal")),
    ("no message at all", STREAM, "application/connect+proto", {}, b"", ("stream", "unimplemented")),
    ("two messages to a unary stream", STREAM, "application/connect+proto", {}, envelope(GOOD) * 2,
     ("stream", "unimplemented")),
    ("an envelope that is not a message", CLIENT, "application/connect+proto", {}, envelope(b"\x0a\x05ab"),
     ("stream", "invalid_argument")),
    ("a wrong stream codec", STREAM, "application/connect+xml", {}, envelope(GOOD), ("unary", 415, None)),
    ("gRPC where the server has no trailers", UNARY, "application/grpc+proto", {}, envelope(GOOD),
     ("unary", 415, None)),
]


def _ask(conn: http.client.HTTPConnection, path, content_type, headers, body) -> tuple[int, bytes]:
    try:
        conn.request("POST", path, body=body, headers={"content-type": content_type, **headers})
        resp = conn.getresponse()
    except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
        # the server closed the kept-alive connection while it sat idle (uvicorn: after 5 s, which a
        # loaded machine reaches between two rounds): a client opens a new one and asks again
        conn.close()
        conn.request("POST", path, body=body, headers={"content-type": content_type, **headers})
        resp = conn.getresponse()
    return resp.status, resp.read()


def _check(case, status: int, body: bytes) -> None:
    name, *_, expected = case
    if expected[0] == "unary":
        assert status == expected[1], (name, status, body)
        if expected[2] is not None:
            assert json.loads(body)["code"] == expected[2], (name, body)
    else:
        assert status == 200, (name, status, body)
        assert _end_error(body)["code"] == expected[1], (name, body)


def _valid_call(conn) -> None:
    status, body = _ask(conn, UNARY, "application/proto", {}, GOOD)
    assert status == 200 and pbj.decode(Reply, body).text == "ok"


def _disconnect_mid_stream(base_url: str) -> None:
    """Start a long server stream, read its first bytes, and go away."""
    host, port = urllib.parse.urlsplit(base_url).netloc.split(":")
    body = envelope(pbj.encode(Request(text="s", count=10_000, delay=0.001)))
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
        sock.sendall(f"POST {STREAM} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/connect+proto\r\n"
                     f"content-length: {len(body)}\r\n\r\n".encode() + body)
        assert sock.recv(512).split(b" ")[1] == b"200"  # the status line (wsgiref answers HTTP/1.0)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_each_hostile_input_gets_the_protocols_error(kind, case, servers):
    url = servers[kind][0]
    conn = http.client.HTTPConnection(urllib.parse.urlsplit(url).netloc, timeout=TIMEOUT)
    try:
        _check(case, *_ask(conn, *case[1:5]))
        _valid_call(conn)
    finally:
        conn.close()


@pytest.fixture(scope="module")
def servers():
    a_echo, w_echo = AsyncEcho(ns), SyncEcho(ns)
    with (uvicorn_server(pbj.connect.ASGIApplication((echo, a_echo), read_max_bytes=LIMIT)) as a,
          wsgi_server(pbj.connect.WSGIApplication((echo, w_echo), read_max_bytes=LIMIT)) as w):
        yield {"asgi": (a, a_echo), "wsgi": (w, w_echo)}


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_a_client_that_goes_away_mid_stream_ends_the_handler(kind, servers):
    url, servicer = servers[kind]
    before = len(servicer.ended)
    for _ in range(3):
        _disconnect_mid_stream(url)
    deadline = time.monotonic() + TIMEOUT
    while len(servicer.ended) < before + 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(servicer.ended) == before + 3  # every stream's handler ended (its finally ran) ...
    assert all(sent < 10_000 for sent in servicer.ended[before:])  # ... long before its 10,000 replies


def _objects() -> int:
    gc.collect()
    return len(gc.get_objects())


@pytest.mark.parametrize(("kind", "rounds"), [
    ("asgi", 300), ("wsgi", 300),
    pytest.param("asgi", 1000, marks=pytest.mark.slow), pytest.param("wsgi", 1000, marks=pytest.mark.slow)])
def test_a_thousand_hostile_rounds_leave_no_threads_or_objects_behind(kind, rounds, servers):
    """Each round sends one hostile input (the cases in turn) and a valid call; every 50th round a client
    also goes away mid-stream. Counted after 100 rounds of warm-up and again at the end. The default
    selection runs 300 rounds on each server, ``-m slow`` 1,000."""
    url = servers[kind][0]
    netloc = urllib.parse.urlsplit(url).netloc
    conn = http.client.HTTPConnection(netloc, timeout=TIMEOUT)
    threads = objects = 0
    try:
        for i in range(rounds):
            if i == 100:
                time.sleep(0.2)  # the warm-up's disconnected streams end
                threads, objects = threading.active_count(), _objects()
            case = CASES[i % len(CASES)]
            _check(case, *_ask(conn, *case[1:5]))
            _valid_call(conn)
            if i % 50 == 25:
                _disconnect_mid_stream(url)
    finally:
        conn.close()
    deadline = time.monotonic() + TIMEOUT
    while threading.active_count() > threads and time.monotonic() < deadline:
        time.sleep(0.05)  # wsgiref's request threads end after their answer is written
    assert threading.active_count() <= threads
    grown = _objects() - objects
    assert grown < 300, f"{grown} more objects tracked after {rounds - 100} rounds"
