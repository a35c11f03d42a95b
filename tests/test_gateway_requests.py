"""Hostile requests to a real gateway (a subprocess on a loopback port), in raw HTTP: a body
larger than the limit is refused with 413 before it is read (by its Content-Length, and
while a chunked one streams in), and numbers, nesting and strings that once crashed a handler
are 4xx with the JSON error body, as are unknown routes and methods and requests the HTTP parser
cannot read. Every wait is bounded."""

from __future__ import annotations

import contextlib
import json
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from test_gateway import Node, gateway_nodes

from acomm_cli.federation import agentapi
from acomm_cli.model import Limits

pytestmark = pytest.mark.federation

CHUNK = 64 * 1024
HUGE = 400 * 1024 * 1024  # what a hostile client claims to send


@pytest.fixture
def gw(tmp_path: Path) -> Iterator[tuple[Node, str]]:
    """Node na's gateway, with bob (in channel `team` with alice) holding a session token."""
    with gateway_nodes(tmp_path) as make:
        na = make("na")
        na.ok("channel", "create", "team", "--as", "alice")
        na.ok("channel", "join", "team", "bob", "--as", "alice")
        token = na.ok("token", "create", "--agent", "bob", "--ttl", "1h")["token"]
        na.start()
        yield na, str(token)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@contextlib.contextmanager
def connected(url: str) -> Iterator[socket.socket]:
    parts = urlsplit(url)
    s = socket.create_connection((parts.hostname, parts.port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
    try:
        yield s
    finally:
        s.close()


def _response(data: bytes) -> tuple[int, dict[str, str], bytes] | None:
    """(status, headers, body) once `data` holds a whole response, else None."""
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return None
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:])}
    if len(body) < int(headers.get("content-length", "0")):
        return None
    return int(lines[0].split()[1]), headers, body


def post_streaming(
    url: str, path: str, headers: dict[str, str], chunked: bool, limit: int = HUGE
) -> tuple[int, dict[str, Any], int]:
    """POST up to `limit` bytes of body, reading the socket while sending, and stop sending
    as soon as a whole response came back: (status, JSON body, bytes of body sent)."""
    head = [f"POST {path} HTTP/1.1", f"Host: {urlsplit(url).netloc}"]
    head += [f"{k}: {v}" for k, v in headers.items()]
    head.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {limit}")
    piece = b"[" + b"0," * (CHUNK // 2 - 1) + b"0"
    frame = f"{len(piece):x}\r\n".encode() + piece + b"\r\n" if chunked else piece
    sent, received, pending = 0, b"", b""
    deadline = time.monotonic() + 60
    with connected(url) as s:
        s.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        s.setblocking(False)
        writing = True
        while time.monotonic() < deadline:
            readable, writable, _ = select.select([s], [s] if writing else [], [], 5)
            if readable:
                try:
                    more = s.recv(65536)
                except ConnectionResetError:
                    more = b""
                received += more
                answer = _response(received)
                if answer is not None:
                    status, _, body = answer
                    return status, json.loads(body), sent
                if not more:
                    break
            if writable and writing:
                if not pending:
                    pending, sent = frame, sent + len(piece)
                try:
                    pending = pending[s.send(pending) :]
                except (BrokenPipeError, ConnectionResetError):
                    writing = False
                except BlockingIOError:
                    pass
                if sent >= limit and not pending:
                    writing = False
    raise AssertionError(f"no whole response after {sent} bytes: {received!r}")


def refused(status: int, doc: dict[str, Any], want: int, code: str) -> dict[str, Any]:
    assert (status, doc["error"]["code"]) == (want, code), doc
    assert set(doc) == {"error"} and isinstance(doc["error"]["message"], str)
    return dict(doc["error"])


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize(
    ("path", "auth", "code"),
    [
        ("/ansible/auth/exchange", False, "invalid_request"),
        ("/agent/v1/send", True, "validation_failed"),
        ("/agent/v1/receive", True, "validation_failed"),
    ],
)
def test_a_huge_body_is_refused_before_it_is_read(gw, chunked, path, auth, code):
    na, token = gw
    assert na.url is not None and na.proc is not None
    before = rss_kib(na.proc.pid)
    headers = {"Content-Type": "application/json"}
    if auth:
        headers["Authorization"] = f"Bearer {token}"
    status, doc, sent = post_streaming(na.url, path, headers, chunked)
    refused(status, doc, 413, code)
    # the answer came while the client was still sending: what the endpoint takes (a send
    # also the base64 of limits.max_message_attachment_bytes of files) and a few MiB of
    # socket buffers at most, not the 400 MiB it meant to send (a Content-Length one:
    # refused by the header)
    files = (Limits().max_message_attachment_bytes + 2) // 3 * 4
    takes = 1024 * 1024 + agentapi.SEND_OVERHEAD + files if path.endswith("/send") else 0
    assert sent < takes + 32 * 1024 * 1024, sent
    assert rss_kib(na.proc.pid) - before < (takes + 64 * 1024 * 1024) // 1024


def test_without_a_valid_token_no_body_is_read(gw):
    na, _ = gw
    assert na.url is not None
    for chunked in (False, True):
        status, doc, sent = post_streaming(
            na.url, "/agent/v1/send", {"Authorization": "Bearer acomm_at_nope"}, chunked
        )
        refused(status, doc, 401, "invalid_token")
        assert sent < 32 * 1024 * 1024


def test_a_send_may_be_as_large_as_its_channel_allows(gw):
    na, token = gw
    na.ok("channel", "create", "big", "--as", "alice", "--max-message-size", "3MiB")
    na.ok("channel", "join", "big", "bob", "--as", "alice")
    body = "x" * (2 * 1024 * 1024)
    auth = {"Authorization": f"Bearer {token}"}
    r = httpx.post(f"{na.url}/agent/v1/send", json={"channel": "big", "body": body}, headers=auth)
    assert r.status_code == 200, r.text
    # the same size is too large for an endpoint that carries no message
    r = httpx.post(f"{na.url}/agent/v1/ack", json={"note": body, "message_id": 1}, headers=auth)
    refused(r.status_code, r.json(), 413, "validation_failed")


def _post(url: str, raw: bytes, token: str | None = None) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    r = httpx.post(url, content=raw, headers=headers, timeout=20)
    assert r.headers["content-type"].startswith("application/json"), r.text
    return r.status_code, r.json()


def _exchange_body(**fields: Any) -> dict[str, Any]:
    return {"nodeId": "nb", "nonce": "n" * 20, **fields}


@pytest.mark.parametrize(
    "raw",
    [
        b"[" * 5000 + b"]" * 5000,
        b'{"a":' * 5000 + b"1" + b"}" * 5000,
        b'{"nodeId":"nb","nonce":"nnnnnnnnnnnnnnnnnnnn","inviteToken":"\\ud800"}',
        b'{"nodeId":"nb","nonce":"nnnnnnnnnnnnnnnnnnnn","inviteToken":"x\\udfff"}',
        b'{"nodeId":"nb","nonce":"nnnnnnnnnnnnnnnnnnnn","inviteToken":"x","n":' + b"9" * 40 + b"}",
        b'{"nodeId":"nb","nonce":"nnnnnnnnnnnnnnnnnnnn","inviteToken":"x","n":1e999}',
        b"\xff\xfe",
    ],
    ids=["deep-array", "deep-object", "surrogate", "low-surrogate", "huge-int", "inf", "not-utf8"],
)
def test_a_hostile_exchange_body_is_400(gw, raw):
    na, _ = gw
    status, doc = _post(f"{na.url}/ansible/auth/exchange", raw)
    refused(status, doc, 400, "invalid_request")


@pytest.mark.parametrize(
    ("verb", "doc", "field"),
    [
        ("ack", {"message_id": 10**30}, "body"),
        ("ack", {"message_id": 2**63}, "body"),
        ("ack", {"message_id": -(2**63) - 1}, "body"),
        ("ack", {"message_id": 0}, "message_id"),
        ("send", {"channel": "team", "body": "x", "delay": 10**30}, "body"),
        ("send", {"channel": "team", "body": "x", "priority": 10**30}, "body"),
        ("send", {"channel": "team", "body": "\ud800"}, "body"),
        ("send", {"channel": "team", "body": "x", "metadata": {"k": "\udc00"}}, "body"),
        ("receive", {"limit": 10**30}, "body"),
        ("receive", {"wait_seconds": 1e999}, "body"),
    ],
)
def test_out_of_range_agent_requests_are_400(gw, verb, doc, field):
    na, token = gw
    raw = json.dumps(doc).replace("Infinity", "1e999").encode()
    status, body = _post(f"{na.url}/agent/v1/{verb}", raw, token)
    assert refused(status, body, 400, "validation_failed")["field"] == field
    assert na.ok("receive", "--as", "alice", "--peek")["messages"] == []


def test_a_deeply_nested_agent_body_is_400(gw):
    na, token = gw
    meta = b'{"k":' * 5000 + b"1" + b"}" * 5000
    raw = b'{"channel":"team","body":"x","metadata":' + meta + b"}"
    status, body = _post(f"{na.url}/agent/v1/send", raw, token)
    refused(status, body, 400, "validation_failed")
    nested = {"channel": "team", "body": "x", "metadata": {"k": [[[1]]]}}
    assert _post(f"{na.url}/agent/v1/send", json.dumps(nested).encode(), token)[0] == 200


def test_the_largest_64_bit_id_is_an_ordinary_not_found(gw):
    na, token = gw
    raw = json.dumps({"message_id": 2**63 - 1}).encode()
    status, body = _post(f"{na.url}/agent/v1/ack", raw, token)
    refused(status, body, 404, "not_found")


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/nope", 404, "not_found"),
        ("POST", "/agent/v1/nope", 404, "not_found"),
        ("GET", "/ansible/auth/exchange", 405, "method_not_allowed"),
        ("DELETE", "/agent/v1/send", 405, "method_not_allowed"),
        ("POST", "/acomm/outbox", 405, "method_not_allowed"),
    ],
)
def test_unknown_routes_and_methods_are_json(gw, method, path, status, code):
    na, _ = gw
    r = httpx.request(method, f"{na.url}{path}", timeout=20)
    assert r.headers["content-type"] == "application/json", r.text
    refused(r.status_code, r.json(), status, code)
    if status == 405:
        assert r.headers["allow"]


def _raw(url: str, data: bytes) -> tuple[bytes, bool]:
    """Send `data` as it is; what came back, and whether the server then closed."""
    received = b""
    with connected(url) as s:
        s.sendall(data)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if not select.select([s], [], [], 1)[0]:
                continue
            try:
                more = s.recv(65536)
            except ConnectionResetError:
                more = b""
            if not more:
                return received, True
            received += more
    return received, False


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"garbage\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
        # a head that does not end within the parser's bound (16 KiB)
        b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70_000,
    ],
    ids=["request-line", "header-line", "endless-head"],
)
def test_unparsable_http_is_a_json_400_and_the_connection_closes(gw, request_bytes):
    """Below the app: the server's own parser refuses it, in the JSON error body too."""
    na, _ = gw
    received, closed = _raw(str(na.url), request_bytes)
    answer = _response(received)
    assert answer is not None, received
    status, headers, body = answer
    assert headers["content-type"] == "application/json", received
    refused(status, json.loads(body), 400, "invalid_request")
    assert closed
    r = httpx.get(f"{na.url}/nope", timeout=20)  # the gateway serves on
    refused(r.status_code, r.json(), 404, "not_found")


def test_an_unexpected_failure_in_a_handler_is_a_json_500():
    from starlette.applications import Starlette
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from acomm_cli.federation import httpbody

    async def broken(request: Any) -> Any:
        raise KeyError("kind")

    app = Starlette(routes=[Route("/x", broken)], exception_handlers=httpbody.exception_handlers())
    with TestClient(app, raise_server_exceptions=False) as client:
        r = client.get("/x")
    assert r.headers["content-type"] == "application/json"
    refused(r.status_code, r.json(), 500, "internal_error")
    assert "kind" not in r.text  # no internals in the answer


def test_the_body_limit_is_a_setting(tmp_path, monkeypatch):
    with gateway_nodes(tmp_path) as make:
        na = make("na")
        monkeypatch.setenv("ACOMM_GATEWAY_MAX_BODY", "12")
        r = na.run("gateway", "serve", "--listen", "127.0.0.1:0", timeout=30)
        assert r.returncode == 3 and json.loads(r.stderr)["error"]["field"] == "gateway.max_body"
        monkeypatch.setenv("ACOMM_GATEWAY_MAX_BODY", "2KiB")
        na.start()
        assert na.url is not None
        raw = json.dumps(_exchange_body(inviteToken="x" * 3000)).encode()
        refused(*_post(f"{na.url}/ansible/auth/exchange", raw), 413, "invalid_request")
        raw = json.dumps(_exchange_body(inviteToken="x" * 1000)).encode()
        refused(*_post(f"{na.url}/ansible/auth/exchange", raw), 401, "invalid_token")


def test_the_agent_send_carries_an_event(gw):
    na, token = gw
    auth = {"Authorization": f"Bearer {token}"}
    event = {"event_type": "comment.replied", "target": "alice", "depth": 2, "event_id": "g-1"}
    body = {"channel": "team", "body": "agreed", "event": event}
    r = httpx.post(f"{na.url}/agent/v1/send", json=body, headers=auth)
    assert r.status_code == 200, r.text
    again = httpx.post(f"{na.url}/agent/v1/send", json=body, headers=auth)
    assert again.json()["id"] == r.json()["id"] and again.json()["deduplicated"] is True
    shown = na.ok("show", str(r.json()["id"]))["event"]
    assert (shown["event_type"], shown["actor"], shown["depth"]) == ("comment.replied", "bob", 2)
    bad = {**body, "event": {"event_type": "comment.replied", "action_hint": "now"}}
    r = httpx.post(f"{na.url}/agent/v1/send", json=bad, headers=auth)
    refused(r.status_code, r.json(), 400, "validation_failed")
    assert r.json()["error"]["field"] == "action_hint"


def test_the_agent_send_takes_a_trace_id(gw):
    na, token = gw
    auth = {"Authorization": f"Bearer {token}"}
    body = {"channel": "team", "body": "traced", "trace_id": "gw-trace-1"}
    r = httpx.post(f"{na.url}/agent/v1/send", json=body, headers=auth)
    assert r.status_code == 200, r.text
    assert r.json()["trace_id"] == "gw-trace-1"
    assert na.ok("show", str(r.json()["id"]))["trace_id"] == "gw-trace-1"
    for bad in ("no spaces", 7):
        r = httpx.post(f"{na.url}/agent/v1/send", json={**body, "trace_id": bad}, headers=auth)
        refused(r.status_code, r.json(), 400, "validation_failed")
        assert r.json()["error"]["field"] == "trace_id"
