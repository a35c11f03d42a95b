"""SQL of the mailbox bridge: mirror state per (message, recipient, kind), deliveries made
unread again, and response files (left in place, or committed but not yet deleted)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

_MIRROR_COLS = (
    "d.message_id, d.recipient, c.name, m.sender, m.type, m.content, m.topic, m.priority,"
    " m.correlation_id, m.metadata, m.created_at, d.delivered_at, b.state, b.attempts,"
    # from 14: the message's event (store/events.py EVENT_COLS; all NULL without one)
    " e.event_type, e.event_id, e.occurred_at, e.actor, e.target, e.target_kind, e.thread_id,"
    " e.comment_id, e.parent_comment_id, e.depth, e.language, e.action_hint, e.content_preview"
)


def to_write(
    conn: sqlite3.Connection,
    kind: str,
    now: int,
    *,
    team_only: bool,
    min_message_id: int | None = None,
    made_unread: bool = False,
) -> list[tuple[Any, ...]]:
    """Unread deliveries whose mirror of `kind` is missing, stale (its delivery was read and
    is unread again: the mirror is still there or is written again), or failed and due.
    `min_message_id`: only messages above it; `made_unread`: only deliveries queued in
    bridge_unread (made unread by an update since the bridge last looked)."""
    params: list[Any] = [kind, now]
    extra = ""
    source = "deliveries d"
    if made_unread:
        source = (
            "bridge_unread u JOIN deliveries d ON d.message_id = u.message_id"
            " AND d.recipient = u.recipient"
        )
    if team_only:
        extra += " AND d.recipient LIKE '%@%'"
    if min_message_id is not None:
        extra += " AND d.message_id > ?"
        params.append(min_message_id)
    return conn.execute(
        f"SELECT {_MIRROR_COLS} FROM {source}"
        " JOIN messages m ON m.id = d.message_id JOIN channels c ON c.id = d.channel_id"
        " LEFT JOIN bridge_mirrors b ON b.message_id = d.message_id"
        " AND b.recipient = d.recipient AND b.kind = ?"
        " LEFT JOIN message_events e ON e.message_id = d.message_id"
        " WHERE d.state = 'unread' AND (b.state IS NULL OR b.state = 'stale'"
        " OR (b.state = 'failed' AND coalesce(b.next_attempt_at, 0) <= ?))"
        + extra
        + " ORDER BY d.message_id, d.recipient",
        params,
    ).fetchall()


def to_remove(
    conn: sqlite3.Connection, now: int, *, full: bool
) -> list[tuple[int, str, str, str, int]]:
    """Mirrors to take away, as (message_id, recipient, kind, state, attempts): those the
    trigger marked stale (a failed removal once its next attempt is due); with `full`, also
    any written or failed mirror whose delivery is no longer unread or is gone (a race's
    leftovers). Never the mirror of a delivery that is unread (again)."""
    wanted = "(b.state = 'stale' AND coalesce(b.next_attempt_at, 0) <= ?)"
    if full:
        wanted = f"({wanted} OR b.state IN ('written', 'failed'))"
    return conn.execute(
        "SELECT b.message_id, b.recipient, b.kind, b.state, b.attempts FROM bridge_mirrors b"
        " LEFT JOIN deliveries d ON d.message_id = b.message_id AND d.recipient = b.recipient"
        f" WHERE {wanted} AND (d.state IS NULL OR d.state != 'unread')",
        (now,),
    ).fetchall()


def written(conn: sqlite3.Connection, kind: str) -> list[tuple[int, str]]:
    return conn.execute(
        "SELECT message_id, recipient FROM bridge_mirrors WHERE state = 'written' AND kind = ?",
        (kind,),
    ).fetchall()


def team_recipients(conn: sqlite3.Connection) -> list[str]:
    """Every agent@team acomm ever mirrored to (their native inboxes get pruned)."""
    return [
        r[0] for r in conn.execute("SELECT recipient FROM bridge_team_inboxes ORDER BY recipient")
    ]


def add_team_recipients(conn: sqlite3.Connection, recipients: Iterable[str]) -> None:
    conn.executemany(
        "INSERT OR IGNORE INTO bridge_team_inboxes VALUES (?)", [(r,) for r in recipients]
    )


def forget(conn: sqlite3.Connection, rows: Iterable[Sequence[Any]]) -> None:
    """Mirrors taken away: rows of (message_id, recipient, kind)."""
    conn.executemany(
        "DELETE FROM bridge_mirrors WHERE message_id = ? AND recipient = ? AND kind = ?", rows
    )


# A delivery that stops being unread marks its written mirror 'stale' (to be taken away),
# forgets a failed one and leaves bridge_unread; one that becomes unread by an update (a queue
# released, a redelivery, a replay) is queued in bridge_unread for the next sync. So the
# after-write hook finds both without a scan. Created by the bridge before its first sync
# rather than by a migration: on a store without a bridge the read trigger alone would cost
# two probes per delivery marked read (about a third of `receive`'s UPDATE of 100 rows).
TRIGGERS = ("bridge_mirrors_read", "bridge_deliveries_unread")
_TRIGGER_SQL = (
    """
    CREATE TRIGGER IF NOT EXISTS bridge_mirrors_read AFTER UPDATE OF state ON deliveries
    WHEN old.state = 'unread' AND new.state != 'unread'
    BEGIN
        UPDATE bridge_mirrors SET state = 'stale'
        WHERE message_id = new.message_id AND recipient = new.recipient
        AND state = 'written';
        DELETE FROM bridge_mirrors
        WHERE message_id = new.message_id AND recipient = new.recipient
        AND state = 'failed';
        DELETE FROM bridge_unread
        WHERE message_id = new.message_id AND recipient = new.recipient;
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS bridge_deliveries_unread AFTER UPDATE OF state ON deliveries
    WHEN new.state = 'unread' AND old.state != 'unread'
    BEGIN
        INSERT OR IGNORE INTO bridge_unread VALUES (new.message_id, new.recipient);
    END
    """,
)


def has_triggers(conn: sqlite3.Connection) -> bool:
    return conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN (?, ?)", TRIGGERS
    ).fetchone()[0] == len(TRIGGERS)


def create_triggers(conn: sqlite3.Connection) -> None:
    for sql in _TRIGGER_SQL:
        conn.execute(sql)


def made_unread(conn: sqlite3.Connection) -> list[tuple[int, str]]:
    """Deliveries queued by the trigger since the bridge last looked."""
    return conn.execute("SELECT message_id, recipient FROM bridge_unread").fetchall()


def drain_unread(conn: sqlite3.Connection, rows: Iterable[Sequence[Any]]) -> None:
    conn.executemany("DELETE FROM bridge_unread WHERE message_id = ? AND recipient = ?", rows)


def record(conn: sqlite3.Connection, rows: Iterable[Sequence[Any]]) -> None:
    """Rows of (message_id, recipient, kind, state, attempts, error, next_attempt_at, now)."""
    conn.executemany(
        "INSERT INTO bridge_mirrors (message_id, recipient, kind, state, attempts, error,"
        " next_attempt_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (message_id, recipient, kind) DO UPDATE SET state = excluded.state,"
        " attempts = excluded.attempts, error = excluded.error,"
        " next_attempt_at = excluded.next_attempt_at, updated_at = excluded.updated_at",
        rows,
    )


def queues(conn: sqlite3.Connection) -> list[tuple[str, int, int]]:
    """Per agent with pending inbox files: (agent, files, oldest written_at)."""
    return conn.execute(
        "SELECT recipient, count(*), min(updated_at) FROM bridge_mirrors"
        " WHERE state = 'written' AND kind = 'inbox' GROUP BY recipient ORDER BY recipient"
    ).fetchall()


_BACKLOG = "(state = 'failed' OR (state = 'stale' AND error IS NOT NULL))"


def failed(conn: sqlite3.Connection, limit: int = 5) -> tuple[int, list[tuple[Any, ...]]]:
    """Mirror writes and removals that failed and wait for a retry: (count, first rows of
    (message_id, recipient, kind, attempts, error))."""
    n = conn.execute(f"SELECT count(*) FROM bridge_mirrors WHERE {_BACKLOG}").fetchone()[0]
    rows = conn.execute(
        "SELECT message_id, recipient, kind, attempts, error FROM bridge_mirrors"
        f" WHERE {_BACKLOG} ORDER BY message_id, recipient, kind LIMIT ?",
        (limit,),
    ).fetchall()
    return n, rows


# ---------------------------------------------------------------- response files


def bad_file(conn: sqlite3.Connection, path: str) -> tuple[int, int, bool, str] | None:
    """(mtime_ns, size, retry, reason) of a file left in place, or None."""
    row = conn.execute(
        "SELECT mtime_ns, size, retry, reason FROM bridge_bad_files WHERE path = ?", (path,)
    ).fetchone()
    return (row[0], row[1], bool(row[2]), row[3]) if row else None


def record_bad(
    conn: sqlite3.Connection,
    path: str,
    mtime_ns: int,
    size: int,
    reason: str,
    now: int,
    *,
    retry: bool,
) -> None:
    conn.execute(
        "INSERT INTO bridge_bad_files VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE"
        " SET mtime_ns = excluded.mtime_ns, size = excluded.size, reason = excluded.reason,"
        " reported_at = excluded.reported_at, retry = excluded.retry",
        (path, mtime_ns, size, reason, now, int(retry)),
    )


def forget_bad(conn: sqlite3.Connection, paths: Iterable[str]) -> None:
    conn.executemany("DELETE FROM bridge_bad_files WHERE path = ?", [(p,) for p in paths])


def bad_paths(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT path FROM bridge_bad_files")]


def bad_files(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """Every response file left in place, with the reason: bad, refused for now, or
    committed but not deleted."""
    return conn.execute(
        "SELECT path, reason FROM bridge_bad_files UNION ALL"
        " SELECT path, error FROM bridge_ingested WHERE error IS NOT NULL ORDER BY path"
    ).fetchall()


def ingested(conn: sqlite3.Connection, path: str) -> tuple[int, int, int | None, str | None] | None:
    """(mtime_ns, size, message_id, deletion error) of a file committed but not deleted."""
    row = conn.execute(
        "SELECT mtime_ns, size, message_id, error FROM bridge_ingested WHERE path = ?", (path,)
    ).fetchone()
    return (row[0], row[1], row[2], row[3]) if row else None


def record_ingested(
    conn: sqlite3.Connection, path: str, mtime_ns: int, size: int, message_id: int | None, now: int
) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO bridge_ingested VALUES (?, ?, ?, ?, NULL, ?)",
        (path, mtime_ns, size, message_id, now),
    )


def ingested_not_deleted(conn: sqlite3.Connection, path: str, error: str) -> None:
    conn.execute("UPDATE bridge_ingested SET error = ? WHERE path = ?", (error, path))


def ingested_paths(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT path FROM bridge_ingested")]


def forget_ingested(conn: sqlite3.Connection, paths: Iterable[str]) -> None:
    conn.executemany("DELETE FROM bridge_ingested WHERE path = ?", [(p,) for p in paths])


def latest_received(conn: sqlite3.Connection, agent: str) -> int | None:
    """The newest message delivered to `agent` that it can have seen (not held back, not
    scheduled), not its own (an echo) and not an acknowledgment of one of its messages."""
    row = conn.execute(
        "SELECT max(d.message_id) FROM deliveries d JOIN messages m ON m.id = d.message_id"
        " WHERE d.recipient = ? AND d.state NOT IN ('queued', 'waiting') AND m.sender != ?"
        " AND m.type != 'acknowledgment'",
        (agent, agent),
    ).fetchone()
    return None if row is None else row[0]
