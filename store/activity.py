"""SQL behind `acomm ui`'s charts: messages per minute, the unread backlog's
history and dead letters by reason. Read-only; `acomm_cli.engine.activity` buckets them."""

from __future__ import annotations

import sqlite3


def message_times(conn: sqlite3.Connection, since: int, until: int) -> list[int]:
    """`created_at` of every message created in [since, until) (index messages_created)."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT created_at FROM messages WHERE created_at >= ? AND created_at < ?",
            (since, until),
        )
    ]


def unread_spans(
    conn: sqlite3.Connection, since: int, until: int, queue_recipient: str
) -> list[tuple[int, int | None]]:
    """(delivered_at, end) of each delivery that was unread at some point of [since, until):
    end is when it was read, else when it was dead-lettered, else NULL (still unread). A
    queue's or worker pool's own row ('*', '*NAME': no agent holds it yet) is not an agent's
    backlog."""
    return conn.execute(
        "SELECT d.delivered_at, coalesce(d.read_at, x.dead_lettered_at) AS ended"
        " FROM deliveries d LEFT JOIN dead_letters x"
        " ON x.message_id = d.message_id AND x.recipient = d.recipient"
        " WHERE d.delivered_at IS NOT NULL AND d.delivered_at < ?"
        " AND substr(d.recipient, 1, 1) != ?"
        " AND (ended >= ? OR (ended IS NULL AND d.state = 'unread'))",
        (until, queue_recipient, since),
    ).fetchall()


def dead_letters_by_reason(conn: sqlite3.Connection) -> list[tuple[str, int]]:
    return conn.execute(
        "SELECT reason, count(*) FROM dead_letters GROUP BY reason ORDER BY reason"
    ).fetchall()
