"""Channel administration: who may change a channel (the owner, or an admin the owner
made), `channel admin`, `channel update` and `channel delete`, through the command line on
real stores. Every refusal: its exit status and code, a message naming the agent and the
channel, and the store unchanged."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import assert_invariants, query, rewind_migrations, run, snapshot
from freezegun import freeze_time

from acomm_cli.store.migrations import MIGRATIONS

pytestmark = pytest.mark.cli

T0 = "2026-01-01 00:00:00"
T0_MS = 1_767_225_600_000


@pytest.fixture
def crew(make_channel):
    """alice's `team` (at-least-once, so deliveries stay in flight until acked) with bob and
    carol as members; returns the store's path."""
    return make_channel("team", "alice", "bob", "carol", delivery="at-least-once")


def _refused(cli, store, args, status, code):
    before = snapshot(store)
    r = cli(*args)
    assert r.exit_code == status, (args, r.stdout, r.stderr)
    assert f": {code}:" in r.stderr or code in r.stderr, r.stderr
    assert snapshot(store) == before, "a refused command changed the store"
    return r


# ---------------------------------------------------------------- who may (bullet 1)

ADMIN_COMMANDS = [
    ("channel", "join", "team", "dave"),
    ("channel", "leave", "team", "carol"),
    ("channel", "pause", "team"),
    ("channel", "resume", "team"),
    ("channel", "drain", "team"),
    ("channel", "close", "team"),
    ("channel", "admin", "team", "carol"),
    ("channel", "update", "team", "--max-retries", "5"),
    ("channel", "delete", "team", "--force"),
]


@pytest.mark.parametrize("args", ADMIN_COMMANDS, ids=lambda a: a[1])
def test_administering_a_channel_needs_as(cli, crew, args):
    r = _refused(cli, crew, args, 2, "usage")
    assert "--as" in r.stderr


@pytest.mark.parametrize("actor", ["bob", "mallory"])  # a member, and an outsider
@pytest.mark.parametrize("args", ADMIN_COMMANDS, ids=lambda a: a[1])
def test_only_the_owner_or_an_admin_may_change_a_channel(cli, crew, args, actor):
    r = _refused(cli, crew, (*args, "--as", actor, "--json"), 5, "forbidden")
    err = r.error
    assert (err["code"], err["field"], err["value"], err["channel"], err["owner"]) == (
        "forbidden",
        "as",
        actor,
        "team",
        "alice",
    )
    assert f"'{actor}'" in err["message"] and "'team'" in err["message"]


def test_the_creator_owns_the_channel_and_may_do_all_of_it(cli, crew):
    for verb in ("pause", "resume", "drain", "resume"):
        cli.ok("channel", verb, "team", "--as", "alice")
    cli.ok("channel", "join", "team", "dave", "--as", "alice")
    cli.ok("channel", "leave", "team", "dave", "--as", "alice")
    cli.ok("channel", "update", "team", "--max-retries", "5", "--as", "alice")
    cli.ok("channel", "close", "team", "--as", "alice")
    doc = cli.ok("channel", "show", "team", "--json").json()
    assert (doc["owner"], doc["state"], doc["config"]["max_retries"]) == ("alice", "closed", 5)


@pytest.mark.process
def test_the_acting_agent_may_come_from_acomm_agent(crew):
    assert run("channel", "pause", "team", env={"ACOMM_AGENT": "bob"}).returncode == 5
    r = run("channel", "pause", "team", env={"ACOMM_AGENT": "alice"})
    assert r.returncode == 0, r.stderr
    assert query(crew, "SELECT state FROM channels WHERE name = 'team'") == [("paused",)]


def test_any_agent_may_leave_by_itself(cli, crew):
    r = cli.ok("channel", "leave", "team", "carol", "--as", "carol", "--json")
    assert r.json()["changed"] is True
    assert [p["agent"] for p in r.json()["participants"]] == ["alice", "bob"]


def test_the_owner_cannot_leave_even_when_an_admin_asks(cli, crew):
    cli.ok("channel", "admin", "team", "bob", "--as", "alice")
    _refused(cli, crew, ("channel", "leave", "team", "alice", "--as", "bob"), 5, "invalid_state")


def test_an_admin_may_do_what_the_owner_does_but_delete_and_make_admins(cli, crew):
    r = cli.ok("channel", "admin", "team", "bob", "--as", "alice", "--json")
    assert r.json()["changed"] is True
    assert {p["agent"]: p["admin"] for p in r.json()["participants"]} == {
        "alice": False,
        "bob": True,
        "carol": False,
    }
    assert "bob (member, admin)" in cli.ok("channel", "show", "team").stdout
    for args in (
        ("pause",),
        ("resume",),
        ("join", "team", "dave"),
        ("leave", "team", "dave"),
        ("update", "team", "--ack-timeout", "1m"),
    ):
        full = ("channel", args[0], *(args[1:] or ("team",)), "--as", "bob")
        cli.ok(*full)
    for args in (("channel", "delete", "team"), ("channel", "admin", "team", "carol")):
        r = _refused(cli, crew, (*args, "--as", "bob", "--json"), 5, "forbidden")
        assert "only its owner 'alice' may" in r.error["message"]


def test_only_the_owner_removes_an_admin(cli, crew):
    cli.ok("channel", "admin", "team", "bob", "--as", "alice")
    cli.ok("channel", "admin", "team", "carol", "--as", "alice")
    r = _refused(
        cli, crew, ("channel", "leave", "team", "carol", "--as", "bob", "--json"), 5, "forbidden"
    )
    assert "'bob' may not remove 'carol' from channel 'team'" in r.error["message"]
    cli.ok("channel", "leave", "team", "carol", "--as", "alice")


def test_revoking_and_leaving_end_the_grant(cli, crew):
    cli.ok("channel", "admin", "team", "bob", "--as", "alice")
    cli.ok("channel", "pause", "team", "--as", "bob")
    r = cli.ok("channel", "admin", "team", "bob", "--revoke", "--as", "alice")
    assert r.stdout == "team\tbob\tmember\n"
    _refused(cli, crew, ("channel", "resume", "team", "--as", "bob"), 5, "forbidden")
    cli.ok("channel", "admin", "team", "carol", "--as", "alice")
    cli.ok("channel", "leave", "team", "carol", "--as", "carol")
    cli.ok("channel", "join", "team", "carol", "--as", "alice")
    _refused(cli, crew, ("channel", "resume", "team", "--as", "carol"), 5, "forbidden")


def test_granting_twice_or_revoking_a_non_admin_changes_nothing(cli, crew):
    cli.ok("channel", "admin", "team", "bob", "--as", "alice")
    r = cli.ok("channel", "admin", "team", "bob", "--as", "alice")
    assert "already an admin" in r.stderr
    assert (
        cli.ok("channel", "admin", "team", "carol", "--revoke", "--as", "alice", "--json").json()[
            "changed"
        ]
        is False
    )


@pytest.mark.parametrize(
    "agent, status, code",
    [
        ("zed", 5, "not_participant"),  # not in the channel: join it first
        ("alice", 5, "invalid_state"),  # the owner is more than an admin already
        ("z..z", 3, "validation_failed"),
    ],
)
def test_admin_refuses_who_cannot_be_made_one(cli, crew, agent, status, code):
    r = _refused(
        cli, crew, ("channel", "admin", "team", agent, "--as", "alice", "--json"), status, code
    )
    assert r.error["code"] == code and r.error["field"] == "agent"
    assert agent in r.error["message"]


def test_system_channel_stays_acomms(cli, store):
    for args in (
        ("pause", "_system"),
        ("update", "_system", "--max-retries", "1"),
        ("delete", "_system"),
    ):
        r = _refused(cli, store, ("channel", *args, "--as", "acomm", "--json"), 5, "forbidden")
        assert "_system" in r.error["message"]


def test_an_older_store_keeps_its_owners_and_has_no_admins(cli, crew):
    """A store from before m013: the creator recorded since m001 is the owner."""
    c = sqlite3.connect(crew)
    c.execute("ALTER TABLE participants DROP COLUMN admin")
    rewind_migrations(c, "m013_channel_admins")
    c.commit()
    c.close()
    r = cli("channel", "pause", "team", "--as", "bob", "--json")  # upgrades, then refuses
    assert (r.exit_code, r.error["code"]) == (5, "forbidden")
    assert query(crew, "PRAGMA user_version") == [(len(MIGRATIONS),)]
    assert query(
        crew,
        "SELECT agent, admin FROM participants p JOIN channels c ON"
        " c.id = p.channel_id WHERE c.name = 'team' ORDER BY agent",
    ) == [("alice", 0), ("bob", 0), ("carol", 0)]
    cli.ok("channel", "pause", "team", "--as", "alice")


# ---------------------------------------------------------------- update (bullet 2)


def test_update_applies_to_new_deliveries_and_says_so(cli, crew):
    with freeze_time(T0):
        old = cli.ok("send", "team", "before", "--as", "alice")
        r = cli.ok(
            "channel",
            "update",
            "team",
            "--ack-timeout",
            "2m",
            "--max-retries",
            "7",
            "--as",
            "alice",
            "--json",
        )
        doc = r.json()
        assert doc["changed"] is True
        assert doc["changes"] == {
            "ack_timeout_ms": {"from": 30000, "to": 120000},
            "max_retries": {"from": 3, "to": 7},
        }
        assert doc["in_flight"] == 2  # bob's and carol's copies of "before"
        assert "from now on" in doc["applies_to"]
        assert doc["config"]["ack_timeout_ms"] == 120000
        new = cli.ok("send", "team", "after", "--as", "alice")
    deadlines = dict(
        query(crew, "SELECT message_id, next_timer_at FROM deliveries WHERE recipient = 'bob'")
    )
    assert deadlines[int(old.stdout)] == T0_MS + 30_000  # in flight: kept its deadline
    assert deadlines[int(new.stdout)] == T0_MS + 120_000  # new: the new ack timeout
    shown = cli.ok("channel", "show", "team", "--json").json()["config"]
    assert (shown["ack_timeout_ms"], shown["max_retries"]) == (120000, 7)


def test_update_prints_each_change_and_the_note(cli, crew):
    r = cli.ok("channel", "update", "team", "--max-pending", "10", "--echo", "--as", "alice")
    assert r.stdout == "team\techo\tFalse\tTrue\nteam\tmax_pending\t0\t10\n"
    assert "apply to messages sent and deliveries made from now on" in r.stderr


def test_update_to_the_same_settings_changes_nothing(cli, crew):
    before = snapshot(crew)
    r = cli.ok("channel", "update", "team", "--max-retries", "3", "--as", "alice", "--json")
    assert (r.json()["changed"], r.json()["changes"]) == (False, {})
    assert snapshot(crew) == before


@pytest.mark.parametrize("limit", ["0", "5"])  # 0: no limit at all
def test_a_larger_max_pending_lets_queued_deliveries_through(cli, make_channel, limit):
    make_channel("slow", "alice", "bob", max_pending=1)
    cli.ok("send", "slow", "one", "--as", "alice")
    cli.ok("send", "slow", "two", "--as", "alice")
    assert query(
        make_channel("x", "alice"),
        "SELECT d.state FROM deliveries d JOIN channels c"
        " ON c.id = d.channel_id WHERE c.name = 'slow' ORDER BY message_id",
    ) == [("unread",), ("queued",)]
    r = cli.ok("channel", "update", "slow", "--max-pending", limit, "--as", "alice", "--json")
    assert r.json()["released"] == 1
    got = cli.ok("receive", "--as", "bob", "--json").json()["messages"]
    assert [m["content"] for m in got] == ["one", "two"]


@pytest.mark.parametrize(
    "args, status, field",
    [
        ((), 2, "settings"),  # nothing to change
        (("--retry-jitter", "2"), 3, "retry_jitter"),
        (("--ack-timeout", "0s"), 3, "ack_timeout"),
        (("--lease", "soon"), 3, "lease"),
        (("--max-message-size", "-1"), 3, "max_message_size"),
    ],
)
def test_update_refuses_bad_settings(cli, crew, args, status, field):
    r = _refused(
        cli, crew, ("channel", "update", "team", *args, "--as", "alice", "--json"), status, ""
    )
    assert r.error["field"] == field


def test_update_cannot_make_an_exactly_once_channel_retry_failures(cli, make_channel):
    store = make_channel("once", "alice", "bob", delivery="exactly-once")
    r = _refused(
        cli,
        store,
        ("channel", "update", "once", "--retry-failed", "--as", "alice", "--json"),
        3,
        "validation_failed",
    )
    assert r.error["field"] == "retry_failed"


def test_update_and_delete_leave_acomms_direct_channels_alone(cli, store):
    cli.ok("send", "--to", "bob", "hi", "--as", "alice")
    [dm] = [
        c["name"]
        for c in cli.ok("channel", "list", "--json").json()["channels"]
        if c["type"] == "direct"
    ]
    for args in (("update", dm, "--max-retries", "1"), ("delete", dm, "--force")):
        r = _refused(cli, store, ("channel", *args, "--as", "alice", "--json"), 5, "forbidden")
        assert dm in r.error["message"]


# ---------------------------------------------------------------- delete (bullet 2)


def test_delete_refuses_while_deliveries_are_in_flight(cli, crew):
    cli.ok("send", "team", "one", "--as", "alice")
    cli.ok("send", "team", "two", "--as", "alice")
    cli.ok("receive", "--as", "bob")  # read, not acked: still in flight
    r = _refused(
        cli, crew, ("channel", "delete", "team", "--as", "alice", "--json"), 5, "invalid_state"
    )
    assert (r.error["field"], r.error["value"], r.error["in_flight"]) == ("channel", "team", 4)
    assert "4 deliveries in flight" in r.error["message"] and "--force" in r.error["message"]


def test_delete_force_dead_letters_what_is_in_flight(cli, crew):
    ids = [int(cli.ok("send", "team", f"m{i}", "--as", "alice").stdout) for i in range(3)]
    [first] = [
        m["id"]
        for m in cli.ok("receive", "--as", "bob", "--limit", "1", "--json").json()["messages"]
    ]
    # done: not in flight, not dead-lettered; alice's copy of the ack is unread: in flight
    ack = cli.ok("ack", str(first), "--as", "bob", "--status", "completed", "--json").json()
    r = cli.ok("channel", "delete", "team", "--force", "--as", "alice", "--json")
    doc = r.json()
    kept = doc["kept_as"]
    assert doc == {
        "id": doc["id"],
        "name": "team",
        "deleted": True,
        "kept_as": f"_deleted:{doc['id']}:team",
        "dead_lettered": 6,
    }
    dead = cli.ok("deadletter", "list", "--reason", "channel_deleted", "--json").json()
    assert sorted((d["message_id"], d["recipient"]) for d in dead["dead_letters"]) == sorted(
        [(i, "bob") for i in ids if i != first]
        + [(i, "carol") for i in ids]
        + [(ack["ack_message_id"], "alice")]
    )
    assert {d["channel"] for d in dead["dead_letters"]} == {kept}
    assert all(d["last_error"] == "team deleted by alice" for d in dead["dead_letters"])
    assert_invariants(crew, set(ids))  # nothing accepted is lost
    # the history stays, under the kept name; the name itself is free again
    history = cli.ok("messages", "--channel", kept, "--json").json()["messages"]
    assert sorted(m["id"] for m in history) == [*ids, ack["ack_message_id"]]
    assert "team" not in [c["name"] for c in cli.ok("channel", "list", "--json").json()["channels"]]
    assert cli("send", "team", "hi", "--as", "alice").exit_code == 4
    assert cli("channel", "delete", "team", "--as", "alice").exit_code == 4
    cli.ok("channel", "create", "team", "--as", "zed")
    assert cli.ok("channel", "show", "team", "--json").json()["owner"] == "zed"
    # a channel_deleted dead letter cannot come back: its channel is closed for good
    r = cli("deadletter", "replay", str(ids[1]), "--recipient", "carol", "--json")
    assert r.exit_code == 5, r.stderr


def test_delete_without_deliveries_in_flight_needs_no_force(cli, crew):
    r = cli.ok("channel", "delete", "team", "--as", "alice")
    assert r.stdout.startswith("team\tdeleted\t_deleted:")
    assert query(crew, "SELECT count(*) FROM dead_letters") == [(0,)]


def test_delete_force_on_a_queue_dead_letters_unclaimed_jobs(cli, make_channel):
    store = make_channel("jobs", "boss", "w1", type="queue", delivery="at-least-once")
    cli.ok("send", "jobs", "a", "--as", "boss")
    cli.ok("send", "jobs", "b", "--as", "boss")
    cli.ok("receive", "jobs", "--as", "w1", "--limit", "1")  # claimed, not acked
    r = cli.ok("channel", "delete", "jobs", "--force", "--as", "boss", "--json")
    assert r.json()["dead_lettered"] == 2
    assert sorted(query(store, "SELECT recipient, reason FROM dead_letters")) == [
        ("*", "channel_deleted"),
        ("w1", "channel_deleted"),
    ]
    assert_invariants(store)
