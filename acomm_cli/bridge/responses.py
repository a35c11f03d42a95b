"""What a response file's object asks for, through the engine's own pipeline.

acomm's schema (DECISIONS.md, "Any JSON object in an outbox is forwarded"): `ack`
acknowledges; `to`, `channel`, `reply_to` or `correlation_id` name a target, and then every
field must be one of acomm's. Any other JSON object is forwarded as it is: its JSON text is
the content of a message to `bridge.default_channel` when that is set, else of a reply to the
latest message the agent received (a response, when that message is a query)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from acomm_cli import model
from acomm_cli.engine import sending
from acomm_cli.errors import CommError, NotFound, ValidationFailed
from acomm_cli.model import SendRequest
from acomm_cli.store import bridge as q
from acomm_cli.store import reads, write

_RESPONSE_KEYS = {
    "content",
    "to",
    "channel",
    "reply_to",
    "correlation_id",
    "type",
    "topic",
    "priority",
    "metadata",
    "event",
    "trace_id",
}
_ACK_KEYS = {"ack", "status", "note"}
_TARGET_KEYS = ("to", "channel", "reply_to", "correlation_id")


def apply(
    conn: sqlite3.Connection, agent: str, doc: Any, now: int, default_channel: str | None = None
) -> int | None:
    """One response file's object, from `agent`, through the pipeline; the new message id
    (None for an ack that changed nothing). Called inside the caller's transaction: the
    pipeline's own transactions nest in it as savepoints."""
    from acomm_cli.engine import acking, queries

    if not isinstance(doc, dict):
        raise ValidationFailed("a response file must hold a JSON object")
    if "ack" in doc:
        unknown = sorted(set(doc) - _ACK_KEYS)
        if unknown:
            raise ValidationFailed(f"unknown field {unknown[0]!r}", field=unknown[0])
        mid = model.whole_number(doc["ack"])  # an int, or ASCII digits
        if mid is None:
            raise ValidationFailed("ack: must be a message id", field="ack")
        note = doc.get("note")
        if note is not None and not isinstance(note, str):
            raise ValidationFailed("note: must be a string", field="note")
        return acking.ack(
            conn, mid, agent, str(doc.get("status", "completed")), note, now
        ).ack_message_id
    if not any(k in doc for k in _TARGET_KEYS):
        return _forward(conn, agent, doc, now, default_channel)
    unknown = sorted(set(doc) - _RESPONSE_KEYS)
    if unknown:
        raise ValidationFailed(f"unknown field {unknown[0]!r}", field=unknown[0])
    for key in ("content", "to", "channel", "correlation_id", "type", "topic", "trace_id"):
        if key in doc and not isinstance(doc[key], str):
            raise ValidationFailed(f"{key}: must be a string", field=key)
    targets = [k for k in ("to", "channel", "reply_to") if k in doc]
    if len(targets) > 1:
        raise ValidationFailed("give only one of 'to', 'channel' and 'reply_to'", field=targets[1])
    content = doc.get("content", "")
    prio = doc.get("priority", "normal")
    req = SendRequest(
        sender=agent,
        content=content,
        type=doc.get("type", "text"),
        priority=prio,
        topic=doc.get("topic"),
        correlation_id=doc.get("correlation_id"),
        metadata=doc.get("metadata"),
        event=doc.get("event"),
        trace_id=doc.get("trace_id"),
    )
    if "event" in doc and not targets:
        raise ValidationFailed(
            "event: a response by correlation_id carries no event (name to, channel or reply_to)",
            field="event",
        )
    if "trace_id" in doc and not targets:
        raise ValidationFailed(
            "trace_id: a response by correlation_id joins its query's trace", field="trace_id"
        )
    if "to" in doc:
        res = sending.send_direct(conn, req, [doc["to"]], now)[0]
        if isinstance(res, CommError):
            raise res
        return res.id
    if "channel" in doc:
        return sending.send(
            conn, SendRequest(**{**req.__dict__, "channel": doc["channel"]}), now
        ).id
    if "reply_to" not in doc:
        return queries.respond(conn, doc["correlation_id"], content, agent, now, prio).id
    return _reply(conn, req, doc["reply_to"], now)


def _forward(
    conn: sqlite3.Connection, agent: str, doc: dict[str, Any], now: int, default_channel: str | None
) -> int:
    """An object naming no target (any object is forwarded): its JSON text, as the
    agent, to the default channel, else in reply to the latest message the agent received.
    With neither, the file is bad: it stays until it names a target (or is touched after
    bridge.default_channel is set), rather than answering a message that arrives later."""
    req = SendRequest(sender=agent, content=json.dumps(doc, ensure_ascii=False))
    if default_channel is not None:
        return sending.send(
            conn, SendRequest(**{**req.__dict__, "channel": default_channel}), now
        ).id
    latest = q.latest_received(conn, agent)
    if latest is None:
        raise ValidationFailed(
            f"no target: the object names none ('to', 'channel', 'reply_to' or "
            f"'correlation_id'), {agent} has received no message to reply to, and "
            "bridge.default_channel is not set",
            field="to",
        )
    return _reply(conn, req, latest, now)


def _reply(conn: sqlite3.Connection, req: SendRequest, reply_to: Any, now: int) -> int:
    reply_to = model.whole_number(reply_to)  # an int, or ASCII digits
    if reply_to is None:
        raise ValidationFailed("reply_to: must be a message id", field="reply_to")
    original = reads.message_by_id(conn, reply_to)
    if original is None:
        raise NotFound(f"message {reply_to} does not exist", field="reply_to", value=reply_to)
    if original.type == model.MessageType.QUERY and original.correlation_id:
        from acomm_cli.engine import queries

        if req.event is not None:
            raise ValidationFailed(
                "event: the answer to a query is a response, which carries no event",
                field="event",
            )
        if req.trace_id is not None:
            raise ValidationFailed(
                "trace_id: the answer to a query is a response, which joins the query's trace",
                field="trace_id",
            )

        return queries.respond(
            conn, original.correlation_id, req.content, req.sender, now, req.priority
        ).id
    meta = {**(req.metadata or {}), "reply_to": str(reply_to)}
    with write(conn):
        router = sending.Router(conn)
        plan = sending.plan_message(
            router,
            SendRequest(
                **{
                    **req.__dict__,
                    "channel": original.channel,
                    "metadata": meta,
                    "dedupe_key": None,
                    "correlation_id": req.correlation_id or original.correlation_id,
                }
            ),
            now,
            only_to=original.sender,
        )
        return sending.persist(router, plan, now).id
