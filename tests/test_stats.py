"""`acomm stats`: per-agent and per-channel counts that agree with `receive`."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from unittest.mock import ANY

import every_state
import pytest
from freezegun import freeze_time

from acomm_cli import clock
from acomm_cli.engine import opening, operations

pytestmark = pytest.mark.cli


@pytest.fixture
def busy(cli, store):
    """The every-state store, with the clock left at every_state.NOW."""
    with freeze_time(every_state.T0) as frozen:
        ids = every_state.build(cli, frozen)
        yield ids, frozen


def _by(doc: dict, key: str, name: str) -> dict:
    return {row[key]: row for row in doc}[name]


def test_every_number_of_a_store_with_every_state(cli, busy):
    doc = cli.ok("stats", "--json").json()
    assert [a["agent"] for a in doc["agents"]] == ["bob", "executor", "planner"]
    # executor: work (acked, read awaiting ack, unread, recent acked), held (unread, queued),
    # once (acked), doom (3 dead, one dead letter discarded)
    assert _by(doc["agents"], "agent", "executor") == {
        "agent": "executor",
        "total": 10,
        "unread": 2,
        "awaiting_ack": 3,
        "oldest_unread_age_sec": 600,
        "dead_letters": 2,
        "in_progress": 0,
        "lease_expired": 0,
        "last_seen_at": ANY,  # presence: tests/test_presence.py
    }
    # bob: chat (2 read, 1 unread, 1 waiting) and one unread on the closed channel `shut`,
    # which receive does not hand over, so it is not counted as unread
    assert _by(doc["agents"], "agent", "bob") == {
        "agent": "bob",
        "total": 5,
        "unread": 1,
        "awaiting_ack": 0,
        "oldest_unread_age_sec": 600,
        "dead_letters": 0,
        "in_progress": 0,
        "lease_expired": 0,
        "last_seen_at": ANY,  # presence: tests/test_presence.py
    }
    # planner: the three acknowledgment messages routed back to it
    assert _by(doc["agents"], "agent", "planner")["unread"] == 3
    channels = {
        c["channel"]: (c["pending"], c["queued"], c["dead_letters"]) for c in doc["channels"]
    }
    assert channels == {
        "_system": (0, 0, 0),
        "chat": (1, 0, 0),
        "doom": (0, 0, 2),
        "held": (1, 1, 0),
        "news": (0, 0, 0),
        "once": (1, 0, 0),
        "shut": (1, 0, 0),
        "work": (4, 0, 0),
    }
    st = doc["store"]
    assert set(st) == {"path", "bytes", "wal_bytes", "messages"}
    assert st["messages"] == 22 and st["bytes"] > 0 and st["wal_bytes"] >= 0


def test_unread_agrees_with_receive_for_every_agent(cli, busy):
    doc = cli.ok("stats", "--json").json()
    for a in doc["agents"]:
        got = cli.ok("receive", "--as", a["agent"], "--peek", "--json").json()
        assert a["unread"] == got["total_count"], a["agent"]


def test_unread_agrees_with_receive_when_timers_are_due_and_stats_writes_nothing(cli, store):
    from conftest import snapshot

    with freeze_time(every_state.T0) as frozen:
        cli.ok(
            "channel",
            "create",
            "w",
            "--as",
            "p",
            "--delivery",
            "at-least-once",
            "--ack-timeout",
            "10s",
        )
        cli.ok("channel", "join", "w", "--as", "p", "e")
        cli.ok("send", "w", "retry me", "--as", "p")
        cli.ok("send", "w", "later", "--as", "p", "--delay", "5s")
        cli.ok("receive", "--as", "e")  # reads the first; the second is waiting
        frozen.tick(timedelta(seconds=12))  # the delay is over; the ack deadline too
        before = snapshot(store)
        doc = cli.ok("stats", "--as", "e", "--json").json()
        assert snapshot(store) == before  # the timers were applied and rolled back
        # receive would redeliver after the back-off (11 s) and deliver the delayed one
        got = cli.ok("receive", "--as", "e", "--peek", "--json").json()
        assert doc["agents"][0]["unread"] == got["total_count"] == 2


def test_unread_follows_receive_and_ack(cli, busy):
    ids, frozen = busy
    cli.ok("receive", "--as", "bob")
    bob = cli.ok("stats", "--as", "bob", "--json").json()["agents"]
    assert bob == [
        {
            "agent": "bob",
            "total": 5,
            "unread": 0,
            "awaiting_ack": 0,
            "oldest_unread_age_sec": 0,
            "dead_letters": 0,
            "in_progress": 0,
            "lease_expired": 0,
            "last_seen_at": ANY,  # presence: tests/test_presence.py
        }
    ]
    cli.ok("receive", "--as", "executor", "work")
    for mid in (ids.read_tracked, ids.unread_tracked):
        cli.ok("ack", mid, "--as", "executor")
    ex = cli.ok("stats", "--as", "executor", "--json").json()
    assert ex["agents"][0]["unread"] == 1  # held_unread is left
    assert ex["agents"][0]["awaiting_ack"] == 1
    # held_unread is still unacknowledged, so `queued` stays queued
    assert _by(ex["channels"], "channel", "held")["queued"] == 1


def test_oldest_unread_age_moves_with_the_clock(cli, store):
    with freeze_time(every_state.T0) as frozen:
        cli.ok("channel", "create", "chat", "--as", "alice")
        cli.ok("channel", "join", "chat", "--as", "alice", "bob")
        cli.ok("send", "chat", "first", "--as", "alice")
        frozen.tick(timedelta(seconds=30))
        cli.ok("send", "chat", "second", "--as", "alice")
        frozen.tick(timedelta(seconds=60.9))
        bob = cli.ok("stats", "--as", "bob", "--json").json()["agents"][0]
        assert bob["unread"] == 2 and bob["oldest_unread_age_sec"] == 90
        cli.ok("receive", "--as", "bob", "--limit", "1")
        bob = cli.ok("stats", "--as", "bob", "--json").json()["agents"][0]
        assert bob["unread"] == 1 and bob["oldest_unread_age_sec"] == 60


def test_as_shows_one_agent_and_its_channels(cli, busy):
    doc = cli.ok("stats", "--as", "executor", "--json").json()
    assert [a["agent"] for a in doc["agents"]] == ["executor"]
    assert [c["channel"] for c in doc["channels"]] == ["doom", "held", "once", "work"]
    full = cli.ok("stats", "--json").json()
    assert doc["agents"][0] == _by(full["agents"], "agent", "executor")
    for c in doc["channels"]:  # whole-channel counts, the same as without --as
        assert c == _by(full["channels"], "channel", c["channel"])


def test_as_an_agent_with_nothing_is_a_row_of_zeros(cli, busy):
    doc = cli.ok("stats", "--as", "nobody", "--json").json()
    assert doc["agents"] == [
        {
            "agent": "nobody",
            "total": 0,
            "unread": 0,
            "awaiting_ack": 0,
            "oldest_unread_age_sec": 0,
            "dead_letters": 0,
            "in_progress": 0,
            "lease_expired": 0,
            "last_seen_at": None,
        }
    ]
    assert doc["channels"] == []


def test_a_bad_agent_id_is_refused(cli, store):
    r = cli("stats", "--as", "-bad", "--json")
    assert r.exit_code == 3 and r.error["field"] == "as"


def test_an_empty_store(cli, store):
    doc = cli.ok("stats", "--json").json()
    assert doc["agents"] == []
    assert doc["channels"] == [
        {
            "channel": "_system",
            "pending": 0,
            "queued": 0,
            "dead_letters": 0,
            "in_progress": 0,
            "lease_expired": 0,
        }
    ]
    assert doc["store"]["path"] == str(store) and doc["store"]["messages"] == 0


def test_no_store_is_exit_7_and_creates_nothing(cli, isolated_env):
    r = cli("stats")
    assert r.exit_code == 7
    assert not isolated_env.exists()


def test_piped_output_is_one_tab_separated_line_per_row(cli, busy):
    lines = cli.ok("stats").stdout.splitlines()
    kinds = [line.split("\t")[0] for line in lines]
    assert kinds == ["agent"] * 3 + ["channel"] * 8 + ["store"]
    agent = lines[1].split("\t")
    assert agent[:9] == ["agent", "executor", "10", "2", "3", "600", "2", "0", "0"]
    assert len(agent) == 10  # and last seen, tests/test_presence.py
    assert "channel\theld\t1\t1\t0\t0\t0" in lines


def test_in_process_equals_the_command_line(cli, busy):
    doc = cli.ok("stats", "--json").json()
    path = doc["store"]["path"]
    conn = opening.connect(path, create=False)
    try:
        got = operations.stats(conn, clock.now_ms())
    finally:
        conn.close()
    assert [
        (
            a.agent,
            a.total,
            a.unread,
            a.awaiting_ack,
            a.oldest_unread_age_sec,
            a.dead_letters,
            a.in_progress,
            a.lease_expired,
            clock.iso(a.last_seen_at),
        )
        for a in got.agents
    ] == [tuple(a.values()) for a in doc["agents"]]


def test_same_numbers_without_the_partial_index(cli, busy):
    """A store without `deliveries_active` (another schema) is scanned instead, same result."""
    before = cli.ok("stats", "--json").json()
    c = sqlite3.connect(before["store"]["path"])
    c.execute("DROP INDEX IF EXISTS deliveries_active")
    c.commit()
    c.close()
    after = cli.ok("stats", "--json").json()
    assert after["agents"] == before["agents"] and after["channels"] == before["channels"]


# ---------------------------------------------------------------- tasks and incidents ---------


def test_tasks_by_state_and_open_incidents(cli, store, tmp_path):
    from tests.capfixtures import published
    from tests.conftest import snapshot

    with freeze_time("2030-01-01T00:00:00Z") as frozen:
        empty = cli.ok("stats", "--json").json()
        assert empty["tasks"] == {
            s: 0
            for s in (
                "created",
                "accepted",
                "updated",
                "completed",
                "failed",
                "overdue",
                "incident",
            )
        }
        assert empty["incidents"] == {"open": 0, "resolved": 0}
        published(cli, tmp_path, "carol")  # distribution tasks for alice and carol
        first = cli.ok(
            "task", "create", "--capability", "review", "PR 1", "--as", "alice", "--json"
        ).json()["id"]
        second = cli.ok("task", "create", "--to", "bob", "PR 2", "--as", "alice", "--json").json()[
            "id"
        ]
        cli.ok("task", "accept", str(second), "--eta", "1h", "--as", "bob")
        frozen.tick(timedelta(minutes=11))  # `review`'s 10m ETA passed, no tick ran
        before = snapshot(store)
        doc = cli.ok("stats", "--json").json()
        assert snapshot(store) == before  # stats counts the overdue task, writes nothing
        assert {k: n for k, n in doc["tasks"].items() if n} == {
            "created": 2,
            "accepted": 1,
            "incident": 1,
        }
        assert doc["incidents"] == {"open": 1, "resolved": 0}
        assert cli.ok("task", "show", str(first), "--json").json()["state"] == "incident"
        cli.ok("incident", "resolve", "1", "--as", "alice")
        doc = cli.ok("stats", "--json", "--as", "bob").json()
        assert {k: n for k, n in doc["tasks"].items() if n} == {"accepted": 1}
        assert doc["incidents"] == {"open": 0, "resolved": 1}
        lines = cli.ok("stats").stdout.splitlines()
        assert "task\tincident\t1" in lines and "incidents\t0\t1" in lines
