"""Request and response: `query` (a query, with an optional timeout after which unread
deliveries expire), `respond` (the answer goes to the asker, on the query's channel, and
counts as the responder's ack `completed`), waiting for the answer, and a thread."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

from acomm_cli import clock, model
from acomm_cli.engine import directory, presence, waiting
from acomm_cli.engine.channels import channel_by_id
from acomm_cli.engine.sending import Router, persist, plan_message, send, send_direct
from acomm_cli.errors import CommError, InvalidState, NotFound, ValidationFailed
from acomm_cli.model import Message, MessageType, SendRequest, SendResult
from acomm_cli.store import acks, reads, sending, stats, write

TYPE_CHECKING = False  # typing's, without importing typing (a send's start-up time)
if TYPE_CHECKING:
    from dataclasses import replace
else:  # the same classes, without importing dataclasses (a send's start-up time)
    from acomm_cli.lite.records import replace


def query(
    conn: sqlite3.Connection,
    req: SendRequest,
    now: int,
    timeout_ms: int | None = None,
    limits: model.Limits | None = None,
    wait_s: float | None = None,
    *,
    to: str | None = None,
) -> SendResult:
    """Send a query; with a timeout, deliveries not read by then expire (dead letters).
    `wait_s` is checked here, before anything is sent, for `query --wait`. With `to`, the
    query goes to that one agent on the direct channel with it (`req.channel` unused)."""
    if wait_s is not None:
        waiting.check_wait(wait_s)
    if timeout_ms is not None and timeout_ms <= 0:
        raise ValidationFailed("timeout: must be longer than 0", field="timeout", value=timeout_ms)
    req = replace(
        req,
        type=MessageType.QUERY.value,
        expires_at=now + timeout_ms if timeout_ms is not None else None,
    )
    if to is None:
        return send(conn, req, now, limits)
    (result,) = send_direct(conn, replace(req, channel=None), [to], now, limits)
    if isinstance(result, CommError):
        raise result
    return result


def respond(
    conn: sqlite3.Connection,
    correlation_id: str,
    content: str,
    agent: str,
    now: int,
    priority: str | int = "normal",
) -> SendResult:
    """Answer a query: to its sender, on its channel; the response is the responder's ack."""
    model.agent_id(agent, "sender")
    model.correlation_id(correlation_id)
    with write(conn):
        directory.known(conn, agent, "as", now)
        presence.seen(conn, agent, now)
        return record_response(conn, correlation_id, content, agent, now, priority)


def record_response(
    conn: sqlite3.Connection,
    correlation_id: str,
    content: str,
    agent: str,
    now: int,
    priority: str | int = "normal",
) -> SendResult:
    """`respond` inside the caller's transaction (agent dispatch answers with a receipt)."""
    found = sending.first_of_type(conn, correlation_id, MessageType.QUERY.value)
    if found is None:
        raise NotFound(
            f"no query has correlation id {correlation_id!r}",
            field="correlation_id",
            value=correlation_id,
        )
    _, channel_id, asker, trace = found
    ch = channel_by_id(conn, channel_id)
    router = Router(conn)
    plan = plan_message(
        router,
        SendRequest(
            sender=agent,
            content=content,
            channel=ch.name,
            type=MessageType.RESPONSE.value,
            correlation_id=correlation_id,
            priority=priority,
            trace_id=trace,
        ),
        now,
        only_to=asker,
    )
    return persist(router, plan, now)  # which also acknowledges the query


def await_response(
    conn: sqlite3.Connection,
    correlation_id: str,
    agent: str,
    wait_s: float,
    stop: Callable[[], bool] = lambda: False,
    emit: Callable[[Message], None] | None = None,
    meta: tuple[model.MetaCondition, ...] = (),
) -> Message | None:
    """Block up to `wait_s` for the first unread response to the asker whose metadata meets
    `meta` (others stay unread, for `receive`); marks it read. With `emit`, the response is
    handed to it before the read mark commits (as `inbox.receive`): if the output fails, the
    response stays unread."""
    until = time.monotonic() + wait_s
    while True:
        version = stats.data_version(conn)
        with write(conn):
            msg = reads.unread_response(conn, correlation_id, agent, meta)
            if msg is not None:
                read_at = clock.now_ms()
                presence.seen(conn, agent, read_at)
                acks.mark_read(conn, agent, [msg.id], read_at)
                if emit is not None:
                    emit(msg)  # holds the write lock while it prints: see inbox.read_inbox
                return msg
            dead = unanswerable(conn, correlation_id)
            if dead is not None:
                raise dead
        if time.monotonic() >= until or stop():
            return None
        waiting.wait_change(conn, version, until, None, stop)


def unanswerable(conn: sqlite3.Connection, correlation_id: str) -> CommError | None:
    """Why no answer can come any more: every delivery of the query is a dead letter (on
    this node, or, for a query sent to another node, on that node: the asker's copy holds
    it then), or None. Waiting on would only wait out the time given."""
    found = sending.first_of_type(conn, correlation_id, MessageType.QUERY.value)
    msg = None if found is None else reads.message_by_id(conn, found[0])
    if msg is None or not msg.deliveries:
        return None
    if any(d.state != model.DeliveryState.DEAD for d in msg.deliveries):
        return None
    from acomm_cli.store import deadletters

    rows, _ = deadletters.dead_letters(conn, message_id=msg.id, limit=10)
    why = "; ".join(f"{r[1]}: {r[3]} ({r[5] or 'no detail'})" for r in rows)
    return InvalidState(
        f"query {correlation_id} was dead-lettered for every recipient, no response can"
        f" come: {why}",
        field="correlation_id",
        value=correlation_id,
        message_id=msg.id,
    )


def thread(conn: sqlite3.Connection, correlation_id: str) -> list[Message]:
    model.correlation_id(correlation_id)
    msgs = reads.thread(conn, correlation_id)
    if not msgs:
        raise NotFound(
            f"no message has correlation id {correlation_id!r}",
            field="correlation_id",
            value=correlation_id,
        )
    from acomm_cli.engine import attachments

    attachments.decorate(conn, msgs)
    return msgs
