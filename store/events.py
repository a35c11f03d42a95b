"""SQL of the notification event a message carries (message_events, one row per message)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from acomm_cli.model import Event

TYPE_CHECKING = False  # typing's, without importing typing
if TYPE_CHECKING:
    from typing import Any

# In the order of model.Event's fields.
EVENT_COLS = (
    "event_type, event_id, occurred_at, actor, target, target_kind, thread_id, comment_id,"
    " parent_comment_id, depth, language, action_hint, content_preview"
)

_INSERT = (
    "INSERT INTO message_events (message_id, channel_id, event_type, event_id, occurred_at,"
    " actor, target, target_kind, thread_id, comment_id, parent_comment_id, depth, language,"
    " action_hint, content_preview) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def event(row: Sequence[Any]) -> Event:
    """An Event from EVENT_COLS' values."""
    return Event(*row)


def row_of(message_id: int, channel_id: int, ev: Event) -> tuple[Any, ...]:
    return (
        message_id,
        channel_id,
        ev.event_type,
        ev.event_id,
        ev.occurred_at,
        ev.actor,
        ev.target,
        ev.target_kind,
        ev.thread_id,
        ev.comment_id,
        ev.parent_comment_id,
        ev.depth,
        ev.language,
        ev.action_hint,
        ev.content_preview,
    )


def insert_events(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    """Rows as row_of builds them."""
    conn.executemany(_INSERT, rows)


def event_of(conn: sqlite3.Connection, message_id: int) -> Event | None:
    row = conn.execute(
        f"SELECT {EVENT_COLS} FROM message_events WHERE message_id = ?", (message_id,)
    ).fetchone()
    return Event(*row) if row else None


def events_of(conn: sqlite3.Connection, message_ids: Sequence[int]) -> dict[int, Event]:
    """The events of these messages (those that carry one), in one query per 500 ids."""
    found: dict[int, Event] = {}
    for i in range(0, len(message_ids), 500):
        chunk = list(message_ids[i : i + 500])
        for row in conn.execute(
            f"SELECT message_id, {EVENT_COLS} FROM message_events"
            f" WHERE message_id IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            found[row[0]] = Event(*row[1:])
    return found


def any_events(conn: sqlite3.Connection) -> bool:
    """Whether any message carries an event: a listing skips the lookup on a store without."""
    return conn.execute("SELECT 1 FROM message_events LIMIT 1").fetchone() is not None


def find_event_id(
    conn: sqlite3.Connection, channel_id: int, event_id: str
) -> tuple[int, int, str | None] | None:
    """(message id, created_at, correlation id) of the message carrying this event id on
    this channel (unique: message_events_id)."""
    row = conn.execute(
        "SELECT m.id, m.created_at, m.correlation_id FROM message_events e"
        " JOIN messages m ON m.id = e.message_id"
        " WHERE e.channel_id = ? AND e.event_id = ?",
        (channel_id, event_id),
    ).fetchone()
    return (row[0], row[1], row[2]) if row else None
