"""Capabilities through the command line on real stores: publish and
its contract checks, unpublish, list, show, routing tasks by capability, and the
skill_distribution fan-out with its install answers."""

from __future__ import annotations

import json

import pytest
from freezegun import freeze_time

from tests.capfixtures import PUBLISH, publish, published, refused, schema_file
from tests.conftest import query

pytestmark = pytest.mark.cli

T0 = "2026-03-01T12:00:00Z"


@pytest.fixture(autouse=True)
def frozen():
    with freeze_time(T0):
        yield


# ---------------------------------------------------------------- publish


def test_publish_writes_the_contract_and_list_and_show_read_it(cli, store, tmp_path):
    doc = published(cli, tmp_path)
    assert doc["changed"] is True
    assert {
        k: doc[k]
        for k in (
            "id",
            "owner",
            "state",
            "delegation_skill",
            "executor_skill",
            "eta_ms",
            "published_at",
        )
    } == {
        "id": "review",
        "owner": "rev",
        "state": "published",
        "delegation_skill": {"ref": "skills/review-request", "version": "1.2"},
        "executor_skill": {"ref": "skills/review-exec", "version": "1.0"},
        "eta_ms": 600_000,
        "published_at": "2026-03-01T12:00:00.000Z",
    }
    listed = cli.ok("capability", "list", "--json").json()["capabilities"]
    assert [(c["id"], c["owner"], c["state"]) for c in listed] == [("review", "rev", "published")]
    shown = cli.ok("capability", "show", "review", "--json").json()
    assert shown["schema"]["required"] == ["verdict"] and shown["installs"] == []
    text = cli.ok("capability", "show", "review").stdout
    assert "skills/review-request@1.2" in text and "skills/review-exec@1.0" in text


def test_publishing_the_same_contract_again_changes_nothing(cli, store, tmp_path):
    published(cli, tmp_path, "bob")
    again = publish(cli, schema_file(tmp_path))
    assert again["changed"] is False and again["distribution"] == []
    assert query(store, "SELECT count(*) FROM tasks") == [(2,)]  # alice, bob


def test_the_owner_must_host_the_executor_skill(cli, store, tmp_path):
    path = schema_file(tmp_path)
    err = refused(
        cli,
        store,
        ["capability", "publish", "review", *PUBLISH, "--schema", str(path)],
        5,
        "invalid_state",
        "executor-skill",
    )
    assert "does not host skills/review-exec" in err["message"]
    cli.ok("capability", "host", "rev", "skills/review-exec@0.9")  # another version
    err = refused(
        cli,
        store,
        ["capability", "publish", "review", *PUBLISH, "--schema", str(path)],
        5,
        "invalid_state",
        "executor-skill",
    )
    assert "hosts skills/review-exec@0.9" in err["message"]


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ("{not json", "not JSON"),
        ('{"type": "no-such-type"}', "not a valid JSON Schema"),
        ('{"properties": {"a": {"minLength": -1}}}', "not a valid JSON Schema"),
        ("[1, 2]", "is an object"),
    ],
)
def test_a_schema_that_is_not_a_json_schema_is_refused(cli, store, tmp_path, schema, why):
    cli.ok("capability", "host", "rev", "skills/review-exec@1.0")
    path = tmp_path / "bad.json"
    path.write_text(schema)
    err = refused(
        cli,
        store,
        ["capability", "publish", "review", *PUBLISH, "--schema", str(path)],
        3,
        "validation_failed",
        "schema",
    )
    assert why in err["message"]


@pytest.mark.parametrize(
    ("flag", "value", "field"),
    [
        ("--delegation-skill", "no-version", "delegation-skill"),
        ("--executor-skill", "skills/x@", "executor-skill"),
        ("--eta", "soon", "eta"),
    ],
)
def test_bad_contract_fields_are_refused_naming_them(cli, store, tmp_path, flag, value, field):
    cli.ok("capability", "host", "rev", "skills/review-exec@1.0")
    args = list(PUBLISH)
    args[args.index(flag) + 1] = value
    refused(
        cli,
        store,
        ["capability", "publish", "review", *args, "--schema", str(schema_file(tmp_path))],
        3,
        "validation_failed",
        field,
    )


def test_a_missing_schema_file_is_refused(cli, store, tmp_path):
    cli.ok("capability", "host", "rev", "skills/review-exec@1.0")
    refused(
        cli,
        store,
        ["capability", "publish", "review", *PUBLISH, "--schema", str(tmp_path / "nope.json")],
        3,
        "validation_failed",
        "schema",
    )


def test_show_of_an_unknown_capability_is_not_found(cli, store):
    r = cli("capability", "show", "nope", "--json")
    assert r.exit_code == 4 and r.error["code"] == "not_found"


# ---------------------------------------------------------------- routing


def test_a_task_for_a_capability_goes_to_its_owner_with_its_default_eta(cli, store, tmp_path):
    published(cli, tmp_path)
    tid = int(
        cli.ok("task", "create", "--capability", "review", "check PR 7", "--as", "alice").stdout
    )
    doc = cli.ok("task", "show", str(tid), "--json").json()
    assert (doc["to"], doc["capability"], doc["eta_at"]) == (
        "rev",
        "review",
        "2026-03-01T12:10:00.000Z",
    )
    # --to naming the owner is the same route
    tid2 = int(
        cli.ok(
            "task", "create", "--capability", "review", "--to", "rev", "again", "--as", "alice"
        ).stdout
    )
    assert cli.ok("task", "show", str(tid2), "--json").json()["to"] == "rev"


def test_a_task_for_another_agent_than_the_owner_is_refused(cli, store, tmp_path):
    published(cli, tmp_path)
    before = query(store, "SELECT count(*) FROM messages")
    r = cli(
        "task", "create", "--capability", "review", "--to", "bob", "x", "--as", "alice", "--json"
    )
    assert r.exit_code == 5 and (r.error["code"], r.error["field"]) == ("no_capability", "to")
    assert r.error["owner"] == "rev" and r.error["reason"] == "not_owner"
    # nothing sent, no task; the one row written is the miss, counted for the review
    assert query(store, "SELECT count(*) FROM messages") == before
    assert query(store, "SELECT count(*) FROM tasks WHERE task_type = 'task'") == [(0,)]
    assert query(store, "SELECT capability_id, agent, reason FROM routing_misses") == [
        ("review", "alice", "not_owner")
    ]


def test_an_unknown_capability_is_exit_5_and_counted_as_a_miss(cli, store):
    r = cli("task", "create", "--capability", "nope", "x", "--as", "alice", "--json")
    assert r.exit_code == 5 and r.error["code"] == "no_capability"
    assert r.error["reason"] == "unknown"
    assert query(store, "SELECT count(*) FROM tasks") == [(0,)]
    assert query(store, "SELECT capability_id, agent, reason FROM routing_misses") == [
        ("nope", "alice", "unknown")
    ]


def test_unpublish_removes_routing_eligibility(cli, store, tmp_path):
    published(cli, tmp_path)
    doc = cli.ok("capability", "unpublish", "review", "--json").json()
    assert (doc["state"], doc["changed"]) == ("unpublished", True)
    assert cli.ok("capability", "unpublish", "review", "--json").json()["changed"] is False
    r = cli("task", "create", "--capability", "review", "x", "--as", "alice", "--json")
    assert r.exit_code == 5 and r.error["reason"] == "unpublished"
    assert (
        cli.ok("capability", "list", "--state", "published", "--json").json()["capabilities"] == []
    )
    assert query(store, "SELECT count(*) FROM tasks WHERE task_type = 'task'") == [(0,)]


def test_hosting_cannot_be_removed_while_a_published_capability_needs_it(cli, store, tmp_path):
    published(cli, tmp_path)
    refused(
        cli,
        store,
        ["capability", "host", "rev", "skills/review-exec@1.0", "--remove"],
        5,
        "invalid_state",
        "skill",
    )
    cli.ok("capability", "unpublish", "review")
    cli.ok("capability", "host", "rev", "skills/review-exec@1.0", "--remove")


# ---------------------------------------------------------------- the distribution fan-out


def test_publish_sends_one_distribution_task_per_active_agent_but_the_owner(cli, store, tmp_path):
    cli.ok("send", "--to", "rev", "hi", "--as", "carol")  # rev is active too: not a target
    doc = published(cli, tmp_path, "alice", "bob", "dave")
    assert sorted(d["agent"] for d in doc["distribution"]) == ["alice", "bob", "carol", "dave"]
    rows = query(store, "SELECT owner, creator, task_type, capability_id FROM tasks ORDER BY owner")
    assert rows == [
        (a, "rev", "skill_distribution", "review") for a in ("alice", "bob", "carol", "dave")
    ]
    msg = cli.ok("receive", "--as", "bob", "--json").json()["messages"][-1]
    assert msg["type"] == "command" and msg["metadata"]["task_type"] == "skill_distribution"
    assert json.loads(msg["content"])["delegation_skill"] == {
        "ref": "skills/review-request",
        "version": "1.2",
    }


def test_a_new_version_fans_out_again_and_show_lists_who_installed_which(cli, store, tmp_path):
    doc = published(cli, tmp_path, "bob", "carol")
    tasks = {d["agent"]: d["task_id"] for d in doc["distribution"]}
    for agent, status in (("bob", "installed"), ("carol", "failed")):
        tid = str(tasks[agent])
        cli.ok("task", "accept", tid, "--as", agent)
        cli.ok(
            "task",
            "complete",
            tid,
            json.dumps({"status": status, "version": "1.2", "at": "2026-03-01T12:01:00Z"}),
            "--as",
            agent,
        )
    installs = cli.ok("capability", "show", "review", "--json").json()["installs"]
    assert [(i["agent"], i["status"], i["version"], i["at"]) for i in installs] == [
        ("alice", None, None, None),
        ("bob", "installed", "1.2", "2026-03-01T12:01:00Z"),
        ("carol", "failed", "1.2", "2026-03-01T12:01:00Z"),
    ]
    args = [a if a != "skills/review-request@1.2" else "skills/review-request@1.3" for a in PUBLISH]
    again = cli.ok(
        "capability", "publish", "review", *args, "--schema", str(schema_file(tmp_path)), "--json"
    ).json()
    assert len(again["distribution"]) == 3
    installs = cli.ok("capability", "show", "review", "--json").json()["installs"]
    assert {i["agent"]: (i["requested_version"], i["status"]) for i in installs} == {
        "alice": ("1.3", None),
        "bob": ("1.3", None),
        "carol": ("1.3", None),
    }


@pytest.mark.parametrize(
    "body",
    [
        "installed",
        '{"status": "done", "at": "2026-03-01T12:01:00Z"}',
        '{"status": "installed", "at": "2026-03-01T12:01:00Z"}',
        '{"status": "installed", "version": "1.2"}',
        '{"status": "installed", "version": "1.2", "at": "yesterday"}',
    ],
)
def test_an_install_answer_must_carry_a_status_a_version_and_a_time(cli, store, tmp_path, body):
    doc = published(cli, tmp_path, "bob")
    tid = str({d["agent"]: d["task_id"] for d in doc["distribution"]}["bob"])
    cli.ok("task", "accept", tid, "--as", "bob")
    refused(cli, store, ["task", "complete", tid, body, "--as", "bob"], 3, "validation_failed")
    assert query(store, "SELECT count(*) FROM incidents") == [(0,)]
