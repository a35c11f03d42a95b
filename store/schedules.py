"""SQL of recurring schedules (`acomm schedule`) and of withdrawing a scheduled send
(`acomm cancel`)."""

from __future__ import annotations

import sqlite3

TYPE_CHECKING = False  # typing's, without importing typing (a receive's start-up time)
if TYPE_CHECKING:
    from typing import Any

COLS = (
    "s.id, s.channel_id, c.name, s.sender, s.content, s.request, s.every_ms, s.cron,"
    " s.next_at, s.until_at, s.max_runs, s.runs, s.catch_up, s.state, s.last_run_at,"
    " s.last_message_id, s.last_error, s.created_by, s.created_at, s.updated_at"
)
_FROM = " FROM schedules s JOIN channels c ON c.id = s.channel_id"
_READER = (
    " AND s.channel_id IN (SELECT channel_id FROM participants WHERE agent = :agent"
    " UNION SELECT channel_id FROM subscriptions WHERE agent = :agent)"
)


def insert(conn: sqlite3.Connection, row: dict[str, Any]) -> int:
    names = ", ".join(row)
    marks = ", ".join(f":{k}" for k in row)
    cur = conn.execute(f"INSERT INTO schedules ({names}) VALUES ({marks})", row)
    return int(cur.lastrowid or 0)


def get(conn: sqlite3.Connection, schedule_id: int) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {COLS}{_FROM} WHERE s.id = ?", (schedule_id,)
    ).fetchone()
    return row


def every(conn: sqlite3.Connection, channel: str | None = None) -> list[tuple[Any, ...]]:
    if channel is None:
        return conn.execute(f"SELECT {COLS}{_FROM} ORDER BY s.id").fetchall()
    return conn.execute(
        f"SELECT {COLS}{_FROM} WHERE c.name = ? ORDER BY s.id", (channel,)
    ).fetchall()


def any_due(conn: sqlite3.Connection, now: int, agent: str | None = None) -> bool:
    """Cheap check on schedules_due: is an occurrence due (of a channel `agent` reads)?"""
    sql = "SELECT 1 FROM schedules s WHERE s.state = 'active' AND s.next_at <= :now"
    row = conn.execute(
        sql + (_READER if agent is not None else "") + " LIMIT 1", {"now": now, "agent": agent}
    ).fetchone()
    return row is not None


def due(conn: sqlite3.Connection, now: int, agent: str | None = None) -> list[tuple[Any, ...]]:
    sql = f"SELECT {COLS}{_FROM} WHERE s.state = 'active' AND s.next_at <= :now"
    return conn.execute(
        sql + (_READER if agent is not None else "") + " ORDER BY s.next_at, s.id",
        {"now": now, "agent": agent},
    ).fetchall()


def update(conn: sqlite3.Connection, schedule_id: int, **values: Any) -> None:
    sets = ", ".join(f"{k} = :{k}" for k in values)
    conn.execute(f"UPDATE schedules SET {sets} WHERE id = :id", {**values, "id": schedule_id})


def delete(conn: sqlite3.Connection, schedule_id: int) -> None:
    conn.execute("DELETE FROM schedules WHERE id = ?", (schedule_id,))


def deliveries_of(conn: sqlite3.Connection, message_id: int) -> list[tuple[str, str]]:
    """(recipient, state) of each delivery of a message."""
    return conn.execute(
        "SELECT recipient, state FROM deliveries WHERE message_id = ?", (message_id,)
    ).fetchall()
