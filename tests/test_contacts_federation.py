"""Contact rules between nodes: the node that owns the recipient enforces its rule when the
message or task arrives; a refused event is recorded as any refused event is (fed_rejected,
the cursor past it) and nothing reaches the inbox."""

from __future__ import annotations

import json

import pytest
from test_contacts import register
from test_federation_routing import linked_pair

from acomm_cli import clock
from acomm_cli.engine import remote
from acomm_cli.store import federation as fed_sql
from acomm_cli.store.connection import open_store, write

pytestmark = pytest.mark.federation


@pytest.fixture
def pair(cli, tmp_path):
    """na (alice's) and nb (bob's), peers of each other; bob accepts his contacts only."""
    a, b = linked_pair(cli, tmp_path)
    a.ok("agent", "own", "alice")
    a.ok("fed", "pull")
    b.ok("fed", "pull")
    register(b.path, "bob", "contacts")
    return a, b


def _rejected(node) -> list[str]:
    return [str(r) for (r,) in node.sql("SELECT reason FROM fed_rejected ORDER BY rowid")]


def test_the_receiving_node_refuses_a_strangers_message_and_task(pair):
    a, b = pair
    sent = a.ok("send", "--to", "bob", "hi", "--as", "alice")["results"][0]
    assert sent["status"] == "emitted"  # na cannot know nb's rule
    a.ok("task", "create", "--to", "bob", "build it", "--as", "alice")
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["rejected"], got["tasks"]) == (0, 2, 0)
    reasons = _rejected(b)
    assert len(reasons) == 2
    assert all(
        "'bob' accepts direct messages and tasks from its contacts only" in r for r in reasons
    )
    assert b.ok("receive", "--as", "bob")["messages"] == []
    assert b.sql("SELECT count(*) FROM tasks") == [(0,)]


def test_a_contact_on_another_node_is_admitted(pair):
    a, b = pair
    b.ok("agent", "contacts", "bob", "add", "alice")
    a.ok("send", "--to", "bob", "hi", "--as", "alice")
    assert b.ok("fed", "pull")["delivered"] == 1
    assert [m["content"] for m in b.ok("receive", "--as", "bob")["messages"]] == ["hi"]
    assert _rejected(b) == []


def test_a_reply_to_the_recipients_own_query_passes(pair):
    """bob (nobody) asks alice on the other node: her response comes back."""
    a, b = pair
    register(b.path, "bob", "nobody")
    b.ok(
        "send", "--to", "alice", "why?", "--type", "query", "--correlation-id", "q1", "--as", "bob"
    )
    a.ok("fed", "pull")
    a.ok("respond", "q1", "because", "--as", "alice")
    b.ok("fed", "pull")
    got = b.ok("receive", "--as", "bob")["messages"]
    assert [(m["type"], m["content"]) for m in got] == [("response", "because")]
    assert _rejected(b) == []


def test_an_admitted_answer_does_not_admit_the_strangers_next_message_in_its_page(pair):
    """A page's rule checks are remembered per sender and recipient only when the rule
    itself admits them: a response let through as an answer to bob's query leaves the next
    plain message of the same page to the rule."""
    a, b = pair
    b.ok(
        "send", "--to", "alice", "why?", "--type", "query", "--correlation-id", "q1", "--as", "bob"
    )
    first = a.ok("send", "--to", "bob", "hello", "--as", "alice")["results"][0]["global_id"]
    [(text,)] = a.sql("SELECT envelope FROM fed_outbox WHERE event_id = ?", first)
    env = json.loads(text)
    del env["seq"]
    answer = {  # alice's answer as a message event (as a node that never saw the query sends it)
        **env,
        "eventId": remote.uuid7(clock.now_ms()),
        "corrId": "q1",
        "payload": {**env["payload"], "type": "response", "content": "because"},
    }
    conn = open_store(a.path)
    try:
        with write(conn):
            fed_sql.append_outbox(conn, answer["eventId"], 1, "message", "nb", answer, 1)
    finally:
        conn.close()
    a.ok("send", "--to", "bob", "and also", "--as", "alice")
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["rejected"]) == (1, 2)
    assert [m["content"] for m in b.ok("receive", "--as", "bob")["messages"]] == ["because"]
    assert all("from its contacts only" in r for r in _rejected(b))


def test_a_contact_rule_admitting_a_sender_admits_each_message_of_the_page(pair):
    a, b = pair
    b.ok("agent", "contacts", "bob", "add", "alice")
    for i in range(3):
        a.ok("send", "--to", "bob", f"m{i}", "--as", "alice")
    assert b.ok("fed", "pull")["delivered"] == 3
    assert [m["content"] for m in b.ok("receive", "--as", "bob")["messages"]] == [
        "m0",
        "m1",
        "m2",
    ]
