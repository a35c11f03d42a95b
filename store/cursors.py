"""SQL of replay cursors: named positions in a channel's history (`acomm cursor`)."""

from __future__ import annotations

import sqlite3
from typing import Any

_COLS = (
    "k.name, k.channel_id, c.name, k.position, k.filter, k.lost_through, k.created_by,"
    " k.created_at, k.updated_at"
)
_FROM = " FROM cursors k JOIN channels c ON c.id = k.channel_id"


def get(conn: sqlite3.Connection, name: str) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {_COLS}{_FROM} WHERE k.name = ?", (name,)
    ).fetchone()
    return row


def every(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return conn.execute(f"SELECT {_COLS}{_FROM} ORDER BY k.name").fetchall()


def insert(
    conn: sqlite3.Connection,
    name: str,
    channel_id: int,
    position: int,
    filter_json: str | None,
    by: str | None,
    now: int,
) -> None:
    conn.execute(
        "INSERT INTO cursors (name, channel_id, position, filter, created_by, created_at,"
        " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (name, channel_id, position, filter_json, by, now, now),
    )


def advance(conn: sqlite3.Connection, name: str, position: int, now: int) -> None:
    conn.execute(
        "UPDATE cursors SET position = ?, updated_at = ? WHERE name = ?", (position, now, name)
    )


def seek(conn: sqlite3.Connection, name: str, position: int, now: int) -> None:
    """Move the cursor, anywhere: a seek also accepts what compaction took (lost_through)."""
    conn.execute(
        "UPDATE cursors SET position = ?, lost_through = NULL, updated_at = ? WHERE name = ?",
        (position, now, name),
    )


def delete(conn: sqlite3.Connection, name: str) -> None:
    conn.execute("DELETE FROM cursors WHERE name = ?", (name,))


def head(conn: sqlite3.Connection, channel_id: int) -> int:
    """The channel's newest message id (0 when it has none), on messages_channel."""
    row = conn.execute(
        "SELECT max(id) FROM messages WHERE channel_id = ?", (channel_id,)
    ).fetchone()
    return int(row[0] or 0)


def last_before(conn: sqlite3.Connection, channel_id: int, at: int) -> int:
    """The newest message id of the channel created before `at` (0: none)."""
    row = conn.execute(
        "SELECT max(id) FROM messages WHERE channel_id = ? AND created_at < ?", (channel_id, at)
    ).fetchone()
    return int(row[0] or 0)


def pending(conn: sqlite3.Connection, channel_id: int, position: int) -> int:
    """How many of the channel's messages lie past the position (its filter aside)."""
    row = conn.execute(
        "SELECT count(*) FROM messages WHERE channel_id = ? AND id > ?", (channel_id, position)
    ).fetchone()
    return int(row[0])


def oldest_after(conn: sqlite3.Connection, channel_id: int, position: int) -> int | None:
    row = conn.execute(
        "SELECT min(id) FROM messages WHERE channel_id = ? AND id > ?", (channel_id, position)
    ).fetchone()
    return None if row[0] is None else int(row[0])


def mark_compacted(conn: sqlite3.Connection) -> None:
    """Before compact deletes the messages in temp.compact_ids: each cursor that had not read
    some of them keeps the highest such id, so that its next read says so."""
    taken = (
        "SELECT max(m.id) FROM messages m WHERE m.id IN (SELECT id FROM temp.compact_ids)"
        " AND m.channel_id = cursors.channel_id AND m.id > cursors.position"
    )
    conn.execute(
        f"UPDATE cursors SET lost_through = max(coalesce(lost_through, 0), ({taken}))"
        f" WHERE ({taken}) IS NOT NULL"
    )
