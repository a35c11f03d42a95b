"""A slow or silent peer cannot hold a pass: each peer's exchange has an overall deadline
(`federation.peer_deadline`), after which `fed pull` and `tick` skip it with a note, `fed
status` says `peer_unreachable`, and the other peers of the same pass are still pulled.

The slow peer is a real HTTP server on loopback that answers one byte every 2 s (a thread
here, stopped by the test and by itself after SERVER_LIFE_S)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from test_federation_routing import Node, linked_pair

pytestmark = pytest.mark.federation

DRIP_EVERY_S = 2.0
SERVER_LIFE_S = 60.0  # the server stops by itself after this, whatever the test does
DEADLINE = "1500ms"
# the pass may take the deadline plus start-up and the good peer's pull on a loaded machine;
# unbounded, the slow-drip server would hold it for SERVER_LIFE_S
BOUND_S = 1.5 + 15.0
# a valid outbox page, dripped: it would take minutes to arrive in full
ANSWER = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 24\r\n\r\n"
    b'{"events": [], "head": 0}'
)


class SlowDrip:
    """Accepts connections on 127.0.0.1 and answers each one byte every DRIP_EVERY_S."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stopped = threading.Event()
        self.born = time.monotonic()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        workers = []
        while not self._done():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            t = threading.Thread(target=self._drip, args=(conn,), daemon=True)
            t.start()
            workers.append(t)
        for t in workers:
            t.join()
        self.sock.close()

    def _drip(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(1.0)
            try:
                conn.recv(65536)  # the request (its head fits in one read on loopback)
                for i in range(len(ANSWER)):
                    if self.stopped.wait(DRIP_EVERY_S) or self._done():
                        return
                    conn.sendall(ANSWER[i : i + 1])
            except OSError:  # the client gave up and closed: what a deadline does
                return

    def _done(self) -> bool:
        return self.stopped.is_set() or time.monotonic() - self.born > SERVER_LIFE_S

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=SERVER_LIFE_S)
        assert not self.thread.is_alive()


@pytest.fixture
def slow_peer() -> Iterator[SlowDrip]:
    server = SlowDrip()
    server.thread.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def nodes(cli, tmp_path, slow_peer, monkeypatch):
    """nb pulls two peers: `a-slow` (the slow-drip server, first in the pass) and na, which
    holds a message for bob on nb."""
    a, b = linked_pair(cli, tmp_path)
    b.ok("peers", "add", "a-slow", "--url", f"http://127.0.0.1:{slow_peer.port}")
    a.ok("send", "--to", "bob", "hello from na", "--as", "alice")
    monkeypatch.setenv("ACOMM_FED_PEER_DEADLINE", DEADLINE)
    return a, b


def _status(b: Node) -> dict[str, dict]:
    return {p["node"]: p for p in b.ok("fed", "status")["peers"]}


def test_fed_pull_skips_a_slow_drip_peer_after_its_deadline(nodes):
    _, b = nodes
    assert _status(b)["a-slow"]["state"] == "never_pulled"
    started = time.monotonic()
    r = b("fed", "pull")
    took = time.monotonic() - started
    assert r.exit_code == 7, r.stderr  # after pulling the good peer
    assert took < BOUND_S, took
    doc = r.json()
    assert doc["unreachable"] == ["a-slow"]
    assert doc["delivered"] == 1  # the good peer, after the slow one, in the same pass
    assert "peer_unreachable" in r.stderr and "a-slow" in r.stderr
    assert "1.5s" in r.stderr  # the note names the deadline it ran out of
    assert b.ok("receive", "--as", "bob")["messages"][0]["content"] == "hello from na"
    status = _status(b)
    assert status["a-slow"]["state"] == "peer_unreachable"
    assert "federation.peer_deadline" in status["a-slow"]["error"]
    assert status["na"]["state"] == "ok" and status["na"]["error"] is None


def test_fed_pull_of_only_the_slow_peer_is_exit_7_within_the_deadline(nodes):
    _, b = nodes
    started = time.monotonic()
    r = b("fed", "pull", "--peer", "a-slow")
    assert time.monotonic() - started < BOUND_S
    assert r.exit_code == 7, r.stderr
    assert "peer_unreachable" in r.stderr


def test_tick_skips_a_slow_drip_peer_after_its_deadline(nodes):
    _, b = nodes
    started = time.monotonic()
    r = b("tick")
    took = time.monotonic() - started
    assert r.exit_code == 0, r.stderr
    assert took < BOUND_S, took
    assert r.json()["fed_pulled"] >= 1  # na's message, read in the same pass
    assert "peer_unreachable" in r.stderr and "a-slow" in r.stderr
    assert _status(b)["a-slow"]["state"] == "peer_unreachable"
    assert b.ok("receive", "--as", "bob")["messages"][0]["content"] == "hello from na"


def test_the_deadline_is_a_validated_setting(cli, store, monkeypatch):
    monkeypatch.setenv("ACOMM_FED_PEER_DEADLINE", "0s")
    r = cli("--store", str(store), "config", "show", "--json")
    assert r.exit_code == 3, r.stdout
    assert "federation.peer_deadline" in r.stderr


def test_the_room_client_gives_up_on_a_slow_drip_seed(nodes, slow_peer, monkeypatch):
    """A joining gateway's exchange with the seed is bounded too: past its deadline it is a
    TimeoutError, which the join loop notes and retries like a seed that went away."""
    import sqlite3

    import anyio
    import httpx

    from acomm_cli.federation import identity, roomsync

    _, b = nodes
    with sqlite3.connect(b.path) as conn:
        me = identity.require(conn)
    monkeypatch.setattr(roomsync, "EXCHANGE_DEADLINE_S", 1.5)

    async def join_once() -> None:
        async with httpx.AsyncClient(timeout=10.0) as client:
            await roomsync.exchange(client, f"http://127.0.0.1:{slow_peer.port}", me, None)

    started = time.monotonic()
    with pytest.raises(TimeoutError):
        anyio.run(join_once)
    assert time.monotonic() - started < BOUND_S


def test_a_gateways_pull_loop_skips_a_slow_drip_peer_after_the_configured_deadline(nodes, tmp_path):
    """`gateway serve --pull-every` reads federation.peer_deadline as `fed pull` does: the
    slow peer is skipped after 1.5 s (unbounded by the setting it would be 30 s), and the
    good peer after it is still pulled by the same gateway."""
    import procs
    from conftest import ACOMM, wait_for

    _, b = nodes
    log = open(tmp_path / "gateway.log", "wb")  # the child holds it open
    gw = procs.spawn(
        [ACOMM, "--store", str(b.path), "gateway", "serve", "--listen", "127.0.0.1:0"]
        + ["--pull-every", "200ms"],
        stdout=log,
        stderr=log,
    )
    log.close()
    pulled = "SELECT count(*) FROM messages WHERE content = 'hello from na'"
    try:  # the slow peer is first in the pass: na's message comes after its deadline
        wait_for(lambda: b.sql(pulled) == [(1,)], within=BOUND_S)
        gone = gw.poll()
    finally:
        procs.stop(gw, timeout=10)
    assert gone is None, (tmp_path / "gateway.log").read_text()
    status = _status(b)
    assert status["a-slow"]["state"] == "peer_unreachable"
    assert "1.5s (federation.peer_deadline)" in status["a-slow"]["error"]
    assert b.ok("receive", "--as", "bob")["messages"][0]["content"] == "hello from na"


def test_a_gateways_push_pass_gives_each_peer_the_configured_deadline(nodes):
    """`gateway serve --push` (a NATS node) pulls in the same passes, long-polling 1 s: its
    peers' exchanges end after federation.peer_deadline plus that second, here on a real
    store whose slow peer is an http one."""
    from acomm_cli.engine import opening
    from acomm_cli.federation import gateway, identity, push

    _, b = nodes
    conn = opening.connect(b.path, create=False)
    try:
        opts = gateway.Options(store_path=b.path, host="127.0.0.1", port=0, peer_deadline_ms=1500)
        gw = gateway.Gateway(opts, identity.require(conn), None, "http://127.0.0.1:1")
        started = time.monotonic()
        assert push._push_once(gw, conn, None) == 1.0  # a peer was unreachable: pause 1 s
        took = time.monotonic() - started
    finally:
        conn.close()
    assert took < BOUND_S, took
    status = _status(b)
    assert status["a-slow"]["state"] == "peer_unreachable"
    assert "2.5s (federation.peer_deadline)" in status["a-slow"]["error"]
    assert status["na"]["state"] == "ok"
