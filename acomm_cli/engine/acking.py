"""Acknowledging in batches (issue 17): `ack 4 5 6` and `receive --ack STATUS`, each one
transaction, for consumers that process many messages at a time."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from acomm_cli import model
from acomm_cli.engine import leases
from acomm_cli.engine.channels import release
from acomm_cli.engine.delivery import (
    AckResult,
    advance,
    receive_wait,
    record_ack,
    tell_sender,
)
from acomm_cli.engine.inbox import Emit, read_inbox
from acomm_cli.engine.sending import Router
from acomm_cli.errors import ValidationFailed
from acomm_cli.model import AckStatus, DeliveryState, Message, MessageFilter, QueryResult
from acomm_cli.store import acks, reads, timers, write


def ack_many(conn: sqlite3.Connection, message_ids: Sequence[int], agent: str, status: str,
             note: str | None, now: int) -> list[AckResult]:
    """Acknowledge several messages in one transaction, results in the order given. Any id
    that `ack` would refuse fails the whole call with that id's error: nothing is acked."""
    model.agent_id(agent)
    st = model.ack_status(status)
    if not message_ids:
        raise ValidationFailed("message: name at least one message id", field="message")
    seen: set[int] = set()
    for mid in message_ids:
        if mid in seen:
            raise ValidationFailed(f"message: {mid} is named twice", field="message",
                                   value=mid)
        seen.add(mid)
    with write(conn):
        router = Router(conn)  # the channels of the acks, read once
        return [record_ack(conn, mid, agent, st, note, now, router) for mid in message_ids]


def receive_ack(conn: sqlite3.Connection, agent: str, f: MessageFilter, status: str, now: int,
                *, note: str | None = None, emit: Emit | None = None,
                wait_s: float | None = None) -> QueryResult:
    """`receive` that also acknowledges what it returns with `status`, in the same one
    transaction: exactly the messages handed over are the ones acked. `wait_s` as
    `receive --wait`.

    As in `inbox.receive`, `emit` gets the result inside the transaction, after the acks are
    written and before the commit: if the output fails (or the process is killed before the
    commit), nothing is read or acked and the messages are handed out again."""
    model.agent_id(agent, "recipient")
    st = model.ack_status(status)

    def read(conn: sqlite3.Connection, agent: str, f: MessageFilter, now: int, peek: bool,
             emit: Emit | None) -> tuple[QueryResult, bool]:
        return _read_acked(conn, agent, f, now, st, note, emit)

    if wait_s is not None:
        return receive_wait(conn, agent, f, wait_s, emit=emit, read=read)
    result, emitted = read(conn, agent, f, now, False, emit)
    if emit is not None and not emitted:
        emit(result)
    return result


def _read_acked(conn: sqlite3.Connection, agent: str, f: MessageFilter, now: int,
                st: AckStatus, note: str | None, emit: Emit | None) -> tuple[QueryResult, bool]:
    with write(conn):
        if timers.has_due(conn, now, agent):  # the agent's own timers, as receive applies
            advance(conn, now, agent)
        # claims work-queue messages as receive does, marks nothing: the acks below do
        result, _ = read_inbox(conn, agent, f, now, mark=False)
        if result.messages:
            acknowledge_unread(conn, agent, result, st, note, now)
            if emit is not None:
                emit(result)  # holds the write lock while it prints: see inbox.read_inbox
                return result, True
    return result, False


def acknowledge_unread(conn: sqlite3.Connection, agent: str, result: QueryResult,
                       st: AckStatus, note: str | None, now: int) -> None:
    """Unread deliveries just read from the inbox: read and acked in one UPDATE, then one
    acknowledgement message each to its sender (what `ack` writes)."""
    msgs = result.messages
    router = Router(conn)
    retried: set[int] = set()
    if st == AckStatus.FAILED:  # as `ack --status failed`: a --retry-failed channel retries
        retried = {m.id for m in msgs if router.channel(m.channel).config.retry_failed}
    acked = [m.id for m in msgs if m.id not in retried]
    changed = acks.ack_unread(conn, agent, acked, st.value, note, now) if acked else 0
    assert changed == len(acked), "the inbox rows were read in this same transaction"
    limited = set()
    for m in msgs:
        ch = router.channel(m.channel)
        if ch.config.max_pending > 0 or m.id in retried:
            limited.add(ch.id)
        if m.id in retried:
            _retry(conn, m, agent, note, now)
            continue
        tell_sender(router, m.id, m.channel, m.sender, m.correlation_id, agent, st, note, now)
        d = m.delivery
        assert d is not None  # an inbox row carries the reader's delivery
        d.state, d.read_at, d.ack_status, d.acked_at = DeliveryState.ACKED, now, st.value, now
        if d.first_read_at is None:
            d.first_read_at = now
        # received/in_progress hold the delivery for the channel's lease (issue 18)
        d.next_timer_at = (leases.renew(conn, leases.view(conn, m.id, agent), st, now)
                           if st.value in leases.HOLDING else None)
    if limited:
        release(conn, now, sorted(limited))


def _retry(conn: sqlite3.Connection, m: Message, agent: str, note: str | None,
           now: int) -> None:
    """A `failed` ack of an unread delivery on a --retry-failed channel: read, then given back
    after the back-off (or dead-lettered past max_retries), as `ack --status failed` does
    after a `receive`; its sender gets no acknowledgement. The printed delivery is the row
    as the give-back left it (on a work queue: back to the queue, recipient '*')."""
    acks.mark_read(conn, agent, [m.id], now)
    given = leases.retry_failed(conn, leases.view(conn, m.id, agent), note, now)
    assert given is not None  # the caller picked this channel for its retry_failed
    stored = reads.message_by_id(conn, m.id)
    assert stored is not None  # read in this same transaction
    m.delivery = next(d for d in stored.deliveries
                      if d.recipient in (agent, model.QUEUE_RECIPIENT))
