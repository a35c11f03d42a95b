"""SQL for tasks and their history (m006_tasks). The rules are the engine's
(acomm_cli/engine/tasks.py): this module reads and writes rows, nothing more."""

from __future__ import annotations

import sqlite3
from typing import Any

# the states with a running ETA: once it passes, tick marks them overdue (keep in step with
# the partial index tasks_due, whose WHERE this repeats so that SQLite uses it)
_DUE = "eta_at IS NOT NULL AND state IN ('created', 'accepted', 'updated')"

TASK_COLS = (
    "id, correlation_id, channel_id, task_type, capability_id, creator, owner, state,"
    " eta_required, eta_at, progress, plan, note, result_message_id, created_at,"
    " accepted_at, updated_at, finished_at, global_id, origin_node, peer_node"
)
EVENT_COLS = (
    "seq, event_id, task_id, event, agent, at, progress, note, eta_at, message_id,"
    " origin_node, detail"
)


def insert_task(conn: sqlite3.Connection, row: dict[str, Any]) -> None:
    names = ", ".join(row)
    conn.execute(
        f"INSERT INTO tasks ({names}) VALUES ({', '.join('?' for _ in row)})", tuple(row.values())
    )


def update_task(conn: sqlite3.Connection, task_id: int, changes: dict[str, Any]) -> None:
    sets = ", ".join(f"{k} = ?" for k in changes)
    conn.execute(f"UPDATE tasks SET {sets} WHERE id = ?", (*changes.values(), task_id))


def task_row(conn: sqlite3.Connection, task_id: int) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {TASK_COLS} FROM tasks WHERE id = ?", (task_id,)
    ).fetchone()
    return row


def task_by_global_id(
    conn: sqlite3.Connection, global_id: str, origin: str | None = "*"
) -> tuple[Any, ...] | None:
    """The task of a global id; with `origin`, only the one created on that node (None: on
    this store): a global id is unique per origin node."""
    if origin == "*":
        row: tuple[Any, ...] | None = conn.execute(
            f"SELECT {TASK_COLS} FROM tasks WHERE global_id = ? ORDER BY id LIMIT 1",
            (global_id,),
        ).fetchone()
        return row
    return conn.execute(
        f"SELECT {TASK_COLS} FROM tasks WHERE global_id = ? AND coalesce(origin_node, '') = ?",
        (global_id, origin or ""),
    ).fetchone()


def task_rows(
    conn: sqlite3.Connection,
    *,
    agent: str | None,
    state: str | None,
    task_type: str | None,
    limit: int,
    offset: int,
) -> tuple[list[tuple[Any, ...]], int]:
    """A page of tasks, newest first, where `agent` is the creator or the owner."""
    where, params = [], []
    if agent is not None:
        where.append("(creator = ? OR owner = ?)")
        params += [agent, agent]
    if state is not None:
        where.append("state = ?")
        params.append(state)
    if task_type is not None:
        where.append("task_type = ?")
        params.append(task_type)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    total = conn.execute(f"SELECT count(*) FROM tasks{clause}", params).fetchone()[0]
    rows = conn.execute(
        f"SELECT {TASK_COLS} FROM tasks{clause} ORDER BY id DESC LIMIT ? OFFSET ?",
        (*params, limit, offset),
    ).fetchall()
    return rows, total


def event_seen(conn: sqlite3.Connection, event_id: str, origin: str | None) -> bool:
    """An event of node `origin` (None: this store) already in a task's history (an event id
    is unique per origin node, m019)."""
    return (
        conn.execute(
            "SELECT 1 FROM task_events WHERE event_id = ? AND coalesce(origin_node, '') = ?",
            (event_id, origin or ""),
        ).fetchone()
        is not None
    )


def insert_event(conn: sqlite3.Connection, row: dict[str, Any]) -> None:
    names = ", ".join(row)
    conn.execute(
        f"INSERT INTO task_events ({names}) VALUES ({', '.join('?' for _ in row)})",
        tuple(row.values()),
    )


def events_of(conn: sqlite3.Connection, task_id: int) -> list[tuple[Any, ...]]:
    return conn.execute(
        f"SELECT {EVENT_COLS} FROM task_events WHERE task_id = ? ORDER BY seq", (task_id,)
    ).fetchall()


def due(conn: sqlite3.Connection, now: int) -> list[tuple[int, int]]:
    """(task id, eta_at) of open tasks whose ETA has passed, oldest ETA first."""
    return conn.execute(
        f"SELECT id, eta_at FROM tasks WHERE {_DUE} AND eta_at <= ? ORDER BY eta_at, id", (now,)
    ).fetchall()


def has_due(conn: sqlite3.Connection, now: int) -> bool:
    return (
        conn.execute(f"SELECT 1 FROM tasks WHERE {_DUE} AND eta_at <= ? LIMIT 1", (now,)).fetchone()
        is not None
    )


def counts_by_state(conn: sqlite3.Connection, agent: str | None = None) -> list[tuple[str, int]]:
    """(state, count) of tasks, or of the tasks `agent` created or owns."""
    if agent is None:
        return conn.execute(
            "SELECT state, count(*) FROM tasks GROUP BY state ORDER BY state"
        ).fetchall()
    return conn.execute(
        "SELECT state, count(*) FROM tasks WHERE creator = ?1 OR owner = ?1"
        " GROUP BY state ORDER BY state",
        (agent,),
    ).fetchall()
