"""SQL of `acomm export`: bounded reads by message id range, and the export watermark.

Every dataset but the snapshots (channels, incidents, agents) is read by a range of message ids
(`BETWEEN ? AND ?`), which walks the primary key of `messages`, `deliveries`, `dead_letters`
and `tasks` (whose ids are their messages'), or an index led by the message id
(`delivery_attempts`, `dispatch_receipts`, `task_events`), in order, so a chunk costs the same
wherever it sits in a store of any size. `acomm_cli.analytics.export` decides what the rows mean.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from acomm_cli.store import agents
from acomm_cli.store.backlog import ACTIVE

# Column names, in the order of the SELECTs below.
MESSAGE_COLUMNS = (
    "id",
    "channel_id",
    "channel",
    "sender",
    "type",
    "content",
    "topic",
    "priority",
    "correlation_id",
    "dedupe_key",
    "metadata",
    "created_at",
    "deliver_at",
    "expires_at",
    "origin_node",
    "global_id",
    "trace_id",
    "format",
    "subject",
)
DELIVERY_COLUMNS = (
    "message_id",
    "recipient",
    "channel_id",
    "channel",
    "state",
    "tracked",
    "retry_count",
    "created_at",
    "delivered_at",
    "read_at",
    "ack_status",
    "acked_at",
    "ack_note",
    "next_timer_at",
    "last_error",
    "first_read_at",
    "lease_expired",
)
DEAD_LETTER_COLUMNS = (
    "message_id",
    "recipient",
    "channel_id",
    "channel",
    "reason",
    "retry_count",
    "last_error",
    "created_at",
    "dead_lettered_at",
)
ATTEMPT_COLUMNS = (
    "seq",
    "message_id",
    "recipient",
    "channel_id",
    "channel",
    "attempt",
    "delivered_at",
    "read_at",
    "ack_status",
    "created_at",
)
RECEIPT_COLUMNS = (
    "seq",
    "run_id",
    "message_id",
    "agent",
    "status",
    "reason",
    "exit_code",
    "attempt",
    "created_at",
    "started_at",
    "finished_at",
    "next_retry_at",
)
FEDERATION_COLUMNS = (
    "message_id",
    "global_id",
    "kind",
    "to_node",
    "state",
    "attempt",
    "created_at",
    "accepted_at",
    "processed_at",
    "to_agent",
    "route_decision",
    "incident_at",
)
TASK_COLUMNS = (
    "id",
    "correlation_id",
    "channel_id",
    "channel",
    "task_type",
    "capability_id",
    "creator",
    "owner",
    "state",
    "eta_required",
    "eta_at",
    "progress",
    "plan",
    "note",
    "result_message_id",
    "created_at",
    "accepted_at",
    "updated_at",
    "finished_at",
    "global_id",
    "origin_node",
    "peer_node",
)
TASK_EVENT_COLUMNS = (
    "seq",
    "event_id",
    "task_id",
    "event",
    "agent",
    "at",
    "progress",
    "note",
    "eta_at",
    "message_id",
    "origin_node",
    "detail",
    "created_at",
)
INCIDENT_COLUMNS = (
    "id",
    "capability_id",
    "delegation_skill",
    "executor_skill",
    "failure_class",
    "sample_corr_ids",
    "samples",
    "task_id",
    "task_global_id",
    "occurrence",
    "created_at",
    "state",
    "resolved_at",
    "resolved_by",
    "note",
    "message_id",
)
CHANNEL_COLUMNS = (
    "id",
    "name",
    "type",
    "owner",
    "state",
    "created_at",
    "delivery",
    "max_message_size",
    "ack_timeout_ms",
    "max_retries",
    "retry_backoff_ms",
    "retry_jitter",
    "echo",
    "priority_ordering",
    "max_pending",
    "dedupe_window_ms",
    "retention_count",
    "retention_age_ms",
    "lease_ms",
    "message_ttl_ms",
    "retry_failed",
    "ack_clock",
    "ack_notify",
)

_MESSAGES = (
    "SELECT m.id, m.channel_id, c.name, m.sender, m.type, m.content, m.topic, m.priority,"
    " m.correlation_id, m.dedupe_key, m.metadata, m.created_at, m.deliver_at, m.expires_at,"
    " m.origin_node, m.global_id, m.trace_id, coalesce(m.format, 'text'), m.subject"
    " FROM messages m"
    " LEFT JOIN channels c ON c.id = m.channel_id"
    " WHERE m.id BETWEEN ? AND ? ORDER BY m.id"
)
# Deliveries and dead letters carry their message's creation time (the partition date and
# the start of the delivery latency); LEFT JOIN keeps a row whose message is missing, so
# that the audit can count it as not accounted for.
_DELIVERIES = (
    "SELECT d.message_id, d.recipient, d.channel_id, c.name, d.state, d.tracked,"
    " d.retry_count, m.created_at, d.delivered_at, d.read_at, d.ack_status, d.acked_at,"
    " d.ack_note, d.next_timer_at, d.last_error, d.first_read_at, d.lease_expired"
    " FROM deliveries d"
    " LEFT JOIN messages m ON m.id = d.message_id LEFT JOIN channels c ON c.id = d.channel_id"
    " WHERE d.message_id BETWEEN ? AND ? ORDER BY d.message_id, d.recipient"
)
_DEAD_LETTERS = (
    "SELECT dl.message_id, dl.recipient, dl.channel_id, c.name, dl.reason, dl.retry_count,"
    " dl.last_error, m.created_at, dl.dead_lettered_at FROM dead_letters dl"
    " LEFT JOIN messages m ON m.id = dl.message_id LEFT JOIN channels c ON c.id = dl.channel_id"
    " WHERE dl.message_id BETWEEN ? AND ? ORDER BY dl.message_id, dl.recipient"
)
# Every earlier attempt of a delivery (m012's trigger), with its message's channel and
# creation time: the channel from the message, since on a work queue the attempt's
# recipient is the worker whose claim ended, not the delivery row's.
_ATTEMPTS = (
    "SELECT a.seq, a.message_id, a.recipient, m.channel_id, c.name, a.attempt, a.delivered_at,"
    " a.read_at, a.ack_status, m.created_at FROM delivery_attempts a"
    " INDEXED BY delivery_attempts_message LEFT JOIN messages m ON m.id = a.message_id"
    " LEFT JOIN channels c ON c.id = m.channel_id"
    " WHERE a.message_id BETWEEN ? AND ? ORDER BY a.message_id, a.seq"
)
# One row per dispatch run (`acomm receipts`), with its message's creation time.
_RECEIPTS = (
    "SELECT r.seq, r.run_id, r.message_id, r.agent, r.status, r.reason, r.exit_code, r.attempt,"
    " m.created_at, r.started_at, r.finished_at, r.next_retry_at FROM dispatch_receipts r"
    " INDEXED BY dispatch_receipts_message LEFT JOIN messages m ON m.id = r.message_id"
    " WHERE r.message_id BETWEEN ? AND ? ORDER BY r.message_id, r.seq"
)
# The notification event a message carries, on message_events' primary key (its message id).
_EVENTS = (
    "SELECT e.message_id, e.channel_id, c.name, e.event_id, e.event_type, e.occurred_at,"
    " e.actor, e.target, e.target_kind, e.thread_id, e.comment_id, e.parent_comment_id,"
    " e.depth, e.language, e.action_hint, e.content_preview, m.created_at"
    " FROM message_events e LEFT JOIN messages m ON m.id = e.message_id"
    " LEFT JOIN channels c ON c.id = e.channel_id"
    " WHERE e.message_id BETWEEN ? AND ? ORDER BY e.message_id"
)
# The files messages name, on message_attachments' primary key (message id, name); the
# blobs' bytes are never read.
_ATTACHMENTS = (
    "SELECT a.message_id, m.channel_id, c.name, a.name, a.sha256, a.size, a.content_type,"
    " m.created_at FROM message_attachments a LEFT JOIN messages m ON m.id = a.message_id"
    " LEFT JOIN channels c ON c.id = m.channel_id"
    " WHERE a.message_id BETWEEN ? AND ? ORDER BY a.message_id, a.name"
)
ATTACHMENT_COLUMNS = (
    "message_id",
    "channel_id",
    "channel",
    "name",
    "sha256",
    "size",
    "content_type",
    "created_at",
)
# The first notice of each recipient of a message, on notifications' primary key.
_NOTIFICATIONS = (
    "SELECT n.message_id, n.recipient, n.how, n.notified_at, m.created_at FROM notifications n"
    " LEFT JOIN messages m ON m.id = n.message_id"
    " WHERE n.message_id BETWEEN ? AND ? ORDER BY n.message_id, n.recipient"
)
NOTIFICATION_COLUMNS = ("message_id", "recipient", "how", "notified_at", "created_at")
# The messages this node emitted to another node (a `message` or a `reply` event, its first
# attempt in the outbox) and, for a message, the sender's state of it (fed_sent): when its
# `accepted` ack came back bounds the clock skew between the two nodes.
_FEDERATION = (
    "SELECT m.id, m.global_id, o.kind, o.to_node, s.state, coalesce(s.attempt, o.attempt),"
    " m.created_at, s.accepted_at, s.processed_at, s.to_agent, s.route_decision,"
    " s.incident_at FROM messages m"
    " JOIN fed_outbox o ON o.event_id = m.global_id AND o.attempt = 1"
    " LEFT JOIN fed_sent s ON s.event_id = m.global_id"
    " WHERE m.id BETWEEN ? AND ? AND m.global_id IS NOT NULL"
    # an event id is unique per origin: a message another node sent under one of ours is not
    " AND m.origin_node IS (SELECT node_id FROM fed_node WHERE id = 1) ORDER BY m.id"
)
# Tasks by id (= the carrying message's id on this store, so a task goes with its message's
# chunk even once compaction removed the message) and their history, which carries the
# task's creation time (its partition).
_TASKS = (
    "SELECT t.id, t.correlation_id, t.channel_id, c.name, t.task_type, t.capability_id,"
    " t.creator, t.owner, t.state, t.eta_required, t.eta_at, t.progress, t.plan, t.note,"
    " t.result_message_id, t.created_at, t.accepted_at, t.updated_at, t.finished_at,"
    " t.global_id, t.origin_node, t.peer_node FROM tasks t"
    " LEFT JOIN channels c ON c.id = t.channel_id WHERE t.id BETWEEN ? AND ? ORDER BY t.id"
)
_TASK_EVENTS = (
    "SELECT e.seq, e.event_id, e.task_id, e.event, e.agent, e.at, e.progress, e.note,"
    " e.eta_at, e.message_id, e.origin_node, e.detail, t.created_at FROM task_events e"
    " INDEXED BY task_events_task LEFT JOIN tasks t ON t.id = e.task_id"
    " WHERE e.task_id BETWEEN ? AND ? ORDER BY e.task_id, e.seq"
)
# Review incidents, whole (a snapshot: their state changes when resolved), with the global
# id of their task so that a task can be followed across nodes.
_INCIDENTS = (
    "SELECT i.id, i.capability_id, i.delegation_skill, i.executor_skill, i.failure_class,"
    " i.sample_corr_ids, i.samples, i.task_id, t.global_id, i.occurrence, i.created_at,"
    " i.state, i.resolved_at, i.resolved_by, i.note, i.message_id FROM incidents i"
    " LEFT JOIN tasks t ON t.id = i.task_id ORDER BY i.id"
)
EVENT_COLUMNS = (
    "message_id",
    "channel_id",
    "channel",
    "event_id",
    "event_type",
    "occurred_at",
    "actor",
    "target",
    "target_kind",
    "thread_id",
    "comment_id",
    "parent_comment_id",
    "depth",
    "language",
    "action_hint",
    "content_preview",
    "created_at",
)
AGENT_COLUMNS = agents.COLUMNS  # every column but a credential: none is kept in `agents`

_CHANNELS = f"SELECT {', '.join(CHANNEL_COLUMNS)} FROM channels ORDER BY id"
# The directory, whole, by name: only the columns named here, so that no credential a later
# column or table may hold ever reaches an export.
_AGENTS = f"SELECT {', '.join(AGENT_COLUMNS)} FROM agents ORDER BY name"


def id_bounds(
    conn: sqlite3.Connection, since: int | None = None, until: int | None = None
) -> tuple[int, int] | None:
    """(lowest, highest) id of the messages created in [since, until), or None if none.

    Both ends come from the index on created_at (one short walk each)."""
    lo = conn.execute(
        "SELECT min(id) FROM messages WHERE created_at >= ?",
        (since if since is not None else -(2**63),),
    ).fetchone()[0]
    hi = conn.execute(
        "SELECT max(id) FROM messages WHERE created_at < ?",
        (until if until is not None else 2**63 - 1,),
    ).fetchone()[0]
    if lo is None or hi is None or lo > hi:
        return None
    return lo, hi


def id_bounds_all(conn: sqlite3.Connection) -> tuple[int, int] | None:
    """(lowest, highest) message id over the whole store (the primary keys' two ends): of
    the messages, and of the tasks, whose ids are their messages' and outlive them."""
    lo, hi = conn.execute(
        "SELECT min(lo), max(hi) FROM (SELECT min(id) AS lo, max(id) AS hi FROM messages"
        " UNION ALL SELECT min(id), max(id) FROM tasks)"
    ).fetchone()
    return None if lo is None else (lo, hi)


# The SELECT of each dataset read by message id range, and its columns in order.
_BY_DATASET = {
    "messages": _MESSAGES,
    "deliveries": _DELIVERIES,
    "dead_letters": _DEAD_LETTERS,
    "delivery_attempts": _ATTEMPTS,
    "receipts": _RECEIPTS,
    "federation": _FEDERATION,
    "tasks": _TASKS,
    "task_events": _TASK_EVENTS,
    "events": _EVENTS,
    "attachments": _ATTACHMENTS,
    "notifications": _NOTIFICATIONS,
}
COLUMNS = {
    "messages": MESSAGE_COLUMNS,
    "deliveries": DELIVERY_COLUMNS,
    "dead_letters": DEAD_LETTER_COLUMNS,
    "delivery_attempts": ATTEMPT_COLUMNS,
    "receipts": RECEIPT_COLUMNS,
    "federation": FEDERATION_COLUMNS,
    "tasks": TASK_COLUMNS,
    "task_events": TASK_EVENT_COLUMNS,
    "channels": CHANNEL_COLUMNS,
    "incidents": INCIDENT_COLUMNS,
    "agents": AGENT_COLUMNS,
    "events": EVENT_COLUMNS,
    "attachments": ATTACHMENT_COLUMNS,
    "notifications": NOTIFICATION_COLUMNS,
}


# A dataset whose rows need a table that is empty in most stores: when it is, the export
# skips that dataset's SELECT for every chunk (the federation one walks the messages).
_GUARDS = {
    "delivery_attempts": "SELECT EXISTS (SELECT 1 FROM delivery_attempts)",
    "receipts": "SELECT EXISTS (SELECT 1 FROM dispatch_receipts)",
    "federation": "SELECT EXISTS (SELECT 1 FROM fed_outbox)",
    "tasks": "SELECT EXISTS (SELECT 1 FROM tasks)",
    "task_events": "SELECT EXISTS (SELECT 1 FROM tasks)",
    "events": "SELECT EXISTS (SELECT 1 FROM message_events)",
    "attachments": "SELECT EXISTS (SELECT 1 FROM message_attachments)",
    "notifications": "SELECT EXISTS (SELECT 1 FROM notifications)",
}


def may_have_rows(conn: sqlite3.Connection, dataset: str) -> bool:
    """False when `dataset` certainly has no rows in this store (one indexed read)."""
    guard = _GUARDS.get(dataset)
    return guard is None or conn.execute(guard).fetchone()[0] == 1


def rows_between(conn: sqlite3.Connection, dataset: str, lo: int, hi: int) -> sqlite3.Cursor:
    """A cursor over `dataset`'s rows for message ids lo..hi, in id order: the caller takes
    them with fetchmany() so that memory stays bounded whatever a chunk holds."""
    return conn.execute(_BY_DATASET[dataset], (lo, hi))


def unsettled(conn: sqlite3.Connection, lo: int, hi: int) -> bool:
    """Whether anything exported for messages lo..hi may still change on its own: a delivery
    queued, waiting, unread, or read and awaiting an acknowledgement (the partial index of
    active ones); a dispatch run in progress or due again (its receipt, or the next one, is
    still to be written); a message emitted to another node and not yet accepted there; a
    task still open (not completed nor failed: its state and history will move)."""
    return (
        conn.execute(
            "SELECT EXISTS (SELECT 1 FROM deliveries INDEXED BY deliveries_active"
            " WHERE message_id BETWEEN ?1 AND ?2"
            f" AND {ACTIVE})"
            " OR EXISTS (SELECT 1 FROM dispatch_claims WHERE message_id BETWEEN ?1 AND ?2"
            " AND state IN ('running', 'retry'))"
            " OR EXISTS (SELECT 1 FROM fed_sent INDEXED BY fed_sent_message"
            " WHERE message_id BETWEEN ?1 AND ?2 AND state = 'emitted')"
            " OR EXISTS (SELECT 1 FROM tasks WHERE id BETWEEN ?1 AND ?2"
            " AND state NOT IN ('completed', 'failed'))",
            (lo, hi),
        ).fetchone()[0]
        == 1
    )


_SNAPSHOTS = {"channels": _CHANNELS, "incidents": _INCIDENTS, "agents": _AGENTS}


def snapshot_rows(conn: sqlite3.Connection, dataset: str) -> list[tuple[Any, ...]]:
    """Every row of a snapshot dataset (channels, incidents, agents: tables of modest size)."""
    return conn.execute(_SNAPSHOTS[dataset]).fetchall()


def watermark(conn: sqlite3.Connection, target: str) -> int | None:
    """The highest message id exported to `target`, or None if nothing was."""
    row = conn.execute("SELECT last_message_id FROM exports WHERE target = ?", (target,)).fetchone()
    return row[0] if row else None


def set_watermark(conn: sqlite3.Connection, target: str, last_message_id: int, now: int) -> None:
    """Raise `target`'s watermark to `last_message_id` (never lowers it)."""
    conn.execute(
        "INSERT INTO exports (target, last_message_id, exported_at) VALUES (?, ?, ?)"
        " ON CONFLICT (target) DO UPDATE SET last_message_id ="
        " max(last_message_id, excluded.last_message_id), exported_at = excluded.exported_at",
        (target, last_message_id, now),
    )
