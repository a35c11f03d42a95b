"""The agent directory: `agent register/list/show/update/retire`, strict stores refusing names
nobody registered (with the closest registered names), open stores registering them with a
note, the acts that register a name, and retired agents receiving nothing new."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import snapshot

from acomm_cli.engine import directory, opening, sending
from acomm_cli.errors import NotFound
from acomm_cli.model import SendRequest

pytestmark = pytest.mark.cli


def _rows(store: Path, sql: str, *args: object) -> list[tuple]:
    c = sqlite3.connect(store)
    try:
        return c.execute(sql, args).fetchall()
    finally:
        c.close()


@pytest.fixture
def people(cli, store, strict) -> Path:
    """A strict store where alice, bob and carol are registered."""
    cli.ok("agent", "register", "alice", "bob", "carol")
    return store


# ---------------------------------------------------------------- the verbs


def test_register_show_update_list(cli, store, strict):
    r = cli.ok(
        "--json",
        "agent",
        "register",
        "bob",
        "--kind",
        "human",
        "--display-name",
        "Bob B.",
        "--team",
        "core",
        "--description",
        "reviews releases",
    )
    doc = r.json()
    assert (doc["name"], doc["kind"], doc["display_name"], doc["team"]) == (
        "bob",
        "human",
        "Bob B.",
        "core",
    )
    assert (doc["accept"], doc["admin"], doc["state"], doc["changed"]) == (
        "anyone",
        False,
        "active",
        True,
    )
    assert cli.ok("agent", "register", "alice").stdout == "alice\n"
    cli.ok("channel", "create", "team", "--type", "group", "--as", "alice")
    cli.ok("channel", "join", "team", "bob", "--as", "alice")
    cli.ok("send", "team", "hello", "--as", "alice")
    shown = cli.ok("--json", "agent", "show", "bob").json()
    assert shown["channels"] == [{"channel": "team", "type": "group", "role": "member"}]
    assert (shown["unread"], shown["node"], shown["last_seen_at"]) == (1, None, None)
    updated = cli.ok(
        "--json", "agent", "update", "bob", "--accept", "contacts", "--admin", "--team", ""
    ).json()
    assert (updated["accept"], updated["admin"], updated["team"]) == ("contacts", True, None)
    assert updated["kind"] == "human"  # what was not given is kept
    listed = cli.ok("--json", "agent", "list").json()["agents"]
    assert [a["name"] for a in listed] == ["alice", "bob"]
    humans = cli.ok("--json", "agent", "list", "--kind", "human").json()["agents"]
    assert [a["name"] for a in humans] == ["bob"]
    plain = cli.ok("agent", "list").stdout.splitlines()
    assert plain[1].split("\t")[:2] == ["bob", "human"]


def test_register_twice_is_duplicate_unless_update(cli, store, strict):
    cli.ok("agent", "register", "bob", "--kind", "human")
    before = snapshot(store)
    r = cli("--json", "agent", "register", "bob")
    assert r.exit_code == 5 and r.error["code"] == "duplicate" and r.error["value"] == "bob"
    assert snapshot(store) == before
    doc = cli.ok("--json", "agent", "register", "bob", "--update", "--team", "ops").json()
    assert (doc["changed"], doc["team"], doc["kind"]) == (False, "ops", "human")
    # several names: all or none
    r = cli("agent", "register", "dora", "bob")
    assert r.exit_code == 5
    assert _rows(store, "SELECT name FROM agents WHERE name = 'dora'") == []


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("agent", "register", "bob", "--kind", "robot"), "kind"),
        (("agent", "update", "bob", "--accept", "friends"), "accept"),
        (("agent", "update", "bob", "--kind", "Human"), "kind"),
        (("agent", "register", "--", "-bob"), "agent"),
        (("agent", "register", "a..b"), "agent"),
        (("agent", "register", "acomm"), "agent"),
        (("agent", "register", "eve", "--team", "a b"), "team"),
        (("agent", "register", "eve", "--display-name", "x" * 129), "display_name"),
        (("agent", "list", "--kind", "robot"), "kind"),
        (("agent", "list", "--active", "soon"), "active"),
    ],
    ids=lambda v: v if isinstance(v, str) else " ".join(v)[:40],
)
def test_bad_values_are_exit_3_naming_the_field(cli, store, strict, args, field):
    cli.ok("agent", "register", "bob")
    before = snapshot(store)
    r = cli("--json", *args)
    assert r.exit_code == 3 and r.error["field"] == field, r.stderr
    assert snapshot(store) == before


def test_show_or_update_of_an_unknown_name_suggests(cli, people):
    for verb in ("show", "update", "retire"):
        r = cli("--json", "agent", verb, "bbo")
        assert r.exit_code == 4 and r.error["suggestions"] == ["bob"], verb
        assert "did you mean 'bob'?" in r.error["message"]


# ---------------------------------------------------------------- strict


def test_a_misspelt_recipient_is_refused_with_a_suggestion(cli, people):
    before = snapshot(people)
    r = cli("send", "--to", "bbo", "hi", "--as", "alice")
    assert r.exit_code == 4
    assert r.stderr == (
        "acomm: error: not_found: to: no agent 'bbo' in the directory; did you mean 'bob'? "
        "(`acomm agent register bbo` adds it)\n"
    )
    # one unknown name among several: nothing is sent to the others either
    r = cli("--json", "send", "--to", "carol,bbo", "hi", "--as", "alice")
    assert r.exit_code == 4 and (r.error["field"], r.error["value"]) == ("to", "bbo")
    assert snapshot(people) == before
    assert cli("send", "--to", "bob", "hi", "--as", "alice").exit_code == 0


@pytest.mark.parametrize(
    "args",
    [
        ("send", "--to", "bob", "hi", "--as", "alcie"),
        ("send", "team", "hi", "--as", "alcie"),
        ("receive", "--as", "alcie"),
        ("receive", "--as", "alcie", "--peek"),
        ("receive", "--as", "alcie", "--ack", "completed"),
        ("ack", "1", "--as", "alcie"),
        ("nack", "1", "--as", "alcie"),
        ("extend", "1", "--by", "30s", "--as", "alcie"),
        ("respond", "corr-1", "yes", "--as", "alcie"),
        ("task", "create", "--to", "bob", "do it", "--as", "alcie"),
        ("task", "accept", "1", "--as", "alcie"),
        ("task", "complete", "1", "--as", "alcie"),
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_an_unknown_actor_is_refused_with_a_suggestion(cli, people, args):
    cli.ok("channel", "create", "team", "--type", "group", "--as", "alice")
    before = snapshot(people)
    r = cli("--json", *args)
    assert r.exit_code == 4, r.stderr
    assert (r.error["code"], r.error["field"], r.error["value"]) == ("not_found", "as", "alcie")
    assert r.error["suggestions"] == ["alice"]
    assert snapshot(people) == before


def test_task_create_to_an_unknown_owner_is_refused(cli, people):
    r = cli("--json", "task", "create", "--to", "bbo", "do it", "--as", "alice")
    assert r.exit_code == 4 and (r.error["field"], r.error["suggestions"]) == ("to", ["bob"])


def test_the_acts_that_name_an_agent_register_it(cli, store, strict):
    cli.ok("channel", "create", "team", "--type", "group", "--as", "owner")
    cli.ok("channel", "join", "team", "member", "--as", "owner")
    cli.ok("channel", "create", "ci", "--type", "pubsub", "--as", "owner")
    cli.ok("subscribe", "ci", "build.#", "--as", "watcher")
    names = [a["name"] for a in cli.ok("--json", "agent", "list").json()["agents"]]
    assert names == ["member", "owner", "watcher"]
    assert cli("send", "team", "hi", "--as", "member").exit_code == 0


def test_the_system_sender_and_the_queue_are_never_refused(cli, store, strict):
    cli.ok("channel", "create", "jobs", "--type", "queue", "--as", "boss")
    cli.ok("channel", "join", "jobs", "worker", "--as", "boss")
    cli.ok("send", "jobs", "job 1", "--as", "boss")  # one delivery, to `*`
    got = cli.ok("--json", "receive", "--as", "worker").json()["messages"]
    assert [m["content"] for m in got] == ["job 1"]
    assert _rows(store, "SELECT name FROM agents WHERE name IN ('acomm', '*')") == []


def test_init_writes_strict_and_config_set_switches(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("ACOMM_IDENTITY_DIRECTORY")
    store = tmp_path / "p" / ".acomm" / "store.acomm"
    monkeypatch.setenv("ACOMM_STORE", str(store))
    cli.ok("init")
    assert _rows(
        store, "SELECT value FROM store_meta WHERE key = 'identity.directory_default'"
    ) == [("strict",)]
    assert cli("send", "--to", "bob", "x", "--as", "alice").exit_code == 4
    r = cli.ok("config", "set", "identity.directory", "open")
    assert r.stdout == "identity.directory: open\n"
    assert "# acomm configuration." in (store.parent / "config.yaml").read_text()  # kept
    assert cli.ok("send", "--to", "bob", "x", "--as", "alice").exit_code == 0
    cli.ok("config", "set", "identity.directory", "strict")
    assert cli("send", "--to", "carol", "x", "--as", "alice").exit_code == 4
    bad = cli("--json", "config", "set", "identity.directory", "loose")
    assert bad.exit_code == 3 and bad.error["field"] == "identity.directory"
    unknown = cli("--json", "config", "set", "identity.directorie", "open")
    assert unknown.exit_code == 3 and unknown.error["field"] == "key"


def test_a_store_that_predates_the_directory_stays_open(cli, store, monkeypatch):
    monkeypatch.delenv("ACOMM_IDENTITY_DIRECTORY")
    c = sqlite3.connect(store)
    with c:  # what the migration writes on an older store
        c.execute("UPDATE store_meta SET value = 'open' WHERE key = 'identity.directory_default'")
    c.close()
    r = cli("send", "--to", "bob", "hi", "--as", "alice")
    assert r.exit_code == 0
    monkeypatch.setenv("ACOMM_IDENTITY_DIRECTORY", "strict")  # the configured mode wins
    assert cli("send", "--to", "carol", "hi", "--as", "alice").exit_code == 4


# ---------------------------------------------------------------- open


def test_open_registers_the_name_with_a_note_outside_the_json(cli, people, monkeypatch):
    monkeypatch.setenv("ACOMM_IDENTITY_DIRECTORY", "open")
    r = cli("--json", "send", "--to", "bbo", "hi", "--as", "alice")
    assert r.exit_code == 0
    assert r.json()["results"][0]["recipients"] == ["bbo"]  # stdout: the JSON alone
    assert r.stderr == (
        "acomm: note: to: 'bbo' was not in the directory; registered it (kind agent); "
        "did you mean 'bob'?\n"
    )
    assert cli.ok("--json", "agent", "show", "bbo").json()["kind"] == "agent"
    again = cli("send", "--to", "bbo", "hi", "--as", "alice")
    assert again.exit_code == 0 and again.stderr == ""
    assert cli("-q", "send", "--to", "zed", "hi", "--as", "alice").stderr == ""


# ---------------------------------------------------------------- retired


def test_a_retired_agent_receives_nothing_new_and_keeps_its_history(cli, people):
    cli.ok("channel", "create", "team", "--type", "group", "--as", "alice")
    cli.ok("channel", "join", "team", "bob", "--as", "alice")
    cli.ok("channel", "join", "team", "carol", "--as", "alice")
    cli.ok("channel", "create", "news", "--type", "broadcast", "--as", "alice")
    cli.ok("channel", "join", "news", "bob", "--as", "alice")
    cli.ok("channel", "join", "news", "carol", "--as", "alice")
    cli.ok("send", "--to", "bob", "before", "--as", "alice")
    doc = cli.ok("--json", "agent", "retire", "bob").json()
    assert (doc["state"], doc["changed"]) == ("retired", True)
    again = cli("--json", "agent", "retire", "bob")
    assert again.exit_code == 0 and again.json()["changed"] is False
    before = snapshot(people)
    r = cli("--json", "send", "--to", "bob", "after", "--as", "alice")
    assert r.exit_code == 5 and r.error["reason"] == "retired" and "retired" in r.error["message"]
    # the direct channel by its name, alone or in a batch, is the same message
    r = cli("--json", "send", "_dm:alice:bob", "after", "--as", "alice")
    assert r.exit_code == 5 and r.error["reason"] == "retired"
    line = '{"channel": "_dm:alice:bob", "from": "alice", "content": "after"}\n'
    r = cli("--json", "send", "--batch", "-", input=line)
    assert r.exit_code != 0 and "retired" in r.stdout + r.stderr
    assert snapshot(people) == before
    for ch in ("team", "news"):
        sent = cli.ok("--json", "send", ch, "to all", "--as", "alice").json()
        assert sent["recipients"] == ["carol"]  # bob skipped: no delivery row
    assert _rows(people, "SELECT count(*) FROM deliveries WHERE recipient = 'bob'") == [(1,)]
    got = cli.ok("--json", "receive", "--as", "bob").json()["messages"]
    assert [m["content"] for m in got] == ["before"]  # its history stays
    assert [a["name"] for a in cli.ok("--json", "agent", "list").json()["agents"]] == [
        "alice",
        "carol",
    ]
    everyone = cli.ok("--json", "agent", "list", "--all").json()["agents"]
    assert [(a["name"], a["state"]) for a in everyone][1] == ("bob", "retired")
    r = cli("--json", "send", "--to", "bobb", "x", "--as", "alice")  # no retired suggestion
    assert r.exit_code == 4 and r.error["suggestions"] == []


# ---------------------------------------------------------------- federation


def test_an_agent_another_node_owns_counts_as_known(cli, tmp_path, monkeypatch):
    from test_federation_routing import linked_pair

    a, b = linked_pair(cli, tmp_path)  # nb owns bob (registered there by its `agent own`)
    monkeypatch.delenv("ACOMM_IDENTITY_DIRECTORY")
    for node in (a, b):
        c = sqlite3.connect(node.path)
        with c:
            c.execute(
                "UPDATE store_meta SET value = 'strict' WHERE key = 'identity.directory_default'"
            )
        c.close()
    a.ok("agent", "register", "alice")
    sent = a.ok("send", "--to", "bob", "hi", "--as", "alice")
    assert sent["results"][0]["status"] == "emitted"
    assert a.sql("SELECT name FROM agents WHERE name = 'bob'") == []  # not registered on na
    r = a("send", "--to", "bbo", "hi", "--as", "alice")
    assert r.exit_code == 4
    assert b.ok("agent", "show", "bob")["node"] == "nb"
    r = b("agent", "own", "dave")  # `agent own` of a name nobody registered
    assert r.exit_code == 4 and r.error["field"] == "agent"
    r = b("token", "create", "--agent", "dave")
    assert r.exit_code == 4 and r.error["field"] == "agent"


# ---------------------------------------------------------------- the cost


def _statements(path: Path, mode: str) -> int:
    conn = opening.connect(path, create=False, directory=mode)
    try:
        req = SendRequest(sender="alice", content="hi")
        sending.send_direct(conn, req, ["bob"], 1_800_000_000_000)  # the channel exists now
        seen: list[str] = []
        conn.set_trace_callback(seen.append)
        sending.send_direct(conn, req, ["bob"], 1_800_000_000_001)
        conn.set_trace_callback(None)
        return len(seen)
    finally:
        conn.close()


def test_the_strict_check_costs_a_send_nothing_more_than_open(cli, people, tmp_path):
    other = tmp_path / "open.acomm"
    other.write_bytes(people.read_bytes())
    assert _statements(people, "strict") == _statements(other, "open")


def test_known_is_one_lookup_and_refuses_in_strict(store):
    conn = opening.connect(store, create=False, directory="strict")
    try:
        directory.set_default(conn, "strict")
        seen: list[str] = []
        conn.set_trace_callback(seen.append)
        with pytest.raises(NotFound) as exc:
            directory.known(conn, "nobody", "as", 1)
        conn.set_trace_callback(None)
        assert exc.value.field == "as"
        directory.register(conn, "nobody", 1)
        seen.clear()
        conn.set_trace_callback(seen.append)
        directory.known(conn, "nobody", "as", 2)
        conn.set_trace_callback(None)
        assert len(seen) == 1 and "FROM agents WHERE name" in seen[0]
    finally:
        conn.close()
