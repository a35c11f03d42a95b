"""The notification event across nodes: a direct message to an agent another node owns
carries its event in the federation envelope, the other node's copy stores it through the
send path (target_kind from its own directory), and a peer's malformed event is refused and
recorded (fed_rejected). Two nodes that read each other's store files (StoreTransport)."""

from __future__ import annotations

import json

import pytest
from test_federation_forgery import forge, rejected
from test_federation_routing import linked_pair

from acomm_cli.engine import envelope
from acomm_cli.errors import EventRejected

pytestmark = pytest.mark.federation


def test_a_message_to_another_nodes_agent_carries_its_event(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    b.ok("agent", "update", "bob", "--kind", "human")  # nb's directory decides the kind
    sent = a.ok(
        "send", "--to", "bob", "@bob can you look?", "--as", "alice",
        "--event-type", "mention.created", "--target", "bob", "--thread", "101",
        "--language", "en", "--action-hint", "must_reply", "--event-id", "evt-1",
        "--occurred-at", "2026-01-01T00:00:00Z",
    )["results"][0]  # fmt: skip
    assert sent["status"] == "emitted"
    [(env,)] = a.sql("SELECT envelope FROM fed_outbox WHERE kind = 'message'")
    carried = json.loads(env)["payload"]["event"]
    assert carried["event_type"] == "mention.created" and "content_preview" not in carried
    b.ok("fed", "pull")
    [copy] = b.ok("receive", "--as", "bob")["messages"]
    ev = copy["event"]
    assert ev["event_type"] == "mention.created"
    assert (ev["actor"], ev["target"], ev["target_kind"]) == ("alice", "bob", "human")
    assert (ev["thread_id"], ev["event_id"], ev["language"]) == ("101", "evt-1", "en")
    assert ev["action_hint"] == "must_reply"
    assert ev["occurred_at"] == "2026-01-01T00:00:00.000Z"
    assert ev["content_preview"] == "@bob can you look?"
    assert b.ok("messages", "--event-type", "mention.created")["messages"][0]["id"] == copy["id"]
    assert a.ok("show", str(sent["id"]))["event"]["target"] == "bob"  # the sender's copy too


def test_a_message_without_an_event_carries_none(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    a.ok("send", "--to", "bob", "hi", "--as", "alice")
    [(env,)] = a.sql("SELECT envelope FROM fed_outbox WHERE kind = 'message'")
    assert "event" not in json.loads(env)["payload"]
    b.ok("fed", "pull")
    assert b.ok("receive", "--as", "bob")["messages"][0]["event"] is None


@pytest.mark.parametrize(
    "event",
    [
        {"event_type": "comment.exploded"},
        {"event_type": "like.created", "depth": 2},
        {"event_type": "thread.created"},
        {"event_type": "mention.created", "content_preview": "mine"},
        {"event_type": "mention.created", "language": "not a tag"},
        {"event_type": "mention.created", "occurred_at": 9_999_999_999_999},
        "mention.created",
    ],
)
def test_a_peers_malformed_event_is_refused_and_recorded(cli, tmp_path, event):
    a, b = linked_pair(cli, tmp_path)
    payload = {"type": "text", "content": "x", "priority": "normal", "event": event}
    bad = forge(a, "message", to_node="nb", source_agent="alice", to_agent="bob", payload=payload)
    a.ok("send", "--to", "bob", "after it", "--as", "alice")  # the flow goes on
    b.ok("fed", "pull")
    assert rejected(b)[bad].startswith("payload.event: ")
    assert [m["content"] for m in b.ok("receive", "--as", "bob")["messages"]] == ["after it"]


def test_the_envelope_check_names_the_events_field():
    env = {
        "seq": 1,
        "eventId": "e1",
        "kind": "message",
        "sourceAgentId": "alice",
        "toAgentId": "bob",
        "payload": {"type": "text", "content": "x", "event": {"event_type": "like.created"}},
    }
    assert envelope.check(env, 1_800_000_000_000)
    env["payload"]["event"]["action_hint"] = "shout"
    with pytest.raises(EventRejected, match="payload.event: action_hint"):
        envelope.check(env, 1_800_000_000_000)


def test_an_event_id_sent_again_to_another_nodes_agent_sends_nothing(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    args = ("send", "--to", "bob", "x", "--as", "alice", "--event-type", "mention.created")
    first = a.ok(*args, "--event-id", "e9")["results"][0]
    again = a.ok(*args, "--event-id", "e9")["results"][0]
    assert again["deduplicated"] and again["id"] == first["id"]
    assert a.sql("SELECT count(*) FROM fed_outbox WHERE kind = 'message'") == [(1,)]
    b.ok("fed", "pull")
    assert len(b.ok("receive", "--as", "bob")["messages"]) == 1


def test_another_envelope_with_an_event_id_the_channel_holds_is_a_duplicate(cli, tmp_path):
    """A second, different event carrying the same event id for the same pair of agents (its
    node lost track of the first, say) is taken as a duplicate, as a repeated --event-id is
    at a local send: accepted, never a second message, never refused."""
    import json
    import sqlite3

    from acomm_cli.engine import remote

    a, b = linked_pair(cli, tmp_path)
    a.ok("send", "--to", "bob", "first", "--as", "alice", "--event-type", "mention.created",
         "--event-id", "e7")  # fmt: skip
    conn = sqlite3.connect(a.path)
    try:
        with conn:
            again = remote.emit(
                conn, "na", "message", to_node="nb", now=1_900_000_000_000,
                source_agent="alice", to_agent="bob", corr=None, decision=None,
                payload={"type": "text", "content": "second",
                         "event": {"event_type": "mention.created", "event_id": "e7"}},
            )  # fmt: skip
    finally:
        conn.close()
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["duplicates"], got["rejected"]) == (1, 1, 0)
    assert [m["content"] for m in b.ok("receive", "--as", "bob")["messages"]] == ["first"]
    assert b.sql("SELECT count(*) FROM fed_rejected") == [(0,)]
    acks = [json.loads(e)["payload"] for (e,) in b.sql("SELECT envelope FROM fed_outbox")]
    assert {"ackOf": again, "status": "accepted"} in acks  # the sender stops retrying it
    # the same event id from a different pair of agents is another channel's: delivered
    b.ok("agent", "own", "dora")
    b.ok("fed", "pull")
    a.ok("fed", "pull")
    a.ok("send", "--to", "dora", "to dora", "--as", "alice", "--event-type", "mention.created",
         "--event-id", "e7")  # fmt: skip
    assert b.ok("fed", "pull")["delivered"] == 1
