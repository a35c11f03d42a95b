"""SQL of files held by another node: the names an inbound message gives them (with the
node that holds their bytes, `message_attachments.origin_node`), and on the origin node the
question its blob endpoint asks: did a message this node sent to that peer name this blob?"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

TYPE_CHECKING = False  # typing's, without importing typing
if TYPE_CHECKING:
    from typing import Any


def name_remote(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    """(message_id, name, sha256, size, content_type, origin_node) rows; no blob is written."""
    conn.executemany(
        "INSERT INTO message_attachments"
        " (message_id, name, sha256, size, content_type, origin_node)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )


def origin_of(conn: sqlite3.Connection, message_id: int, name: str) -> str | None:
    """The node holding the bytes of a message's file, None for a file sent from here."""
    row = conn.execute(
        "SELECT origin_node FROM message_attachments WHERE message_id = ? AND name = ?",
        (message_id, name),
    ).fetchone()
    return None if row is None else row[0]


def has_blob(conn: sqlite3.Connection, sha256: str) -> bool:
    return (
        conn.execute("SELECT 1 FROM attachments WHERE sha256 = ?", (sha256,)).fetchone() is not None
    )


def sent_to_node(conn: sqlite3.Connection, node: str, sha256: str) -> bool:
    """Whether a message this node sent to `node` (its outbox event's record, fed_sent)
    names the blob as one of its own files (not one it holds for another node)."""
    row = conn.execute(
        "SELECT 1 FROM message_attachments a JOIN fed_sent s ON s.message_id = a.message_id"
        " WHERE a.sha256 = ? AND a.origin_node IS NULL AND s.to_node = ? LIMIT 1",
        (sha256, node),
    ).fetchone()
    return row is not None


def held_elsewhere(conn: sqlite3.Connection, sha256: str) -> bool:
    """Whether a message names the blob as a file another node holds."""
    row = conn.execute(
        "SELECT 1 FROM message_attachments WHERE sha256 = ? AND origin_node IS NOT NULL LIMIT 1",
        (sha256,),
    ).fetchone()
    return row is not None
