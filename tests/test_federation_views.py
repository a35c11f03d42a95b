"""What federated messages show: `show MSG` carries a `federation`
view (the sender's event state on the sender's node, the inbound event on the receiving node),
and every message's JSON carries `global_id` and `origin_node` (null for local ones) in
`show`, `messages`, `receive` and `thread`, on both nodes."""

from __future__ import annotations

import pytest
from test_federation_routing import Node, linked_pair

pytestmark = pytest.mark.federation


@pytest.fixture
def pair(cli, tmp_path):
    return linked_pair(cli, tmp_path)


def _fed(node: Node, mid: int) -> dict:
    return node.ok("show", str(mid))["federation"]


def test_show_follows_the_sender_state_through_accepted_and_processed(pair):
    a, b = pair
    sent = a.ok("send", "--to", "bob", "do it", "--as", "alice")["results"][0]
    gid = sent["global_id"]
    view = _fed(a, sent["id"])
    assert (view["state"], view["attempt"], view["to_node"], view["direction"]) == (
        "emitted",
        1,
        "nb",
        "outbound",
    )
    assert view["accepted_at"] is None and view["processed_at"] is None
    b.ok("fed", "pull")
    inbound = b.ok("receive", "--as", "bob")["messages"][0]
    b_view = _fed(b, inbound["id"])
    assert (
        b_view["direction"],
        b_view["state"],
        b_view["origin_node"],
        b_view["to_node"],
        b_view["event_id"],
    ) == ("inbound", "accepted", "na", "nb", gid)
    assert b_view["accepted_at"] and b_view["processed_at"] is None
    a.ok("fed", "pull")
    view = _fed(a, sent["id"])
    assert view["state"] == "accepted" and view["accepted_at"] and view["processed_at"] is None
    b.ok("ack", str(inbound["id"]), "--status", "completed", "--as", "bob")
    assert _fed(b, inbound["id"])["state"] == "processed"
    a.ok("fed", "pull")
    view = _fed(a, sent["id"])
    assert view["state"] == "processed" and view["processed_at"]


def test_show_of_a_query_answered_across_nodes_is_replied(pair):
    a, b = pair
    q = a.ok(
        "send", "--to", "bob", "why?", "--type", "query", "--correlation-id", "c1", "--as", "alice"
    )["results"][0]
    b.ok("fed", "pull")
    b.ok("respond", "c1", "because", "--as", "bob")
    a.ok("fed", "pull")
    assert _fed(a, q["id"])["state"] == "replied"
    inbound = b.ok("messages", "--channel", "_fed:bob:alice")["messages"]
    by_type = {m["type"]: m for m in inbound}
    assert _fed(b, by_type["query"]["id"])["state"] == "replied"
    # the response on nb is an outbound event; on na it came in from nb
    assert _fed(b, by_type["response"]["id"])["direction"] == "outbound"
    answer = a.ok("receive", "--as", "alice")["messages"][0]
    assert (answer["origin_node"], _fed(a, answer["id"])["direction"]) == ("nb", "inbound")


def test_show_of_an_unroutable_message_is_dead_letter(pair):
    a, _ = pair
    r = a("send", "--to", "ghost", "hello?", "--as", "alice")
    assert r.exit_code == 5
    mid = a.sql("SELECT id FROM messages WHERE content = 'hello?'")[0][0]
    view = _fed(a, mid)
    assert (view["state"], view["to_node"], view["route_decision"]) == (
        "dead_letter",
        None,
        "no_owner",
    )


def test_show_of_an_sla_incident(pair):
    a, b = pair
    sent = a.ok("send", "--to", "bob", "slow", "--as", "alice")["results"][0]
    b.ok("fed", "pull")
    a.ok("fed", "pull")
    a.sql("UPDATE fed_sent SET next_timer_at = 0")  # the SLA ran out
    assert a.ok("tick")["fed_incidents"] == 1
    view = _fed(a, sent["id"])
    assert view["state"] == "incident" and view["incident_at"]


def _ids(doc: dict) -> dict[str, tuple]:
    return {m["content"]: (m["global_id"], m["origin_node"]) for m in doc["messages"]}


def test_every_message_document_carries_global_id_and_origin_node(pair):
    a, b = pair
    a.ok("channel", "create", "team", "--as", "alice")
    a.ok("channel", "join", "team", "--as", "alice", "carol")
    a.ok("send", "team", "local", "--as", "alice")
    sent = a.ok(
        "send",
        "--to",
        "bob",
        "remote",
        "--type",
        "query",
        "--correlation-id",
        "c9",
        "--as",
        "alice",
    )["results"][0]
    gid = sent["global_id"]
    b.ok("fed", "pull")
    # the sender's node
    assert _ids(a.ok("messages")) == {"local": (None, None), "remote": (gid, "na")}
    assert a.ok("show", str(sent["id"]))["origin_node"] == "na"
    local = a.ok("receive", "--as", "carol")["messages"]
    assert [(m["global_id"], m["origin_node"]) for m in local] == [(None, None)]
    assert "federation" not in a.ok("show", str(local[0]["id"]))
    assert _ids(a.ok("thread", "c9")) == {"remote": (gid, "na")}
    # the receiving node
    got = b.ok("receive", "--as", "bob")["messages"]
    assert [(m["global_id"], m["origin_node"]) for m in got] == [(gid, "na")]
    assert _ids(b.ok("messages")) == {"remote": (gid, "na")}
    assert _ids(b.ok("thread", "c9")) == {"remote": (gid, "na")}
    shown = b.ok("show", str(got[0]["id"]))
    assert (shown["global_id"], shown["origin_node"]) == (gid, "na")


def test_a_plain_store_message_has_null_ids_and_no_federation_view(cli, store):
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "--as", "alice", "bob")
    mid = cli.ok("send", "team", "hi", "--as", "alice", "--json").json()["id"]
    doc = cli.ok("show", str(mid), "--json").json()
    assert (doc["global_id"], doc["origin_node"]) == (None, None)
    assert "federation" not in doc
    piped = cli.ok("show", str(mid)).stdout
    assert "global_id" not in piped and "federation" not in piped


# ---------------------------------------------------------------- a dispatch receipt


@pytest.fixture
def dispatching(cli, tmp_path):
    """na and nb in directories of their own (each its config.yaml); bob on nb is an agent
    dispatch runs: it answers a query with its stdout, and acknowledges anything else."""
    from test_dispatch import agent_script, configure

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = Node(cli, tmp_path / "a" / "na.acomm", "na")
    b = Node(cli, tmp_path / "b" / "nb.acomm", "nb")
    for n in (a, b):
        n.ok("node", "init", "--id", n.id)
    a.ok("peers", "add", "nb", "--url", f"store:{b.path}")
    b.ok("peers", "add", "na", "--url", f"store:{a.path}")
    b.ok("agent", "own", "bob")
    b.ok("fed", "pull")
    a.ok("fed", "pull")
    configure(
        b.path,
        bob={
            "run": agent_script(
                tmp_path,
                "bob.sh",
                """
echo "$ACOMM_MESSAGE_ID" >> "$WORK/runs"
echo "done"
""",
            )
        },
    )
    return a, b, tmp_path / "runs"


def test_a_dispatch_receipt_appends_ack_processed(dispatching):
    a, b, runs = dispatching
    sent = a.ok("send", "--to", "bob", "build it", "--type", "command", "--as", "alice")["results"][
        0
    ]
    doc = b.ok("tick")  # pulls, then dispatch runs bob on the message from na
    assert doc["fed_pulled"] >= 1 and doc["dispatch"]["accepted"] == 1
    [mid] = b.sql("SELECT id FROM messages WHERE global_id = ?", sent["global_id"])[0]
    assert runs.read_text().split() == [str(mid)]
    assert b.sql(
        "SELECT count(*) FROM fed_outbox WHERE kind = 'ack' AND json_extract("
        "envelope, '$.payload.status') = 'processed'"
    ) == [(1,)]
    assert _fed(b, mid)["state"] == "processed"
    assert a.ok("fed", "pull")["acks"] == 2  # accepted, then processed
    view = _fed(a, sent["id"])
    assert view["state"] == "processed" and view["processed_at"]
    assert b.ok("tick")["dispatch"]["accepted"] == 0  # one turn only
    assert runs.read_text().split() == [str(mid)]


def test_a_dispatched_answer_to_a_query_is_a_reply(dispatching):
    a, b, _ = dispatching
    q = a.ok(
        "send",
        "--to",
        "bob",
        "status?",
        "--type",
        "query",
        "--correlation-id",
        "c5",
        "--as",
        "alice",
    )["results"][0]
    b.ok("tick")
    assert a.ok("fed", "pull")["replies"] == 1
    assert _fed(a, q["id"])["state"] == "replied"
    [answer] = a.ok("receive", "--as", "alice")["messages"]
    assert (answer["type"], answer["content"], answer["correlation_id"], answer["origin_node"]) == (
        "response",
        "done",
        "c5",
        "nb",
    )


def test_a_dispatch_that_dead_letters_tells_the_sender_failed(dispatching, tmp_path):
    from test_dispatch import agent_script, configure

    a, b, _ = dispatching
    configure(b.path, bob={"run": agent_script(tmp_path, "no.sh", "exit 1"), "max_attempts": 1})
    sent = a.ok("send", "--to", "bob", "break", "--as", "alice")["results"][0]
    b.ok("tick")
    assert b.sql(
        "SELECT json_extract(envelope, '$.payload.outcome') FROM fed_outbox WHERE"
        " json_extract(envelope, '$.payload.status') = 'processed'"
    ) == [("failed",)]
    a.ok("fed", "pull")  # the dead letter there came first: the sender's state ends dead
    view = _fed(a, sent["id"])
    assert (view["state"], view["dead_letter_reason"]) == ("dead_letter", "dispatch_failed")
