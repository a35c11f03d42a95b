"""A message that dies on the node it was sent to tells the node it came from: every dead
letter of a delivery from another node (a nack without requeue, retries spent, a dispatch)
appends a `dead_letter` event naming the dead event to the source node, in the transaction
that dead-letters it; the source node's pull ends its sender's state there (`show` says why)
and dead-letters the sender's copy with a detail naming the node. A requeue is not told. Only
the node the event was sent to may dead-letter it. Real stores in tmp_path, each a node;
peers read one another's store files (StoreTransport)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from conftest import ACOMM
from test_federation_inbound import Node
from test_federation_routing import linked_pair, three_nodes

pytestmark = pytest.mark.federation


@pytest.fixture
def pair(cli, tmp_path):
    return linked_pair(cli, tmp_path)


def _sent_and_received(a: Any, b: Any, text: str = "do it") -> tuple[dict, dict]:
    sent = a.ok("send", "--to", "bob", text, "--as", "alice")["results"][0]
    b.ok("fed", "pull")
    got = b.ok("receive", "--as", "bob")["messages"][0]
    a.ok("fed", "pull")  # accepted
    return sent, got


def _dead_letter_events(n: Any) -> list[dict[str, Any]]:
    rows = n.sql("SELECT envelope FROM fed_outbox WHERE kind = 'dead_letter' ORDER BY seq")
    return [json.loads(r[0]) for r in rows]


def test_a_nack_on_the_receiving_node_dead_letters_the_senders_event(pair):
    a, b = pair
    sent, got = _sent_and_received(a, b)
    assert a.ok("show", str(sent["id"]))["federation"]["state"] == "accepted"
    b.ok("nack", str(got["id"]), "--as", "bob", "--reason", "cannot parse it")
    here = b.ok("show", str(got["id"]))["federation"]
    assert (here["direction"], here["state"], here["dead_letter_reason"]) == (
        "inbound",
        "dead_letter",
        "nacked",
    )
    [told] = _dead_letter_events(b)
    assert (told["toNodeId"], told["sourceAgentId"], told["toAgentId"]) == ("na", "bob", "alice")
    assert told["payload"] == {
        "eventId": sent["global_id"],
        "reason": "nacked",
        "detail": "cannot parse it",
    }
    pulled = a.ok("fed", "pull")
    assert pulled["dead_lettered"] == 1 and pulled["rejected"] == 0
    view = a.ok("show", str(sent["id"]))["federation"]
    assert view["state"] == "dead_letter"
    assert view["dead_letter_reason"] == "nacked"
    assert view["dead_letter_detail"] == "dead-lettered on node nb: cannot parse it"
    [dead] = a.ok("deadletter", "list")["dead_letters"]
    assert (dead["message_id"], dead["recipient"], dead["reason"]) == (sent["id"], "bob", "nacked")
    assert "node nb" in dead["last_error"]
    # read again (a rewound cursor): the end stands, no second dead letter
    a.sql("UPDATE fed_cursors SET position = 0 WHERE source_node = 'nb'")
    a.ok("fed", "pull")
    assert a.sql("SELECT state FROM fed_sent") == [("dead_letter",)]
    assert a.ok("deadletter", "list")["total_count"] == 1


def test_a_requeue_is_not_told_only_the_final_dead_letter(pair):
    a, b = pair
    sent, got = _sent_and_received(a, b)
    for _ in range(3):  # the channel's default --max-retries: requeued each time
        assert b.ok("nack", str(got["id"]), "--as", "bob", "--requeue")["outcome"] == "requeued"
        assert _dead_letter_events(b) == []
        a.ok("fed", "pull")
        assert a.ok("show", str(sent["id"]))["federation"]["state"] == "accepted"
        again = b.ok("receive", "--as", "bob")["messages"]
        assert [m["id"] for m in again] == [got["id"]]
    done = b.ok("nack", str(got["id"]), "--as", "bob", "--requeue")  # retries spent: dead
    assert done["outcome"] == "dead_lettered"
    [told] = _dead_letter_events(b)
    assert told["payload"]["reason"] == "max_retries_exceeded"
    a.ok("fed", "pull")
    view = a.ok("show", str(sent["id"]))["federation"]
    assert (view["state"], view["dead_letter_reason"]) == ("dead_letter", "max_retries_exceeded")


def test_query_wait_on_the_asker_ends_when_the_query_dies_on_the_other_node(pair):
    a, b = pair
    waiting = subprocess.Popen(
        [ACOMM, "--store", str(a.path), "--json", "query", "--to", "bob", "size?"]
        + ["--as", "alice", "--wait", "120s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        got = b.ok("fed", "pull")  # the query may not be in na's outbox yet: pull until it is
        while not got["delivered"]:
            assert waiting.poll() is None, waiting.communicate()
            got = b.ok("fed", "pull")
        [q] = b.ok("receive", "--as", "bob")["messages"]
        b.ok("nack", str(q["id"]), "--as", "bob", "--reason", "not my area")
        a.ok("fed", "pull")
        out, err = waiting.communicate(timeout=60)  # ends now, long before its 120 s
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait()
    assert waiting.returncode == 5, (out, err)
    error = json.loads(err)["error"]
    assert error["code"] == "invalid_state" and error["field"] == "correlation_id"
    assert "dead-lettered for every recipient" in error["message"]
    assert "bob: nacked (dead-lettered on node nb: not my area)" in error["message"]


@pytest.fixture
def trio(cli, tmp_path):
    """na, nb and nc; nb owns bob, nc owns mallory; na has sent bob a message, accepted."""
    made = three_nodes(cli, tmp_path, Node)
    made[1].ok("agent", "own", "bob")
    made[2].ok("agent", "own", "mallory")
    for _ in range(2):
        for n in made:
            n.ok("fed", "pull")
    a, b, _ = made
    sent, _ = _sent_and_received(a, b)
    return (*made, sent)


def _forged(node: Any, event_id: str, agent: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "eventId": f"forged-dl-{node.head() + 1}",
        "sourceNodeId": node.id,
        "sourceAgentId": agent,
        "toAgentId": "alice",
        "toNodeId": "na",
        "corrId": None,
        "kind": "dead_letter",
        "createdAt": "2030-01-01T00:00:00.000Z",
        "payload": {"eventId": event_id, **payload},
        "trace": {"attempt": 1},
    }


# (the node that writes it, as whom, its payload past eventId, what the refusal says)
FORGED = {
    "a node it was not sent to": (
        2,
        "mallory",
        {"reason": "nacked"},
        "a dead letter for event {gid} (sent to node 'nb') came from node 'nc'",
    ),
    "another agent than its recipient": (
        1,
        "bobby",
        {"reason": "nacked"},
        "a dead letter of a message to 'bob' came as 'bobby'",
    ),
    "a reason no node gives": (1, "bob", {"reason": "bored"}, "payload.reason: 'bored' is not"),
    "no reason": (1, "bob", {"detail": "x"}, "payload.reason: None is not a string"),
    "a detail past its bound": (
        1,
        "bob",
        {"reason": "nacked", "detail": "x" * 1025},
        "payload.detail: 'xxx",
    ),
}


@pytest.mark.parametrize("case", sorted(FORGED))
def test_only_the_node_it_was_sent_to_may_dead_letter_an_event(trio, case):
    a, *nodes, sent = trio
    who, agent, payload, said = FORGED[case]
    writer = nodes[who - 1]
    writer.append(_forged(writer, sent["global_id"], agent, payload))
    pulled = a.ok("fed", "pull")
    assert pulled["rejected"] == 1 and pulled["dead_lettered"] == 0
    [refused] = a.ok("fed", "status")["rejected"]["latest"]
    assert refused["kind"] == "dead_letter" and refused["node"] == writer.id
    assert refused["reason"].startswith(said.format(gid=sent["global_id"]))
    assert a.sql("SELECT state FROM fed_sent") == [("accepted",)]
    assert a.ok("deadletter", "list")["total_count"] == 0


def test_a_peer_giving_up_on_its_own_event_changes_nothing_here(trio):
    """A `dead_letter` naming an event this node never sent (the peer's own, given up on)
    is counted and changes no state here."""
    a, b, _, _ = trio
    b.append(_forged(b, "an-event-of-nb", "bob", {"reason": "federation_max_attempts"}))
    pulled = a.ok("fed", "pull")
    assert (pulled["dead_lettered"], pulled["rejected"]) == (1, 0)
    assert a.sql("SELECT state FROM fed_sent") == [("accepted",)]
    assert a.ok("deadletter", "list")["total_count"] == 0


def test_query_wait_ends_too_when_the_query_dies_on_a_plain_store(cli, store):
    """The same rule without federation: a nack without requeue by the one recipient."""
    base = ["--store", str(store), "--json"]
    assert cli(*base, "channel", "create", "desk", "--as", "alice").exit_code == 0
    assert cli(*base, "channel", "join", "desk", "--as", "alice", "bob").exit_code == 0
    waiting = subprocess.Popen(
        [ACOMM, *base, "query", "desk", "anyone?", "--as", "alice", "--wait", "120s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        got: list[Any] = []
        while not got:
            assert waiting.poll() is None, waiting.communicate()
            got = cli(*base, "receive", "--as", "bob").json()["messages"]
        assert cli(*base, "nack", str(got[0]["id"]), "--as", "bob").exit_code == 0
        out, err = waiting.communicate(timeout=60)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait()
    assert waiting.returncode == 5, (out, err)
    assert "bob: nacked" in json.loads(err)["error"]["message"]
