"""Capabilities across nodes: a capability published on node B
reaches node A through the room; the distribution fan-out asks agents of both nodes; routing
by capability goes to the owner's node; misfires are reviewed once, on the owner's node.
Nodes read each other's store files (StoreTransport); time moves with freezegun."""

from __future__ import annotations

import json

import pytest
from freezegun import freeze_time
from test_federation_routing import linked_pair

from tests.capfixtures import SCHEMA

pytestmark = pytest.mark.federation

T0 = "2030-01-01T00:00:00Z"
PUBLISH = [
    "--owner",
    "bob",
    "--delegation-skill",
    "skills/review-request@1.2",
    "--executor-skill",
    "skills/review-exec@1.0",
    "--eta",
    "10m",
]


def at(second: int) -> str:
    return f"2030-01-01T00:{second // 60:02d}:{second % 60:02d}Z"


def converge(a, b, when: str) -> None:
    with freeze_time(when):
        b.ok("fed", "pull")
        a.ok("fed", "pull")


@pytest.fixture
def pair(cli, tmp_path):
    """na owns alice and dave, nb owns bob (the capability's owner) and
    carol; both nodes know all of it."""
    with freeze_time(T0):
        a, b = linked_pair(cli, tmp_path)
        a.ok("agent", "own", "alice")
        a.ok("agent", "own", "dave")
        b.ok("agent", "own", "carol")
        b.ok("capability", "host", "bob", "skills/review-exec@1.0")
    converge(a, b, at(1))
    return a, b


def publish(b, tmp_path, second: int = 2, *extra: str) -> dict:
    path = tmp_path / "review.json"
    path.write_text(json.dumps(SCHEMA))
    with freeze_time(at(second)):
        return b.ok("capability", "publish", "review", *PUBLISH, "--schema", str(path), *extra)


def installed(version: str, second: int) -> str:
    return json.dumps({"status": "installed", "version": version, "at": at(second)})


# ---------------------------------------------------------------- the distribution fan-out


def test_a_capability_published_on_b_reaches_a_through_the_room(pair, tmp_path):
    a, b = pair
    publish(b, tmp_path)
    assert a.ok("capability", "list")["capabilities"] == []  # not pulled yet
    converge(a, b, at(3))
    [theirs] = a.ok("capability", "list")["capabilities"]
    assert (theirs["id"], theirs["owner"], theirs["node"], theirs["state"]) == (
        "review",
        "bob",
        "nb",
        "published",
    )
    assert theirs["delegation_skill"] == {"ref": "skills/review-request", "version": "1.2"}
    assert theirs["schema_sha256"] == b.ok("capability", "show", "review")["schema_sha256"]
    index = a.sql("SELECT value FROM fed_room WHERE map = 'capabilities.index' AND key = 'bob'")
    assert json.loads(index[0][0]) == {"capabilities": ["review"], "ownerNodeId": "nb"}


def test_the_fan_out_asks_every_agent_of_both_nodes_and_show_lists_their_installs(pair, tmp_path):
    a, b = pair
    doc = publish(b, tmp_path)
    assert [d["agent"] for d in doc["distribution"]] == ["alice", "carol", "dave"]
    assert doc["skipped"] == []
    # alice and dave (on na) got theirs as task_create events, carol's is local to nb
    sent = {
        json.loads(e)["toAgentId"]
        for (e,) in b.sql("SELECT envelope FROM fed_outbox WHERE kind = 'task_create'")
    }
    assert sent == {"alice", "dave"}
    converge(a, b, at(3))
    mine = a.ok("task", "list")["tasks"]
    assert sorted((t["to"], t["from"], t["capability"], t["peer_node"]) for t in mine) == [
        ("alice", "bob", "review", "nb"),
        ("dave", "bob", "review", "nb"),
    ]
    inbox = a.ok("receive", "--as", "alice")["messages"]
    assert [
        (m["type"], m["metadata"]["task_type"], m["metadata"]["skill_version"]) for m in inbox
    ] == [("command", "skill_distribution", "1.2")]
    gid = {t["to"]: t["global_id"] for t in mine}
    local = {d["agent"]: str(d["task_id"]) for d in doc["distribution"]}
    with freeze_time(at(4)):
        a.ok("task", "accept", gid["alice"], "--as", "alice")
        a.ok("task", "complete", gid["alice"], installed("1.2", 4), "--as", "alice")
        a.ok("task", "accept", gid["dave"], "--as", "dave")
        a.ok(
            "task",
            "complete",
            gid["dave"],
            json.dumps({"status": "failed", "at": at(4)}),
            "--as",
            "dave",
        )
        b.ok("task", "accept", local["carol"], "--as", "carol")
        b.ok("task", "complete", local["carol"], installed("1.2", 4), "--as", "carol")
    converge(a, b, at(5))
    shown = b.ok("capability", "show", "review")
    assert [
        (i["agent"], i["task_state"], i["status"], i["version"], i["at"], i["requested_version"])
        for i in shown["installs"]
    ] == [
        ("alice", "completed", "installed", "1.2", "2030-01-01T00:00:04Z", "1.2"),
        ("carol", "completed", "installed", "1.2", "2030-01-01T00:00:04Z", "1.2"),
        ("dave", "completed", "failed", None, "2030-01-01T00:00:04Z", "1.2"),
    ]
    text = b.cli("--store", str(b.path), "capability", "show", "review").stdout
    assert "alice" in text and "installed" in text
    # both copies of a distribution task agree
    for agent in ("alice", "dave"):
        assert (
            a.ok("task", "show", gid[agent])["state"]
            == b.ok("task", "show", gid[agent])["state"]
            == "completed"
        )


def test_a_bad_install_answer_is_refused_on_the_answering_node(pair, tmp_path):
    a, b = pair
    publish(b, tmp_path)
    converge(a, b, at(3))
    [task] = [t for t in a.ok("task", "list")["tasks"] if t["to"] == "alice"]
    with freeze_time(at(4)):
        a.ok("task", "accept", task["global_id"], "--as", "alice")
        r = a("task", "complete", task["global_id"], '{"status": "maybe"}', "--as", "alice")
    assert r.exit_code == 3 and r.error["field"] == "status"
    assert a.sql("SELECT count(*) FROM fed_outbox WHERE kind = 'task_complete'") == [(0,)]
    assert a.sql("SELECT count(*) FROM incidents") == [(0,)]


# ---------------------------------------------------------------- routing by capability


def create(a, second: int, *extra: str):
    with freeze_time(at(second)):
        return a("task", "create", "--capability", "review", "review PR 7", "--as", "alice", *extra)


def test_a_task_for_a_capability_on_b_goes_to_its_owner_there(pair, tmp_path):
    a, b = pair
    publish(b, tmp_path)
    converge(a, b, at(3))
    r = create(a, 4)
    assert r.exit_code == 0, r.stderr
    made = r.json()
    assert (made["to"], made["peer_node"], made["capability"]) == ("bob", "nb", "review")
    assert made["eta_at"] == "2030-01-01T00:10:04.000Z"  # the catalog's 10m, from the room
    converge(a, b, at(5))
    mine = b.ok("task", "show", made["global_id"])
    assert (mine["from"], mine["to"], mine["capability"], mine["eta_at"]) == (
        "alice",
        "bob",
        "review",
        made["eta_at"],
    )
    [cmd] = [
        m
        for m in b.ok("receive", "--as", "bob")["messages"]
        if m["type"] == "command" and m["metadata"]["task_type"] == "task"
    ]
    assert cmd["content"] == "review PR 7" and cmd["metadata"]["capability"] == "review"
    # --to the owner is fine, --to anyone else is a routing miss (counted on na)
    assert create(a, 6, "--to", "bob").exit_code == 0
    r = create(a, 7, "--to", "dave")
    assert r.exit_code == 5 and r.error["code"] == "no_capability" and r.error["field"] == "to"


def test_unpublish_on_b_removes_routing_eligibility_on_a_once_the_room_syncs(pair, tmp_path):
    a, b = pair
    publish(b, tmp_path)
    converge(a, b, at(3))
    with freeze_time(at(4)):
        b.ok("capability", "unpublish", "review")
    assert create(a, 5).exit_code == 0  # na has not heard yet: still routed to bob
    converge(a, b, at(6))
    assert a.ok("capability", "list")["capabilities"] == []
    assert a.sql("SELECT count(*) FROM fed_room WHERE map LIKE 'capabilities.%'") == [(0,)]
    tasks_before = a.sql("SELECT count(*) FROM tasks")
    r = create(a, 7)
    assert r.exit_code == 5 and r.error["code"] == "no_capability"
    assert r.error["field"] == "capability" and r.error["reason"] == "unknown"
    assert a.sql("SELECT count(*) FROM tasks") == tasks_before
    # counted where it was refused; na never had the capability: never an incident
    assert a.sql("SELECT capability_id, agent, reason FROM routing_misses") == [
        ("review", "alice", "unknown")
    ]
    for second in range(8, 14):
        create(a, second)
    assert a.sql("SELECT count(*) FROM incidents") == [(0,)]
    assert b.sql("SELECT count(*) FROM incidents") == [(0,)]


# ---------------------------------------------------------------- misfires across nodes


def routed(a, b, tmp_path) -> str:
    """A `review` task from alice on na to bob on nb, accepted; its global id."""
    publish(b, tmp_path)
    converge(a, b, at(3))
    gid = create(a, 4).json()["global_id"]
    converge(a, b, at(5))
    with freeze_time(at(6)):
        b.ok("task", "accept", gid, "--as", "bob")
    converge(a, b, at(7))
    return gid


def one_incident_on_b(a, b, gid: str, failure_class: str) -> dict:
    """Exactly one incident, on the catalog owner's node, none on the creator's; both
    copies of the task record the same `incident` event."""
    assert a.sql("SELECT count(*) FROM incidents") == [(0,)]
    [incident] = b.ok("incident", "list")["incidents"]
    assert (incident["capability_id"], incident["failure_class"], incident["state"]) == (
        "review",
        failure_class,
        "open",
    )
    theirs, mine = a.ok("task", "show", gid), b.ok("task", "show", gid)
    assert incident["task_id"] == mine["id"]
    assert incident["sample_corr_ids"] == [mine["correlation_id"]]
    marks = [
        [
            (e["event"], e["event_id"], e["at"], e.get("failure_class"))
            for e in d["history"]
            if e["event"] == "incident"
        ]
        for d in (theirs, mine)
    ]
    assert marks[0] == marks[1] and len(marks[0]) == 1
    assert marks[0][0][3] == failure_class
    review = b.sql("SELECT count(*) FROM messages WHERE topic = '_system.capability.review'")
    assert review == [(1,)]
    return incident


def test_an_overdue_task_opens_one_incident_on_the_owners_node(pair, tmp_path):
    a, b = pair
    gid = routed(a, b, tmp_path)
    with freeze_time("2030-01-01T00:11:00Z"):  # past the 10m ETA: both nodes tick
        assert a.ok("tick")["tasks_overdue"] == 1
        assert b.ok("tick")["tasks_overdue"] == 1
        a.ok("tick")
        b.ok("tick")
    converge(a, b, "2030-01-01T00:11:05Z")
    converge(a, b, "2030-01-01T00:11:10Z")
    one_incident_on_b(a, b, gid, "eta_breach")
    theirs, mine = a.ok("task", "show", gid), b.ok("task", "show", gid)
    assert theirs["state"] == mine["state"] == "incident"
    assert (
        [e["event"] for e in theirs["history"]]
        == [e["event"] for e in mine["history"]]
        == ["created", "accepted", "overdue", "incident"]
    )


def test_a_failed_task_opens_one_incident_on_the_owners_node(pair, tmp_path):
    a, b = pair
    gid = routed(a, b, tmp_path)
    with freeze_time(at(8)):
        b.ok("task", "fail", gid, "--reason", "the linter crashed", "--as", "bob")
    converge(a, b, at(9))
    converge(a, b, at(10))
    one_incident_on_b(a, b, gid, "execution_error")
    assert a.ok("task", "show", gid)["state"] == b.ok("task", "show", gid)["state"] == "failed"


def test_an_output_failing_the_schema_is_checked_on_b_and_opens_one_incident(pair, tmp_path):
    a, b = pair
    gid = routed(a, b, tmp_path)
    with freeze_time(at(8)):
        r = b("task", "complete", gid, '{"verdict": "maybe"}', "--as", "bob")
        assert r.exit_code == 3 and r.error["code"] == "output_mismatch"
        again = b("task", "complete", gid, "not json", "--as", "bob")
        assert again.exit_code == 3
    assert b.sql("SELECT count(*) FROM fed_outbox WHERE kind = 'task_complete'") == [(0,)]
    converge(a, b, at(9))
    converge(a, b, at(10))
    one_incident_on_b(a, b, gid, "output_mismatch")
    assert a.ok("task", "show", gid)["state"] == "incident"
    with freeze_time(at(11)):  # a result within the contract still completes it
        b.ok("task", "complete", gid, '{"verdict": "ok"}', "--as", "bob")
    converge(a, b, at(12))
    assert a.ok("task", "show", gid)["state"] == "completed"
    assert b.sql("SELECT count(*) FROM incidents") == [(1,)]


# ---------------------------------------------------------------- over real gateways


def test_fan_out_and_routing_over_real_gateways(tmp_path):
    """A capability published on nb reaches na through the room over WebSocket; alice on na
    answers her distribution task, nb's capability show lists it, and a task for the
    capability created on na is executed on nb. Every wait bounded."""
    from test_federation_loop import cluster
    from test_gateway import gateway_nodes, wait_until, where

    with gateway_nodes(tmp_path) as make:
        a, [b], _ = cluster(make, "nb")
        a.ok("agent", "own", "alice")
        b.ok("agent", "own", "bob")
        wait_until("bob seen on na", lambda: where(a, "bob") == "nb")
        wait_until("alice seen on nb", lambda: where(b, "alice") == "na")
        schema = tmp_path / "review.json"
        schema.write_text(json.dumps(SCHEMA))
        b.ok("capability", "host", "bob", "skills/review-exec@1.0")
        doc = b.ok("capability", "publish", "review", *PUBLISH, "--schema", str(schema))
        assert [d["agent"] for d in doc["distribution"]] == ["alice"]
        wait_until(
            "review in na's catalog",
            lambda: [c["id"] for c in a.ok("capability", "list")["capabilities"]] == ["review"],
        )
        wait_until(
            "alice's distribution task on na",
            lambda: a.ok("fed", "pull") and a.ok("task", "list", "--as", "alice")["tasks"],
        )
        [install] = a.ok("task", "list", "--as", "alice")["tasks"]
        a.ok("task", "accept", install["global_id"], "--as", "alice")
        a.ok(
            "task",
            "complete",
            install["global_id"],
            json.dumps({"status": "installed", "version": "1.2", "at": T0}),
            "--as",
            "alice",
        )
        wait_until(
            "alice's install on nb",
            lambda: (
                b.ok("fed", "pull")
                and [i["status"] for i in b.ok("capability", "show", "review")["installs"]]
                == ["installed"]
            ),
        )
        made = a.ok("task", "create", "--capability", "review", "review PR 9", "--as", "alice")
        assert (made["to"], made["peer_node"]) == ("bob", "nb")
        wait_until("the task on nb", lambda: b.ok("fed", "pull")["tasks"] == 1)
        mine = b.ok("task", "show", made["global_id"])
        assert (mine["capability"], mine["eta_at"]) == ("review", made["eta_at"])
