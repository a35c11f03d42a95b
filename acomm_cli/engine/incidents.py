"""Misfires of a capability and their review: each misfire opens one incident to look at.

Four misfires of a capability published on this store open a review incident
`{id, capability_id, delegation_skill, executor_skill, failure_class, sample_corr_ids,
created_at, state}`:

- `eta_breach`: a capability task went overdue (tick, dated at its ETA);
- `execution_error`: its owner failed it (`task fail`);
- `output_mismatch`: its result did not match the capability's JSON Schema (the completion is
  refused; the owner may complete again with a matching result);
- `routing_miss`: `capabilities.miss_threshold` tasks for it missed their route (unpublished,
  or `--to` not its owner) within `capabilities.miss_window`.

Exactly one incident per occurrence: each has an `occurrence` key (the class and the task, or
the last miss it counted), unique in the store, so a second tick, a replayed event or a
retried command finds it and writes nothing. The task that caused one records an `incident`
event and, while open, moves to the `incident` state. Each incident is published as a
notification on `_system` topic `_system.capability.review`, to its subscribers.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from acomm_cli import clock, model
from acomm_cli.engine import catalog
from acomm_cli.engine.taskdata import Task
from acomm_cli.errors import NotFound, ValidationFailed
from acomm_cli.store import capabilities as sql
from acomm_cli.store import channels, sending, write
from acomm_cli.topics import SubscriptionIndex

REVIEW_TOPIC = "_system.capability.review"
CLASSES = ("eta_breach", "execution_error", "output_mismatch", "routing_miss")
STATES = ("open", "resolved")
_BY_EVENT = {"overdue": "eta_breach", "failed": "execution_error"}


@dataclass(frozen=True)
class Incident:
    id: int
    capability_id: str
    delegation_skill: str
    executor_skill: str
    failure_class: str
    sample_corr_ids: list[str]
    samples: list[dict[str, Any]]
    task_id: int | None
    occurrence: str
    created_at: int
    state: str
    resolved_at: int | None
    resolved_by: str | None
    note: str | None
    message_id: int | None

    def doc(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "capability_id": self.capability_id,
            "delegation_skill": self.delegation_skill,
            "executor_skill": self.executor_skill,
            "failure_class": self.failure_class,
            "sample_corr_ids": self.sample_corr_ids,
            "samples": self.samples,
            "task_id": self.task_id,
            "created_at": clock.iso(self.created_at),
            "state": self.state,
            "resolved_at": clock.iso(self.resolved_at),
            "resolved_by": self.resolved_by,
            "note": self.note,
            "message_id": self.message_id,
        }


def _incident(row: tuple[Any, ...]) -> Incident:
    (iid, cap, d, e, cls, corrs, samples, task_id, occ, created, state, r_at, r_by, note, mid) = row
    return Incident(
        iid,
        cap,
        d,
        e,
        cls,
        json.loads(corrs),
        json.loads(samples or "[]"),
        task_id,
        occ,
        created,
        state,
        r_at,
        r_by,
        note,
        mid,
    )


# ---------------------------------------------------------------- opening one


def open_incident(
    conn: sqlite3.Connection,
    cap: catalog.Capability,
    failure_class: str,
    occurrence: str,
    at: int,
    *,
    sample_corr_ids: list[str],
    samples: list[dict[str, Any]] | None = None,
    task_id: int | None = None,
) -> int | None:
    """Inside the caller's transaction: a new incident and its `_system` notification, or
    None when this occurrence already has one."""
    if sql.incident_by_occurrence(conn, occurrence) is not None:
        return None
    iid = sql.insert_incident(
        conn,
        {
            "capability_id": cap.id,
            "delegation_skill": cap.delegation_skill,
            "executor_skill": cap.executor_skill,
            "failure_class": failure_class,
            "sample_corr_ids": json.dumps(sample_corr_ids),
            "samples": json.dumps(samples or []),
            "task_id": task_id,
            "occurrence": occurrence,
            "created_at": at,
            "state": "open",
        },
    )
    sql.update_incident(conn, iid, {"message_id": _notify(conn, load(conn, iid), at)})
    return iid


def _notify(conn: sqlite3.Connection, incident: Incident, at: int) -> int:
    """The incident on `_system` topic `_system.capability.review` (as federation's SLA
    notifications are published): one message, a delivery per subscriber."""
    ch = channels.channel_by_name(conn, model.SYSTEM_CHANNEL)
    assert ch is not None, "every store has the _system channel (m001)"
    body = json.dumps(
        {k: v for k, v in incident.doc().items() if k != "message_id"}, separators=(",", ":")
    )
    mid = sending.insert_message(
        conn,
        (
            None,
            ch.id,
            model.SYSTEM_AGENT,
            "notification",
            body,
            REVIEW_TOPIC,
            1,
            None,
            None,
            None,
            at,
            None,
            None,
        ),
    )
    agents = SubscriptionIndex(channels.subscriptions(conn, ch.id)).route(REVIEW_TOPIC)
    sending.insert_deliveries(
        conn, [(mid, a, ch.id, "unread", 0, 0, at, None) for a in sorted(agents)]
    )
    return mid


# ---------------------------------------------------------------- the four misfires


def review_task(
    conn: sqlite3.Connection, task: Task, event: str, at: int
) -> tuple[int, str] | None:
    """After `task` became overdue or failed, in the caller's transaction: an eta_breach or
    execution_error incident if it is a task for a capability published here (its owner's
    store; a requester's node leaves the review to it). The creator's copy of a task owned
    on another node never reviews: the owner's node does, once. Returns (incident id,
    failure class) when one was opened: the caller (tasks.record) records the task's
    `incident` event."""
    if task.capability is None or task.task_type != "task" or event not in _BY_EVENT:
        return None
    if task.peer_node is not None and task.origin_node is None:
        return None  # created here, executed on task.peer_node: reviewed there
    cap = catalog.find(conn, task.capability)
    if cap is None:
        return None
    cls = _BY_EVENT[event]
    iid = open_incident(
        conn,
        cap,
        cls,
        f"{cls}:task:{task.id}",
        at,
        sample_corr_ids=[task.correlation_id],
        task_id=task.id,
    )
    return None if iid is None else (iid, cls)


def output_mismatch(conn: sqlite3.Connection, task: Task, reason: str, now: int) -> int | None:
    """A refused completion (its result failed the schema), in the caller's transaction
    (one of its own, after the refusal rolled back): one incident per task. Returns its id
    when one was opened: the caller (tasks.complete) records the task's `incident` event."""
    cap = catalog.find(conn, task.capability or "")
    if cap is None:
        return None
    return open_incident(
        conn,
        cap,
        "output_mismatch",
        f"output_mismatch:task:{task.id}",
        now,
        sample_corr_ids=[task.correlation_id],
        task_id=task.id,
        samples=[{"task_id": task.id, "error": reason}],
    )


def routing_miss(
    conn: sqlite3.Connection,
    cap_id: str,
    agent: str,
    reason: str,
    now: int,
    *,
    threshold: int,
    window_ms: int,
) -> int | None:
    """A task for `cap_id` missed its route (refused, exit 5): recorded in its own
    transaction after the refusal rolled back. The `threshold`-th miss within `window_ms`
    not yet counted by an incident opens one (for a capability this store knows; a miss on
    an id never published is only counted). Returns the incident id, if one was opened."""
    with write(conn):
        sql.insert_miss(conn, cap_id, agent, reason, now)
        cap = catalog.find(conn, cap_id)
        if cap is None:
            return None
        misses = sql.misses_since(
            conn, cap_id, now - window_ms, sql.last_miss_counted(conn, cap_id)
        )
        if len(misses) < threshold:
            return None
        last = misses[-1][0]
        return open_incident(
            conn,
            cap,
            "routing_miss",
            f"routing_miss:{cap_id}#{last}",
            now,
            sample_corr_ids=[],
            samples=[
                {"miss_id": m, "by": a, "reason": r, "at": clock.iso(t)} for m, a, r, t in misses
            ],
        )


# ---------------------------------------------------------------- reading, resolving


def load(conn: sqlite3.Connection, incident_id: int) -> Incident:
    row = sql.incident_row(conn, incident_id)
    if row is None:
        raise NotFound(
            f"incident {incident_id} does not exist", field="incident", value=incident_id
        )
    return _incident(row)


def list_incidents(
    conn: sqlite3.Connection, *, state: str | None = None, capability: str | None = None
) -> list[Incident]:
    if state is not None and state not in STATES:
        raise ValidationFailed(
            f"state: {state!r} is not one of {', '.join(STATES)}", field="state", value=state
        )
    if capability is not None:
        model.capability_id(capability)
    return [_incident(r) for r in sql.incident_rows(conn, state, capability)]


def resolve(
    conn: sqlite3.Connection,
    incident_id: int,
    now: int,
    *,
    agent: str | None = None,
    note: str | None = None,
) -> tuple[Incident, bool]:
    """`incident resolve`: open -> resolved (with who and a note); resolving a resolved
    incident changes nothing and says so."""
    if agent is not None:
        model.agent_id(agent, "as")
    if note is not None:
        model.utf8(note, "note")
    with write(conn):
        incident = load(conn, incident_id)
        if incident.state == "resolved":
            return incident, False
        sql.update_incident(
            conn,
            incident_id,
            {"state": "resolved", "resolved_at": now, "resolved_by": agent, "note": note},
        )
        return load(conn, incident_id), True
