"""Contact rules: an agent's `accept` (anyone, team, contacts, nobody) decides whose direct
messages and tasks reach it; `agent contacts` keeps the list `contacts` admits. Channels with
more members stay governed by membership. Driven through the command line on real stores."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from conftest import run, snapshot

from acomm_cli.engine import contacts
from acomm_cli.model import SYSTEM_AGENT

pytestmark = pytest.mark.cli


def register(store: Path, name: str, accept: str = "anyone", team: str | None = None) -> None:
    """The agent's directory row with this rule and team: what `agent register` and `agent
    update NAME --accept RULE --team T` store (written here in SQL, so these tests need
    only the contact rules)."""
    with closing(sqlite3.connect(store)) as c, c:
        c.execute(
            "INSERT INTO agents (name, accept, team, registered_at, updated_at)"
            " VALUES (?, ?, ?, 0, 0) ON CONFLICT (name) DO UPDATE"
            " SET accept = excluded.accept, team = excluded.team",
            (name, accept, team),
        )


def inbox(cli, agent: str) -> list[tuple[str, str, str]]:
    got = cli.ok("receive", "--as", agent, "--json").json()["messages"]
    return [(m["sender"], m["type"], m["content"]) for m in got]


def refused(cli, *args: str) -> dict:
    """The command exits 5 `forbidden`; its error document."""
    r = cli(*args, "--json")
    assert r.exit_code == 5, (args, r.stdout, r.stderr)
    doc = r.json()["results"][0]["error"] if r.stdout.strip() else r.error
    assert doc["code"] == "forbidden"
    return doc


def test_contacts_refuses_a_strangers_direct_message_and_admits_a_contact(cli, store):
    register(store, "bob", "contacts")
    before = snapshot(store)
    err = refused(cli, "send", "--to", "bob", "hi", "--as", "alice")
    assert (err["field"], err["value"], err["accept"]) == ("to", "bob", "contacts")
    assert "'bob' accepts direct messages and tasks from its contacts only" in err["message"]
    assert "'alice' is not one of them" in err["message"]
    assert snapshot(store) == before  # no direct channel, no message, no delivery
    plain = cli("send", "--to", "bob", "hi", "--as", "alice")
    assert plain.exit_code == 5
    assert "forbidden: 'bob' accepts direct messages and tasks from its contacts" in plain.stderr

    cli.ok("agent", "contacts", "bob", "add", "alice")
    cli.ok("send", "--to", "bob", "hi", "--as", "alice")
    refused(cli, "send", "--to", "bob", "me too", "--as", "carol")
    assert inbox(cli, "bob") == [("alice", "text", "hi")]

    cli.ok("agent", "contacts", "bob", "remove", "alice")
    refused(cli, "send", "--to", "bob", "again", "--as", "alice")


def test_the_rule_is_the_recipients_only(cli, store):
    """bob's rule keeps strangers out of bob's inbox, not bob out of theirs; a plain message
    back is a direct message like any other (only answers pass: see below)."""
    register(store, "bob", "contacts")
    cli.ok("send", "--to", "alice", "hello", "--as", "bob")
    assert inbox(cli, "alice") == [("bob", "text", "hello")]
    refused(cli, "send", "--to", "bob", "hello back", "--as", "alice")


def test_team_admits_a_teammate_only(cli, store):
    register(store, "bob", "team", team="ops")
    register(store, "carol", team="ops")
    register(store, "alice", team="dev")
    cli.ok("send", "--to", "bob", "from ops", "--as", "carol")
    err = refused(cli, "send", "--to", "bob", "from dev", "--as", "alice")
    assert err["accept"] == "team"
    assert "from its team 'ops' only; 'alice' is not in it" in err["message"]
    refused(cli, "send", "--to", "bob", "from nowhere", "--as", "dave")  # not registered: no team
    assert inbox(cli, "bob") == [("carol", "text", "from ops")]


def test_team_without_a_team_admits_no_one_by_team(cli, store):
    register(store, "bob", "team")
    register(store, "carol")  # no team either: two missing teams are not one team
    err = refused(cli, "send", "--to", "bob", "hi", "--as", "carol")
    assert "from its team only, and has no team" in err["message"]


def test_nobody_refuses_every_direct_message(cli, store):
    register(store, "bob", "nobody")
    register(store, "carol", team="ops")
    cli.ok("agent", "contacts", "bob", "add", "carol")  # kept, but not what `nobody` reads
    for sender in ("alice", "carol"):
        err = refused(cli, "send", "--to", "bob", "hi", "--as", sender)
        assert err["accept"] == "nobody"
        assert "'bob' accepts no direct messages or tasks" in err["message"]


def test_answers_to_what_the_recipient_asked_always_pass(cli, store):
    """bob (nobody) asks alice a query and sends her a command: her response and her
    acknowledgement reach him; a plain message from her does not."""
    register(store, "bob", "nobody")
    cli.ok(
        "send", "--to", "alice", "why?", "--type", "query", "--correlation-id", "q1", "--as", "bob"
    )
    cli.ok("send", "--to", "alice", "do it", "--type", "command", "--as", "bob")
    got = cli.ok("receive", "--as", "alice", "--json").json()["messages"]
    command = next(m for m in got if m["type"] == "command")
    cli.ok("respond", "q1", "because", "--as", "alice")
    cli.ok("ack", str(command["id"]), "--status", "completed", "--as", "alice")
    refused(cli, "send", "--to", "bob", "and another thing", "--as", "alice")
    assert [(t, c) for _, t, c in inbox(cli, "bob")] == [
        ("response", "because"),
        ("acknowledgment", "completed"),
    ]


def test_a_response_without_a_matching_query_is_no_way_around_the_rule(cli, store):
    register(store, "bob", "nobody")
    r = cli(
        "send",
        "--to",
        "bob",
        "x",
        "--type",
        "response",
        "--correlation-id",
        "nope",
        "--as",
        "alice",
    )
    assert r.exit_code == 3  # an answer needs the recipient's own query
    assert inbox(cli, "bob") == []


def test_task_create_is_refused_alike_and_leaves_the_store_unchanged(cli, store):
    register(store, "bob", "contacts")
    before = snapshot(store)
    err = refused(cli, "task", "create", "--to", "bob", "build it", "--as", "alice")
    assert err["accept"] == "contacts" and "'alice' is not one of them" in err["message"]
    assert snapshot(store) == before
    cli.ok("agent", "contacts", "bob", "add", "alice")
    task = cli.ok("task", "create", "--to", "bob", "build it", "--as", "alice", "--json").json()
    assert (task["from"], task["to"], task["state"]) == ("alice", "bob", "created")


def test_a_task_creator_that_accepts_nobody_still_hears_of_its_task(cli, store):
    """The owner's accept, progress and result travel back to the creator as answers."""
    register(store, "alice", "nobody")
    task = cli.ok("task", "create", "--to", "bob", "build it", "--as", "alice", "--json").json()
    cli.ok("task", "accept", str(task["id"]), "--as", "bob")
    cli.ok("task", "complete", str(task["id"]), "built", "--as", "bob")
    assert [(t, c) for _, t, c in inbox(cli, "alice")] == [
        ("acknowledgment", "accepted"),
        ("response", "built"),
    ]


def test_every_direct_channel_is_covered_however_it_is_named(cli, store, make_channel):
    """The implicit `_dm:` channel by its name, and a direct channel made by hand: the same
    rule as `--to`."""
    cli.ok("send", "--to", "bob", "before the rule", "--as", "alice")
    make_channel("pair", "alice", "bob", type="direct")
    register(store, "bob", "contacts")
    before = snapshot(store)
    refused(cli, "send", "_dm:alice:bob", "by name", "--as", "alice")
    refused(cli, "send", "pair", "by hand", "--as", "alice")
    assert snapshot(store) == before


def test_a_batch_with_a_refused_line_sends_nothing(cli, store, tmp_path):
    register(store, "bob", "contacts")
    batch = tmp_path / "b.jsonl"
    batch.write_text(
        '{"from": "alice", "to": "carol", "content": "fine"}\n'
        '{"from": "alice", "to": "bob", "content": "refused"}\n'
    )
    before = snapshot(store)
    r = cli("send", "--batch", str(batch), "--json")
    assert r.exit_code == 5 and r.error["code"] == "forbidden" and r.error["line"] == 2
    assert snapshot(store) == before


def test_one_refused_recipient_of_several_does_not_stop_the_others(cli, store):
    register(store, "bob", "nobody")
    r = cli("send", "--to", "carol,bob", "hi", "--as", "alice", "--json")
    assert r.exit_code == 5
    first, second = r.json()["results"]
    assert first["recipients"] == ["carol"] and second["error"]["code"] == "forbidden"
    assert inbox(cli, "carol") == [("alice", "text", "hi")]


def test_group_and_broadcast_channels_are_governed_by_membership(cli, store, make_channel):
    register(store, "bob", "nobody")
    make_channel("team", "alice", "bob")
    make_channel("news", "alice", "bob", type="broadcast")
    cli.ok("send", "team", "standup", "--as", "alice")
    cli.ok("send", "news", "release", "--as", "alice")
    assert sorted(c for _, _, c in inbox(cli, "bob")) == ["release", "standup"]


def test_acomm_itself_and_an_unregistered_recipient_are_admitted(conn):
    """acomm's own messages (dead-letter notices, a task's system messages) always pass; a
    name the directory does not hold has no rule."""
    conn.execute(
        "INSERT INTO agents (name, accept, registered_at, updated_at)"
        " VALUES ('bob', 'nobody', 0, 0)"
    )
    assert contacts.refusal(conn, SYSTEM_AGENT, "bob") is None
    assert contacts.refusal(conn, "alice", "zed") is None
    assert contacts.refusal(conn, "alice", "bob") is not None


# ---------------------------------------------------------------- agent contacts


def test_agent_contacts_lists_adds_and_removes(cli, store):
    register(store, "bob", "contacts")
    added = cli.ok("agent", "contacts", "bob", "add", "carol", "--json").json()
    assert added == {"agent": "bob", "action": "add", "contact": "carol", "changed": True}
    again = cli("agent", "contacts", "bob", "add", "carol")
    assert again.exit_code == 0 and again.stdout == ""
    assert "carol is already one of bob's contacts" in again.stderr
    cli.ok("agent", "contacts", "bob", "add", "alice")
    doc = cli.ok("agent", "contacts", "bob", "--json").json()
    assert (doc["agent"], doc["accept"], doc["team"]) == ("bob", "contacts", None)
    assert [c["contact"] for c in doc["contacts"]] == ["alice", "carol"]
    assert all(c["added_at"].endswith("Z") for c in doc["contacts"])
    assert [
        line.split("\t")[0] for line in cli.ok("agent", "contacts", "bob").stdout.splitlines()
    ] == [
        "alice",
        "carol",
    ]
    gone = cli.ok("agent", "contacts", "bob", "remove", "carol", "--json").json()
    assert gone["changed"] is True
    assert (
        cli.ok("agent", "contacts", "bob", "remove", "carol", "--json").json()["changed"] is False
    )


def test_agent_contacts_notes_a_rule_that_does_not_read_the_list(cli, store):
    register(store, "bob", "team")
    r = cli.ok("agent", "contacts", "bob")
    assert "bob's rule is accept: team" in r.stderr


@pytest.mark.parametrize(
    ("args", "status", "field"),
    [
        (("zed",), 4, "agent"),  # not registered
        (("zed", "add", "alice"), 4, "agent"),
        (("bob", "add"), 3, "contact"),  # whom?
        (("bob", "add", "bob"), 3, "contact"),  # itself
        (("bob", "add", "no spaces"), 3, "contact"),
    ],
)
def test_agent_contacts_refusals_change_nothing(cli, store, args, status, field):
    register(store, "bob", "contacts")
    before = snapshot(store)
    r = cli("agent", "contacts", *args, "--json")
    assert r.exit_code == status, r.stderr
    assert r.error["field"] == field
    assert snapshot(store) == before


def test_an_unknown_action_is_refused_naming_it(cli, store):
    register(store, "bob")
    r = cli("agent", "contacts", "bob", "invite", "alice", "--json")
    assert r.exit_code == 3
    assert (r.error["field"], r.error["value"]) == ("action", "invite")


@pytest.mark.process
def test_the_acomm_program_refuses_on_its_fast_path(store):
    """`acomm send --to` runs without Typer (cli/main.py): the rule is the engine's, so the
    fast path refuses as the Typer path does."""
    register(store, "bob", "contacts")
    p = run("send", "--to", "bob", "hi", "--as", "alice")
    assert p.returncode == 5
    assert "forbidden: 'bob' accepts direct messages and tasks from its contacts only" in p.stderr
