"""Tasks: work one agent delegates to another, with an ETA,
progress, and an end (completed or failed).

A task is carried by a `command` message from its creator to its owner on their direct channel
(docs/DECISIONS.md, "Tasks ride on command messages"): the owner finds it in `receive`, agent
dispatch can run it, and the task's id is that message's id. The owner's answers are ordinary
traffic on that channel: accepting acknowledges the delivery `in_progress` with the ETA in the
acknowledgement's metadata (so the creator learns the ETA), completing sends a
`response` with the result (which, like a response to a query, counts as the owner's ack
`completed`), failing acknowledges `failed` with the reason. Progress updates write only the
task's history.

The row in `tasks` is the current state; `task_events` the history (both read as records in
taskdata.py). Every change goes through `record()`, which checks the transition, writes one
history row under a UUIDv7 event id, and is idempotent by that id: engine/taskfed.py records
a peer's `task_*` event by calling it with the event's own id (a re-read changes nothing).
States:

    created -> accepted -> (updated)* -> completed | failed
    created -> failed (the owner declines)
    created | accepted | updated -> overdue (tick, once the ETA passes; updates keep it overdue)
    any open state -> incident (a capability's misfire review opened one about it)
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from acomm_cli import clock, model
from acomm_cli.engine import acking, catalog, directory, incidents, presence, taskemit
from acomm_cli.engine.channels import channel_by_id
from acomm_cli.engine.sending import Router, persist, plan_message, send_direct
from acomm_cli.engine.taskdata import (
    STATES,
    TASK_TYPES,
    TERMINAL,
    Task,
    by_global_id,
    load,
    task_of,
)
from acomm_cli.errors import (
    CommError,
    Forbidden,
    InvalidState,
    NoCapability,
    OutputMismatch,
    ValidationFailed,
)
from acomm_cli.model import ACK_ORDER, AckStatus, DeliveryState, Limits, MessageType, SendRequest
from acomm_cli.store import acks, write
from acomm_cli.store import tasks as sql

# the events only the task's owner may cause
OWNER_EVENTS = ("accepted", "updated", "completed", "failed")
# event -> the states it may follow
_FOLLOWS: dict[str, tuple[str, ...]] = {
    "accepted": ("created",),
    "updated": ("accepted", "updated", "overdue", "incident"),
    "completed": ("accepted", "updated", "overdue", "incident"),
    "failed": ("created", "accepted", "updated", "overdue", "incident"),
    "overdue": ("created", "accepted", "updated"),
    "incident": STATES,  # on a finished task: recorded, the state stays
}
EVENTS = ("created", *_FOLLOWS)


# ---------------------------------------------------------------- reading (taskdata.py has
# the records and `load`)


def show(conn: sqlite3.Connection, task_id: int | str, now: int) -> Task:
    """`task show`: after marking what is overdue by now (as `receive` applies due timers)."""
    _catch_up(conn, now)
    return load(conn, task_id, history=True)


def list_tasks(
    conn: sqlite3.Connection,
    now: int,
    *,
    agent: str | None = None,
    state: str | None = None,
    task_type: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> tuple[list[Task], int]:
    """`task list`: newest first; `agent` is on either side (creator or owner)."""
    if agent is not None:
        model.agent_id(agent, "as")
    if state is not None and state not in STATES:
        raise ValidationFailed(
            f"state: {state!r} is not one of {', '.join(STATES)}", field="state", value=state
        )
    if task_type is not None and task_type not in TASK_TYPES:
        raise ValidationFailed(
            f"type: {task_type!r} is not one of {', '.join(TASK_TYPES)}",
            field="type",
            value=task_type,
        )
    if limit < 0 or offset < 0:
        raise ValidationFailed("limit: --limit and --offset must not be negative", field="limit")
    _catch_up(conn, now)
    rows, total = sql.task_rows(
        conn, agent=agent, state=state, task_type=task_type, limit=limit, offset=offset
    )
    return [task_of(r) for r in rows], total


def counts(conn: sqlite3.Connection, agent: str | None = None) -> dict[str, int]:
    """Tasks by state, every state named (`stats`); `agent`: on either side."""
    return {**dict.fromkeys(STATES, 0), **dict(sql.counts_by_state(conn, agent))}


# ---------------------------------------------------------------- the one way a task changes


def record(
    conn: sqlite3.Connection,
    task: Task,
    event: str,
    *,
    agent: str | None,
    at: int,
    progress: int | None = None,
    note: str | None = None,
    eta_at: int | None = None,
    message_id: int | None = None,
    event_id: str | None = None,
    origin_node: str | None = None,
    detail: dict[str, Any] | None = None,
    ack_timeout_ms: int = 30_000,
) -> bool:
    """Apply one event to `task` inside the caller's transaction: check who may cause it and
    that it may follow the task's state, write its history row, move the task. Idempotent by
    `event_id` (a peer's event is recorded under its own eventId): an event already recorded
    changes nothing and returns False. A fresh local event gets a new UUIDv7 id.

    Between nodes: an inbound `task_*` event (taskfed.py) is recorded here with the peer's
    eventId and node; an owner's event of a task created on another node is sent there
    (taskemit.py; its history row's event_id is the outbox eventId); on the creator's node
    the owner's events come only from the owner's node. An overdue or failed capability task
    goes to the misfire review (incidents.py), and an incident it opens is recorded here as
    the task's `incident` event."""
    if event_id is not None and sql.event_seen(conn, event_id, origin_node):
        return False
    new_state = _next_state(task, event, agent)
    remote_owner = task.peer_node is not None and task.origin_node is None
    if origin_node is None and remote_owner and event in OWNER_EVENTS:
        raise Forbidden(
            f"task {task.id} belongs to {task.owner!r} on node {task.peer_node!r};"
            " only that node may change it",
            field="as",
            value=agent,
            owner=task.owner,
            owner_node=task.peer_node,
        )
    event_id = event_id or _event_id(at)
    sql.insert_event(
        conn,
        {
            "event_id": event_id,
            "task_id": task.id,
            "event": event,
            "agent": agent,
            "at": at,
            "progress": progress,
            "note": note,
            "eta_at": eta_at,
            "message_id": message_id,
            "origin_node": origin_node,
            "detail": json.dumps(detail, separators=(",", ":")) if detail else None,
        },
    )
    changes: dict[str, Any] = {"state": new_state, "updated_at": at}
    if event == "accepted":
        # no ETA given: the one the task was created with (a capability's default) stands
        changes.update(accepted_at=at, eta_at=task.eta_at if eta_at is None else eta_at, plan=note)
    elif event == "updated":
        if progress is not None:
            changes["progress"] = progress
        if note is not None:
            changes["note"] = note
    elif event in TERMINAL:
        changes.update(finished_at=at, note=note, result_message_id=message_id)
        if event == "completed":
            changes["progress"] = 100
    sql.update_task(conn, task.id, changes)
    if origin_node is None and taskemit.sends(task, event):
        taskemit.emit_event(
            conn,
            task,
            event,
            event_id,
            at=at,
            progress=progress,
            note=note,
            eta_at=eta_at,
            ack_timeout_ms=ack_timeout_ms,
            detail=detail,
        )
    if event in ("overdue", "failed") and task.capability is not None and task.task_type == "task":
        # a capability's misfire: the review may open an incident, which the task records
        opened = incidents.review_task(conn, task, event, at)
        if opened is not None:
            _mark_incident(conn, task.id, *opened, at)
    return True


def _mark_incident(
    conn: sqlite3.Connection,
    task_id: int,
    incident_id: int,
    failure_class: str,
    at: int,
    note: str | None = None,
) -> None:
    """The task's `incident` event for a review incident just opened about it."""
    record(
        conn,
        load(conn, task_id),
        "incident",
        agent=None,
        at=at,
        note=note,
        detail={"incident_id": incident_id, "failure_class": failure_class},
    )


def _next_state(task: Task, event: str, agent: str | None) -> str:
    if event not in _FOLLOWS:
        raise ValidationFailed(
            f"event: {event!r} is not one of {', '.join(_FOLLOWS)}", field="event", value=event
        )
    if event in OWNER_EVENTS and agent != task.owner:
        verb = {
            "accepted": "accept",
            "updated": "update",
            "completed": "complete",
            "failed": "fail",
        }[event]
        raise Forbidden(
            f"task {task.id} belongs to {task.owner!r}; only its owner may {verb} it",
            field="as",
            value=agent,
            owner=task.owner,
        )
    if task.state not in _FOLLOWS[event]:
        raise InvalidState(_refusal(task, event), field="task", value=task.id, state=task.state)
    if event == "updated" and task.state in ("overdue", "incident"):
        return task.state  # progress does not take back a passed ETA or an open incident
    if event == "incident" and task.state in TERMINAL:
        return task.state
    return event


def _refusal(task: Task, event: str) -> str:
    t = f"task {task.id}"
    if event == "accepted":
        return (
            f"{t} was already accepted (it is {task.state})"
            if task.state != "created"
            else f"{t} cannot be accepted"
        )
    if task.state in TERMINAL:
        return f"{t} is {task.state}; it takes no more changes"
    if task.state == "created":
        return f"{t} has not been accepted yet; accept it first (task accept {task.id} --eta D)"
    return f"{t} is {task.state}; it cannot become {event}"


def _event_id(now: int) -> str:
    from acomm_cli.engine.remote import uuid7  # the one UUIDv7 (outbox events use it too)

    return uuid7(now)


# ---------------------------------------------------------------- the lifecycle


def create(
    conn: sqlite3.Connection,
    creator: str,
    owner: str | None,
    content: str,
    now: int,
    *,
    capability: str | None = None,
    eta_required: bool = False,
    task_type: str = "task",
    limits: Limits | None = None,
    extra_meta: dict[str, Any] | None = None,
) -> Task:
    """`task create`: a command message to `owner` and its task, in one transaction. With a
    capability (a plain task), the catalog routes it: `owner` may be None (its owner), and a
    miss (unknown, unpublished, not its owner) is refused with exit 5 and counted for the
    review in a transaction of its own (engine/incidents.routing_miss)."""
    model.agent_id(creator, "as")
    if owner is not None:
        model.agent_id(owner, "to")
    if capability is not None:
        model.capability_id(capability)
    elif owner is None:
        raise ValidationFailed(
            "to: say who owns the task with --to AGENT (or --capability ID)", field="to"
        )
    if task_type not in TASK_TYPES:
        raise ValidationFailed(
            f"type: {task_type!r} is not one of {', '.join(TASK_TYPES)}",
            field="type",
            value=task_type,
        )
    meta: dict[str, Any] = {
        **(extra_meta or {}),
        "task_type": task_type,
        "eta_required": eta_required,
    }
    if capability is not None:
        meta["capability"] = capability
    try:
        with write(conn):
            eta_at = None
            if capability is not None and task_type == "task":
                owner, eta_ms = catalog.route(conn, capability, owner)
                if eta_ms is not None:
                    eta_at = now + eta_ms
                    # the owner's node records the same ETA (engine/taskfed.created)
                    meta["eta_at"] = clock.iso(eta_at)
            assert owner is not None
            made = _create(
                conn,
                creator,
                owner,
                content,
                now,
                meta,
                limits,
                task_type=task_type,
                capability=capability,
                eta_required=eta_required,
                eta_at=eta_at,
            )
        if isinstance(made, CommError):
            raise made  # no_owner / owner_offline: its dead letter is committed, no task
        return made
    except NoCapability as miss:
        _routing_miss(
            conn, str(capability), creator, str(miss.extra.get("reason")), now, limits or Limits()
        )
        raise


def _create(
    conn: sqlite3.Connection,
    creator: str,
    owner: str,
    content: str,
    now: int,
    meta: dict[str, Any],
    limits: Limits | None,
    *,
    task_type: str,
    capability: str | None,
    eta_required: bool,
    eta_at: int | None,
) -> Task | CommError:
    req = SendRequest(
        sender=creator, content=content, type=MessageType.COMMAND.value, metadata=meta
    )
    [sent] = send_direct(conn, req, [owner], now, limits, remote_kind="task_create")
    if isinstance(sent, CommError):
        if sent.extra.get("global_id") is None:
            raise sent
        return sent  # unroutable between nodes: the caller commits the dead letter
    assert sent.correlation_id is not None  # every command gets one
    # an owner on another node: the message went out as `task_create` (taskfed.py)
    task = record_created(
        conn,
        task_id=sent.id,
        correlation_id=sent.correlation_id,
        channel_id=sent.channel_id,
        creator=creator,
        owner=owner,
        at=now,
        task_type=task_type,
        capability=capability,
        eta_required=eta_required,
        eta_at=eta_at,
        global_id=sent.global_id,
        peer_node=sent.to_node,
    )
    return load(conn, task.id, history=True)


def _routing_miss(
    conn: sqlite3.Connection, capability: str, creator: str, reason: str, now: int, lim: Limits
) -> None:
    """Count a refused route for the review, unless we are inside a caller's transaction
    (its rollback would take the count back anyway)."""
    if conn.in_transaction:
        return
    incidents.routing_miss(
        conn,
        capability,
        creator,
        reason,
        now,
        threshold=lim.cap_miss_threshold,
        window_ms=lim.cap_miss_window_ms,
    )


def record_created(
    conn: sqlite3.Connection,
    *,
    task_id: int,
    correlation_id: str,
    channel_id: int,
    creator: str,
    owner: str,
    at: int,
    task_type: str = "task",
    capability: str | None = None,
    eta_required: bool = False,
    eta_at: int | None = None,
    event_id: str | None = None,
    global_id: str | None = None,
    origin_node: str | None = None,
    peer_node: str | None = None,
) -> Task:
    """A new task for message `task_id`, inside the caller's transaction (the message is
    already stored). Between nodes, an inbound `task_create` stored here is this call
    (taskfed.created) with the event's id, global_id and origin node. Idempotent by
    `global_id` / `event_id`: the task already recorded is returned unchanged.
    Capabilities use `task_type="skill_distribution"` for the fan-out and `eta_at` for a
    capability's default ETA (the overdue timer then runs from creation)."""
    if global_id is not None:
        seen = by_global_id(conn, global_id, origin_node)  # a re-read task_create
        if seen is not None:
            return seen
    sql.insert_task(
        conn,
        {
            "id": task_id,
            "correlation_id": correlation_id,
            "channel_id": channel_id,
            "task_type": task_type,
            "capability_id": capability,
            "creator": creator,
            "owner": owner,
            "state": "created",
            "eta_required": int(eta_required),
            "eta_at": eta_at,
            "created_at": at,
            "updated_at": at,
            "global_id": global_id,
            "origin_node": origin_node,
            "peer_node": peer_node,
        },
    )
    sql.insert_event(
        conn,
        {
            "event_id": event_id or global_id or _event_id(at),
            "task_id": task_id,
            "event": "created",
            "agent": creator,
            "at": at,
            "eta_at": eta_at,
            "message_id": task_id,
            "origin_node": origin_node,
        },
    )
    return load(conn, task_id)


def parse_eta(value: str, now: int) -> int:
    """`--eta`: a duration from now (`10m`, `2h`) or a time (ISO 8601), in the future."""
    model.utf8(value, "eta")
    try:
        eta_at = now + clock.parse_duration(value, "eta")
    except ValidationFailed:
        try:
            eta_at = clock.parse_time(value, "eta", now)
        except ValidationFailed:
            raise ValidationFailed(
                f"eta: {value!r} is neither a duration ({clock.DURATION_FORMS}) nor a time "
                f"({clock.TIME_FORMS})",
                field="eta",
                value=value,
            ) from None
    if eta_at <= now:
        raise ValidationFailed(f"eta: {value!r} is not in the future", field="eta", value=value)
    return eta_at


def accept(
    conn: sqlite3.Connection,
    task_id: int | str,
    agent: str,
    now: int,
    *,
    eta: str | None = None,
    plan: str | None = None,
    limits: Limits | None = None,
) -> Task:
    """`task accept`: the owner takes the task on, with an ETA (required by
    `--eta-required`); acknowledges the delivery `in_progress` carrying `eta_at`."""
    model.agent_id(agent, "as")
    eta_at = parse_eta(eta, now) if eta is not None else None
    if plan is not None:
        _text(plan, "plan")
    with write(conn):
        directory.known(conn, agent, "as", now)
        presence.seen(conn, agent, now)
        catch_up(conn, now)
        task = load(conn, task_id)
        task_id = task.id
        _next_state(task, "accepted", agent)  # the refusals first, before the ETA rule
        if task.eta_required and eta_at is None:
            raise ValidationFailed(
                f"eta: task {task_id} requires an ETA (task accept {task_id} --eta 10m)",
                field="eta",
            )
        meta = {"task_id": str(task_id), "task_event": "accepted"}
        if eta_at is not None:
            meta["eta_at"] = clock.iso(eta_at) or ""
        mid = _ack(conn, task, agent, AckStatus.IN_PROGRESS, plan or "accepted", now, meta)
        record(
            conn,
            task,
            "accepted",
            agent=agent,
            at=now,
            eta_at=eta_at,
            note=plan,
            message_id=mid,
            ack_timeout_ms=_ack_timeout(limits),
        )
        return load(conn, task_id, history=True)


def update(
    conn: sqlite3.Connection,
    task_id: int | str,
    agent: str,
    now: int,
    *,
    progress: int | None = None,
    note: str | None = None,
    limits: Limits | None = None,
) -> Task:
    """`task update`: progress (0-100) and/or a note, in the history only."""
    model.agent_id(agent, "as")
    if progress is None and note is None:
        raise ValidationFailed(
            "progress: give --progress N (0-100) or --note TEXT", field="progress"
        )
    if progress is not None and (
        isinstance(progress, bool) or not isinstance(progress, int) or not 0 <= progress <= 100
    ):
        raise ValidationFailed(
            f"progress: {progress!r} is not a whole number from 0 to 100",
            field="progress",
            value=progress,
        )
    if note is not None:
        _text(note, "note")
    with write(conn):
        directory.known(conn, agent, "as", now)
        presence.seen(conn, agent, now)
        catch_up(conn, now)
        task = load(conn, task_id)
        task_id = task.id
        record(
            conn,
            task,
            "updated",
            agent=agent,
            at=now,
            progress=progress,
            note=note,
            ack_timeout_ms=_ack_timeout(limits),
        )
        return load(conn, task_id, history=True)


def complete(
    conn: sqlite3.Connection,
    task_id: int | str,
    agent: str,
    now: int,
    *,
    content: str | None = None,
    limits: Limits | None = None,
) -> Task:
    """`task complete`: a `response` to the creator with the result (the owner's ack
    `completed`, as a response to a query is)."""
    model.agent_id(agent, "as")
    if content is not None:
        _text(content, "body")
    resolved = task_id  # a global id names the local task once loaded
    try:
        with write(conn):
            directory.known(conn, agent, "as", now)
            presence.seen(conn, agent, now)
            catch_up(conn, now)
            task = load(conn, task_id)
            resolved = task.id
            _next_state(task, "completed", agent)
            if task.capability is not None:
                catalog.check_output(conn, task, content)
            return _complete(conn, task, agent, now, content, _ack_timeout(limits))
    except OutputMismatch as exc:
        _output_mismatch(conn, int(resolved), exc.message, now)
        raise


def _output_mismatch(conn: sqlite3.Connection, task_id: int, reason: str, now: int) -> None:
    """A refused completion, in its own transaction after the refusal rolled back: the
    review incident, and the task's `incident` event."""
    with write(conn):
        iid = incidents.output_mismatch(conn, load(conn, task_id), reason, now)
        if iid is not None:
            _mark_incident(conn, task_id, iid, "output_mismatch", now, note=reason)


def _complete(
    conn: sqlite3.Connection,
    task: Task,
    agent: str,
    now: int,
    content: str | None,
    ack_timeout_ms: int,
) -> Task:
    """Inside complete's transaction, once the result passed its contract."""
    mid = _respond(conn, task, agent, content or f"task {task.id} completed", now)
    record(
        conn,
        task,
        "completed",
        agent=agent,
        at=now,
        note=content,
        message_id=mid,
        ack_timeout_ms=ack_timeout_ms,
    )
    return load(conn, task.id, history=True)


def fail(
    conn: sqlite3.Connection,
    task_id: int | str,
    agent: str,
    now: int,
    *,
    reason: str,
    limits: Limits | None = None,
) -> Task:
    """`task fail`: the owner gives up (or declines); acknowledges `failed` with the reason."""
    model.agent_id(agent, "as")
    _text(reason, "reason")
    with write(conn):
        directory.known(conn, agent, "as", now)
        presence.seen(conn, agent, now)
        catch_up(conn, now)
        task = load(conn, task_id)
        task_id = task.id
        _next_state(task, "failed", agent)
        mid = _ack(
            conn,
            task,
            agent,
            AckStatus.FAILED,
            reason,
            now,
            {"task_id": str(task_id), "task_event": "failed"},
        )
        record(
            conn,
            task,
            "failed",
            agent=agent,
            at=now,
            note=reason,
            message_id=mid,
            ack_timeout_ms=_ack_timeout(limits),
        )
        return load(conn, task_id, history=True)


def _ack_timeout(limits: Limits | None) -> int:
    """The first retry of a task event sent to another node (federation.ack_timeout)."""
    return (limits or Limits()).fed_ack_timeout_ms


def _text(value: str, name: str) -> None:
    model.utf8(value, name)
    if not value.strip():
        raise ValidationFailed(f"{name}: must not be empty", field=name, value_length=0)


def _ack(
    conn: sqlite3.Connection,
    task: Task,
    agent: str,
    status: AckStatus,
    note: str,
    now: int,
    meta: dict[str, str],
) -> int | None:
    """Acknowledge the owner's delivery of the task's message (which tells the creator);
    the id of the acknowledgement sent, if any. The task is the authority: a delivery the
    owner already acknowledged as far by hand (`acomm ack`), a dead or not yet delivered
    one, or a message compacted away is left as it is."""
    got = acks.delivery_of(conn, task.id, agent)
    if got is None:
        return None
    state, previous, delivered_at = got
    if (
        state == DeliveryState.DEAD.value
        or delivered_at is None
        or (previous is not None and ACK_ORDER[AckStatus(previous)] >= ACK_ORDER[status])
    ):
        return None
    # the task's ETA and overdue timer watch an accepted task, not a channel lease
    return acking.record_ack(
        conn, task.id, agent, status, note, now, extra=meta, lease=False
    ).ack_message_id


def _respond(conn: sqlite3.Connection, task: Task, agent: str, content: str, now: int) -> int:
    """The result as a `response` to the creator on the task's channel, with the task's
    correlation id; it settles the owner's delivery as `completed` (forward only)."""
    router = Router(conn)
    ch = channel_by_id(conn, task.channel_id)
    # internal: a response correlated to a command, not a query (only tasks send one)
    plan = plan_message(
        router,
        SendRequest(
            sender=agent,
            content=content,
            channel=ch.name,
            type=MessageType.RESPONSE.value,
            correlation_id=task.correlation_id,
            metadata={"task_id": str(task.id), "task_event": "completed"},
        ),
        now,
        only_to=task.creator,
        internal=True,
    )
    mid = persist(router, plan, now).id
    got = acks.delivery_of(conn, task.id, agent)
    if (
        got is not None
        and got[0] != DeliveryState.DEAD.value
        and got[2] is not None
        and (got[1] is None or ACK_ORDER[AckStatus(got[1])] < ACK_ORDER[AckStatus.COMPLETED])
    ):
        acks.set_ack(conn, task.id, agent, AckStatus.COMPLETED.value, None, now)
    return mid


# ---------------------------------------------------------------- the overdue timer


def mark_overdue(conn: sqlite3.Connection, now: int) -> int:
    """Open tasks whose ETA passed by `now` become overdue, inside the caller's
    transaction. The event is dated at the ETA, not at `now`: a late tick writes the same
    history as a punctual one."""
    marked = 0
    for task_id, eta_at in sql.due(conn, now):
        task = load(conn, task_id)
        event_id = None
        if task.global_id is not None:  # both nodes mark it alike
            event_id = taskemit.overdue_event_id(task.global_id)
        marked += record(
            conn, task, "overdue", agent=None, at=eta_at, eta_at=eta_at, event_id=event_id
        )
    return marked


def catch_up(conn: sqlite3.Connection, now: int) -> None:
    """Inside a transaction: mark what is overdue by `now` before an event at `now`, so
    the history reads in time order whoever ticked first (both nodes of a task agree)."""
    if sql.has_due(conn, now):
        mark_overdue(conn, now)


def tick(conn: sqlite3.Connection, now: int) -> int:
    """tick's part: mark overdue tasks in one transaction (none due: no write at all)."""
    if not sql.has_due(conn, now):
        return 0
    with write(conn):
        return mark_overdue(conn, now)


def _catch_up(conn: sqlite3.Connection, now: int) -> None:
    """Readers (`task show|list`) see overdue tasks as such without waiting for a tick; on
    a store opened read-only they wait for the next writer."""
    if not getattr(conn, "read_only", False) and sql.has_due(conn, now):
        tick(conn, now)
