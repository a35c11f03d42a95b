"""Store-wide reads: metadata, schema version, row counts, the data version."""

from __future__ import annotations

import sqlite3


def meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    one = conn.execute(
        "SELECT (SELECT count(*) FROM channels), (SELECT count(*) FROM messages),"
        " (SELECT count(*) FROM deliveries WHERE state = 'unread'),"
        " (SELECT count(*) FROM dead_letters)"
    ).fetchone()
    return dict(zip(("channels", "messages", "unread", "dead_letters"), one, strict=True))


def data_version(conn: sqlite3.Connection) -> int:
    """Changes whenever another connection commits: a cheap way to notice new messages."""
    return conn.execute("PRAGMA data_version").fetchone()[0]
