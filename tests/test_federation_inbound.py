"""Events read from a peer are strangers until checked: a malformed event in a peer's outbox
is refused alone (recorded with its reason, passed by the cursor) and never stops `fed pull`,
the peer's later events or the other peers; an event id is scoped by the node it came from,
so a node re-using another's event id cannot make the real message a duplicate. Real stores
in tmp_path, each a node; peers read one another's store files (StoreTransport), and the
compromised member writes its own outbox as it likes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import UNDO_MIGRATION, rewind_migrations
from test_federation_routing import three_nodes
from test_gateway import free_port, gateway_nodes, invite, wait_until, where

pytestmark = pytest.mark.federation


class Node:
    def __init__(self, cli, path: Path, node_id: str) -> None:
        self.cli, self.path, self.id = cli, path, node_id

    def ok(self, *args: str) -> Any:
        r = self.cli("--store", str(self.path), "--json", *args)
        assert r.exit_code == 0, (args, r.stderr)
        return r.json() if r.stdout.strip() else None

    def sql(self, statement: str, *params: Any) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.path) as c:
            return c.execute(statement, params).fetchall()

    def head(self) -> int:
        return int(self.sql("SELECT coalesce(max(seq), 0) FROM fed_outbox")[0][0])

    def append(self, envelope: Any, *, raw: str | None = None) -> int:
        """What a compromised node can do to its own outbox: append any envelope (with its
        row's seq unless the envelope says otherwise), or any text."""
        seq = self.head() + 1
        if isinstance(envelope, dict):
            envelope = {"seq": seq, **envelope}
        text = raw if raw is not None else json.dumps(envelope)
        self.sql(
            "INSERT INTO fed_outbox (seq, event_id, attempt, kind, to_node, envelope,"
            " created_at) VALUES (?, ?, 1, 'message', NULL, ?, 0)",
            seq,
            f"forged-{seq}",
            text,
        )
        return seq


@pytest.fixture
def nodes(cli, tmp_path):
    """na, nb and nc, each knowing the others' store; nb owns bob, nc owns mallory, and a
    pull all round has told every node so."""
    made = three_nodes(cli, tmp_path, Node)
    made[1].ok("agent", "own", "bob")
    made[2].ok("agent", "own", "mallory")
    for _ in range(2):
        for n in made:
            n.ok("fed", "pull")
    return made


def _send(n: Node, sender: str, text: str) -> str:
    sent = n.ok("send", "--to", "bob", text, "--as", sender)["results"][0]
    assert sent["status"] == "emitted" and sent["to_node"] == "nb"
    return str(sent["global_id"])


def _envelope(n: Node, event_id: str) -> dict[str, Any]:
    [(text,)] = n.sql("SELECT envelope FROM fed_outbox WHERE event_id = ?", event_id)
    env = json.loads(text)
    del env["seq"]
    return dict(env)


def _bob(b: Node) -> list[str]:
    return [m["content"] for m in b.ok("receive", "--as", "bob")["messages"]]


def _without(env: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in env.items() if k != key}


# each malformed case: (its envelope made from a valid message's, what the reason says)
MALFORMED = {
    "no kind": (lambda env: _without(env, "kind"), "kind: None is not a known event kind"),
    "payload not an object": (
        lambda env: {**env, "payload": "do it"},
        "payload: 'do it' is not an object",
    ),
    "non-numeric seq": (lambda env: {**env, "seq": "7x"}, "seq: '7x' is not a positive integer"),
    "no toAgentId": (lambda env: _without(env, "toAgentId"), "toAgentId: None is not a valid"),
    "ack payload not an object": (
        lambda env: {**env, "kind": "ack", "payload": ["accepted"]},
        "payload: ['accepted'] is not an object",
    ),
    "envelope not an object": (lambda env: ["seq", 1, "kind"], "the envelope is not an object"),
    "nested past the bound": (
        lambda env: {**env, "payload": {"metadata": json.loads("[" * 200 + "]" * 200)}},
        "the event nests deeper than",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_event_is_refused_alone_and_the_pull_goes_on(nodes, case):
    a, b, c = nodes
    make, reason = MALFORMED[case]
    first = _send(a, "alice", "before")
    bad_id = f"bad-{case.replace(' ', '-')}"
    bad = a.append(make({**_envelope(a, first), "eventId": bad_id}))
    a.ok("send", "--to", "bob", "after", "--as", "alice")
    c.ok("send", "--to", "bob", "from the other peer", "--as", "carol")
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["rejected"], got["unreachable"]) == (3, 1, [])
    assert sorted(_bob(b)) == ["after", "before", "from the other peer"]
    [row] = b.sql("SELECT source_node, seq, event_id, kind, reason FROM fed_rejected")
    source, seq, event_id, kind, why = row
    assert source == "na" and reason in why
    assert seq == (None if case in ("non-numeric seq", "envelope not an object") else bad)
    assert event_id == (None if case == "envelope not an object" else bad_id)
    # the cursor passed it: a pull again reads nothing, refuses nothing more
    assert b.ok("peers")["peers"][0]["cursor"] == a.head()
    again = b.ok("fed", "pull")
    assert (again["read"], again["rejected"]) == (0, 0)
    assert b.sql("SELECT count(*) FROM fed_rejected") == [(1,)]
    # and it is what `fed status` and `stats` say
    status = b.ok("fed", "status")
    assert status["rejected"]["count"] == 1
    [latest] = status["rejected"]["latest"]
    assert (latest["node"], latest["event_id"]) == ("na", event_id) and reason in latest["reason"]
    assert {p["node"]: p["rejected"] for p in status["peers"]} == {"na": 1, "nc": 0}
    assert b.ok("stats")["federation"] == {"rejected": 1}


def test_text_that_is_not_json_is_refused_and_passed(nodes):
    """A row the peer's outbox holds that is not JSON at all (or nests past the parser's
    own stack): the transport hands it over as it is, and the pull refuses it alone."""
    a, b, _ = nodes
    a.append(None, raw='{"seq": ')
    a.append(None, raw="[" * 100_000)
    _send(a, "alice", "still here")
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["rejected"]) == (1, 2)
    assert _bob(b) == ["still here"]
    reasons = [r[0] for r in b.sql("SELECT reason FROM fed_rejected ORDER BY id")]
    assert reasons == ["the envelope is not an object (str)"] * 2
    assert b.ok("peers")["peers"][0]["cursor"] == a.head()


def test_a_malformed_event_last_on_the_page_is_passed_too(nodes):
    """Nothing valid after it: the cursor still moves past it, so no later pull meets it
    again and nothing is recorded twice."""
    a, b, _ = nodes
    _send(a, "alice", "one")
    a.append({"eventId": "no-kind", "payload": {}})
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["rejected"]) == (1, 1)
    assert b.ok("peers")["peers"][0]["cursor"] == a.head()
    for _ in range(2):
        assert b.ok("fed", "pull")["rejected"] == 0
    assert b.sql("SELECT count(*) FROM fed_rejected") == [(1,)]


def test_a_refused_event_leaves_nothing_of_itself(nodes):
    """An event refused half way (a valid message envelope whose ack part is not) is rolled
    back whole: no inbound record, no delivery, no `ack accepted` owed."""
    a, b, _ = nodes
    env = _envelope(a, _send(a, "alice", "real"))
    outbox = b.head()
    a.append({**env, "eventId": "bad-trace", "trace": "not an object"})
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["rejected"]) == (1, 1)
    assert b.sql("SELECT count(*) FROM fed_inbound WHERE event_id = 'bad-trace'") == [(0,)]
    assert b.head() == outbox + 1  # one `ack accepted`: the real message's


def test_tick_goes_on_past_a_malformed_event(nodes):
    a, b, _ = nodes
    a.append({"eventId": "x", "kind": "message", "payload": None})
    _send(a, "alice", "through tick")
    done = b.ok("tick")
    assert (done["fed_pulled"], done["fed_rejected"]) == (2, 1)
    assert _bob(b) == ["through tick"]
    assert b.ok("fed", "status")["rejected"]["count"] == 1


def test_another_node_reusing_an_event_id_cannot_shadow_the_real_message(nodes):
    """nc learns the id of na's message to bob (a member can read na's outbox) and puts a
    message of its own under the same id; nb reads nc first. Both are delivered, each under
    its own origin, and na's message is acknowledged to na."""
    a, b, c = nodes
    real = _send(a, "alice", "the real text")
    forged = {**_envelope(a, real), "sourceNodeId": "nc", "sourceAgentId": "mallory"}
    forged["payload"] = {**forged["payload"], "content": "forged text"}
    c.append(forged)
    assert b.ok("fed", "pull", "--peer", "nc")["delivered"] == 1
    got = b.ok("fed", "pull", "--peer", "na")
    assert (got["delivered"], got["duplicates"], got["rejected"]) == (1, 0, 0)
    assert sorted(_bob(b)) == ["forged text", "the real text"]
    assert sorted(b.sql("SELECT source_node FROM fed_inbound WHERE event_id = ?", real)) == [
        ("na",),
        ("nc",),
    ]
    rows = b.sql("SELECT origin_node, content FROM messages WHERE global_id = ?", real)
    assert sorted(rows) == [("na", "the real text"), ("nc", "forged text")]
    a.ok("fed", "pull", "--peer", "nb")
    assert a.sql("SELECT state FROM fed_sent WHERE event_id = ?", real) == [("accepted",)]
    # and a re-read of either is still a duplicate of its own origin's event
    b.sql("UPDATE fed_cursors SET position = 0")
    again = b.ok("fed", "pull")
    assert again["delivered"] == 0 and again["duplicates"] >= 2


def test_over_real_gateways_a_compromised_member_cannot_stop_the_pull(tmp_path):
    """Two real gateways (the seed na and nb) and a third joined node nc playing the
    compromised member: nc's outbox, read by nb over its gateway with a signed read, holds
    malformed events between valid ones. nb's pull refuses them alone, takes nc's valid
    event after them and na's message, and passes them for good."""
    with gateway_nodes(tmp_path) as make:
        a, b, c = make("na"), make("nb"), make("nc")
        port = free_port()
        a.start("--seed", port=port)
        for n in (b, c):
            n.start("--join", str(a.url), "--invite", invite(a, "--expect", n.id))
        b.ok("agent", "own", "bob")
        wait_until(
            "bob owned by nb, seen on na and nc", lambda: where(a, "bob") == where(c, "bob") == "nb"
        )
        a.ok("send", "--to", "bob", "from the seed", "--as", "alice")
        valid = c.ok("send", "--to", "bob", "from nc", "--as", "carol")["results"][0]
        [(text,)] = sql(c, "SELECT envelope FROM fed_outbox WHERE event_id = ?", valid["global_id"])
        env = json.loads(text)
        del env["seq"]
        forged = Node(None, c.path, "nc")
        forged.append({**env, "eventId": "no-kind", "kind": None})
        forged.append({**env, "eventId": "not-an-object", "payload": "x"})
        forged.append(["not", "an", "envelope"])
        c.ok("send", "--to", "bob", "nc again", "--as", "carol")
        got = b.ok("fed", "pull")
        assert (got["rejected"], got["delivered"], got["unreachable"]) == (3, 3, [])
        got = b.ok("receive", "--as", "bob")["messages"]
        assert sorted(m["content"] for m in got) == ["from nc", "from the seed", "nc again"]
        cursors = {p["node"]: p["cursor"] for p in b.ok("peers")["peers"]}
        assert cursors["nc"] == forged.head()
        assert b.ok("fed", "pull")["rejected"] == 0
        status = b.ok("fed", "status")
        assert status["rejected"]["count"] == 3
        assert {r["node"] for r in status["rejected"]["latest"]} == {"nc"}


def test_another_node_reusing_a_task_event_id_cannot_shadow_the_real_event(nodes):
    """na delegates one task to bob (nb) and one to mallory (nc). nc puts an update of its
    own task under the id of nb's acceptance of bob's task, and na reads nc first: bob's
    task is still accepted on na, each event in its own task's history."""
    a, b, c = nodes
    bobs = a.ok("task", "create", "--to", "bob", "review", "--as", "alice")["global_id"]
    mallorys = a.ok("task", "create", "--to", "mallory", "audit", "--as", "alice")["global_id"]
    b.ok("fed", "pull")
    c.ok("fed", "pull")
    b.ok("task", "accept", bobs, "--eta", "1h", "--as", "bob")
    c.ok("task", "accept", mallorys, "--eta", "1h", "--as", "mallory")
    [(text,)] = b.sql("SELECT envelope FROM fed_outbox WHERE kind = 'task_accept'")
    real = json.loads(text)
    [(text,)] = c.sql("SELECT envelope FROM fed_outbox WHERE kind = 'task_accept'")
    forged = {k: v for k, v in json.loads(text).items() if k != "seq"}
    c.append(
        {
            **forged,
            "eventId": real["eventId"],
            "kind": "task_update",
            "payload": {"taskId": mallorys, "event": "updated", "progress": 50},
        }
    )
    assert a.ok("fed", "pull", "--peer", "nc")["tasks"] == 2  # its acceptance and update
    got = a.ok("fed", "pull", "--peer", "nb")
    assert (got["tasks"], got["rejected"]) == (1, 0)
    assert a.ok("task", "show", bobs)["state"] == "accepted"
    assert a.ok("task", "show", mallorys)["progress"] == 50
    assert sorted(
        a.sql("SELECT origin_node FROM task_events WHERE event_id = ?", real["eventId"])
    ) == [("nb",), ("nc",)]


def test_a_store_from_before_the_origin_scope_keeps_its_inbound_records(nodes):
    """m018 rebuilds fed_inbound keyed by (source node, event id): every record is kept, so
    what was read before the upgrade is still a duplicate after it."""
    a, b, _ = nodes
    _send(a, "alice", "before the upgrade")
    b.ok("fed", "pull")
    records = b.sql("SELECT source_node, event_id, message_id FROM fed_inbound ORDER BY 2")
    assert records
    c = sqlite3.connect(b.path)
    rewind_migrations(c, "m018_inbound_by_origin")  # the later migrations undone, then m018
    c.executescript(UNDO_MIGRATION["m018_inbound_by_origin"])
    c.commit()
    c.close()
    b.sql("UPDATE fed_cursors SET position = 0")
    got = b.ok("fed", "pull")  # upgrades the store, then reads na's outbox again
    assert (got["delivered"], got["rejected"]) == (0, 0) and got["duplicates"] >= 1
    assert b.sql("SELECT source_node, event_id, message_id FROM fed_inbound ORDER BY 2") == records


def sql(n: Any, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(n.path) as c:
        return c.execute(statement, params).fetchall()


def test_fed_status_lists_at_most_1000_refused_events(nodes):
    """--latest is bounded: past it, a usage error naming it, before the store is read."""
    a, b, _ = nodes
    a.append({"eventId": "x", "kind": "message", "payload": None})
    b.ok("fed", "pull")
    assert len(b.ok("fed", "status", "--latest", "1000")["rejected"]["latest"]) == 1
    assert b.ok("fed", "status", "--latest", "0")["rejected"]["latest"] == []
    r = b.cli("--store", str(b.path), "fed", "status", "--latest", "1001")
    assert r.exit_code == 2
    assert "--latest 1001 must be from 0 to 1000" in r.stderr
