"""Tasks between agents on different nodes: `task_create` routed
like `send --to`, the owner's `task_accept|update|complete|failed` back, both nodes' `task
show` alike, dedupe after a cursor rewind, retries and dead letters for an owner that never
reads, refusals for an offline or unknown owner. Nodes read each other's store files
(StoreTransport); time moves with freezegun."""

from __future__ import annotations

import json

import pytest
from freezegun import freeze_time
from test_federation_routing import linked_pair

pytestmark = pytest.mark.federation

T0 = "2030-01-01T00:00:00Z"


@pytest.fixture
def pair(cli, tmp_path):
    with freeze_time(T0):
        return linked_pair(cli, tmp_path)


def at(second: int) -> str:
    return f"2030-01-01T00:{second // 60:02d}:{second % 60:02d}Z"


def converge(a, b, when: str) -> None:
    with freeze_time(when):
        b.ok("fed", "pull")
        a.ok("fed", "pull")


def same(doc: dict) -> dict:
    """What both nodes agree on (ids, messages and origin_node are each node's own)."""
    keep = (
        "capability",
        "from",
        "to",
        "state",
        "eta_at",
        "progress",
        "global_id",
        "plan",
        "note",
        "task_type",
        "eta_required",
        "correlation_id",
        "created_at",
        "accepted_at",
        "finished_at",
    )
    hist = [
        {k: e[k] for k in ("at", "event", "by", "progress", "note", "eta_at", "event_id")}
        for e in doc["history"]
    ]
    return {**{k: doc[k] for k in keep}, "history": hist}


def create(a, second: int = 1, *extra: str) -> dict:
    with freeze_time(at(second)):
        return a.ok("task", "create", "--to", "bob", "run the tests", "--as", "alice", *extra)


def test_create_crosses_nodes_and_the_owner_records_it(pair):
    a, b = pair
    made = create(a, 1, "--eta-required")
    gid = made["global_id"]
    assert made["state"] == "created" and made["peer_node"] == "nb" and gid
    assert a.sql("SELECT kind, to_node FROM fed_outbox WHERE event_id = ?", gid) == [
        ("task_create", "nb")
    ]
    assert a.sql("SELECT state FROM fed_sent WHERE event_id = ?", gid) == [("emitted",)]
    with freeze_time(at(2)):
        assert b.ok("fed", "pull")["tasks"] == 1
    mine = b.ok("task", "show", gid)
    assert (mine["from"], mine["to"], mine["state"], mine["origin_node"]) == (
        "alice",
        "bob",
        "created",
        "na",
    )
    assert mine["eta_required"] is True and mine["capability"] is None
    inbox = b.ok("receive", "--as", "bob")["messages"]
    assert [(m["type"], m["content"], m["id"]) for m in inbox] == [
        ("command", "run the tests", mine["id"])
    ]
    # by its id here too; the global id is the same on both nodes
    assert b.ok("task", "show", str(mine["id"]))["global_id"] == gid
    with freeze_time(at(3)):
        a.ok("fed", "pull")
    assert a.sql("SELECT state FROM fed_sent WHERE event_id = ?", gid) == [("accepted",)]


def test_every_transition_crosses_and_both_sides_converge(pair):
    a, b = pair
    gid = create(a)["global_id"]
    converge(a, b, at(2))
    with freeze_time(at(3)):
        acc = b.ok("task", "accept", gid, "--eta", "10m", "--plan", "unit first", "--as", "bob")
    assert acc["eta_at"] == "2030-01-01T00:10:03.000Z"
    env = json.loads(b.sql("SELECT envelope FROM fed_outbox WHERE kind = 'task_accept'")[0][0])
    assert env["payload"]["etaAt"] == acc["eta_at"] and env["toNodeId"] == "na"
    converge(a, b, at(4))
    theirs = a.ok("task", "show", gid)
    assert (theirs["state"], theirs["eta_at"], theirs["plan"]) == (
        "accepted",
        acc["eta_at"],
        "unit first",
    )
    # the owner's accept counts as `processed` for the task_create event
    assert a.sql("SELECT state FROM fed_sent WHERE event_id = ?", gid) == [("processed",)]
    ack = a.ok("receive", "--as", "alice")["messages"]
    assert [(m["type"], m["metadata"]["status"], m["metadata"]["eta_at"]) for m in ack] == [
        ("acknowledgment", "in_progress", acc["eta_at"])
    ]
    with freeze_time(at(5)):
        b.ok("task", "update", gid, "--progress", "40", "--note", "half", "--as", "bob")
    converge(a, b, at(6))
    assert (a.ok("task", "show", gid)["state"], a.ok("task", "show", gid)["progress"]) == (
        "updated",
        40,
    )
    with freeze_time(at(7)):
        b.ok("task", "complete", gid, "all 412 pass", "--as", "bob")
    converge(a, b, at(8))
    theirs, mine = a.ok("task", "show", gid), b.ok("task", "show", gid)
    assert theirs["state"] == "completed" and theirs["progress"] == 100
    assert same(theirs) == same(mine)
    assert [e["event"] for e in theirs["history"]] == [
        "created",
        "accepted",
        "updated",
        "completed",
    ]
    result = a.ok("receive", "--as", "alice")["messages"]
    assert [(m["type"], m["content"], m["correlation_id"]) for m in result] == [
        ("response", "all 412 pass", theirs["correlation_id"])
    ]
    # every task event the owner's node sent was acknowledged by the creator's node
    with freeze_time(at(9)):
        b.ok("fed", "pull")
    assert set(b.sql("SELECT state FROM fed_sent")) == {("processed",)}
    assert len(b.sql("SELECT 1 FROM fed_sent")) == 3


def test_fail_crosses_from_created(pair):
    a, b = pair
    gid = create(a)["global_id"]
    converge(a, b, at(2))
    with freeze_time(at(3)):
        b.ok("task", "fail", gid, "--reason", "no build machine", "--as", "bob")
    converge(a, b, at(4))
    theirs = a.ok("task", "show", gid)
    assert (theirs["state"], theirs["note"]) == ("failed", "no build machine")
    assert same(theirs) == same(b.ok("task", "show", gid))
    msgs = a.ok("receive", "--as", "alice")["messages"]
    assert [(m["type"], m["content"], m["metadata"]["status"]) for m in msgs] == [
        ("acknowledgment", "no build machine", "failed")
    ]
    assert a.sql("SELECT state FROM fed_sent WHERE event_id = ?", gid) == [("processed",)]


def test_only_the_owners_node_changes_the_task(pair):
    a, b = pair
    gid = create(a)["global_id"]
    before = a.sql("SELECT state FROM tasks")
    with freeze_time(at(2)):
        r = a("task", "accept", gid, "--eta", "5m", "--as", "bob")
    assert r.exit_code == 5 and r.error["code"] == "forbidden"
    assert r.error["owner_node"] == "nb"
    assert a.sql("SELECT state FROM tasks") == before
    assert a.sql("SELECT count(*) FROM fed_outbox WHERE kind LIKE 'task_%'") == [(1,)]


def test_a_cursor_rewind_never_makes_a_second_task_or_event(pair):
    a, b = pair
    gid = create(a)["global_id"]
    converge(a, b, at(2))
    with freeze_time(at(3)):
        b.ok("task", "accept", gid, "--eta", "10m", "--as", "bob")
        b.ok("task", "update", gid, "--progress", "10", "--as", "bob")
    converge(a, b, at(4))
    a_before, b_before = a.ok("task", "show", gid), b.ok("task", "show", gid)
    for node in (a, b):
        node.sql("UPDATE fed_cursors SET position = 0")
    with freeze_time(at(5)):
        again_b, again_a = b.ok("fed", "pull"), a.ok("fed", "pull")
    assert again_b["tasks"] == again_a["tasks"] == 0
    assert again_b["duplicates"] > 0 and again_a["duplicates"] > 0
    assert a.sql("SELECT count(*) FROM tasks") == b.sql("SELECT count(*) FROM tasks") == [(1,)]
    assert a.ok("task", "show", gid) == a_before and b.ok("task", "show", gid) == b_before
    assert b.sql("SELECT count(*) FROM deliveries WHERE recipient = 'bob'") == [(1,)]


def test_engine_record_created_and_record_are_idempotent_by_event_id(pair):
    """A re-append of the same event (a retry read anew) changes nothing."""
    from acomm_cli.engine import opening, taskfed, tasks
    from acomm_cli.store import write

    a, b = pair
    gid = create(a)["global_id"]
    converge(a, b, at(2))
    env = json.loads(a.sql("SELECT envelope FROM fed_outbox WHERE event_id = ?", gid)[0][0])
    conn = opening.connect(b.path, create=False)
    try:
        task = tasks.load(conn, gid)
        with write(conn):
            taskfed.created(conn, "na", env, task.id, task.channel_id, 0)
        assert len(tasks.load(conn, gid, history=True).history) == 1
    finally:
        conn.close()


def test_overdue_on_both_sides_from_the_eta_received(pair):
    a, b = pair
    gid = create(a)["global_id"]
    converge(a, b, at(2))
    with freeze_time(at(3)):
        b.ok("task", "accept", gid, "--eta", "1m", "--as", "bob")
    converge(a, b, at(4))
    with freeze_time(at(70)):  # the creator's tick, from the etaAt it received
        assert a.ok("tick")["tasks_overdue"] == 1
    with freeze_time(at(90)):  # the owner reports after the ETA without a tick of its own
        b.ok("task", "update", gid, "--progress", "80", "--as", "bob")
    converge(a, b, at(95))
    theirs, mine = a.ok("task", "show", gid), b.ok("task", "show", gid)
    assert theirs["state"] == mine["state"] == "overdue"
    assert [e["event"] for e in theirs["history"]] == ["created", "accepted", "overdue", "updated"]
    assert same(theirs) == same(mine)


def test_unread_task_create_is_retried_then_dead_lettered(pair):
    a, b = pair
    gid = create(a)["global_id"]
    b.path.rename(b.path.with_suffix(".away"))  # the owner's node never reads
    totals = {"fed_retried": 0, "fed_dead_lettered": 0}
    for minute in range(1, 12):
        with freeze_time(f"2030-01-01T00:{minute:02d}:01Z"):
            doc = a.ok("tick")
            for k in totals:
                totals[k] += doc[k]
    assert totals == {"fed_retried": 4, "fed_dead_lettered": 1}
    assert a.sql("SELECT kind, attempt FROM fed_outbox WHERE event_id = ? ORDER BY seq", gid) == [
        ("task_create", n) for n in range(1, 6)
    ]
    assert a.sql("SELECT recipient, reason FROM dead_letters") == [
        ("bob", "federation_max_attempts")
    ]


def test_owner_events_not_read_are_retried(pair):
    a, b = pair
    gid = create(a)["global_id"]
    converge(a, b, at(2))
    with freeze_time(at(3)):
        b.ok("task", "accept", gid, "--eta", "1h", "--as", "bob")
    with freeze_time(at(40)):  # na has not read it: ack_timeout passed
        assert b.ok("tick")["fed_retried"] == 1
    converge(a, b, at(50))
    assert a.ok("task", "show", gid)["state"] == "accepted"
    assert len(a.ok("task", "show", gid)["history"]) == 2  # the retry read as a duplicate
    with freeze_time(at(51)):
        b.ok("fed", "pull")
    assert b.sql("SELECT state FROM fed_sent") == [("processed",)]


@pytest.mark.parametrize("setup,code", [("offline", "owner_offline"), ("none", "no_owner")])
def test_an_unroutable_owner_is_refused_with_a_dead_letter(pair, setup, code):
    a, b = pair
    to = "bob" if setup == "offline" else "carol"
    with freeze_time("2030-01-01T01:00:00Z"):  # nb's heartbeat is an hour old
        r = a("task", "create", "--to", to, "do it", "--as", "alice")
    assert r.exit_code == 5 and r.error["code"] == code
    assert a.sql("SELECT count(*) FROM tasks") == [(0,)]
    assert a.sql("SELECT recipient, reason FROM dead_letters") == [(to, code)]
    assert a.sql("SELECT kind FROM fed_outbox WHERE kind = 'dead_letter'") == [("dead_letter",)]


# ---------------------------------------------------------------- over real gateways


def test_a_task_over_real_gateways(tmp_path):
    """create -> accept with an ETA -> update -> complete between two `gateway serve`
    processes (HTTP outboxes, the room over WebSocket); every wait bounded."""
    from test_federation_loop import cluster
    from test_gateway import gateway_nodes, wait_until, where

    with gateway_nodes(tmp_path) as make:
        a, [b], _ = cluster(make, "nb")
        b.ok("agent", "own", "bob")
        wait_until("bob owned by nb, seen on na", lambda: where(a, "bob") == "nb")
        made = a.ok("task", "create", "--to", "bob", "ship it", "--eta-required", "--as", "alice")
        gid = made["global_id"]
        assert (made["state"], made["peer_node"]) == ("created", "nb")
        wait_until("the task on nb", lambda: b.ok("fed", "pull")["tasks"] == 1)
        acc = b.ok("task", "accept", gid, "--eta", "10m", "--as", "bob")
        b.ok("task", "update", gid, "--progress", "60", "--note", "halfway", "--as", "bob")
        wait_until(
            "accepted and updated on na",
            lambda: a.ok("fed", "pull") and a.ok("task", "show", gid)["progress"] == 60,
        )
        theirs = a.ok("task", "show", gid)
        assert (theirs["state"], theirs["eta_at"]) == ("updated", acc["eta_at"])
        b.ok("task", "complete", gid, "shipped", "--as", "bob")
        wait_until(
            "completed on na",
            lambda: a.ok("fed", "pull") and a.ok("task", "show", gid)["state"] == "completed",
        )
        theirs, mine = a.ok("task", "show", gid), b.ok("task", "show", gid)
        assert same(theirs) == same(mine)
        assert [
            x["content"]
            for x in a.ok("receive", "--as", "alice")["messages"]
            if x["type"] == "response"
        ] == ["shipped"]
