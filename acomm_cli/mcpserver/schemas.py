"""Each tool's output schema (the MCP `outputSchema`): the document its command prints with
--json, as JSON Schema, closed values as enums. A client validates a tool's structured
content against it; objects stay open (`additionalProperties` unset) because a document may
gain fields, never lose or rename one. Imports no MCP."""

from __future__ import annotations

from typing import Any

from acomm_cli.model import (
    ACTION_HINTS,
    DEAD_LETTER_REASONS,
    EVENT_TYPES,
    TASK_STATES,
    TASK_TYPES,
    AckStatus,
    ChannelState,
    ChannelType,
    DeliveryMode,
    DeliveryState,
    MessageType,
    Priority,
    Role,
)

Schema = dict[str, Any]

STR: Schema = {"type": "string"}
INT: Schema = {"type": "integer"}
NUM: Schema = {"type": "number"}
BOOL: Schema = {"type": "boolean"}
ANY_OBJ: Schema = {"type": "object"}


def opt(schema: Schema) -> Schema:
    """The schema, or null."""
    return {"anyOf": [schema, {"type": "null"}]}


def enum(values: Any) -> Schema:
    return {"type": "string", "enum": [str(v) for v in values]}


def obj(props: dict[str, Schema], required: tuple[str, ...] | None = None) -> Schema:
    """An object whose every listed property is required unless `required` says which."""
    return {
        "type": "object",
        "properties": props,
        "required": list(props if required is None else required),
    }


def arr(items: Schema) -> Schema:
    return {"type": "array", "items": items}


TIME = opt({"type": "string", "description": "ISO 8601, UTC"})
PRIORITIES = [p.name.lower() for p in Priority]
ACK_STATUSES = [s.value for s in AckStatus]
# the states a `query` call reports (tools.py)
QUERY_STATES = ("pending", "answered", "timed_out")
ACCEPT_RULES = ("anyone", "team", "contacts", "nobody")
AGENT_KINDS = ("agent", "human", "service")

EVENT = obj(
    {
        "event_id": opt(STR),
        "event_type": enum(EVENT_TYPES),
        "occurred_at": TIME,
        "actor": opt(STR),
        "target": opt(STR),
        "target_kind": opt(enum(AGENT_KINDS)),
        "thread_id": opt(STR),
        "comment_id": opt(STR),
        "parent_comment_id": opt(STR),
        "depth": opt({"type": "integer", "enum": [1, 2, 3]}),
        "language": opt(STR),
        "action_hint": opt(enum(ACTION_HINTS)),
        "content_preview": opt(STR),
    },
    ("event_type", "action_hint"),
)
DELIVERY = obj(
    {
        "recipient": STR,
        "state": enum(s.value for s in DeliveryState),
        "retry_count": INT,
        "delivered_at": TIME,
        "read_at": TIME,
        "ack_status": opt(enum(ACK_STATUSES)),
        "acked_at": TIME,
    },
)
ATTACHMENT = obj({"name": STR, "sha256": STR, "size": INT, "content_type": opt(STR)})
MESSAGE = obj(
    {
        "id": INT,
        "channel": STR,
        "sender": STR,
        "type": enum(t.value for t in MessageType),
        "content": STR,
        "topic": opt(STR),
        "priority": enum(PRIORITIES),
        "correlation_id": opt(STR),
        "group_key": opt(STR),
        "metadata": opt(ANY_OBJ),
        "status": STR,
        "created_at": TIME,
        "deliver_at": TIME,
        "trace_id": opt(STR),
        "event": opt(EVENT),
        "format": enum(("text", "markdown")),
        "subject": opt(STR),
        "attachments": arr(ATTACHMENT),
        "direction": opt(STR),
        "delivery": DELIVERY,
        "deliveries": arr(DELIVERY),
    },
    ("id", "channel", "sender", "type", "content", "priority", "created_at", "format"),
)
MESSAGES = obj(
    {"messages": arr(MESSAGE), "total_count": INT, "has_more": BOOL},
)
# `search`: each message as in `messages`, with where it stands in the search
FOUND = obj(
    {
        **MESSAGE["properties"],
        "search": obj({"rank": opt({"type": "number"}), "snippet": STR}),
    },
    (*MESSAGE["required"], "search"),
)
FOUND_MESSAGES = obj(
    {"messages": arr(FOUND), "total_count": INT, "has_more": BOOL, "total_is_lower_bound": BOOL},
    ("messages", "total_count", "has_more"),
)
SENT = obj(
    {
        "id": INT,
        "channel": STR,
        "recipients": arr(STR),
        "status": STR,
        "created_at": TIME,
        "correlation_id": opt(STR),
        "deduplicated": BOOL,
        "suppressed": arr(STR),
        "trace_id": STR,
    },
    ("id", "channel", "recipients", "status", "created_at", "correlation_id", "deduplicated"),
)
# `send`: one send document, or with `to` one result per recipient (a send or an error)
ERROR = obj(
    {"code": STR, "message": STR, "field": STR},
    ("code", "message"),
)
SEND = {
    "anyOf": [
        SENT,
        obj({"results": arr({"anyOf": [SENT, obj({"error": ERROR})]})}),
    ]
}
ACK = obj(
    {
        "message_id": INT,
        "agent": STR,
        "status": enum(ACK_STATUSES),
        "changed": BOOL,
        "ack_message_id": opt(INT),
        "lease_until": TIME,
        "requeued": BOOL,
    },
    ("message_id", "agent", "status", "changed"),
)
ACKS = {"anyOf": [ACK, obj({"acks": arr(ACK)})]}
NACK = obj(
    {
        "message_id": INT,
        "agent": STR,
        "outcome": enum(("requeued", "dead_lettered")),
        "redeliver_at": TIME,
        "retry_count": INT,
        "reason": opt(enum(DEAD_LETTER_REASONS)),
    }
)
QUERY = obj(
    {
        "state": {
            **enum(QUERY_STATES),
            "description": "pending: asked, no answer read yet (no wait_seconds); answered: "
            "the first answer is in `answer`, marked read; timed_out: none came within "
            "wait_seconds (a later one arrives in receive, or read thread).",
        },
        "correlation_id": STR,
        "sent": SENT,
        "answer": opt(MESSAGE),
    }
)
THREAD = obj({"correlation_id": STR, "messages": arr(MESSAGE)})
CHANNEL = obj(
    {
        "id": INT,
        "name": STR,
        "type": enum(t.value for t in ChannelType),
        "owner": STR,
        "state": enum(s.value for s in ChannelState),
        "created_at": TIME,
        "config": obj(
            {
                "delivery": enum(d.value for d in DeliveryMode),
                "ack_timeout_ms": INT,
                "max_retries": INT,
                "echo": BOOL,
                "message_ttl_ms": INT,
            },
            ("delivery",),
        ),
        "participants": arr(
            obj({"agent": STR, "role": enum(r.value for r in Role), "admin": BOOL})
        ),
    }
)
CHANNELS = obj({"channels": arr(CHANNEL)})
CHANNEL_CHANGE = {**CHANNEL, "properties": {**CHANNEL["properties"], "changed": BOOL}}
CHANNEL_CHANGE["required"] = [*CHANNEL["required"], "changed"]
SUBSCRIPTION = obj(
    {
        "channel": STR,
        "agent": STR,
        "pattern": STR,
        "group": STR,
        "changed": BOOL,
        "created": BOOL,
        "removed": BOOL,
    },
    ("channel", "agent", "pattern", "changed"),
)
DEAD_LETTER = obj(
    {
        "message_id": INT,
        "recipient": STR,
        "channel": STR,
        "reason": enum(DEAD_LETTER_REASONS),
        "retry_count": INT,
        "last_error": opt(STR),
        "dead_lettered_at": TIME,
        "content": opt(STR),
    },
    ("message_id", "recipient", "channel", "reason"),
)
DEAD_LETTERS = obj({"dead_letters": arr(DEAD_LETTER), "total_count": INT})
STATS = obj({"agents": arr(ANY_OBJ), "channels": arr(ANY_OBJ), "store": ANY_OBJ})
AGENT = obj(
    {
        "name": STR,
        "kind": enum(AGENT_KINDS),
        "display_name": opt(STR),
        "description": opt(STR),
        "team": opt(STR),
        "accept": enum(ACCEPT_RULES),
        "admin": BOOL,
        "state": enum(("active", "retired")),
        "registered_at": TIME,
        "last_seen_at": TIME,
        "channels": arr(obj({"channel": STR, "type": STR, "role": enum(r.value for r in Role)})),
        "unread": INT,
        "node": opt(STR),
    },
    ("name", "kind", "accept", "state"),
)
AGENTS = obj({"agents": arr(AGENT)})
TASK_EVENT = obj(
    {
        "at": TIME,
        "event": STR,
        "by": opt(STR),
        "progress": opt(INT),
        "note": opt(STR),
        "eta_at": TIME,
    },
    ("at", "event"),
)
TASK = obj(
    {
        "id": INT,
        "capability": opt(STR),
        "from": STR,
        "to": STR,
        "state": enum(TASK_STATES),
        "eta_at": TIME,
        "progress": opt(INT),
        "task_type": enum(TASK_TYPES),
        "correlation_id": opt(STR),
        "eta_required": BOOL,
        "plan": opt(STR),
        "note": opt(STR),
        "result_message_id": opt(INT),
        "created_at": TIME,
        "accepted_at": TIME,
        "updated_at": TIME,
        "finished_at": TIME,
        "global_id": opt(STR),
        "history": arr(TASK_EVENT),
    },
    ("id", "from", "to", "state", "eta_at", "progress", "task_type"),
)
TASKS = obj({"tasks": arr(TASK), "total_count": INT, "has_more": BOOL})
SKILL = obj({"ref": opt(STR), "version": opt(STR)})
CAPABILITY = obj(
    {
        "id": STR,
        "owner": opt(STR),
        "state": enum(("published", "unpublished")),
        "delegation_skill": SKILL,
        "executor_skill": SKILL,
        "schema_sha256": opt(STR),
        "eta_ms": opt(INT),
        "published_at": TIME,
        "unpublished_at": TIME,
        "node": opt(STR),
        "schema": {"description": "The output contract, a JSON Schema (show only)"},
        "installs": arr(ANY_OBJ),
        "routing_misses": INT,
    },
    ("id", "owner", "state", "delegation_skill", "executor_skill", "eta_ms"),
)
CAPABILITIES = obj({"capabilities": arr(CAPABILITY)})
HOP = obj(
    {
        "key": STR,
        "parent": opt(STR),
        "depth": INT,
        "kind": STR,
        "agent": opt(STR),
        "state": opt(STR),
        "at": TIME,
        "since_root_ms": INT,
        "since_parent_ms": opt(INT),
    },
    ("key", "parent", "depth", "kind", "at"),
)
TRACE = obj({"trace_id": STR, "started_at": TIME, "duration_ms": INT, "hops": arr(HOP)})
CURSOR = obj(
    {
        "name": STR,
        "channel": STR,
        "position": {**INT, "description": "The last message id read through it (0: none)."},
        "head": {**INT, "description": "The channel's newest message id."},
        "pending": {**INT, "description": "The channel's messages past it (filter aside)."},
        "filter": ANY_OBJ,
        "behind_compaction": BOOL,
        "compacted_through": opt(INT),
        "created_by": opt(STR),
        "created_at": TIME,
        "updated_at": TIME,
    },
    ("name", "channel", "position", "head", "pending", "filter", "behind_compaction"),
)
CURSORS = obj({"cursors": arr(CURSOR)})
CURSOR_READ = obj(
    {
        "messages": arr(MESSAGE),
        "total_count": INT,
        "has_more": BOOL,
        "cursor": CURSOR,
        "moved_from": INT,
    }
)
# the states a schedule is in (engine/schedules.STATES: tests/test_mcp_consumers.py checks)
SCHEDULE_STATES = ("active", "paused", "finished")
SCHEDULE = obj(
    {
        "id": INT,
        "channel": STR,
        "sender": STR,
        "content": STR,
        "every_ms": opt(INT),
        "cron": opt(STR),
        "topic": opt(STR),
        "priority": opt(enum(PRIORITIES)),
        "metadata": ANY_OBJ,
        "state": enum(SCHEDULE_STATES),
        "next_at": TIME,
        "until": TIME,
        "max_runs": opt(INT),
        "runs": INT,
        "catch_up": enum(("all", "last")),
        "last_run_at": TIME,
        "last_message_id": opt(INT),
        "last_error": opt(STR),
        "created_at": TIME,
    },
    ("id", "channel", "sender", "content", "state", "next_at", "runs", "catch_up"),
)
SCHEDULES = obj({"schedules": arr(SCHEDULE)})
SCHEDULE_DELETED = {
    **SCHEDULE,
    "properties": {**SCHEDULE["properties"], "deleted": BOOL},
    "required": [*SCHEDULE["required"], "deleted"],
}

# tool name -> its output schema (every tool has one: tests/test_mcp_tools.py checks)
OUTPUT: dict[str, Schema] = {
    "send": SEND,
    "publish": SENT,
    "receive": MESSAGES,
    "ack": ACKS,
    "nack": NACK,
    "query": QUERY,
    "respond": SENT,
    "thread": THREAD,
    "messages": MESSAGES,
    "search": FOUND_MESSAGES,
    "show": MESSAGE,
    "channels": CHANNELS,
    "channel_create": CHANNEL,
    "channel_join": CHANNEL_CHANGE,
    "subscribe": SUBSCRIPTION,
    "unsubscribe": SUBSCRIPTION,
    "deadletters": DEAD_LETTERS,
    "replay": DEAD_LETTERS,
    "stats": STATS,
    "whois": AGENT,
    "list_agents": AGENTS,
    "task_create": TASK,
    "task_accept": TASK,
    "task_update": TASK,
    "task_complete": TASK,
    "task_fail": TASK,
    "task_show": TASK,
    "task_list": TASKS,
    "capability_list": CAPABILITIES,
    "capability_show": CAPABILITY,
    "trace": TRACE,
    "cursor_create": CURSOR,
    "cursor_read": CURSOR_READ,
    "cursor_list": CURSORS,
    "schedule_create": SCHEDULE,
    "schedule_list": SCHEDULES,
    "schedule_delete": SCHEDULE_DELETED,
}


def output_schema(tool: str) -> Schema:
    """The tool's schema as MCP wants it: an object at the top (a choice of objects is
    put under one `type: object`)."""
    schema = OUTPUT[tool]
    return schema if schema.get("type") == "object" else {"type": "object", **schema}
