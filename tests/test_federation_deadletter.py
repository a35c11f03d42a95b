"""A message that dies on the node it was sent to tells the node it came from: every dead
letter of a delivery from another node (a nack without requeue, retries spent, an expiry)
appends a `dead_letter` event naming the dead event to the source node, in the transaction
that dead-letters it; the source node's pull ends its sender's state there (`show` says why)
and dead-letters the sender's copy with a detail naming the node. A requeue is not told. Only
the node the event was sent to may dead-letter it. Real stores in tmp_path, each a node;
peers read one another's store files (StoreTransport)."""

from __future__ import annotations

import json
from typing import Any

import pytest
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
