"""Who a member of the room may be and what it may write, against real gateways: an invite
never takes over a member's node id (the real node still rejoins by its proof), `agent own`
of an agent another live node owns is refused, and the seed's room refuses a connection's
update that changes another node's entries while its own entries still replicate."""

from __future__ import annotations

import json
import os
import secrets
import signal
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ACOMM
from test_gateway import (
    Node,
    exchange,
    gateway_nodes,
    invite,
    joined,
    refused,
    wait_until,
    where,
)

from acomm_cli.federation import identity

pytestmark = pytest.mark.federation


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Callable[[str], Node]]:
    with gateway_nodes(tmp_path) as maker:
        yield maker


def member_key(seed: Node, node: str) -> bytes:
    with sqlite3.connect(seed.path) as c:
        [(key,)] = c.execute("SELECT public_key FROM fed_members WHERE node_id = ?", (node,))
    return bytes(key)


def new_key() -> tuple[bytes, bytes]:
    return identity._new_key_pair()


def by_invite(url: str, node: str, token: str, private: bytes, public: bytes) -> Any:
    nonce = secrets.token_urlsafe(18)
    return exchange(
        url,
        nodeId=node,
        nonce=nonce,
        inviteToken=token,
        publicKey=identity.paserk_public(public),
        nodeProof=identity.sign_proof(private, node, nonce),
    )


def run(n: Node, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ACOMM, "--store", str(n.path), "--json", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


# ---------------------------------------------------------------- a member's node id


def test_an_invite_never_rekeys_a_member_and_the_real_node_still_rejoins(make):
    seed, b, _ = joined(make)
    url = str(seed.url)
    real_key = member_key(seed, "nb")
    private, public = new_key()
    # an invite without --expect, in the hands of whoever: nb's id and the seed's are taken
    for taken in ("nb", "seed"):
        status, body = by_invite(url, taken, invite(seed), private, public)
        refused((status, body), 409, "node_already_joined")
        assert repr(taken) in body["error"]["message"]
    assert member_key(seed, "nb") == real_key
    # the hijacker's own key opens nothing by proof either
    nonce = secrets.token_urlsafe(18)
    proof = identity.sign_proof(private, "nb", nonce)
    refused(exchange(url, nodeId="nb", nonce=nonce, nodeProof=proof), 401, "invalid_proof")
    # the invite was not spent: a new node still joins with it
    token = invite(seed)
    assert by_invite(url, "nfresh", token, private, public)[0] == 200
    # the real node, restarted, rejoins by its proof (and would with its old invite too)
    assert b.stop() in (0, -signal.SIGTERM)
    b.start("--join", url, "--invite", invite(seed, "--expect", "nb"))
    b.ok("agent", "own", "bill")
    wait_until("bill on the seed", lambda: where(seed, "bill") == "nb")
    assert member_key(seed, "nb") == real_key


# ---------------------------------------------------------------- agent ownership


def test_agent_own_is_refused_while_its_owner_is_live(make):
    seed, b, _ = joined(make)
    b.ok("agent", "own", "bob")
    wait_until("bob on the seed", lambda: where(seed, "bob") == "nb")
    r = run(seed, "agent", "own", "bob")
    assert r.returncode == 5, r.stderr
    error = json.loads(r.stderr)["error"]
    assert error["code"] == "invalid_state" and "'nb'" in error["message"]
    assert where(seed, "bob") == "nb"
    # once its owner disowns it, another node may own it
    b.ok("agent", "disown", "bob")
    wait_until("bob disowned on the seed", lambda: where(seed, "bob") is None)
    assert seed.ok("agent", "own", "bob")["owner_node"] == "seed"
    wait_until("bob's new owner on nb", lambda: where(b, "bob") == "seed")
    # nb cannot take it back while the seed is live, nor the seed take nb's carl
    assert run(b, "agent", "own", "bob").returncode == 5
    b.ok("agent", "own", "carl")
    wait_until("carl on the seed", lambda: where(seed, "carl") == "nb")
    # an owner silent past the takeover grace (short here) loses its claim
    assert b.stop() in (0, -signal.SIGTERM)
    short = {"ACOMM_FED_TAKEOVER_GRACE": "1s"}
    assert run(seed, "agent", "own", "carl").returncode == 5  # the default grace: 10 min
    wait_until(
        "carl taken over past the grace",
        lambda: run(seed, "agent", "own", "carl", env=short).returncode == 0,
    )
    assert where(seed, "carl") == "seed"


# ---------------------------------------------------------------- the room's write rule


class RoomClient:
    """A member's raw Yjs connection to the seed's room with its own valid ticket: it
    writes whatever it likes into its copy and sends the update."""

    def __init__(self, url: str, node: str, ticket: str) -> None:
        from httpx_ws import connect_ws
        from pycrdt import Doc

        self.doc: Any = Doc()
        self._client = httpx.Client(timeout=10)
        self._cm = connect_ws(
            url + "/ansible/yjs/control",
            self._client,
            headers={"Authorization": f"Bearer {ticket}", "X-Acomm-Node": node},
        )
        self.ws = self._cm.__enter__()
        self._sync()

    def _sync(self) -> None:
        from pycrdt import YSyncMessageType, create_sync_message

        self.ws.send_bytes(create_sync_message(self.doc))
        wait_until("the room's answer", lambda: self._receive() == YSyncMessageType.SYNC_STEP2)

    def _receive(self) -> int:
        """Handle one message from the room (within a second): its sync type, or -1."""
        import queue

        from pycrdt import YMessageType, handle_sync_message

        try:
            message = self.ws.receive_bytes(timeout=1)
        except queue.Empty:
            return -1
        if message[0] != YMessageType.SYNC:
            return -1
        reply = handle_sync_message(message[1:], self.doc)
        if reply is not None:
            self.ws.send_bytes(reply)
        return int(message[1])

    def write(self, map_: str, key: str, value: dict[str, Any] | None) -> None:
        from pycrdt import Map, create_update_message

        before = self.doc.get_state()
        ymap = self.doc.get(map_, type=Map)
        if value is None:
            del ymap[key]
        else:
            ymap[key] = json.dumps(value)
        self.ws.send_bytes(create_update_message(self.doc.get_update(before)))

    def value(self, map_: str, key: str) -> Any:
        from pycrdt import Map

        raw = self.doc.get(map_, type=Map).get(key)
        return json.loads(raw) if isinstance(raw, str) else raw

    def pump(self, what: str, check: Callable[[], Any]) -> None:
        """Read the room's messages until `check` holds."""
        wait_until(what, lambda: check() or (self._receive() and False))

    def close(self) -> None:
        self._cm.__exit__(None, None, None)
        self._client.close()


def room_entry(n: Node, map_: str, key: str) -> Any:
    with sqlite3.connect(n.path) as c:
        row = c.execute("SELECT value FROM fed_room WHERE map = ? AND key = ?", (map_, key))
        found = row.fetchone()
    return None if found is None else json.loads(found[0])


def test_the_room_refuses_a_members_update_to_another_nodes_entries(make):
    seed, b, _ = joined(make)
    b.ok("agent", "own", "bob")
    wait_until("bob on the seed", lambda: where(seed, "bob") == "nb")
    url = str(seed.url)
    nb_entry = wait_until("nb's entry on the seed", lambda: room_entry(seed, "nodes", "nb"))
    # node nc, a member in good standing: its own valid ticket
    private, public = new_key()
    status, body = by_invite(url, "nc", invite(seed, "--expect", "nc"), private, public)
    assert status == 200
    nc = RoomClient(url, "nc", body["wsTicket"])
    try:
        nc.pump("nb in nc's copy", lambda: nc.value("nodes", "nb"))
        forged = {**nc.value("nodes", "nb"), "url": "http://127.0.0.1:9/evil"}
        nc.write("nodes", "nb", forged)  # nb's url
        nc.write("agents", "bob", {"ownerNodeId": "nc"})  # nb's agent
        nc.write("agents", "eve", {"ownerNodeId": "nb"})  # an ownership nb never claimed
        nc.write("nodes", "seed", None)  # the seed's entry, deleted
        # what is nc's goes through: its heartbeat, its agent, its capability index
        nc.write("nodes", "nc", {"lastSeenAt": "2026-01-01T00:00:00+00:00", "url": "http://nc"})
        nc.write("agents", "cat", {"ownerNodeId": "nc"})
        nc.write("capabilities.index", "cat", {"capabilities": ["x"], "ownerNodeId": "nc"})
        for n in (seed, b):
            wait_until(f"nc's agent cat on {n.id}", lambda n=n: where(n, "cat") == "nc")
            wait_until(
                f"nc's index on {n.id}",
                lambda n=n: room_entry(n, "capabilities.index", "cat") is not None,
            )
            assert room_entry(n, "nodes", "nc")["url"] == "http://nc"
            assert room_entry(n, "nodes", "nb")["url"] == nb_entry["url"]
            assert where(n, "bob") == "nb" and where(n, "eve") is None
            assert room_entry(n, "nodes", "seed") is not None
        # the forger's own copy is put right by the room
        nc.pump(
            "the forged entries put right in nc's copy",
            lambda: (
                nc.value("nodes", "nb")["url"] == nb_entry["url"]
                and nc.value("agents", "bob") == {"ownerNodeId": "nb"}
                and nc.value("agents", "eve") is None
                and nc.value("nodes", "seed") is not None
            ),
        )
    finally:
        nc.close()
    assert "refused: a room update from node nc changes entries it does not own" in seed.log()
    assert "nodes.nb" in seed.log()
    # nb's legitimate writes still replicate after all that
    b.ok("agent", "own", "bill")
    wait_until("bill on the seed", lambda: where(seed, "bill") == "nb")
    assert seed.proc is not None and seed.proc.poll() is None
