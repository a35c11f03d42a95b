"""SQL of engagement: when each recipient of a message was notified and answered it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

HOWS = ("bridge", "team_inbox", "mcp", "dispatch")  # m022's CHECK on notifications.how


def notify(conn: sqlite3.Connection, rows: Iterable[tuple[int, str, int, str]]) -> None:
    """Record notices as (message_id, recipient, notified_at, how), inside the caller's
    transaction. Only the first notice of a recipient of a message is kept: a later one
    (a mirror written again, a retried run) leaves it as it was."""
    conn.executemany(
        "INSERT OR IGNORE INTO notifications (message_id, recipient, notified_at, how)"
        " VALUES (?, ?, ?, ?)",
        rows,
    )


def notified(conn: sqlite3.Connection, message_id: int) -> dict[str, tuple[int, str]]:
    """Per recipient, (time, how) of the first notice kept for the message."""
    return {
        who: (at, how)
        for who, at, how in conn.execute(
            "SELECT recipient, notified_at, how FROM notifications WHERE message_id = ?",
            (message_id,),
        )
    }


def mirrored(conn: sqlite3.Connection, message_id: int) -> dict[str, tuple[int, str]]:
    """Per recipient, (earliest time, kind) of a mirror the bridge wrote for the message.
    A mirror marked stale by a read keeps the time it was written; a mirror taken away
    leaves no row, so its time is known only while it exists."""
    rows = conn.execute(
        "SELECT recipient, kind, min(updated_at) FROM bridge_mirrors"
        " WHERE message_id = ? AND state IN ('written', 'stale') GROUP BY recipient, kind",
        (message_id,),
    ).fetchall()
    out: dict[str, tuple[int, str]] = {}
    for who, kind, at in rows:
        if who not in out or at < out[who][0]:
            out[who] = (at, kind)
    return out


def dispatched(conn: sqlite3.Connection, message_id: int) -> dict[str, int]:
    """Per agent, when its first dispatch run on the message started. A duplicate, ignored
    without running the command, has no exit code and is no run."""
    return dict(
        conn.execute(
            "SELECT agent, min(started_at) FROM dispatch_receipts WHERE message_id = ?"
            " AND NOT (status = 'ignored' AND exit_code IS NULL) GROUP BY agent",
            (message_id,),
        ).fetchall()
    )


def replied(conn: sqlite3.Connection, message_id: int) -> dict[str, int]:
    """Per sender, when it first sent a later message with the message's correlation id
    (a reply or response; acknowledgements count through the delivery's acked_at)."""
    return dict(
        conn.execute(
            "SELECT r.sender, min(r.created_at) FROM messages m JOIN messages r"
            " ON r.correlation_id = m.correlation_id AND r.id > m.id"
            " WHERE m.id = ? AND m.correlation_id IS NOT NULL AND r.type != 'acknowledgment'"
            " GROUP BY r.sender",
            (message_id,),
        ).fetchall()
    )
