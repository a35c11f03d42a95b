"""SQL of the mailbox bridge: mirror state per (message, recipient, kind) and bad files."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

_MIRROR_COLS = (
    "d.message_id, d.recipient, c.name, m.sender, m.type, m.content, m.topic, m.priority,"
    " m.correlation_id, m.metadata, m.created_at, d.delivered_at, b.state, b.attempts"
)


def to_write(conn: sqlite3.Connection, kind: str, now: int, *, team_only: bool,
             min_message_id: int | None = None) -> list[tuple[Any, ...]]:
    """Unread deliveries whose mirror of `kind` is missing, or failed and due."""
    params: list[Any] = [kind, now]
    extra = ""
    if team_only:
        extra += " AND d.recipient LIKE '%@%'"
    if min_message_id is not None:
        extra += " AND d.message_id > ?"
        params.append(min_message_id)
    return conn.execute(
        f"SELECT {_MIRROR_COLS} FROM deliveries d"
        " JOIN messages m ON m.id = d.message_id JOIN channels c ON c.id = d.channel_id"
        " LEFT JOIN bridge_mirrors b ON b.message_id = d.message_id"
        " AND b.recipient = d.recipient AND b.kind = ?"
        " WHERE d.state = 'unread' AND (b.state IS NULL"
        " OR (b.state = 'failed' AND coalesce(b.next_attempt_at, 0) <= ?))" + extra
        + " ORDER BY d.message_id, d.recipient",
        params,
    ).fetchall()


def to_remove(conn: sqlite3.Connection, *, full: bool) -> list[tuple[int, str, str, str]]:
    """Mirrors to take away: those the trigger marked stale; with `full`, also any written or
    failed mirror whose delivery is no longer unread or is gone (a race's leftovers)."""
    if not full:
        return conn.execute(
            "SELECT message_id, recipient, kind, 'written' FROM bridge_mirrors"
            " WHERE state = 'stale'").fetchall()
    return conn.execute(
        "SELECT b.message_id, b.recipient, b.kind, b.state FROM bridge_mirrors b"
        " LEFT JOIN deliveries d ON d.message_id = b.message_id AND d.recipient = b.recipient"
        " WHERE b.state = 'stale' OR (b.state IN ('written', 'failed')"
        " AND (d.state IS NULL OR d.state != 'unread'))"
    ).fetchall()


def written(conn: sqlite3.Connection, kind: str) -> list[tuple[int, str]]:
    return conn.execute(
        "SELECT message_id, recipient FROM bridge_mirrors WHERE state = 'written' AND kind = ?",
        (kind,),
    ).fetchall()


def team_recipients(conn: sqlite3.Connection) -> list[str]:
    """Every agent@team acomm ever mirrored to (their native inboxes get pruned)."""
    return [r[0] for r in conn.execute(
        "SELECT recipient FROM bridge_team_inboxes ORDER BY recipient")]


def add_team_recipients(conn: sqlite3.Connection, recipients: Iterable[str]) -> None:
    conn.executemany("INSERT OR IGNORE INTO bridge_team_inboxes VALUES (?)",
                     [(r,) for r in recipients])


def forget(conn: sqlite3.Connection, rows: Iterable[Sequence[Any]]) -> None:
    """Mirrors taken away: rows of (message_id, recipient, kind)."""
    conn.executemany(
        "DELETE FROM bridge_mirrors WHERE message_id = ? AND recipient = ? AND kind = ?", rows)


# A delivery that stops being unread marks its written mirror 'stale' (to be taken away) and
# forgets a failed one, so the bridge finds them without a scan. Created with the first mirror
# row, in the same transaction, rather than by a migration: on a store without a bridge the
# trigger would still cost two probes per delivery marked read (about a third of `receive`'s
# UPDATE of 100 rows).
_READ_TRIGGER = """
    CREATE TRIGGER IF NOT EXISTS bridge_mirrors_read AFTER UPDATE OF state ON deliveries
    WHEN old.state = 'unread' AND new.state != 'unread'
    BEGIN
        UPDATE bridge_mirrors SET state = 'stale'
        WHERE message_id = new.message_id AND recipient = new.recipient
        AND state = 'written';
        DELETE FROM bridge_mirrors
        WHERE message_id = new.message_id AND recipient = new.recipient
        AND state = 'failed';
    END
"""


def record(conn: sqlite3.Connection, rows: Iterable[Sequence[Any]]) -> None:
    """Rows of (message_id, recipient, kind, state, attempts, error, next_attempt_at, now)."""
    conn.execute(_READ_TRIGGER)
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


def failed(conn: sqlite3.Connection, limit: int = 5) -> tuple[int, list[tuple[Any, ...]]]:
    n = conn.execute("SELECT count(*) FROM bridge_mirrors WHERE state = 'failed'").fetchone()[0]
    rows = conn.execute(
        "SELECT message_id, recipient, kind, attempts, error FROM bridge_mirrors"
        " WHERE state = 'failed' ORDER BY message_id, recipient, kind LIMIT ?", (limit,),
    ).fetchall()
    return n, rows


# ---------------------------------------------------------------- bad response files


def bad_file(conn: sqlite3.Connection, path: str) -> tuple[int, int] | None:
    row = conn.execute("SELECT mtime_ns, size FROM bridge_bad_files WHERE path = ?",
                       (path,)).fetchone()
    return (row[0], row[1]) if row else None


def record_bad(conn: sqlite3.Connection, path: str, mtime_ns: int, size: int, reason: str,
               now: int) -> None:
    conn.execute(
        "INSERT INTO bridge_bad_files VALUES (?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET"
        " mtime_ns = excluded.mtime_ns, size = excluded.size, reason = excluded.reason,"
        " reported_at = excluded.reported_at",
        (path, mtime_ns, size, reason, now),
    )


def forget_bad(conn: sqlite3.Connection, paths: Iterable[str]) -> None:
    conn.executemany("DELETE FROM bridge_bad_files WHERE path = ?", [(p,) for p in paths])


def bad_files(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    return conn.execute("SELECT path, reason FROM bridge_bad_files ORDER BY path").fetchall()
