"""SQL of dead letters: listing, attempts, deleting, purging, replaying."""

from __future__ import annotations

import sqlite3

TYPE_CHECKING = False  # typing's, without importing typing (a send must not load it)
if TYPE_CHECKING:
    from typing import Any


_DL_COLS = (
    "dl.message_id, dl.recipient, c.name, dl.reason, dl.retry_count, dl.last_error,"
    " dl.dead_lettered_at, m.content"
)


_DL_FROM = (
    " FROM dead_letters dl JOIN messages m ON m.id = dl.message_id"
    " JOIN channels c ON c.id = dl.channel_id"
)


def _dl_where(
    message_id: int | None, recipient: str | None, channel: str | None, reason: str | None
) -> tuple[str, list[Any]]:
    where, params = [], []
    for col, val in (
        ("dl.message_id", message_id),
        ("dl.recipient", recipient),
        ("c.name", channel),
        ("dl.reason", reason),
    ):
        if val is not None:
            where.append(f"{col} = ?")
            params.append(val)
    return (" WHERE " + " AND ".join(where)) if where else "", params


def dead_letters(
    conn: sqlite3.Connection,
    *,
    message_id: int | None = None,
    recipient: str | None = None,
    channel: str | None = None,
    reason: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> tuple[list[tuple[Any, ...]], int]:
    where, params = _dl_where(message_id, recipient, channel, reason)
    rows = conn.execute(
        f"SELECT {_DL_COLS} {_DL_FROM}{where} ORDER BY dl.dead_lettered_at, dl.message_id,"
        " dl.recipient LIMIT ? OFFSET ?",
        (*params, limit, offset),
    ).fetchall()
    total = conn.execute(f"SELECT count(*) {_DL_FROM}{where}", params).fetchone()[0]
    return rows, total


def delivery_attempts(conn: sqlite3.Connection, message_id: int) -> list[tuple[Any, ...]]:
    """A message's ended attempts (m012), oldest first: (recipient, attempt, delivered_at,
    read_at, ack_status)."""
    return conn.execute(
        "SELECT recipient, attempt, delivered_at, read_at, ack_status FROM delivery_attempts"
        " WHERE message_id = ? ORDER BY seq",
        (message_id,),
    ).fetchall()


def delete_dead_letters(conn: sqlite3.Connection, message_id: int, recipient: str | None) -> int:
    if recipient is None:
        return conn.execute("DELETE FROM dead_letters WHERE message_id = ?", (message_id,)).rowcount
    return conn.execute(
        "DELETE FROM dead_letters WHERE message_id = ? AND recipient = ?", (message_id, recipient)
    ).rowcount


def purge_dead_letters(conn: sqlite3.Connection, before: int) -> int:
    return conn.execute("DELETE FROM dead_letters WHERE dead_lettered_at < ?", (before,)).rowcount


def renew_expiry(conn: sqlite3.Connection, message_id: int, now: int) -> None:
    """A replayed message whose expiry has passed: the lifetime it was sent with, again,
    counted from now (else it would expire again at once)."""
    conn.execute(
        "UPDATE messages SET expires_at = ? + (expires_at - created_at)"
        " WHERE id = ? AND expires_at IS NOT NULL AND expires_at <= ?",
        (now, message_id, now),
    )


def dead_letters_matching(
    conn: sqlite3.Connection,
    *,
    channel_id: int | None,
    recipient: str | None,
    reason: str | None,
    since: int | None,
) -> list[tuple[int, str, str]]:
    """(message_id, recipient, channel name) of the dead letters a redrive takes, oldest
    first: every filter given must hold (`since`: dead-lettered at or after it)."""
    where, params = [], []
    for cond, val in (
        ("dl.channel_id = ?", channel_id),
        ("dl.recipient = ?", recipient),
        ("dl.reason = ?", reason),
        ("dl.dead_lettered_at >= ?", since),
    ):
        if val is not None:
            where.append(cond)
            params.append(val)
    sql = (
        "SELECT dl.message_id, dl.recipient, c.name FROM dead_letters dl"
        " JOIN channels c ON c.id = dl.channel_id"
    )
    if where:
        sql += " WHERE " + " AND ".join(where)
    return conn.execute(
        sql + " ORDER BY dl.dead_lettered_at, dl.message_id, dl.recipient", params
    ).fetchall()


def redeliver(
    conn: sqlite3.Connection, message_id: int, recipient: str, now: int, ack_timeout_ms: int
) -> None:
    """A replayed dead letter: unread again, with a fresh retry budget (its ack deadline
    from now, or from the next read on an ack_clock `read` channel)."""
    conn.execute(
        "UPDATE deliveries SET state = 'unread', retry_count = 0, delivered_at = ?,"
        " read_at = NULL, ack_status = NULL, acked_at = NULL,"
        " next_timer_at = CASE WHEN tracked AND (SELECT c.ack_clock FROM channels c"
        " WHERE c.id = deliveries.channel_id) = 'sent' THEN ? END, last_error = NULL"
        " WHERE message_id = ? AND recipient = ?",
        (now, now + ack_timeout_ms, message_id, recipient),
    )
