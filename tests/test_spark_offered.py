"""What a failed executor wait says the cluster offers, read from the standalone master's
JSON status: every answer that is not that status (a UI still attaching its pages answers
/json with HTML; a peer that is not HTTP) makes it "unknown" instead of failing the audit."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from acomm_cli.analytics import sparkrun

pytestmark = pytest.mark.unit

WORKER = {
    "id": "worker-1",
    "state": "ALIVE",
    "cores": 2,
    "coresfree": 1,
    "memory": 1024,
    "memoryfree": 512,
}


def _serve(body: bytes, content_type: str) -> Iterator[int]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def html_ui() -> Iterator[int]:
    yield from _serve(b'<!DOCTYPE html><html data-bs-theme="light"></html>', "text/html")


@pytest.fixture
def json_ui() -> Iterator[int]:
    doc = {"workers": [WORKER, {**WORKER, "id": "worker-2", "state": "DEAD"}]}
    yield from _serve(json.dumps(doc).encode(), "application/json")


@pytest.fixture
def not_http() -> Iterator[int]:
    """A peer that answers every connection with a line that is not an HTTP status line."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def answer() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(4096)
                conn.sendall(b"GET /json HTTP/1.1\r\n\r\n")

    threading.Thread(target=answer, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()


def test_the_alive_workers_are_what_the_cluster_offers(json_ui, monkeypatch):
    monkeypatch.setenv("SPARK_MASTER_WEBUI_PORT", str(json_ui))
    offered = sparkrun._offered("spark://127.0.0.1:7077")
    assert offered["workers"] == [
        {"id": "worker-1", "cores": 2, "cores_free": 1, "memory_mb": 1024, "memory_free_mb": 512}
    ]
    assert "worker-1: 1 of 2 cores free, 512 MB of 1024 MB memory free" in offered["text"]


def test_an_html_answer_leaves_the_offer_unknown(html_ui, monkeypatch):
    monkeypatch.setenv("SPARK_MASTER_WEBUI_PORT", str(html_ui))
    offered = sparkrun._offered("spark://127.0.0.1:7077")
    assert offered["workers"] is None
    assert offered["text"].startswith(
        f"what the workers offer is unknown (http://127.0.0.1:{html_ui}/json:"
    )


def test_a_peer_that_is_not_http_leaves_the_offer_unknown(not_http, monkeypatch):
    monkeypatch.setenv("SPARK_MASTER_WEBUI_PORT", str(not_http))
    offered = sparkrun._offered("spark://127.0.0.1:7077")
    assert offered["workers"] is None
    assert "what the workers offer is unknown" in offered["text"]
