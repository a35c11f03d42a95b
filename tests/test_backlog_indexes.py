"""A channel's backlog and its deliveries in flight read from deliveries_active:
the same answers as the scans of every delivery they replace, and plans that stay indexed."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import every_state
import pytest
from conftest import query
from freezegun import freeze_time

from acomm_cli.engine import opening
from acomm_cli.store import backlog

pytestmark = pytest.mark.cli

# The plain statements, without the index: each scans all of a store's deliveries.
OLD_BACKLOG = (
    "SELECT count(DISTINCT CASE WHEN (state = 'unread' OR (tracked = 1 AND state IN ('read',"
    " 'waiting'))) THEN message_id END), count(DISTINCT CASE WHEN state = 'queued' THEN"
    " message_id END) FROM deliveries WHERE channel_id = ? AND state IN ('queued', 'waiting',"
    " 'unread', 'read')"
)
OLD_IN_FLIGHT = (
    "SELECT message_id, recipient, retry_count FROM deliveries WHERE channel_id = ?"
    " AND (state IN ('unread', 'waiting', 'queued') OR (tracked = 1 AND state = 'read'))"
    " ORDER BY message_id, recipient"
)


@pytest.fixture
def every(cli, store, make_channel) -> Path:
    """every_state's store (queued, waiting, unread, read with and without an ack owed,
    acked, dead), plus a tracked delivery waiting, one acknowledged in_progress and a work
    queue's unclaimed row (recipient `*`)."""
    with freeze_time(every_state.T0) as frozen:
        every_state.build(cli, frozen)
        cli.ok("send", "work", "later", "--delay", "1d", "--as", "planner")
        mid = cli.ok("send", "work", "busy", "--as", "planner").stdout.strip()
        cli.ok("receive", "--as", "executor", "work", "--grep", "busy")
        cli.ok("ack", mid, "--status", "in_progress", "--as", "executor")
        make_channel("queue", "boss", "w1", type="queue")
        cli.ok("send", "queue", "job", "--as", "boss")
    return store


def _plan(conn: sqlite3.Connection, sql: str, *args: object) -> str:
    return " / ".join(r[-1] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, args))


def test_backlog_and_in_flight_equal_the_old_scans_for_every_channel(every):
    kinds = set(query(every, "SELECT state, tracked FROM deliveries"))
    assert kinds >= {
        ("queued", 1),
        ("waiting", 0),
        ("waiting", 1),
        ("unread", 0),
        ("unread", 1),
        ("read", 0),
        ("read", 1),
        ("acked", 1),
        ("dead", 1),
    }
    assert query(every, "SELECT count(*) FROM deliveries WHERE recipient = '*'") == [(1,)]
    conn = opening.connect(every, create=False)
    try:
        ids = [cid for (cid,) in conn.execute("SELECT id FROM channels ORDER BY id")]
        seen_backlog, seen_flight = set(), 0
        for cid in ids + [max(ids) + 1]:  # and a channel that does not exist
            old = conn.execute(OLD_BACKLOG, (cid,)).fetchone()
            assert backlog.channel_backlog(conn, cid) == old, cid
            seen_backlog.add(old)
            flight = conn.execute(OLD_IN_FLIGHT, (cid,)).fetchall()
            assert backlog.in_flight(conn, cid) == flight, cid
            seen_flight += len(flight)
    finally:
        conn.close()
    # the comparison saw pending and queued counts, and several deliveries in flight
    assert any(p for p, _ in seen_backlog) and any(q for _, q in seen_backlog)
    assert seen_flight >= 6


def test_backlog_and_in_flight_plans_walk_deliveries_active(every):
    """Not a scan of the table: the WHERE holds backlog.ACTIVE as one term, which implies the
    index's WHERE (with INDEXED BY, a WHERE that did not would fail, not scan)."""
    conn = opening.connect(every, create=False)
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        backlog.channel_backlog(conn, 1)
        backlog.in_flight(conn, 1)
        conn.set_trace_callback(None)
        plans = {sql.split(" ", 2)[1]: _plan(conn, sql) for sql in seen if "FROM deliveries" in sql}
        old = [_plan(conn, sql, 1) for sql in (OLD_BACKLOG, OLD_IN_FLIGHT)]
    finally:
        conn.close()
    assert set(plans) == {"count(DISTINCT", "message_id,"}, plans
    for plan in plans.values():
        assert "SCAN deliveries USING INDEX deliveries_active" in plan, plan
        assert not re.search(r"SCAN deliveries(?! USING INDEX deliveries_active)", plan), plan
    assert "TEMP B-TREE FOR ORDER BY" not in plans["message_id,"]  # the index's own order
    assert all(p.endswith("SCAN deliveries") for p in old), old  # what they replace


def test_channel_delete_counts_what_is_in_flight(cli, every):
    """Through the command line: `channel delete` refuses a channel with deliveries in flight,
    naming how many (in_flight), and `--force` dead-letters exactly those."""
    [(cid,)] = query(every, "SELECT id FROM channels WHERE name = 'work'")
    flight = query(every, OLD_IN_FLIGHT, cid)
    # work: read awaiting its ack, unread, waiting (tracked), the acks back to planner
    assert len(flight) >= 3
    with freeze_time(every_state.NOW):
        r = cli("channel", "delete", "work", "--as", "planner", "--json")
        assert r.exit_code == 5 and r.error["code"] == "invalid_state"
        assert r.error["in_flight"] == len(flight)
        doc = cli.ok("channel", "delete", "work", "--force", "--as", "planner", "--json").json()
    assert doc["dead_lettered"] == len(flight)
    dead = query(
        every,
        "SELECT message_id, recipient FROM dead_letters WHERE reason ="
        " 'channel_deleted' ORDER BY message_id, recipient",
    )
    assert dead == [(m, r) for m, r, _ in flight]
