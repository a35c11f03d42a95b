"""SQL of a message's rich parts: its format and subject columns, the content-addressed blobs
(`attachments`, one row per sha256) and the names a message gives them
(`message_attachments`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

TYPE_CHECKING = False  # typing's, without importing typing
if TYPE_CHECKING:
    from typing import Any


def set_format_subject(
    conn: sqlite3.Connection, message_id: int, fmt: str | None, subject: str | None
) -> None:
    conn.execute(
        "UPDATE messages SET format = ?, subject = ? WHERE id = ?", (fmt, subject, message_id)
    )


def add_blob(conn: sqlite3.Connection, sha256: str, data: bytes, now: int) -> bool:
    """Store a blob unless one with its hash is there already; True when it was new."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO attachments (sha256, size, data, created_at) VALUES (?, ?, ?, ?)",
        (sha256, len(data), data, now),
    )
    return cur.rowcount > 0


def name_files(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    """(message_id, name, sha256, size, content_type) rows."""
    conn.executemany(
        "INSERT INTO message_attachments (message_id, name, sha256, size, content_type)"
        " VALUES (?, ?, ?, ?, ?)",
        rows,
    )


def rich_rows(
    conn: sqlite3.Connection, ids: Sequence[int]
) -> list[tuple[int, str | None, str | None, str | None, str | None, int | None, str | None]]:
    """(message id, format, subject, file name, sha256, size, content type) for the messages
    of `ids` with a format, a subject or a file: one row per file (file columns NULL for a
    message without one), in name order."""
    out: list[Any] = []
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        out += conn.execute(
            "SELECT m.id, m.format, m.subject, a.name, a.sha256, a.size, a.content_type"
            " FROM messages m LEFT JOIN message_attachments a ON a.message_id = m.id"
            f" WHERE m.id IN ({','.join('?' * len(chunk))})"
            " AND (m.format IS NOT NULL OR m.subject IS NOT NULL OR a.message_id IS NOT NULL)"
            " ORDER BY m.id, a.name",
            chunk,
        ).fetchall()
    return out


def named(conn: sqlite3.Connection, message_id: int) -> list[tuple[str, str, int, str | None]]:
    """(name, sha256, size, content type) of each file a message names, by name."""
    return conn.execute(
        "SELECT name, sha256, size, content_type FROM message_attachments"
        " WHERE message_id = ? ORDER BY name",
        (message_id,),
    ).fetchall()


def blob(conn: sqlite3.Connection, sha256: str) -> bytes | None:
    row = conn.execute("SELECT data FROM attachments WHERE sha256 = ?", (sha256,)).fetchone()
    return None if row is None else bytes(row[0])


def count_blobs(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM attachments").fetchone()[0]


_ORPHANS = (
    " FROM attachments WHERE NOT EXISTS (SELECT 1 FROM message_attachments n"
    " INDEXED BY message_attachments_blob WHERE n.sha256 = attachments.sha256)"
)


def count_orphans(conn: sqlite3.Connection) -> int:
    return conn.execute(f"SELECT count(*) {_ORPHANS}").fetchone()[0]


def delete_orphans(conn: sqlite3.Connection) -> int:
    """Remove every blob no message names; returns how many."""
    return conn.execute(f"DELETE {_ORPHANS}").rowcount


def orphaned_by_selection(conn: sqlite3.Connection) -> int:
    """Blobs named only by messages in temp.compact_ids (a dry run's count of what compact
    would then remove), plus those no message names now."""
    return conn.execute(
        "SELECT count(*) FROM attachments WHERE NOT EXISTS (SELECT 1 FROM message_attachments n"
        " WHERE n.sha256 = attachments.sha256"
        " AND n.message_id NOT IN (SELECT id FROM temp.compact_ids))"
    ).fetchone()[0]
