"""Tasks between nodes: what a node does with the task events it reads, and how both
nodes keep a copy of a task that crossed them.

The creator's node sends `task_create` (the task's command message, routed like `send --to`,
by `sending.send_remote`); the owner's node sends `task_accept` (with `etaAt`), `task_update`,
`task_complete` (with the body) and `task_failed`, each as it happens (`tasks.record`,
through taskemit.py). Both nodes keep a copy of the task, addressed by its global id (the
`task_create` eventId); each history row's event_id is the eventId that carried it, so both
histories list the same ids. Every task event the owner's node sends is retried and
dead-lettered like a message (a `fed_sent` row without a message); the creator's node
acknowledges each one `processed` as it records it (no agent turn is owed for a task event).
The owner's `task_accept` (or `task_failed`, or `task_complete`) counts as `processed` for
the `task_create` event. Imported only on a node (federation's pull)."""

from __future__ import annotations

import sqlite3
from typing import Any

from acomm_cli import clock
from acomm_cli.engine import catalog, remote, tasks
from acomm_cli.engine.channels import channel_by_id
from acomm_cli.engine.sending import Router, persist, plan_message
from acomm_cli.engine.taskdata import TASK_TYPES, Task, by_global_id, load
from acomm_cli.engine.taskemit import KINDS
from acomm_cli.errors import CommError, EventRejected
from acomm_cli.model import MessageType, SendRequest
from acomm_cli.store import federation as fsql

# outbox kind -> history event, for the task events this node reads
EVENTS = {kind: event for event, kind in KINDS.items()}


def _ms(value: Any, now: int) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return clock.parse_time(value, "at", now)
    except CommError:
        return None


def created(
    conn: sqlite3.Connection,
    source: str,
    env: dict[str, Any],
    message_id: int,
    channel_id: int,
    now: int,
) -> bool:
    """An inbound `task_create` whose command message is stored here (`message_id`): the
    owner's copy of the task (idempotent by its global id)."""
    meta = (env.get("payload") or {}).get("metadata") or {}
    capability = meta.get("capability")
    task_type = meta.get("task_type") if meta.get("task_type") in TASK_TYPES else "task"
    at = _ms(env.get("createdAt"), now) or now
    tasks.record_created(
        conn,
        task_id=message_id,
        correlation_id=str(env.get("corrId") or env["eventId"]),
        channel_id=channel_id,
        creator=str(env["sourceAgentId"]),
        owner=str(env["toAgentId"]),
        at=at,
        task_type=str(task_type),
        capability=capability if isinstance(capability, str) else None,
        eta_required=bool(meta.get("eta_required")),
        event_id=str(env["eventId"]),
        global_id=str(env["eventId"]),
        origin_node=source,
        peer_node=source,
        eta_at=_eta(conn, meta, str(task_type), at),
    )
    return True


def _eta(conn: sqlite3.Connection, meta: dict[str, Any], task_type: str, at: int) -> int | None:
    """A capability task's default ETA: the one the creator's node computed from the room's
    catalog (`eta_at` in the command's metadata: both copies then turn overdue at the same
    instant), else this node's catalog from the task's creation."""
    if meta.get("eta_at") is not None:
        return _ms(meta.get("eta_at"), at)
    capability = meta.get("capability")
    if task_type != "task" or not isinstance(capability, str):
        return None
    cap = catalog.find(conn, capability)
    return at + cap.eta_ms if cap is not None and cap.state == "published" else None


def applied(conn: sqlite3.Connection, me: str, source: str, env: dict[str, Any], now: int) -> bool:
    """An inbound `task_accept|task_update|task_complete|task_failed` on the creator's node:
    the same event recorded on its copy (under the peer's eventId: a re-read is a no-op),
    the creator told as on one store (an acknowledgement carrying the ETA, the result as a
    `response`, the failure as an acknowledgement), `processed` for the `task_create`
    event, and `ack processed` for this one. False when no task here matches, or the event
    no longer fits it (recorded in fed_inbound, skipped)."""
    payload = env.get("payload") or {}
    event_id, kind = str(env["eventId"]), str(env["kind"])
    event = EVENTS[kind]
    task = by_global_id(conn, str(payload.get("taskId")), None)  # a task created here
    ok = task is not None
    if task is not None:
        at = _ms(env.get("createdAt"), now) or now
        eta_at = _ms(payload.get("etaAt"), now)
        progress = payload.get("progress")
        note = payload.get("note")
        detail = payload.get("detail") if event == "incident" else None
        tasks.catch_up(conn, at)  # an ETA passed before this event: overdue first, as there
        task = load(conn, task.id)
        try:
            with _savepoint(conn):
                mid = _tell_creator(conn, task, event, note, eta_at, now)
                tasks.record(
                    conn,
                    task,
                    event,
                    at=at,
                    agent=None if event == "incident" else str(env["sourceAgentId"]),
                    progress=progress if isinstance(progress, int) else None,
                    note=note if isinstance(note, str) else None,
                    eta_at=eta_at,
                    message_id=mid,
                    event_id=event_id,
                    origin_node=source,
                    detail=detail if isinstance(detail, dict) else None,
                )
        except EventRejected:
            raise  # refused: the pull undoes the whole event
        except CommError:
            ok = False  # out of order or already final: the owner's node stays the authority
        if event in ("accepted", "completed", "failed") and task.global_id is not None:
            _processed(conn, task.global_id, now)
    remote.emit(
        conn,
        me,
        "ack",
        to_node=source,
        now=now,
        source_agent=None,
        to_agent=None,
        corr=env.get("corrId"),
        payload={"ackOf": event_id, "status": "processed", "outcome": "recorded"},
        decision=None,
    )
    return ok


def _savepoint(conn: sqlite3.Connection) -> Any:
    from acomm_cli.store.connection import savepoint

    return savepoint(conn, "task_event")


def _processed(conn: sqlite3.Connection, create_event: str, now: int) -> None:
    """The owner took the task on (or ended it): its `task_create` is processed."""
    row = fsql.sent(conn, create_event)
    if row is not None and row[5] in ("emitted", "accepted", "incident"):
        fsql.update_sent(
            conn,
            create_event,
            state="processed",
            processed_at=now,
            accepted_at=row[9] or now,
            next_timer_at=None,
        )


def _tell_creator(
    conn: sqlite3.Connection, task: Task, event: str, note: Any, eta_at: int | None, now: int
) -> int | None:
    """What the creator gets in its inbox on one store: an acknowledgement `in_progress`
    with the ETA, the result as a `response`, or an acknowledgement `failed`."""
    if event in ("updated", "incident"):
        return None  # history only (an incident is the owner's node's to review)
    text = note if isinstance(note, str) and note else None
    meta = {"task_id": str(task.id), "task_event": event}
    if event == "completed":
        mtype, content = MessageType.RESPONSE.value, text or f"task {task.id} completed"
    else:
        status = "in_progress" if event == "accepted" else "failed"
        mtype, content = (
            MessageType.ACKNOWLEDGMENT.value,
            text or ("accepted" if event == "accepted" else "failed"),
        )
        meta.update(ack_for=str(task.id), status=status)
        if eta_at is not None:
            meta["eta_at"] = clock.iso(eta_at) or ""
    router = Router(conn)
    ch = channel_by_id(conn, task.channel_id)
    plan = plan_message(
        router,
        SendRequest(
            sender=task.owner,
            content=content,
            channel=ch.name,
            type=mtype,
            correlation_id=task.correlation_id,
            metadata=meta,
        ),
        now,
        only_to=task.creator,
        internal=True,
    )
    return persist(router, plan, now, federated=True).id if plan.recipients else None
