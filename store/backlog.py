"""SQL of backpressure: ACTIVE (deliveries not yet done with), backlogs, queued, size."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from os import stat as _stat

from acomm_cli.store.channels import CHANNELS_TOKEN

# Deliveries not yet done with, written exactly as the WHERE clause of the partial index
# `deliveries_active` (m015), so that `INDEXED BY deliveries_active` can use it. A chain of `=`,
# not `state IN (...)`: SQLite evaluates an IN list in an index's WHERE through a temporary
# b-tree built for every row an UPDATE changes (DECISIONS.md, "Inbox indexes").
ACTIVE = (
    "(state = 'queued' OR state = 'waiting' OR state = 'unread'"
    " OR (tracked = 1 AND state = 'read'))"
)

# The same, on the alias `d`: what lets a query of an agent's deliveries in several states
# use deliveries_agent_active (`state IN (...)` alone does not imply the index's WHERE).
ACTIVE_D = ACTIVE.replace("state", "d.state").replace("tracked", "d.tracked")


def pending_deliveries_of(
    conn: sqlite3.Connection, channel_id: int, agent: str
) -> list[tuple[int, int]]:
    """(message_id, retry_count) of an agent's unfinished deliveries on a channel: not yet
    read, or read but still waiting for its acknowledgement."""
    return conn.execute(
        f"SELECT message_id, retry_count FROM deliveries WHERE channel_id = ? AND recipient = ?"
        f" AND {ACTIVE}",
        (channel_id, agent),
    ).fetchall()


_PENDING = "(state = 'unread' OR (tracked = 1 AND state IN ('read', 'waiting')))"


def active_messages(conn: sqlite3.Connection, at_least: int) -> tuple[int, int]:
    """(messages with a delivery not yet terminal, the channels token): the count is exact
    only when the id range of active messages is wide enough to matter (ids are monotonic,
    so this is usually O(log n)). The token (channels_token) comes in the same statement: a
    send validates its channel cache with it at no extra statement."""
    low, last, token = conn.execute(
        f"SELECT (SELECT min(message_id) FROM deliveries INDEXED BY deliveries_active WHERE"
        f" {ACTIVE}), (SELECT seq FROM sqlite_sequence WHERE name = 'messages'), {CHANNELS_TOKEN}"
    ).fetchone()
    if low is None:
        return 0, token
    if last - low + 1 < at_least:
        return 0, token  # an upper bound below the limit: no need to count
    return conn.execute(
        f"SELECT count(DISTINCT message_id) FROM deliveries INDEXED BY deliveries_active"
        f" WHERE {ACTIVE}"
    ).fetchone()[0], token


def channel_backlog(conn: sqlite3.Connection, channel_id: int) -> tuple[int, int]:
    """(pending messages, queued messages) of a channel. Read from deliveries_active: the
    rows it leaves out (done with, and read but untracked) count in neither column, so the
    counts are those of every delivery of the channel; it was a scan of all of them, on every
    send to a channel with max_pending."""
    return conn.execute(
        f"SELECT count(DISTINCT CASE WHEN {_PENDING} THEN message_id END),"
        " count(DISTINCT CASE WHEN state = 'queued' THEN message_id END)"
        f" FROM deliveries INDEXED BY deliveries_active WHERE channel_id = ? AND {ACTIVE}",
        (channel_id,),
    ).fetchone()


def in_flight(conn: sqlite3.Connection, channel_id: int) -> list[tuple[int, str, int]]:
    """(message_id, recipient, retry_count) of a channel's deliveries not yet finished:
    queued, waiting (scheduled or backing off), unread, or read and still owed an ack (as
    `pending_deliveries_of`, for every recipient). On deliveries_active, whose order (message
    id, then the key's recipient) is the one asked for: no scan of the table, no sort."""
    return conn.execute(
        "SELECT message_id, recipient, retry_count FROM deliveries INDEXED BY"
        f" deliveries_active WHERE channel_id = ? AND {ACTIVE} ORDER BY message_id, recipient",
        (channel_id,),
    ).fetchall()


def channels_with_queued(
    conn: sqlite3.Connection, among: Sequence[int] | None = None
) -> list[tuple[int, int, int]]:
    """(channel_id, max_pending, ack_timeout_ms) of channels holding queued deliveries (of
    those `among`, if given)."""
    sql = "SELECT id, max_pending, ack_timeout_ms FROM channels WHERE max_pending > 0"
    if among is not None:
        if not among:
            return []
        sql += f" AND id IN ({','.join('?' * len(among))})"
    limited = conn.execute(sql, tuple(among or ())).fetchall()
    return [
        row
        for row in limited
        if conn.execute(
            "SELECT 1 FROM deliveries WHERE channel_id = ? AND state = 'queued' LIMIT 1", (row[0],)
        ).fetchone()
    ]


def release_queued(
    conn: sqlite3.Connection, channel_id: int, count: int, now: int, ack_timeout_ms: int
) -> int:
    """Deliver the `count` oldest queued messages of a channel; returns deliveries released."""
    return conn.execute(
        "UPDATE deliveries SET state = 'unread', delivered_at = ?,"
        # a queue's or pool's deadline starts at the claim, an ack_clock `read` channel's at
        # the read
        " next_timer_at = CASE WHEN tracked AND substr(recipient, 1, 1) != '*' AND (SELECT"
        " c.ack_clock FROM channels c WHERE c.id = deliveries.channel_id) = 'sent' THEN ? END"
        " WHERE state = 'queued' AND channel_id = ? AND message_id IN (SELECT DISTINCT"
        " message_id FROM deliveries WHERE channel_id = ? AND state = 'queued'"
        " ORDER BY message_id LIMIT ?)",
        (now, now + ack_timeout_ms, channel_id, channel_id, count),
    ).rowcount


def store_bytes(conn: sqlite3.Connection) -> int:
    """Database plus WAL, in bytes (every send asks: two stat() calls, no loop)."""
    path = getattr(conn, "path", None) or conn.execute("PRAGMA database_list").fetchone()[2]
    try:
        total = _stat(path).st_size
    except OSError:
        total = 0
    try:
        return total + _stat(path + "-wal").st_size
    except OSError:
        return total
