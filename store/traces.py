"""SQL of traces: the messages, dispatch runs and task events of one trace id."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from acomm_cli.store.reads import _STATUS_SQL

# An acknowledgement names the message it acknowledges in its metadata (`ack_for`); a
# dead-letter notice names the dead message in its JSON body.
_ABOUT_SQL = (
    "CASE WHEN m.type = 'acknowledgment' AND json_valid(m.metadata)"
    " THEN CAST(json_extract(m.metadata, '$.ack_for') AS INTEGER)"
    " WHEN m.sender = 'acomm' AND json_valid(m.content)"
    " THEN CAST(json_extract(m.content, '$.message_id') AS INTEGER) END"
)


def messages(conn: sqlite3.Connection, trace_id: str) -> list[dict[str, Any]]:
    """The trace's messages, oldest first, each with its recipients and status."""
    rows = conn.execute(
        "SELECT m.id, c.name, m.sender, m.type, m.topic, m.correlation_id, m.created_at,"
        f" m.global_id, m.origin_node, {_STATUS_SQL}, {_ABOUT_SQL},"
        " (SELECT json_group_array(d.recipient) FROM deliveries d WHERE d.message_id = m.id)"
        " FROM messages m JOIN channels c ON c.id = m.channel_id"
        " WHERE m.trace_id = ? ORDER BY m.created_at, m.id",
        (trace_id,),
    ).fetchall()
    import json

    keys = (
        "id",
        "channel",
        "sender",
        "type",
        "topic",
        "correlation_id",
        "created_at",
        "global_id",
        "origin_node",
        "status",
        "about",
    )
    out = []
    for row in rows:
        doc = dict(zip(keys, row[:-1], strict=True))
        doc["recipients"] = sorted(json.loads(row[-1])) if row[-1] else []
        out.append(doc)
    return out


def runs(conn: sqlite3.Connection, message_ids: Sequence[int]) -> list[dict[str, Any]]:
    """The dispatch runs on these messages (every attempt), in the order they started."""
    if not message_ids:
        return []
    rows = conn.execute(
        "SELECT run_id, message_id, agent, status, started_at, finished_at, attempt"
        " FROM dispatch_receipts WHERE message_id IN"
        f" ({','.join('?' * len(message_ids))}) ORDER BY seq",
        tuple(message_ids),
    ).fetchall()
    keys = ("run_id", "message_id", "agent", "status", "started_at", "finished_at", "attempt")
    return [dict(zip(keys, r, strict=True)) for r in rows]


def task_events(conn: sqlite3.Connection, correlation_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The events of the tasks with these correlation ids, in the order they were recorded."""
    if not correlation_ids:
        return []
    rows = conn.execute(
        "SELECT e.seq, e.event_id, e.task_id, e.event, e.agent, e.at, e.origin_node,"
        " t.correlation_id FROM task_events e JOIN tasks t ON t.id = e.task_id"
        f" WHERE t.correlation_id IN ({','.join('?' * len(correlation_ids))}) ORDER BY e.seq",
        tuple(correlation_ids),
    ).fetchall()
    keys = ("seq", "event_id", "task_id", "event", "agent", "at", "origin_node", "correlation_id")
    return [dict(zip(keys, r, strict=True)) for r in rows]


def inherit(conn: sqlite3.Connection, message_id: int, from_message_id: int) -> None:
    """Put a message acomm wrote itself (a `_system` notice) in another message's trace."""
    conn.execute(
        "UPDATE messages SET trace_id = (SELECT trace_id FROM messages WHERE id = ?) WHERE id = ?",
        (from_message_id, message_id),
    )


# The hops this connection makes, kept by TEMP triggers: they fire only for this connection's
# own inserts (another process sending meanwhile is not ours) and roll back with them.
_WATCH = (
    "CREATE TEMP TABLE IF NOT EXISTS made_hops (key TEXT PRIMARY KEY, message_id INTEGER)",
    "CREATE TEMP TRIGGER IF NOT EXISTS made_messages AFTER INSERT ON main.messages BEGIN"
    " INSERT OR IGNORE INTO made_hops VALUES ('m' || new.id, new.id); END",
    "CREATE TEMP TRIGGER IF NOT EXISTS made_runs AFTER INSERT ON main.dispatch_receipts BEGIN"
    " INSERT OR IGNORE INTO made_hops VALUES ('r' || new.run_id, new.message_id); END",
)


def watch(conn: sqlite3.Connection) -> None:
    """From now on, keep the messages and dispatch runs this connection inserts."""
    for sql in _WATCH:
        conn.execute(sql)


def made(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """The hops kept since `watch`, as {trace id: [hop keys]}: m<id> for a message, r<run
    id> for a dispatch run (the keys of engine/traces.tree's hops)."""
    out: dict[str, list[str]] = {}
    for key, trace in conn.execute(
        "SELECT h.key, m.trace_id FROM temp.made_hops h JOIN messages m ON m.id = h.message_id"
        " WHERE m.trace_id IS NOT NULL ORDER BY h.rowid"
    ):
        out.setdefault(trace, []).append(key)
    return out
