"""The task events a node sends to the other node of a task that crossed nodes, in the
transaction that records them (tasks.record): which events travel, under which outbox kind,
and the event id both nodes give a task's overdue mark. Below the task rules, which call it;
reading a peer's events is taskfed.py, above them. Stdlib and store only."""

from __future__ import annotations

import sqlite3
import uuid
from typing import Any

from acomm_cli import clock
from acomm_cli.engine import remote
from acomm_cli.engine.taskdata import Task
from acomm_cli.store import federation as fsql

# history event -> outbox kind; `task_incident`: the owner's node tells the creator's copy
# of the review incident it opened
KINDS = {
    "accepted": "task_accept",
    "updated": "task_update",
    "completed": "task_complete",
    "failed": "task_failed",
    "incident": "task_incident",
}


def overdue_event_id(global_id: str) -> str:
    """Both nodes mark a federated task overdue on their own (dated at its ETA, never sent):
    the same event id on both keeps their histories alike."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"acomm:task:{global_id}:overdue"))


def sends(task: Task, event: str) -> bool:
    """Whether this node sends `event` of `task` to the other node: the owner's events of a
    task created elsewhere, and the review's `incident` on the owner's node (the creator's
    copy never reviews)."""
    if task.peer_node is None:
        return False
    return event in KINDS and (event != "incident" or task.origin_node is not None)


def emit_event(
    conn: sqlite3.Connection,
    task: Task,
    event: str,
    event_id: str,
    *,
    at: int,
    progress: int | None,
    note: str | None,
    eta_at: int | None,
    ack_timeout_ms: int,
    detail: dict[str, Any] | None = None,
) -> None:
    """The owner's node sends one of its task's events to the creator's node, in the
    transaction that recorded it, and keeps the sender's state (retries, dead letter)."""
    me = fsql.node_id(conn)
    assert me is not None and task.peer_node is not None and task.global_id is not None
    payload: dict[str, Any] = {"taskId": task.global_id, "event": event}
    if progress is not None:
        payload["progress"] = progress
    if note is not None:
        payload["note"] = note
    if eta_at is not None:
        payload["etaAt"] = clock.iso(eta_at)
    if detail:
        payload["detail"] = detail
    remote.emit(
        conn,
        me,
        KINDS[event],
        to_node=task.peer_node,
        now=at,
        event_id=event_id,
        source_agent=task.owner,
        to_agent=task.creator,
        corr=task.correlation_id,
        payload=payload,
        decision="owner",
    )
    fsql.insert_sent(
        conn,
        event_id,
        None,
        task.peer_node,
        task.creator,
        "owner",
        "emitted",
        at + ack_timeout_ms,
        at,
    )
