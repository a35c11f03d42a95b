"""`acomm web` as a process, without a browser: an event stream told of a commit by another
process, and a prompt stop at SIGINT or SIGTERM with a stream still open (the console ends
its streams, it does not wait them out)."""

from __future__ import annotations

import signal
import socket
import subprocess

import pytest
from procs import stop
from webconsole import ACOMM, serve

pytestmark = pytest.mark.process


@pytest.fixture
def traffic(cli, make_channel):
    return make_channel("team", "op", "alice")


def open_stream(url: str) -> socket.socket:
    """GET /events as a browser's EventSource holds it; returns once its first line came."""
    host, port = url.split("//")[1].rstrip("/").split(":")
    s = socket.create_connection((host, int(port)), timeout=30)
    s.sendall(f"GET /events HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    got = b""
    while b"retry:" not in got:
        chunk = s.recv(4096)
        assert chunk, f"the stream closed: {got!r}"
        got += chunk
    assert got.startswith(b"HTTP/1.1 200")
    return s


def read_until(s: socket.socket, marker: bytes) -> bytes:
    got = b""
    while marker not in got:
        chunk = s.recv(4096)
        if not chunk:
            break
        got += chunk
    return got


@pytest.mark.parametrize("inotify", [True, False], ids=["inotify", "poll"])
def test_a_commit_by_another_process_reaches_an_open_stream(traffic, inotify, monkeypatch):
    if not inotify:
        monkeypatch.setenv("ACOMM_NO_INOTIFY", "1")
    proc, url = serve(traffic, "--read-only")
    try:
        s = open_stream(url)
        subprocess.run(
            [ACOMM, "--store", str(traffic), "send", "team", "hi", "--as", "op"],
            check=True,
            capture_output=True,
            timeout=60,
        )
        s.settimeout(2)  # what a browser promises its user: within 2 s of the commit
        assert b"event: change" in read_until(s, b"event: change")
        s.close()
    finally:
        stop(proc)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_the_open_streams_and_stops_the_console(traffic, sig):
    proc, url = serve(traffic, "--read-only")
    try:
        s = open_stream(url)
        proc.send_signal(sig)
        # the stream is ended by the server (its last chunk), not cut when a grace runs out
        ended = read_until(s, b"0\r\n\r\n")
        assert ended.endswith(b"0\r\n\r\n")
        proc.wait(timeout=15)
        s.close()
    finally:
        stop(proc)
