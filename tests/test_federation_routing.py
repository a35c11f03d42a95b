"""Federation routing, outboxes, `fed pull` and two-level acks, between real
stores in tmp_path, each a node; `fed pull` reads a peer's outbox from its file
(StoreTransport)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.federation


class Node:
    def __init__(self, cli, path: Path, node_id: str) -> None:
        self.cli, self.path, self.id = cli, path, node_id

    def __call__(self, *args: str):
        return self.cli("--store", str(self.path), "--json", *args)

    def ok(self, *args: str):
        r = self(*args)
        assert r.exit_code == 0, (args, r.stderr)
        return r.json() if r.stdout.strip() else None

    def sql(self, statement: str, *params):
        with sqlite3.connect(self.path) as c:
            return c.execute(statement, params).fetchall()


def linked_pair(cli, tmp_path) -> tuple[Node, Node]:
    """Nodes na and nb that know each other's store (StoreTransport); nb owns bob, and a
    pull each way has told na so."""
    a = Node(cli, tmp_path / "na.acomm", "na")
    b = Node(cli, tmp_path / "nb.acomm", "nb")
    for n in (a, b):
        n.ok("node", "init", "--id", n.id)
    a.ok("peers", "add", "nb", "--url", f"store:{b.path}")
    b.ok("peers", "add", "na", "--url", f"store:{a.path}")
    b.ok("agent", "own", "bob")
    b.ok("fed", "pull")
    a.ok("fed", "pull")
    return a, b


def three_nodes(cli, tmp_path, node: type = Node) -> tuple[Any, Any, Any]:
    """na, nb and nc, each a node whose peers are the other two (their store files); `node`
    is the class that drives each one (a test file may bring its own)."""
    made = {}
    for name in ("na", "nb", "nc"):
        n = node(cli, tmp_path / f"{name}.acomm", name)
        n.ok("node", "init", "--id", name)
        made[name] = n
    for a in made.values():
        for b in made.values():
            if a is not b:
                a.ok("peers", "add", b.id, "--url", f"store:{b.path}")
    return made["na"], made["nb"], made["nc"]


@pytest.fixture
def nodes(cli, tmp_path):
    return three_nodes(cli, tmp_path)


def test_ownership_is_visible_after_a_pull(nodes):
    a, b, _ = nodes
    assert a.ok("agent", "where", "bob")["route"] == "no_owner"
    owned = b.ok("agent", "own", "bob", "--fallback", "nc")
    assert owned == {
        "agent": "bob",
        "owner_node": "nb",
        "fallback_nodes": ["nc"],
        "online": True,
        "route": "local",
    }
    assert b.sql("SELECT map, key FROM fed_room_changes WHERE map = 'agents'") == [
        ("agents", "bob")
    ]  # queued for the gateway
    b.ok("fed", "pull")  # heartbeat
    a.ok("fed", "pull")
    where = a.ok("agent", "where", "bob")
    assert where["owner_node"] == "nb" and where["route"] == "owner" and where["online"]
    peers = {p["node"]: p for p in a.ok("peers")["peers"]}
    assert peers["nb"]["online"] and peers["nb"]["lag"] == 0
    b.ok("agent", "disown", "bob")
    b.ok("fed", "pull")
    a.ok("fed", "pull")
    assert a.ok("agent", "where", "bob")["route"] == "no_owner"


def _own_bob(a, b):
    b.ok("agent", "own", "bob")
    b.ok("fed", "pull")
    a.ok("fed", "pull")


def test_full_loop_message_accepted_processed_and_reply(nodes):
    a, b, _ = nodes
    _own_bob(a, b)
    sent = a.ok("send", "--to", "bob", "do it", "--as", "alice")["results"][0]
    assert sent["status"] == "emitted" and sent["to_node"] == "nb"
    assert sent["route_decision"] == "owner" and sent["global_id"]
    q = a.ok(
        "send", "--to", "bob", "why?", "--type", "query", "--correlation-id", "c1", "--as", "alice"
    )["results"][0]
    assert b.ok("fed", "pull")["delivered"] == 2
    inbox = b.ok("receive", "--as", "bob")["messages"]
    assert [m["content"] for m in inbox] == ["do it", "why?"]
    assert b.sql("SELECT global_id, origin_node FROM messages WHERE content = 'do it'") == [
        (sent["global_id"], "na")
    ]
    pulled = a.ok("fed", "pull")
    assert pulled["acks"] == 2  # accepted, both
    assert a.sql("SELECT state FROM fed_sent ORDER BY created_at, event_id") == [
        ("accepted",),
        ("accepted",),
    ]
    b.ok("ack", str(inbox[0]["id"]), "--status", "completed", "--as", "bob")
    b.ok("respond", "c1", "because", "--as", "bob")
    pulled = a.ok("fed", "pull")
    assert pulled["replies"] == 1 and pulled["acks"] == 2
    states = dict(a.sql("SELECT event_id, state FROM fed_sent"))
    assert states == {sent["global_id"]: "processed", q["global_id"]: "replied"}
    answer = a.ok("receive", "--as", "alice")["messages"]
    assert [(m["type"], m["content"], m["correlation_id"]) for m in answer] == [
        ("response", "because", "c1")
    ]
    # nothing was delivered locally to the remote agents' ghosts
    assert a.sql("SELECT count(*) FROM deliveries WHERE recipient = 'bob'") == [(0,)]
    assert b.sql("SELECT count(*) FROM deliveries WHERE recipient = 'alice'") == [(0,)]


def test_dedupe_after_a_cursor_rewind(nodes):
    a, b, _ = nodes
    _own_bob(a, b)
    a.ok("send", "--to", "bob", "once", "--as", "alice")
    assert b.ok("fed", "pull")["delivered"] == 1
    b.sql("UPDATE fed_cursors SET position = 0 WHERE source_node = 'na'")
    again = b.ok("fed", "pull")
    assert again["delivered"] == 0 and again["duplicates"] == again["read"] >= 1
    assert b.sql("SELECT count(*) FROM deliveries WHERE recipient = 'bob'") == [(1,)]


def test_no_owner_is_exit_5_and_a_dead_letter(nodes):
    a, _, _ = nodes
    r = a("send", "--to", "ghost", "hello?", "--as", "alice")
    assert r.exit_code == 5
    err = json.loads(r.stdout)["results"][0]["error"]
    assert err["code"] == "no_owner"
    assert a.sql("SELECT recipient, reason FROM dead_letters") == [("ghost", "no_owner")]
    assert a.sql("SELECT kind FROM fed_outbox") == [("dead_letter",)]


def test_a_local_participant_routes_locally_on_a_node(nodes):
    a, _, _ = nodes
    a.ok("channel", "create", "team", "--as", "alice")
    a.ok("channel", "join", "team", "--as", "alice", "dave")
    r = a.ok("send", "--to", "dave", "hi", "--as", "alice")["results"][0]
    assert r["status"] == "delivered" and "global_id" not in r


def test_owner_offline_goes_to_the_fallback_or_dead_letters(nodes):
    a, b, c = nodes
    b.ok("agent", "own", "bob", "--fallback", "nc")
    b.ok("fed", "pull")
    c.ok("fed", "pull")
    a.ok("fed", "pull")
    old = "2020-01-01T00:00:00.000Z"
    a.sql(
        "UPDATE fed_room SET value = json_set(value, '$.lastSeenAt', ?) WHERE map = 'nodes'"
        " AND key = 'nb'",
        old,
    )
    r = a.ok("send", "--to", "bob", "hi", "--as", "alice")["results"][0]
    assert r["route_decision"] == "fallback" and r["to_node"] == "nc"
    a.sql(
        "UPDATE fed_room SET value = json_set(value, '$.lastSeenAt', ?) WHERE map = 'nodes'"
        " AND key = 'nc'",
        old,
    )
    r2 = a("send", "--to", "bob", "hi again", "--as", "alice")
    assert r2.exit_code == 5
    assert json.loads(r2.stdout)["results"][0]["error"]["code"] == "owner_offline"
    assert a.sql("SELECT reason FROM dead_letters") == [("owner_offline",)]
    assert a.ok("deadletter", "list", "--reason", "owner_offline")["total_count"] == 1


def test_pull_of_an_unreachable_peer(nodes, tmp_path):
    a, _, _ = nodes
    a.ok("peers", "add", "gone", "--url", f"store:{tmp_path / 'missing.acomm'}")
    r = a("fed", "pull")  # the others pulled, then exit 7 naming it
    assert r.exit_code == 7 and r.json()["unreachable"] == ["gone"]
    r = a("fed", "pull", "--peer", "gone")
    assert r.exit_code == 7 and r.error["code"] == "peer_unreachable"
    r = a("fed", "pull", "--peer", "nope")
    assert r.exit_code == 4


def test_a_plain_store_send_to_a_new_agent_is_unchanged(cli, store):
    r = cli.ok("send", "--to", "zed", "hi", "--as", "alice", "--json").json()["results"][0]
    assert r["status"] == "delivered" and "global_id" not in r
