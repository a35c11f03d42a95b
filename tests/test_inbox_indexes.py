"""m015: the indexes a mark read keeps, and the plans that rely on them.

DECISIONS.md says why each index is written as it is; these
tests pin what users depend on: receive, ack, stats and doctor work on an upgraded store, the
hot statements keep their indexed plans, and no partial index brings back the two costs m015
removed (an IN list in an index's WHERE; an `=` against a constant that SQLite compares with
bound parameters, re-planning the statement on every run)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from conftest import query, rewind_migrations

from acomm_cli import clock
from acomm_cli.engine import acking, inbox, opening, operations
from acomm_cli.model import MessageFilter
from acomm_cli.store import backlog, timers
from acomm_cli.store.migrations import MIGRATIONS

pytestmark = pytest.mark.cli

ACTIVE_OLD = "state IN ('queued', 'waiting', 'unread') OR (tracked = 1 AND state = 'read')"


def _partial_indexes(path: Path) -> dict[str, str]:
    return dict(
        query(
            path,
            "SELECT name, sql FROM sqlite_master WHERE type = 'index'"
            " AND tbl_name = 'deliveries' AND sql LIKE '% WHERE %'",
        )
    )


def _plans(path: Path, run) -> list[tuple[str, str]]:
    """(statement, its plan) of every statement on deliveries that `run(conn)` executes."""
    conn = opening.connect(path, create=False)
    seen: list[str] = []
    conn.set_trace_callback(seen.append)  # the statements with their values filled in
    try:
        run(conn)
    finally:
        conn.set_trace_callback(None)
    out = []
    for sql in seen:
        if "deliveries" not in sql or not re.match(r"\s*(SELECT|UPDATE|WITH)", sql, re.I):
            continue
        plan = " / ".join(r[-1] for r in conn.execute("EXPLAIN QUERY PLAN " + sql))
        out.append((sql, plan))
    conn.close()
    return out


def _mail(cli, store: Path) -> list[int]:
    """bob: 3 unread messages on a group channel, 1 read on an at-least-once channel."""
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "bob", "--as", "alice")
    cli.ok("channel", "create", "jobs", "--delivery", "at-least-once", "--as", "alice")
    cli.ok("channel", "join", "jobs", "bob", "--as", "alice")
    tracked = int(cli.ok("send", "jobs", "job", "--as", "alice").stdout)
    cli.ok("receive", "--as", "bob", "--channel", "jobs")
    return [tracked] + [
        int(cli.ok("send", "team", f"m{i}", "--as", "alice").stdout) for i in range(3)
    ]


def test_no_partial_index_on_deliveries_has_an_in_list_or_compares_recipient(cli, store):
    """An IN list in an index's WHERE is evaluated through a temporary b-tree built for every
    row an UPDATE changes; `recipient = '*'` made every statement with `recipient = ?`
    prepare again on each run. Both doubled the cost of marking messages read."""
    indexes = _partial_indexes(store)
    assert {"deliveries_active", "deliveries_agent_active", "deliveries_queue"} <= set(indexes)
    for name, sql in indexes.items():
        where = sql.split(" WHERE ", 1)[1]
        assert " IN (" not in where.upper(), name
        assert not re.search(r"\brecipient\s*=", where), name
    # the inbox order no longer holds the state: a mark read does not move its entry
    assert query(store, "SELECT sql FROM sqlite_master WHERE name = 'deliveries_inbox'")[0][
        0
    ].endswith("deliveries(recipient, rank DESC, message_id)")


def test_receive_and_ack_keep_their_indexed_plans(cli, store):
    tracked = _mail(cli, store)[0]
    now = clock.now_ms()

    def run(conn: sqlite3.Connection) -> None:
        got = inbox.receive(conn, "bob", MessageFilter(limit=2), now)
        assert [m.content for m in got.messages] == ["m0", "m1"]
        assert got.total_count == 3  # counted on the index, more than the page
        acking.ack(conn, tracked, "bob", "completed", None, now)
        timers.next_timer_of(conn, "bob")
        backlog.active_messages(conn, 0)

    plans = _plans(store, run)
    by_kind = {}
    for sql, plan in plans:
        # a whole partial index may be walked; the table, or a full index, never
        assert not re.search(r"SCAN (deliveries|d)\b(?! USING INDEX deliveries_active)", plan), (
            sql,
            plan,
        )
        if sql.startswith("SELECT") and "ORDER BY d.rank DESC" in sql:
            by_kind["inbox"] = plan
            if "(SELECT count(*)" in sql:  # the total counted by the page's own statement
                # its plan: the last part, after the (uncorrelated) subquery's own line
                by_kind["count"] = plan.rsplit(" / SCALAR SUBQUERY", 1)[1]
        elif sql.startswith("SELECT count(*)") and "FROM deliveries d WHERE" in sql:
            by_kind["count"] = plan
        elif sql.startswith("UPDATE deliveries SET state = 'read'"):
            by_kind["mark"] = plan
        elif "min(next_timer_at)" in sql:
            by_kind["timer"] = plan
        elif "min(message_id)" in sql:
            by_kind["active"] = plan
    assert "deliveries_agent_active (recipient=? AND state=?)" in by_kind["inbox"]
    assert "deliveries_agent_active (recipient=? AND state=?)" in by_kind["count"]
    assert "PRIMARY KEY (message_id=? AND recipient=?)" in by_kind["mark"]
    assert "deliveries_agent_active (recipient=? AND state=?)" in by_kind["timer"]
    assert "deliveries_active" in by_kind["active"]


def _as_before_m015(store: Path) -> None:
    """The store as m014 left it: m001's inbox and active indexes, m010's queue index."""
    c = sqlite3.connect(store)
    c.executescript(f"""
        DROP INDEX deliveries_agent_active;
        DROP INDEX deliveries_inbox;
        CREATE INDEX deliveries_inbox ON deliveries(recipient, state, rank DESC, message_id);
        DROP INDEX deliveries_active;
        CREATE INDEX deliveries_active ON deliveries(message_id) WHERE {ACTIVE_OLD};
        DROP INDEX deliveries_queue;
        CREATE INDEX deliveries_queue ON deliveries(channel_id, rank DESC, message_id)
            WHERE recipient = '*' AND state = 'unread';
    """)
    rewind_migrations(c, "m015_inbox_indexes")
    c.commit()
    c.close()


def test_an_older_store_is_upgraded_and_reads_as_before(cli, store):
    ids = _mail(cli, store)
    before = cli.ok("stats", "--json").json()
    del before["store"]  # its size and WAL
    _as_before_m015(store)
    assert "deliveries_agent_active" not in _partial_indexes(store)
    # the first command upgrades it: the same statistics, from the new indexes
    after = cli.ok("stats", "--json").json()
    del after["store"]
    # rewinding m020 dropped the directory, and with it when each agent was last seen
    for doc in (before, after):
        for row in doc["agents"]:
            row.pop("last_seen_at")
    assert after == before
    assert query(store, "PRAGMA user_version") == [(len(MIGRATIONS),)]
    assert ACTIVE_OLD not in _partial_indexes(store)["deliveries_active"]
    # every delivery not yet done with is in both partial indexes, and nothing else is
    active = sorted(
        query(store, f"SELECT message_id, recipient FROM deliveries WHERE {ACTIVE_OLD}")
    )
    for index in ("deliveries_active", "deliveries_agent_active"):
        assert (
            sorted(
                query(
                    store,
                    f"SELECT message_id, recipient FROM deliveries INDEXED BY"
                    f" {index} WHERE {backlog.ACTIVE}",
                )
            )
            == active
        )
    assert len(active) == 4  # bob's 3 unread and his read one awaiting its ack
    doc = cli.ok("receive", "--as", "bob", "--json").json()
    assert [m["id"] for m in doc["messages"]] == ids[1:]
    assert {m["delivery"]["state"] for m in doc["messages"]} == {"read"}
    assert cli.ok("receive", "--as", "bob", "--json").json()["messages"] == []
    cli.ok("ack", str(ids[0]), "--status", "completed", "--as", "bob")
    # bob is done with everything; alice has the acknowledgement
    assert query(
        store,
        f"SELECT recipient, state FROM deliveries INDEXED BY"
        f" deliveries_agent_active WHERE {backlog.ACTIVE}",
    ) == [("alice", "unread")]
    cli.ok("doctor")  # exits 0: every invariant holds


def test_stats_counts_through_the_new_indexes(cli, store):
    _mail(cli, store)
    conn = opening.connect(store, create=False)
    try:
        bob = next(a for a in operations.stats(conn, clock.now_ms()).agents if a.agent == "bob")
        health = operations.doctor(conn)
        assert (health.integrity, health.findings) == ("ok", [])
    finally:
        conn.close()
    assert (bob.total, bob.unread, bob.awaiting_ack) == (4, 3, 1)
