"""A task as stored: its row (`Task`) and history (`TaskEvent`), and reading them. What the
task rules (tasks.py), the misfire review (incidents.py) and the events sent between nodes
(taskemit.py) all read, below each of them."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from acomm_cli import model
from acomm_cli.errors import NotFound
from acomm_cli.store import tasks as sql

TASK_TYPES = model.TASK_TYPES
STATES = model.TASK_STATES
TERMINAL = ("completed", "failed")


@dataclass(frozen=True)
class TaskEvent:
    event_id: str
    task_id: int
    event: str
    agent: str | None
    at: int
    progress: int | None = None
    note: str | None = None
    eta_at: int | None = None
    message_id: int | None = None
    origin_node: str | None = None  # None: it happened on this store
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Task:
    id: int  # the id of the command message that carries it, on this store
    correlation_id: str
    channel_id: int
    task_type: str
    capability: str | None
    creator: str
    owner: str
    state: str
    eta_required: bool
    eta_at: int | None
    progress: int
    plan: str | None
    note: str | None
    result_message_id: int | None
    created_at: int
    accepted_at: int | None
    updated_at: int
    finished_at: int | None
    global_id: str | None
    origin_node: str | None
    peer_node: str | None
    history: tuple[TaskEvent, ...] = ()


def task_of(row: tuple[Any, ...], history: tuple[TaskEvent, ...] = ()) -> Task:
    (
        tid,
        corr,
        channel_id,
        task_type,
        capability,
        creator,
        owner,
        state,
        eta_required,
        eta_at,
        progress,
        plan,
        note,
        result_id,
        created,
        accepted,
        updated,
        finished,
        global_id,
        origin,
        peer,
    ) = row
    return Task(
        tid,
        corr,
        channel_id,
        task_type,
        capability,
        creator,
        owner,
        state,
        bool(eta_required),
        eta_at,
        progress,
        plan,
        note,
        result_id,
        created,
        accepted,
        updated,
        finished,
        global_id,
        origin,
        peer,
        history,
    )


def event_of(row: tuple[Any, ...]) -> TaskEvent:
    (
        _seq,
        event_id,
        task_id,
        event,
        agent,
        at,
        progress,
        note,
        eta_at,
        message_id,
        origin,
        detail,
    ) = row
    return TaskEvent(
        event_id,
        task_id,
        event,
        agent,
        at,
        progress,
        note,
        eta_at,
        message_id,
        origin,
        json.loads(detail) if detail else {},
    )


def load(conn: sqlite3.Connection, task_id: int | str, *, history: bool = False) -> Task:
    """One task (with its history) by its id here or its global id (the same on both nodes
    of a task that crossed nodes); NotFound (exit 4) for an unknown one."""
    row = None
    if isinstance(task_id, int) or task_id.isdigit():
        row = sql.task_row(conn, int(task_id))
    else:
        row = sql.task_by_global_id(conn, task_id)
    if row is None:
        raise NotFound(f"task {task_id} does not exist", field="task", value=task_id)
    events = tuple(event_of(e) for e in sql.events_of(conn, row[0])) if history else ()
    return task_of(row, events)


def by_global_id(conn: sqlite3.Connection, global_id: str, origin: str | None) -> Task | None:
    """The task a federated event names (its task_create eventId) created on node `origin`
    (None: on this store), or None: a global id is unique per origin node only."""
    row = sql.task_by_global_id(conn, global_id, origin)
    return task_of(row) if row is not None else None
