"""Set-based SQL for timers: scheduled deliveries, ack deadlines, retries, expiry, dead letters.

Every statement takes `now` and an optional recipient (receive applies only its own timers).
New times are computed from the scheduled time in `next_timer_at`, never from `now`, so a late
tick writes the same history as a punctual one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

TYPE_CHECKING = False  # typing's, without importing typing (issue 17: DECISIONS.md)
if TYPE_CHECKING:
    from typing import Any

_WHO = " AND d.recipient = :recipient"


def _who(recipient: str | None) -> str:
    return _WHO if recipient is not None else ""


def deliver_waiting(conn: sqlite3.Connection, now: int, recipient: str | None,
                    retried: bool) -> int:
    """Waiting deliveries whose time has come become unread; returns how many.

    `retried` picks redeliveries after back-off (retry_count > 0) or first scheduled sends."""
    cur = conn.execute(
        "UPDATE deliveries AS d SET state = 'unread', delivered_at = d.next_timer_at,"
        " next_timer_at = CASE WHEN d.tracked THEN d.next_timer_at + c.ack_timeout_ms END"
        " FROM channels c WHERE c.id = d.channel_id AND d.state = 'waiting'"
        f" AND d.next_timer_at <= :now AND d.retry_count {'>' if retried else '='} 0"
        + _who(recipient),
        {"now": now, "recipient": recipient},
    )
    return cur.rowcount


_DEADLINE = (
    " FROM channels c WHERE c.id = d.channel_id AND d.tracked = 1"
    " AND d.state IN ('unread', 'read') AND d.next_timer_at <= :now"
)
_BACKOFF = "c.retry_backoff_ms * (1 << d.retry_count)"
_EXACTLY_ONCE_READ = "(c.delivery = 'exactly-once' AND d.read_at IS NOT NULL)"


def schedule_retries(conn: sqlite3.Connection, now: int, recipient: str | None) -> int:
    """Ack deadlines passed with budget left: wait out the back-off, then redeliver."""
    cur = conn.execute(
        "UPDATE deliveries AS d SET state = 'waiting', retry_count = d.retry_count + 1,"
        f" next_timer_at = d.next_timer_at + {_BACKOFF}"
        f" + CAST({_BACKOFF} * c.retry_jitter * (abs(random()) % 1000000) / 1000000.0"
        " AS INTEGER)"
        + _DEADLINE + f" AND d.retry_count < c.max_retries AND NOT {_EXACTLY_ONCE_READ}"
        + _who(recipient),
        {"now": now, "recipient": recipient},
    )
    return cur.rowcount


def restart_read_exactly_once(conn: sqlite3.Connection, now: int, recipient: str | None) -> int:
    """Exactly-once: a message already read is never handed out again; the retry only
    restarts its ack timer (at the time the redelivery would have happened). delivered_at
    stays: nothing was handed out, and an audit reads a delivery after the read as a
    violation."""
    cur = conn.execute(
        "UPDATE deliveries AS d SET retry_count = d.retry_count + 1,"
        f" next_timer_at = d.next_timer_at + {_BACKOFF} + c.ack_timeout_ms"
        + _DEADLINE + f" AND d.retry_count < c.max_retries AND {_EXACTLY_ONCE_READ}"
        + _who(recipient),
        {"now": now, "recipient": recipient},
    )
    return cur.rowcount


# ---------------------------------------------------------------- dead letters
# Deliveries about to die are first staged in a temporary table, so that the dead-letter rows,
# the delivery states and the `_system` notifications are written from the same set.

_STAGE = (
    "CREATE TEMP TABLE IF NOT EXISTS dying (message_id INTEGER, recipient TEXT,"
    " channel_id INTEGER, reason TEXT, retry_count INTEGER, last_error TEXT, at INTEGER,"
    " PRIMARY KEY (message_id, recipient))"
)


def stage_clear(conn: sqlite3.Connection) -> None:
    conn.execute(_STAGE)
    conn.execute("DELETE FROM temp.dying")


def stage_rows(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    """rows: (message_id, recipient, channel_id, reason, retry_count, last_error, at)."""
    conn.executemany("INSERT OR IGNORE INTO temp.dying VALUES (?, ?, ?, ?, ?, ?, ?)", rows)


def stage_exhausted(conn: sqlite3.Connection, now: int, recipient: str | None) -> int:
    cur = conn.execute(
        "INSERT OR IGNORE INTO temp.dying SELECT d.message_id, d.recipient, d.channel_id,"
        " 'max_retries_exceeded', c.max_retries, 'no acknowledgement after '"
        " || (c.max_retries + 1) || ' deliveries', d.next_timer_at"
        " FROM deliveries d JOIN channels c ON c.id = d.channel_id WHERE d.tracked = 1"
        " AND d.state IN ('unread', 'read') AND d.next_timer_at <= :now"
        " AND d.retry_count >= c.max_retries" + _who(recipient),
        {"now": now, "recipient": recipient},
    )
    return cur.rowcount


def stage_expired(conn: sqlite3.Connection, now: int, recipient: str | None) -> int:
    cur = conn.execute(
        "INSERT OR IGNORE INTO temp.dying SELECT d.message_id, d.recipient, d.channel_id,"
        " 'expired', d.retry_count, 'not read before the message expired', m.expires_at"
        " FROM messages m JOIN deliveries d ON d.message_id = m.id"
        " WHERE m.expires_at IS NOT NULL AND m.expires_at <= :now"
        " AND d.state IN ('unread', 'waiting', 'queued')" + _who(recipient),
        {"now": now, "recipient": recipient},
    )
    return cur.rowcount


def apply_staged(conn: sqlite3.Connection, system_channel_id: int, subscribers_json: str,
                 topic: str) -> int:
    """Dead-letter every staged delivery and publish one `_system` notification for each."""
    n = conn.execute("SELECT count(*) FROM temp.dying").fetchone()[0]
    if not n:
        return 0
    conn.execute(
        "INSERT OR REPLACE INTO dead_letters SELECT message_id, recipient, channel_id, reason,"
        " retry_count, last_error, at FROM temp.dying"
    )
    conn.execute(
        "UPDATE deliveries AS d SET state = 'dead', next_timer_at = NULL,"
        " retry_count = x.retry_count, last_error = x.last_error FROM temp.dying x"
        " WHERE d.message_id = x.message_id AND d.recipient = x.recipient"
    )
    before = conn.execute(
        "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0)"
    ).fetchone()[0]
    conn.execute(
        "INSERT INTO messages (channel_id, sender, type, content, topic, priority, created_at)"
        " SELECT ?, 'acomm', 'notification', json_object('message_id', x.message_id,"
        " 'recipient', x.recipient, 'channel', c.name, 'reason', x.reason, 'retry_count',"
        " x.retry_count), ?, 1, x.at FROM temp.dying x JOIN channels c ON c.id = x.channel_id"
        " ORDER BY x.at, x.message_id, x.recipient",
        (system_channel_id, topic),
    )
    conn.execute(
        "INSERT INTO deliveries (message_id, recipient, channel_id, state, rank, tracked,"
        " delivered_at) SELECT m.id, s.value, m.channel_id, 'unread', 0, 0, m.created_at"
        " FROM messages m, json_each(?) s WHERE m.id > ?",
        (subscribers_json, before),
    )
    conn.execute("DELETE FROM temp.dying")
    return n


def expire_exactly_once(conn: sqlite3.Connection, now: int) -> int:
    return conn.execute("DELETE FROM exactly_once WHERE expires_at <= ?", (now,)).rowcount


def count_due(conn: sqlite3.Connection, now: int) -> int:
    """Deliveries whose timer is due (the size of a tick, for its progress bar)."""
    return conn.execute("SELECT count(*) FROM deliveries WHERE next_timer_at <= ?",
                        (now,)).fetchone()[0]


def has_due(conn: sqlite3.Connection, now: int, recipient: str | None) -> bool:
    """Cheap check: is any timer of this recipient (or anyone) due?"""
    if recipient is None:
        row = conn.execute("SELECT 1 FROM deliveries WHERE next_timer_at <= ? LIMIT 1",
                           (now,)).fetchone()
    else:  # due timers are few (ticks clear them): walk those, not the agent's inbox
        row = conn.execute(
            "SELECT 1 FROM deliveries INDEXED BY deliveries_timer WHERE next_timer_at IS NOT"
            " NULL AND next_timer_at <= ? AND recipient = ? LIMIT 1", (now, recipient)).fetchone()
    if row:
        return True
    if recipient is None:
        row = conn.execute(
            "SELECT 1 FROM messages m WHERE m.expires_at IS NOT NULL AND m.expires_at <= ?"
            " AND EXISTS (SELECT 1 FROM deliveries d WHERE d.message_id = m.id AND d.state IN"
            " ('unread', 'waiting', 'queued')) LIMIT 1", (now,)).fetchone()
    else:  # walk only this agent's pending deliveries (the inbox index), not all history
        row = conn.execute(
            "SELECT 1 FROM deliveries d JOIN messages m ON m.id = d.message_id"
            " WHERE d.recipient = ? AND d.state IN ('unread', 'waiting', 'queued')"
            " AND m.expires_at IS NOT NULL AND m.expires_at <= ? LIMIT 1",
            (recipient, now)).fetchone()
    return row is not None
