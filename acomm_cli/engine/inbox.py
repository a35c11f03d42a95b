"""Reading messages: an agent's inbox (`receive`, which marks what it returns read) and the
history (`messages`, `show`, which change nothing)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from acomm_cli import model
from acomm_cli.engine import attachments, directory, presence, queues
from acomm_cli.engine.channels import get_channel, release
from acomm_cli.errors import InvalidState, NotFound, NotParticipant, ValidationFailed
from acomm_cli.model import ChannelState, DeliveryState, Message, MessageFilter, QueryResult
from acomm_cli.store import acks, facts, reads, write
from acomm_cli.store.connection import leave_agents
from acomm_cli.topics import validate_pattern

_DELIVERY_STATES = tuple(s.value for s in DeliveryState)


def feed_filter(
    channel: str, agent: str, type_: str, topic: str, status: str, limit: int
) -> MessageFilter:
    """A front end's live feed (`acomm ui`, `acomm web`) as `acomm messages` would filter it,
    newest first; an empty string is no filter. Refused naming the field, as the command."""
    f = MessageFilter(
        channel=channel or None,
        sender=agent or None,
        types=(model.message_type(type_),) if type_ else (),
        topic=topic or None,
        status=(status,) if status else (),
        sort="id",
        order="desc",
        limit=limit,
    )
    check_filter(f)
    return f


def check_filter(f: MessageFilter) -> None:
    if f.limit < 0 or f.offset < 0:
        raise ValidationFailed("limit: --limit and --offset must not be negative", field="limit")
    if f.topic is not None:
        validate_pattern(f.topic)
    if f.grep is not None:
        model.grep_pattern(f.grep)  # bounded-time matching; refused here, not mid-query
    if f.sender is not None:
        model.agent_id(f.sender, "from")
    if f.event_type is not None:
        model.event_type(f.event_type)
    if f.actor is not None:
        model.agent_id(f.actor, "actor")
    for s in f.status:
        if s not in model.MESSAGE_STATUSES:
            raise ValidationFailed(
                f"status: {s!r} is not one of {', '.join(model.MESSAGE_STATUSES)}",
                field="status",
                value=s,
            )
    if f.correlation_id is not None:
        model.correlation_id(f.correlation_id)
    if f.recipient is not None:
        model.agent_id(f.recipient, "recipient")
    for s in f.state:
        if s not in _DELIVERY_STATES:
            raise ValidationFailed(
                f"state: {s!r} is not a delivery state (one of {', '.join(_DELIVERY_STATES)})",
                field="state",
                value=s,
            )
    sorts = ("created", "priority", "id", "rank") if f.search else ("created", "priority", "id")
    if f.sort is not None and f.sort not in sorts:
        raise ValidationFailed(
            f"sort: {f.sort!r} is not one of {', '.join(sorts)}"
            + (" (rank: with --search)" if f.sort == "rank" else ""),
            field="sort",
            value=f.sort,
        )
    if f.order is not None and f.order not in ("asc", "desc"):
        raise ValidationFailed(
            f"order: {f.order!r} is not one of asc, desc", field="order", value=f.order
        )


def reader(agent: str, field: str = "recipient") -> None:
    """The reader's (or acker's) name checked, once per process (model.agent_id_once)."""
    model.agent_id_once(agent, field)


class _DueFirst(Exception):
    """read_inbox(due_first=True): something is due for the reader; its transaction rolls
    back having written nothing (timers.read_due applies what is due, then reads)."""


Emit = Callable[[QueryResult], None]
"""Where a reading command's output goes: it writes and flushes the batch, raising if it
could not (the command passes a renderer; the engine never imports one)."""


def receive(
    conn: sqlite3.Connection,
    agent: str,
    f: MessageFilter,
    now: int,
    *,
    peek: bool = False,
    emit: Emit | None = None,
) -> QueryResult:
    """An agent's unread messages, oldest first; marks the returned ones read unless `peek`.

    With `emit`, the result is handed to it exactly once: inside the transaction, after the
    read marks and before the commit, when anything is marked read, so that a message counts
    as read only once its output has left the process (if `emit` raises, the marks roll back
    and nothing is lost); after the transaction otherwise (peek, or nothing to read)."""
    result, emitted = read_inbox(conn, agent, f, now, peek=peek, emit=emit)
    if emit is not None and not emitted:
        emit(result)
    return result


def read_inbox(
    conn: sqlite3.Connection,
    agent: str,
    f: MessageFilter,
    now: int,
    *,
    peek: bool = False,
    emit: Emit | None = None,
    mark: bool = True,
    due_first: bool = False,
) -> tuple[QueryResult, bool]:
    """`receive` that calls `emit` only where it must: inside the transaction that marks
    messages read. Returns the result and whether `emit` was called (a wait calls it itself
    once it stops waiting; a follow skips empty passes). `mark=False` claims work-queue
    messages as a receive does but marks nothing read and emits nothing: `receive --follow`
    marks each message itself once its reader has taken it (waiting.follow). `due_first`:
    raise _DueFirst, before anything is written, when the agent has a timer, an expiry or a
    schedule due (asked in the transaction's first statement; the caller applies them)."""
    reader(agent)
    check_filter(f)
    began = not conn.in_transaction
    try:
        return _read_inbox(conn, agent, f, now, peek, emit, mark, began, due_first)
    except BaseException:
        if began:  # rolled back: what it read of the directory may not hold
            leave_agents(conn, failed=True)
        raise
    finally:
        if began:
            leave_agents(conn, failed=False)


def _read_inbox(
    conn: sqlite3.Connection,
    agent: str,
    f: MessageFilter,
    now: int,
    peek: bool,
    emit: Emit | None,
    mark: bool,
    began: bool,
    due_first: bool,
) -> tuple[QueryResult, bool]:
    emitted = False
    with write(conn):
        # the channel facts this read needs, remembered by the connection under the channels
        # token: one statement in place of three (only in a transaction begun here)
        if began and due_first:  # with the agent's due checks, in the same statement
            known, due = facts.at_start_due(conn, agent, now)
            if due:
                raise _DueFirst
        else:
            known = facts.at_start(conn) if began else None
        directory.known(conn, agent, "as", now)
        # a peek writes nothing (it works on a store this user cannot write); a follow's
        # look ahead (mark=False) neither: it records the agent when it marks the message
        if mark and not peek:
            presence.seen(conn, agent, now)
        if f.channel is not None:
            ch = get_channel(conn, f.channel)
            if ch.state == ChannelState.CLOSED:
                raise InvalidState(f"channel {ch.name!r} is closed", field="channel", value=ch.name)
            if ch.role_of(agent) is None:
                raise NotParticipant(
                    f"{agent!r} is not a participant of {ch.name!r}", field="recipient", value=agent
                )
        if not peek:  # a work queue's messages become the agent's by claiming them
            queues.claim(conn, agent, f, now, None if known is None else known.serves(agent))
        marking = not peek and mark
        # built as the read marks below leave them (state read, read_at now, first_read_at
        # kept or now), in the same transaction
        rich: set[int] = set()
        msgs, total, limited = reads.inbox(
            conn,
            agent,
            f,
            marked_at=now if marking else None,
            rich=rich,
            closed=None if known is None else known.closed,
        )
        # plain messages on a channel other than a direct one (`_dm:`, a node's `_fed:`)
        # have nothing to decorate
        if rich or any(m.channel[:1] == "_" for m in msgs):
            attachments.decorate(conn, msgs, rich=rich)
        result = QueryResult(msgs, total, f.offset)
        if marking and msgs:
            acks.mark_read(
                conn,
                agent,
                [m.id for m in msgs],
                now,
                read_clock=None if known is None else known.read_clock,
            )
            if limited:  # only a channel with max_pending can hold queued messages
                release(conn, now, sorted(limited))
            if emit is not None:
                # The output goes out while this transaction holds the write lock: other
                # writers wait for it (up to their busy_timeout), readers do not (WAL). The
                # command bounds how long a stalled reader may hold it
                # (cli/handover.handing_over).
                # A kill after the output and before the commit hands these messages out
                # again: at least once to the reader, never zero times.
                emit(result)
                emitted = True
    return result, emitted


def history(conn: sqlite3.Connection, f: MessageFilter) -> QueryResult:
    """Every message matching the filter, newest first; reads only."""
    check_filter(f)
    if f.channel is not None:
        get_channel(conn, f.channel)
    msgs, total = reads.history(conn, f)
    attachments.decorate(conn, msgs)
    return QueryResult(msgs, total, f.offset)


def show(conn: sqlite3.Connection, message_id: int) -> Message:
    msg = reads.message_by_id(conn, message_id)
    if msg is None:
        raise NotFound(f"message {message_id} does not exist", field="message", value=message_id)
    attachments.decorate(conn, [msg])
    if msg.global_id is not None:  # only a node has federated messages
        from acomm_cli.engine import remote

        msg.federation = remote.view(conn, msg.id, msg.global_id)
    return msg
