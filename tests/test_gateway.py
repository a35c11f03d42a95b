"""`acomm gateway serve`: real gateways as subprocesses on free loopback ports,
every wait bounded, every process killed by PID in teardown (also on failure). The join by
invite and the room sync, every handshake refusal over real HTTP (the WebSocket upgrade
refused with a JSON body, no Yjs byte), the rejoin by node proof, a seed restarted with its
room, `fed pull` over HttpTransport, and a gateway SIGKILLed in the middle of a long poll."""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import procs
import pytest
from conftest import ACOMM

from acomm_cli.engine import opening
from acomm_cli.federation import handshake, identity

pytestmark = pytest.mark.federation

WAIT_S = 20.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(what: str, check: Callable[[], Any], timeout: float = WAIT_S) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


class Node:
    def __init__(self, path: Path, node_id: str) -> None:
        self.path, self.id = path, node_id
        self.proc: subprocess.Popen[bytes] | None = None
        self.url: str | None = None

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [ACOMM, "--store", str(self.path), "--json", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def ok(self, *args: str) -> Any:
        r = self.run(*args)
        assert r.returncode == 0, (args, r.stderr)
        return json.loads(r.stdout) if r.stdout.strip() else None

    def start(self, *args: str, port: int = 0) -> None:
        log = open(str(self.path) + ".log", "ab")  # the child holds it open
        self.proc = procs.spawn(
            [
                ACOMM,
                "--store",
                str(self.path),
                "gateway",
                "serve",
                "--listen",
                f"127.0.0.1:{port}",
                *args,
            ],
            stdout=log,
            stderr=log,
        )
        log.close()
        status = wait_until(f"{self.id}'s gateway", lambda: self._listening())
        self.url = f"http://{status['listen']}"

    def _listening(self) -> dict[str, Any] | None:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"{self.id}'s gateway exited: {self.log()}")
        r = self.run("gateway", "status")  # exit 7 until the gateway runs
        if r.returncode != 0:
            assert r.returncode == 7 and "gateway_not_running" in r.stderr, r.stderr
            return None
        status = json.loads(r.stdout)
        return status if status["listen"] and status["room_synced"] else None

    def stop(self, sig: int = signal.SIGTERM) -> int | None:
        if self.proc is None:
            return None
        try:
            return procs.stop(self.proc, sig)
        finally:
            self.proc = None

    def log(self) -> str:
        try:
            return Path(str(self.path) + ".log").read_text()
        except OSError:
            return ""

    def node(self) -> identity.Node:
        conn = opening.connect(self.path, create=False)
        try:
            return identity.require(conn)
        finally:
            conn.close()


@contextlib.contextmanager
def gateway_nodes(
    tmp_path: Path, init_args: tuple[str, ...] = ()
) -> Iterator[Callable[[str], Node]]:
    """A maker of nodes (each its own store, `node init` done, with `init_args`: a NATS
    transport, say); every gateway one of them started is killed on the way out, also when
    the test failed."""
    made: list[Node] = []

    def _make(node_id: str) -> Node:
        n = Node(tmp_path / node_id / "store.acomm", node_id)
        n.ok("node", "init", "--id", node_id, *init_args)
        made.append(n)
        return n

    try:
        yield _make
    finally:
        for n in made:
            if n.proc is not None:
                procs.stop(n.proc, signal.SIGKILL, timeout=10)


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Callable[[str], Node]]:
    with gateway_nodes(tmp_path) as maker:
        yield maker


def invite(seed: Node, *args: str) -> str:
    return str(seed.ok("invite", "create", *args)["invite_token"])


def joined(make: Callable[[str], Node]) -> tuple[Node, Node, int]:
    seed, b = make("seed"), make("nb")
    port = free_port()
    seed.start("--seed", port=port)
    token = invite(seed, "--expect", "nb")
    b.start("--join", str(seed.url), "--invite", token)
    return seed, b, port


def where(n: Node, agent: str) -> str | None:
    return n.ok("agent", "where", agent)["owner_node"]  # type: ignore[no-any-return]


def test_join_by_invite_and_room_sync(make):
    seed, b, _ = joined(make)
    b.ok("agent", "own", "bob")
    seed.ok("agent", "own", "alice")
    wait_until("bob's owner on the seed", lambda: where(seed, "bob") == "nb")
    wait_until("alice's owner on nb", lambda: where(b, "alice") == "seed")
    status = b.ok("gateway", "status")
    assert {"node_id", "running", "listen", "room_synced", "peers", "outbox_head"} <= set(status)
    assert status["running"] is True
    assert status["node_id"] == "nb" and status["peers"] == ["seed"] and status["room_synced"]
    peers = seed.ok("peers")["peers"]
    assert [(p["node"], p["url"], p["online"]) for p in peers] == [("nb", b.url, True)]
    # the joiner's nonce carried its time: the seed forgets it after its window
    with sqlite3.connect(seed.path) as c:
        rows = c.execute("SELECT nonce, expires_at FROM fed_nonces").fetchall()
    assert rows and all(n.startswith("t") and exp is not None for n, exp in rows)
    # stops cleanly on SIGTERM (uvicorn shuts down, then re-raises the signal: the exit
    # status says SIGTERM), the room closed and the state file gone
    assert b.stop() in (0, -signal.SIGTERM)
    gone = b.run("gateway", "status")
    assert gone.returncode == 7 and "gateway_not_running" in gone.stderr
    assert json.loads(gone.stdout)["listen"] is None
    assert "Traceback" not in b.log() and "Error" not in b.log()


def exchange(url: str, **body: Any) -> tuple[int, dict[str, Any]]:
    body.setdefault("nonce", secrets.token_urlsafe(18))
    r = httpx.post(url + "/ansible/auth/exchange", json=body, timeout=10)
    return r.status_code, r.json()


def upgrade(url: str, ticket: str | None, node: str | None) -> httpx.Response:
    """A WebSocket upgrade request as raw HTTP: a refusal comes back as a plain response."""
    headers = {
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    }
    if ticket is not None:
        headers["Authorization"] = f"Bearer {ticket}"
    if node is not None:
        headers["X-Acomm-Node"] = node
    return httpx.get(url + "/ansible/yjs/control", headers=headers, timeout=10)


def refused(got: tuple[int, dict[str, Any]] | httpx.Response, status: int, code: str) -> None:
    if isinstance(got, httpx.Response):
        assert got.headers["content-type"].startswith("application/json"), got.content
        got = (got.status_code, got.json())
    assert (got[0], got[1]["error"]["code"]) == (status, code), got
    assert set(got[1]) == {"error"} and set(got[1]["error"]) == {"code", "message"}


def connect_ws(url: str, ticket: str, node: str) -> None:
    """A successful upgrade: accepted, then closed."""
    from httpx_ws import connect_ws

    with (
        httpx.Client(timeout=10) as client,
        connect_ws(
            url + "/ansible/yjs/control",
            client,
            headers={"Authorization": f"Bearer {ticket}", "X-Acomm-Node": node},
        ) as ws,
    ):
        assert ws.receive_bytes()  # the room's first sync message: only after the checks


def test_every_refusal_over_real_http(make):
    seed = make("seed")
    seed.start("--seed", port=free_port())
    url = str(seed.url)
    refused(exchange(url, nodeId="nb", inviteToken="not-a-token"), 401, "invalid_token")
    short = invite(seed, "--ttl", "1s")
    time.sleep(1.2)
    refused(exchange(url, nodeId="nb", inviteToken=short), 401, "expired_token")
    refused(
        exchange(url, nodeId="nx", inviteToken=invite(seed, "--expect", "nb")), 403, "node_mismatch"
    )
    token = invite(seed, "--expect", "nb")
    nonce = secrets.token_urlsafe(18)
    status, body = exchange(url, nodeId="nb", inviteToken=token, nonce=nonce)
    assert status == 200 and set(body) == {
        "wsTicket",
        "expiresAt",
        "rooms",
        "sessionId",
        "gatewayNodeId",
    }
    refused(
        exchange(url, nodeId="nb", inviteToken=invite(seed), nonce=nonce), 409, "replay_detected"
    )
    ticket = body["wsTicket"]
    # the room: no ticket, a forged one, another node's header: refused before the upgrade
    refused(upgrade(url, None, "nb"), 401, "invalid_ticket")
    refused(upgrade(url, "v4.public.forged", "nb"), 401, "invalid_ticket")
    forged = handshake._sign(
        identity._new_key_pair()[0],
        {  # a key that is not the seed's
            "iss": "seed",
            "sub": "nb",
            "aud": "ansible-yjs",
            "rooms": ["control"],
            "inviteId": None,
            "jti": "x",
            "iat": "2020-01-01T00:00:00Z",
            "exp": "2099-01-01T00:00:00Z",
        },
    )
    refused(upgrade(url, forged, "nb"), 401, "invalid_ticket")
    expired = handshake._sign(
        seed.node().private_key,
        {
            "iss": "seed",
            "sub": "nb",
            "aud": "ansible-yjs",
            "rooms": ["control"],
            "inviteId": None,
            "jti": "y",
            "iat": "2020-01-01T00:00:00Z",
            "exp": "2020-01-01T00:01:00Z",
        },
    )
    refused(upgrade(url, expired, "nb"), 401, "expired_ticket")
    refused(upgrade(url, ticket, "nx"), 403, "node_mismatch")
    connect_ws(url, ticket, "nb")  # consumes the ticket and the invite
    refused(upgrade(url, ticket, "nb"), 409, "ticket_already_used")
    refused(exchange(url, nodeId="nb", inviteToken=token), 409, "token_already_used")
    # no room data in any refusal, and the seed still serves
    assert seed.proc is not None and seed.proc.poll() is None


def test_rejoin_by_node_proof_and_a_restarted_seed_keeps_its_room(make):
    seed, b, port = joined(make)
    b.ok("agent", "own", "bob")
    wait_until("bob on the seed", lambda: where(seed, "bob") == "nb")
    assert b.stop() in (0, -signal.SIGTERM)
    assert seed.stop() in (0, -signal.SIGTERM)
    with sqlite3.connect(seed.path) as c:  # the room must come back from the room's store
        c.execute("DELETE FROM fed_room")
    seed.start("--seed", port=port)
    assert where(seed, "bob") == "nb"
    b.start("--join", str(seed.url))  # no invite: the node proof
    b.ok("agent", "own", "bill")
    wait_until("bill on the seed", lambda: where(seed, "bill") == "nb")
    # the proof alone, over HTTP: a known node gets a ticket, an unknown one does not
    me = b.node()
    nonce = secrets.token_urlsafe(18)
    proof = identity.sign_proof(me.private_key, "nb", nonce)
    assert exchange(str(seed.url), nodeId="nb", nonce=nonce, nodeProof=proof)[0] == 200
    refused(exchange(str(seed.url), nodeId="nz", nodeProof=proof), 401, "invalid_proof")


def test_fed_pull_over_http_and_a_gateway_killed_in_a_long_poll(make):
    seed, b, port = joined(make)
    b.ok("agent", "own", "bob")
    wait_until("bob on the seed", lambda: where(seed, "bob") == "nb")
    sent = seed.ok("send", "--as", "alice", "--to", "bob", "hello over http")["results"][0]
    assert sent["status"] == "emitted" and sent["to_node"] == "nb"
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["unreachable"]) == (1, [])
    assert [m["content"] for m in b.ok("receive", "--as", "bob")["messages"]] == ["hello over http"]
    assert seed.ok("fed", "pull")["acks"] == 1  # nb's `ack accepted`, read over HTTP
    cursor = b.ok("peers")["peers"][0]["cursor"]
    # a long poll on a seed with nothing new; the seed is SIGKILLed in the middle of it
    poll = subprocess.Popen(
        [ACOMM, "--store", str(b.path), "--json", "fed", "pull", "--wait", "20s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        time.sleep(2.0)
        assert poll.poll() is None  # still waiting
        seed.stop(signal.SIGKILL)
        out, err = poll.communicate(timeout=WAIT_S)
    finally:
        if poll.poll() is None:
            poll.kill()
            poll.wait(timeout=5)
    assert poll.returncode == 7 and b"peer_unreachable" in err, err
    assert json.loads(out)["unreachable"] == ["seed"]
    assert b.ok("peers")["peers"][0]["cursor"] == cursor  # no damage
    again = b.run("fed", "pull")
    assert again.returncode == 7 and json.loads(again.stdout)["unreachable"] == ["seed"]
    # the seed restarted: the next pull resumes from the cursor, exactly once
    seed.start("--seed", port=port)
    seed.ok("send", "--as", "alice", "--to", "bob", "after the restart")
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["duplicates"], got["unreachable"]) == (1, 0, [])
    assert [m["content"] for m in b.ok("receive", "--as", "bob")["messages"]] == [
        "after the restart"
    ]


def test_the_outbox_refuses_unsigned_and_unknown_readers(make):
    seed = make("seed")
    seed.start("--seed", port=free_port())
    url = str(seed.url) + "/acomm/outbox?after=0&limit=10&wait=0"
    refused(
        (lambda r: (r.status_code, r.json()))(httpx.get(url, timeout=10)), 401, "invalid_signature"
    )
    stranger = make("nz").node()  # a node the seed never met
    from acomm_cli.federation.http_transport import signed_headers

    target = "/acomm/outbox?after=0&limit=10&wait=0"
    r = httpx.get(str(seed.url) + target, headers=signed_headers(stranger, target), timeout=10)
    refused((r.status_code, r.json()), 401, "invalid_signature")
    headers = signed_headers(seed.node(), target)
    headers["X-Acomm-Timestamp"] = str(int(headers["X-Acomm-Timestamp"]) - 600_000)
    r = httpx.get(str(seed.url) + target, headers=headers, timeout=10)
    refused((r.status_code, r.json()), 401, "expired_signature")


def test_a_signed_read_is_answered_once(make):
    """The identical signed request replayed (or its signature spelt another way
    in base64) is 401 replayed_request; a request signed afresh is answered."""
    from acomm_cli.federation.http_transport import outbox_target, signed_headers

    seed = make("seed")
    seed.start("--seed", port=free_port())
    me = seed.node()
    target = outbox_target(0, 10, 0, secrets.token_urlsafe(12))
    headers = signed_headers(me, target)
    first = httpx.get(str(seed.url) + target, headers=headers, timeout=10)
    assert first.status_code == 200 and set(first.json()) == {"node", "events", "head"}
    again = httpx.get(str(seed.url) + target, headers=headers, timeout=10)
    refused((again.status_code, again.json()), 401, "replayed_request")
    assert "already answered" in again.json()["error"]["message"]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    sig = headers["X-Acomm-Signature"]
    respelt = {
        **headers,
        "X-Acomm-Signature": sig[:-1] + alphabet[alphabet.index(sig[-1]) ^ 1],
    }  # same 64 bytes
    assert identity.unb64url(respelt["X-Acomm-Signature"]) == identity.unb64url(sig)
    r = httpx.get(str(seed.url) + target, headers=respelt, timeout=10)
    refused((r.status_code, r.json()), 401, "replayed_request")
    fresh = outbox_target(0, 10, 0, secrets.token_urlsafe(12))
    r = httpx.get(str(seed.url) + fresh, headers=signed_headers(me, fresh), timeout=10)
    assert r.status_code == 200
    with sqlite3.connect(seed.path) as c:
        assert c.execute("SELECT count(*) FROM fed_request_nonces").fetchone()[0] == 2


def test_a_locked_store_is_noted_and_the_gateway_carries_on(make):
    seed = make("seed")
    seed.start("--seed", port=free_port())
    lock = sqlite3.connect(seed.path, timeout=5, isolation_level=None)
    try:
        lock.execute("BEGIN IMMEDIATE")  # the gateway's mirror passes now meet a locked store
        time.sleep(3.0)
        assert seed.proc is not None and seed.proc.poll() is None
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    seed.ok("agent", "own", "alice")  # queued, then applied to the room and mirrored back
    wait_until(
        "the queue applied",
        lambda: seed.run("agent", "where", "alice").returncode == 0 and not _pending(seed),
    )
    # said in a log line, with its time and level; no traceback
    assert re.search(
        r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARNING acomm\.gateway: the room could not be "
        r"mirrored into the store now: ",
        seed.log(),
        re.M,
    ), seed.log()
    assert "Traceback" not in seed.log()
    started = seed.log().splitlines()[0]
    assert re.fullmatch(
        r"\S+Z INFO acomm\.gateway: gateway seed listening on \S+ \(seed\)", started
    )


def _pending(n: Node) -> int:
    with sqlite3.connect(n.path) as c:
        return int(
            c.execute("SELECT count(*) FROM fed_room_changes WHERE applied_at IS NULL").fetchone()[
                0
            ]
        )


@pytest.mark.skipif(shutil.which("faketime") is None, reason="faketime is not installed")
def test_a_joiner_whose_clock_is_minutes_off_is_told_so_not_only_replay_detected(make):
    """The seed refuses a nonce stamped more than 60 s from its clock with 409
    replay_detected; the joiner's log must carry the seed's reason (its clock), or its
    operator chases a replay that never happened."""
    seed, b = make("seed"), make("nb")
    seed.start("--seed", port=free_port())
    token = invite(seed, "--expect", "nb")
    log = Path(str(b.path) + ".log")
    with open(log, "ab") as out:
        b.proc = procs.spawn(
            [
                "faketime",
                "-f",
                "+300s",
                ACOMM,
                "--store",
                str(b.path),
                "gateway",
                "serve",
                "--listen",
                f"127.0.0.1:{free_port()}",
                "--join",
                str(seed.url),
                "--invite",
                token,
            ],
            stdout=out,
            stderr=out,
        )
    text = wait_until(
        "the joiner's refusal", lambda: "replay_detected" in log.read_text() and log.read_text()
    )
    assert "clock" in text.split("replay_detected", 1)[1].splitlines()[0], text
