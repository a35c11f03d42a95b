"""A member node acting as agents and nodes it does not own: node nc plays the compromised
member and writes forged events into its own outbox (as a patched node would); nb and na
read them with `fed pull` and must refuse each one (recorded in `fed_rejected`, the
cursor past it) while the legitimate flows between na and nb go on. Nodes read each other's
store files (StoreTransport); test_a_forged_event_over_real_gateways does it over signed
HTTP reads."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_federation_routing import Node, three_nodes

from acomm_cli.engine import remote
from acomm_cli.store import federation as fsql

pytestmark = pytest.mark.federation


@pytest.fixture
def trio(cli, tmp_path):
    """na (alice's node), nb (bob's and carol's) and nc (mallory's), each a peer of the
    others; the room copies know who owns whom."""
    a, b, c = three_nodes(cli, tmp_path)
    a.ok("agent", "own", "alice")
    b.ok("agent", "own", "bob")
    c.ok("agent", "own", "mallory")
    b.ok("channel", "create", "ops", "--as", "carol")  # carol: nb's, in no room entry
    for n in (a, b, c, a, b):
        n.ok("fed", "pull")
    return a, b, c


def forge(node: Node, kind: str, **fields: Any) -> str:
    """Append an event to `node`'s outbox as a compromised node would: any envelope at all,
    signed and served like an honest one."""
    conn = sqlite3.connect(node.path)
    try:
        with conn:
            return remote.emit(
                conn,
                fields.pop("source_node", node.id),
                kind,
                to_node=fields.pop("to_node"),
                now=fields.pop("now", 1_900_000_000_000),
                source_agent=fields.pop("source_agent", None),
                to_agent=fields.pop("to_agent", None),
                corr=fields.pop("corr", None),
                payload=fields.pop("payload", {}),
                decision=None,
            )
    finally:
        conn.close()


def rejected(node: Node) -> dict[str, str]:
    """event id -> reason, of what `node` refused."""
    rows = node.sql("SELECT event_id, reason FROM fed_rejected")
    return {str(e): str(r) for e, r in rows}


def inbox(node: Node, agent: str) -> list[tuple[str, str]]:
    got = node.ok("receive", "--as", agent)["messages"]
    return [(m["sender"], m["content"]) for m in got]


def cursor_at_head(node: Node, peer: Node) -> bool:
    pos = node.sql("SELECT position FROM fed_cursors WHERE source_node = ?", peer.id)
    head = peer.sql("SELECT coalesce(max(seq), 0) FROM fed_outbox")
    return pos == head


@pytest.mark.parametrize(
    ("as_agent", "why"),
    [
        ("carol", "'carol' is an agent of this node"),
        ("bob", "'bob' is owned by this node"),
        ("alice", "'alice' is owned by node 'na'"),
        ("acomm", "may not send as 'acomm'"),
    ],
)
def test_a_message_as_an_agent_the_peer_does_not_own_is_refused(trio, as_agent, why):
    a, b, c = trio
    forged = forge(
        c,
        "message",
        to_node="nb",
        source_agent=as_agent,
        to_agent="bob",
        payload={"type": "text", "content": "wire the money"},
    )
    honest = forge(
        c,
        "message",
        to_node="nb",
        source_agent="mallory",
        to_agent="bob",
        payload={"type": "text", "content": "hello from nc"},
    )
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["rejected"]) == (1, 1)
    assert inbox(b, "bob") == [("mallory", "hello from nc")]
    reasons = rejected(b)
    assert list(reasons) == [forged] and why in reasons[forged]
    assert honest not in reasons and cursor_at_head(b, c)
    # no `ack accepted` went back for the forgery; the real one did
    acks = [e["payload"]["ackOf"] for e in _outbox(b) if e["kind"] == "ack"]
    assert acks == [honest]
    # the peers' legitimate traffic still flows
    a.ok("send", "--to", "bob", "real work", "--as", "alice")
    assert b.ok("fed", "pull")["delivered"] == 1
    assert inbox(b, "bob") == [("alice", "real work")]


def test_an_event_naming_another_origin_node_is_refused(trio):
    _, b, c = trio
    forged = forge(
        c,
        "message",
        source_node="na",
        to_node="nb",
        source_agent="mallory",
        to_agent="bob",
        payload={"type": "text", "content": "from na, honest"},
    )
    b.ok("fed", "pull")
    assert inbox(b, "bob") == []
    assert "is not the node whose outbox it came from" in rejected(b)[forged]


def _outbox(node: Node) -> list[dict[str, Any]]:
    import json

    return [json.loads(e) for (e,) in node.sql("SELECT envelope FROM fed_outbox ORDER BY seq")]


def _state(node: Node, event_id: str) -> str:
    return str(node.sql("SELECT state FROM fed_sent WHERE event_id = ?", event_id)[0][0])


def test_a_forged_reply_and_ack_for_an_event_sent_to_another_node_are_refused(trio):
    a, b, c = trio
    sent = a.ok("send", "--to", "bob", "do it", "--as", "alice")["results"][0]
    q = a.ok(
        "send", "--to", "bob", "why?", "--type", "query", "--correlation-id", "c1", "--as", "alice"
    )["results"][0]
    ack = forge(
        c,
        "ack",
        to_node="na",
        source_agent="mallory",
        payload={"ackOf": sent["global_id"], "status": "processed", "outcome": "completed"},
    )
    reply = forge(
        c,
        "reply",
        to_node="na",
        source_agent="mallory",
        to_agent="alice",
        corr="c1",
        payload={"replyTo": q["global_id"], "content": "because I say so"},
    )
    got = a.ok("fed", "pull")
    assert (got["acks"], got["replies"], got["rejected"]) == (0, 0, 2)
    reasons = rejected(a)
    assert set(reasons) == {ack, reply}
    assert "sent to node 'nb'" in reasons[ack] and "came from node 'nc'" in reasons[ack]
    assert "sent to node 'nb'" in reasons[reply]
    status = a.ok("fed", "status")
    assert status["rejected"]["count"] == 2
    assert {(r["node"], r["kind"]) for r in status["rejected"]["latest"]} == {
        ("nc", "ack"),
        ("nc", "reply"),
    }
    assert {p["node"]: p["rejected"] for p in status["peers"]} == {"nb": 0, "nc": 2}
    assert _state(a, sent["global_id"]) == "emitted" and _state(a, q["global_id"]) == "emitted"
    assert inbox(a, "alice") == []
    # bob's real answers are still taken
    b.ok("fed", "pull")
    msgs = b.ok("receive", "--as", "bob")["messages"]
    b.ok("ack", str(msgs[0]["id"]), "--status", "completed", "--as", "bob")
    b.ok("respond", "c1", "because", "--as", "bob")
    got = a.ok("fed", "pull")
    assert got["replies"] == 1 and _state(a, sent["global_id"]) == "processed"
    assert _state(a, q["global_id"]) == "replied"
    assert inbox(a, "alice") == [("bob", "because")]


def test_accepting_and_completing_a_task_delegated_to_another_node_is_refused(trio):
    a, b, c = trio
    # nc is bob's fallback node: it may speak as bob, but this task went to nb
    b.ok("agent", "own", "bob", "--fallback", "nc")
    b.ok("fed", "pull")
    a.ok("fed", "pull")
    made = a.ok("task", "create", "--to", "bob", "run the tests", "--as", "alice")
    gid = made["global_id"]
    accept = forge(
        c,
        "task_accept",
        to_node="na",
        source_agent="bob",
        to_agent="alice",
        payload={"taskId": gid, "event": "accepted"},
    )
    complete = forge(
        c,
        "task_complete",
        to_node="na",
        source_agent="bob",
        to_agent="alice",
        payload={"taskId": gid, "event": "completed", "note": "all green"},
    )
    assert a.ok("fed", "pull")["tasks"] == 0
    reasons = rejected(a)
    assert set(reasons) == {accept, complete}
    assert all("delegated to node 'nb', not to node 'nc'" in r for r in reasons.values())
    assert a.sql("SELECT source_node, kind FROM fed_rejected ORDER BY id") == [
        ("nc", "task_accept"),
        ("nc", "task_complete"),
    ]
    assert _state(a, gid) == "emitted"  # not taken for nb's acceptance
    task = a.ok("task", "show", gid)
    assert task["state"] == "created" and [e["event"] for e in task["history"]] == ["created"]
    assert inbox(a, "alice") == []
    # the real owner's node still moves it
    b.ok("fed", "pull")
    b.ok("task", "accept", gid, "--as", "bob")
    b.ok("task", "complete", gid, "tests pass", "--as", "bob")
    assert a.ok("fed", "pull")["tasks"] == 2
    assert a.ok("task", "show", gid)["state"] == "completed"


def test_a_reply_from_the_right_node_as_another_agent_is_refused(trio):
    a, b, _ = trio
    q = a.ok("send", "--to", "bob", "why?", "--type", "query", "--as", "alice")["results"][0]
    b.ok("agent", "own", "zed")
    b.ok("fed", "pull")
    a.ok("fed", "pull")
    reply = forge(
        b,
        "reply",
        to_node="na",
        source_agent="zed",
        to_agent="alice",
        payload={"replyTo": q["global_id"], "content": "not asked"},
    )
    got = a.ok("fed", "pull")  # today: exit 5, zed is no participant of alice's channel
    assert got["replies"] == 0 and inbox(a, "alice") == []
    assert rejected(a) == {reply: "a reply to a query sent to 'bob' came as 'zed'"}


def test_an_agent_no_node_owns_belongs_to_the_first_node_that_speaks_as_it(trio):
    """dave is in no room entry and takes part in nothing on nb: nc speaks as him first, so
    nb's copy records nc as his owner and refuses na speaking as him after."""
    a, b, c = trio
    first = forge(
        c,
        "message",
        to_node="nb",
        source_agent="dave",
        to_agent="bob",
        payload={"type": "text", "content": "dave here"},
    )
    assert b.ok("fed", "pull")["delivered"] == 1
    assert b.ok("agent", "where", "dave")["owner_node"] == "nc"
    second = forge(
        a,
        "message",
        to_node="nb",
        source_agent="dave",
        to_agent="bob",
        payload={"type": "text", "content": "also dave"},
    )
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["rejected"]) == (0, 1)
    assert "'dave' is owned by node 'nc', not by node 'na'" in rejected(b)[second]
    assert first not in rejected(b)
    assert inbox(b, "bob") == [("dave", "dave here")]


def test_sending_across_nodes_claims_an_unowned_sender_for_the_sending_node(trio):
    """erin, no one's, sends from na to bob on nb: na claims her in the room with the
    send (queued for the gateway), nb learns it with the event, and nc can no longer speak
    as her."""
    a, b, c = trio
    a.ok("send", "--to", "bob", "from erin", "--as", "erin")
    assert a.ok("agent", "where", "erin")["owner_node"] == "na"
    queued = a.sql("SELECT value FROM fed_room_changes WHERE map = 'agents' AND key = 'erin'")
    assert queued == [('{"ownerNodeId":"na"}',)]
    assert b.ok("fed", "pull")["delivered"] == 1
    assert b.ok("agent", "where", "erin")["owner_node"] == "na"
    forged = forge(
        c,
        "message",
        to_node="nb",
        source_agent="erin",
        to_agent="bob",
        payload={"type": "text", "content": "erin, honest"},
    )
    assert b.ok("fed", "pull")["rejected"] == 1
    assert "'erin' is owned by node 'na'" in rejected(b)[forged]
    assert inbox(b, "bob") == [("erin", "from erin")]


def test_a_peer_cannot_claim_an_agent_of_this_node_through_its_room_copy(trio):
    """nc writes itself in as carol's owner (carol: nb's, in no room entry); nb does not
    take the claim from nc's entries, and still refuses nc speaking as carol."""
    _, b, c = trio
    c.ok("agent", "own", "carol")
    forged = forge(
        c,
        "message",
        to_node="nb",
        source_agent="carol",
        to_agent="bob",
        payload={"type": "text", "content": "carol, honest"},
    )
    assert b.ok("fed", "pull")["rejected"] == 1
    assert "'carol' is an agent of this node" in rejected(b)[forged]
    assert b.ok("agent", "where", "carol")["owner_node"] is None


def test_a_refused_event_is_not_retried_and_is_shown(trio):
    _, b, c = trio
    forge(
        c,
        "message",
        to_node="nb",
        source_agent="acomm",
        to_agent="bob",
        payload={"type": "text", "content": "system notice"},
    )
    b.ok("fed", "pull")
    b.ok("fed", "pull")
    assert len(rejected(b)) == 1 and cursor_at_head(b, c)


def test_the_rule_checks_alone(tmp_path: Path):
    """peertrust on a store: what each check answers, without a pull."""
    from acomm_cli.engine import opening, peertrust

    conn = opening.connect(tmp_path / "s.acomm", create=True)
    try:
        fsql.room_put(conn, "agents", "bob", '{"ownerNodeId":"nb"}', 1, queue=False)
        fsql.room_put(conn, "routing", "bob", '{"fallbackOwners":["nc"]}', 1, queue=False)
        assert peertrust.sender_refusal(conn, "na", "nb", "bob", 2) is None
        assert peertrust.sender_refusal(conn, "na", "nc", "bob", 2) is None  # a fallback
        assert "owned by node 'nb'" in str(peertrust.sender_refusal(conn, "na", "nd", "bob", 2))
        # no one's and not ours: the first node to speak as it owns it from then on
        assert peertrust.sender_refusal(conn, "na", "nd", "zed", 2) is None
        assert remote.room_value(conn, "agents", "zed") == {"ownerNodeId": "nd"}
        assert "owned by node 'nd'" in str(peertrust.sender_refusal(conn, "na", "ne", "zed", 3))
        assert peertrust.sender_refusal(conn, "na", "nd", None, 2) is None
        assert peertrust.answer_refusal(conn, "nd", "no-such-event", "an ack") is None
    finally:
        conn.close()


def test_a_forged_event_over_real_gateways(tmp_path: Path):
    """Two real gateways (the seed, nb) and a third member, nc, that joined by invite and
    serves forged events from its own outbox over signed HTTP reads."""
    from test_gateway import free_port, gateway_nodes, invite, wait_until, where

    with gateway_nodes(tmp_path) as make:
        seed, b, c = make("seed"), make("nb"), make("nc")
        seed.start("--seed", port=free_port())
        b.start("--join", str(seed.url), "--invite", invite(seed, "--expect", "nb"))
        c.start("--join", str(seed.url), "--invite", invite(seed, "--expect", "nc"))
        seed.ok("agent", "own", "alice")
        b.ok("agent", "own", "bob")
        c.ok("agent", "own", "mallory")
        for n in (seed, b, c):
            for agent, owner in (("alice", "seed"), ("bob", "nb"), ("mallory", "nc")):
                wait_until(f"{agent} on {n.id}", lambda n=n, a=agent, o=owner: where(n, a) == o)
        sent = seed.ok("send", "--as", "alice", "--to", "bob", "the real one")["results"][0]
        as_alice = forge(
            c,
            "message",
            to_node="nb",
            source_agent="alice",
            to_agent="bob",
            payload={"type": "text", "content": "the forged one"},
        )
        fake_ack = forge(
            c,
            "ack",
            to_node="seed",
            payload={"ackOf": sent["global_id"], "status": "processed", "outcome": "completed"},
        )
        got = b.ok("fed", "pull")
        assert got["delivered"] == 1 and got["unreachable"] == []
        got = b.ok("receive", "--as", "bob")["messages"]
        assert [(m["sender"], m["content"]) for m in got] == [("alice", "the real one")]
        seed.ok("fed", "pull")
        with sqlite3.connect(seed.path) as conn:
            state = conn.execute(
                "SELECT state FROM fed_sent WHERE event_id = ?", (sent["global_id"],)
            ).fetchone()[0]
        assert state == "accepted"  # nb's `ack accepted`; nc's `processed` refused
        for n, forged, why in (
            (b, as_alice, "'alice' is owned by node 'seed', not by node 'nc'"),
            (seed, fake_ack, "sent to node 'nb') came from node 'nc'"),
        ):
            with sqlite3.connect(n.path) as conn:
                rows = conn.execute(
                    "SELECT source_node, event_id, reason FROM fed_rejected"
                ).fetchall()
            assert [(s, e) for s, e, _ in rows] == [("nc", forged)] and why in rows[0][2]
