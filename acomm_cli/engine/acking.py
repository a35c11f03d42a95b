"""Acknowledgements: `ack` (forward only: received -> in_progress -> completed | failed; a
repeat changes nothing), the acknowledgement message it sends back to the sender, and the
batch forms `ack 4 5 6` and `receive --ack STATUS`, each one transaction, for consumers that
process many messages at a time."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from acomm_cli import model
from acomm_cli.engine import directory, leases, presence
from acomm_cli.engine.channels import release
from acomm_cli.engine.inbox import Emit, read_inbox, reader
from acomm_cli.engine.sending import Router, send_acknowledgment
from acomm_cli.engine.timers import advance
from acomm_cli.engine.waiting import receive_wait
from acomm_cli.errors import InvalidState, NotFound, ValidationFailed
from acomm_cli.model import (
    ACK_ORDER,
    AckStatus,
    ChannelType,
    DeliveryState,
    Message,
    MessageFilter,
    QueryResult,
)
from acomm_cli.store import acks, channels, reads, timers, write
from acomm_cli.store.connection import enter_agents, leave_agents

TYPE_CHECKING = False  # typing's, without importing typing (a send's start-up time)
if TYPE_CHECKING:
    from dataclasses import dataclass
    from typing import Any
else:  # the same classes, without importing dataclasses (a send's start-up time)
    from acomm_cli.lite.records import dataclass


@dataclass(frozen=True)
class AckResult:
    """The outcome of one ack."""

    message_id: int
    agent: str
    status: str
    changed: bool
    ack_message_id: int | None
    lease_until: int | None = None  # a received/in_progress ack holds the delivery till then
    requeued: bool = False  # a `failed` ack on a --retry-failed channel: given back


_STATUSES = {s.value: s for s in AckStatus}  # a dict lookup: calling the Enum costs more


def ack(
    conn: sqlite3.Connection, message_id: int, agent: str, status: str, note: str | None, now: int
) -> AckResult:
    """Record an acknowledgement (forward only; repeating is a no-op) and tell the sender."""
    reader(agent, "agent")
    st = _STATUSES.get(status) if type(status) is str else None
    st = st or model.ack_status(status)
    with _cached(conn, message_id, agent) as cached:
        directory.known(conn, agent, "as", now)
        presence.seen(conn, agent, now)
        return record_ack(conn, message_id, agent, st, note, now, cached.router, view=cached.view)


_NOT_READ: Any = object()  # record_ack's `view` when its caller has not read it


class _cached:
    """`with write(conn)` for an ack, and a Router on the connection's caches: the channels
    token and the agents token read first, with what the ack reads of the message and its
    delivery, in one statement (store/acks.tokens_ack_view), so the channel of the ack and
    the directory's answers come from the connection's caches while their tokens hold (only
    in a transaction begun here; one that fails drops what it read of the directory). A
    class, not a @contextmanager: contextlib stays off the hot path."""

    __slots__ = ("conn", "began", "tx", "message_id", "agent", "router", "view")

    def __init__(self, conn: sqlite3.Connection, message_id: int, agent: str) -> None:
        self.conn, self.began, self.tx = conn, not conn.in_transaction, write(conn)
        self.message_id, self.agent = message_id, agent
        self.view: tuple[Any, ...] | None = _NOT_READ

    def __enter__(self) -> _cached:
        self.tx.__enter__()
        router = self.router = Router(self.conn)
        if self.began:
            try:
                router.primed, agents, self.view = acks.tokens_ack_view(
                    self.conn, self.message_id, self.agent
                )
            except BaseException as exc:
                self.tx.__exit__(type(exc), exc, exc.__traceback__)
                raise
            enter_agents(self.conn, agents)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        try:
            self.tx.__exit__(kind, exc, tb)
        except BaseException:
            if self.began:
                leave_agents(self.conn, failed=True)
            raise
        if self.began:
            leave_agents(self.conn, failed=exc is not None)


def record_ack(
    conn: sqlite3.Connection,
    message_id: int,
    agent: str,
    st: AckStatus,
    note: str | None,
    now: int,
    router: Router | None = None,
    extra: dict[str, str] | None = None,
    *,
    lease: bool = True,
    view: tuple[Any, ...] | None = _NOT_READ,
) -> AckResult:
    """`ack` inside the caller's transaction (agent dispatch acks as part of a receipt;
    `ack 4 5 6` passes one `router` for all, so their channel is read once). `extra`: more
    metadata for the acknowledgement message (a task's accept carries its `eta_at` there, so
    the creator learns the ETA from it). `lease`: a received/in_progress ack holds the
    delivery for the channel's lease (leases.py); False for callers that hold it by their own
    timer (dispatch's claim, a task's ETA). `view`: acks.ack_view's row, when the caller
    read it in this transaction."""
    # the message and the delivery, one read (or read by the caller: `view`)
    row = acks.ack_view(conn, message_id, agent) if view is _NOT_READ else view
    if row is None:
        raise NotFound(f"message {message_id} does not exist", field="message", value=message_id)
    sender, corr, trace = row[0], row[1], row[2]
    if row[3] is None:  # the agent has no delivery of it
        msg = reads.message_by_id(conn, message_id)
        if msg is not None and _queued_elsewhere(conn, msg, agent):
            raise InvalidState(
                f"{agent!r} does not hold message {message_id}: it is in queue "
                f"{msg.channel!r} and another claim (or none) has it; a claim "
                "not acked in time goes back to the queue",
                field="message",
                value=message_id,
            )
        raise leases.not_recipient(message_id, agent)
    v = leases.from_row(message_id, agent, row, 3)
    state, previous, delivered_at = v.state, v.ack_status, v.delivered_at
    status = st.value  # read once: an Enum's value is a property
    if previous == status:  # a repeat changes nothing, but renews a lease
        until = leases.renew(conn, v, st, now) if lease else None
        return AckResult(message_id, agent, status, False, None, until)
    if delivered_at is None:
        raise InvalidState(
            f"message {message_id} has not been delivered to {agent!r} yet (it is {state})",
            field="message",
            value=message_id,
        )
    _check_forward(message_id, state, previous, st)
    if st == AckStatus.FAILED and (given := leases.retry_failed(conn, v, note, now)):
        release(conn, now, [v.channel_id])
        return AckResult(
            message_id, agent, status, True, None, None, requeued=given.outcome == "requeued"
        )
    until = leases.lease_until(v, st, now) if lease else None
    acks.set_ack(conn, message_id, agent, status, note, now, until)
    router = router or Router(conn)
    if router.primed is not None:  # no write of this transaction changed a channel
        router.prime(v.channel, router.primed)
    ch = router.channel(v.channel)
    if ch.config.max_pending > 0:  # only a channel that limits pending ones queues any
        release(conn, now, [ch.id])
    if not ch.config.notifies(st):  # recorded on the delivery; no message (--ack-notify)
        return AckResult(message_id, agent, status, True, None, until)
    ack_id = tell_sender(
        router,
        message_id,
        v.channel,
        sender,
        corr,
        agent,
        st,
        note,
        now,
        extra,
        trace,
    )
    return AckResult(message_id, agent, status, True, ack_id, until)


def tell_sender(
    router: Router,
    message_id: int,
    channel: str,
    sender: str,
    corr: str | None,
    agent: str,
    st: AckStatus,
    note: str | None,
    now: int,
    extra: dict[str, str] | None = None,
    trace_id: str | None = None,
) -> int | None:
    """The acknowledgement message back to the sender (its id; None when it has no
    recipient), in the acknowledged message's trace; from another node, the ack travels as
    an event instead."""
    status = st.value
    if channel.startswith("_fed:"):
        from acomm_cli.engine import remote

        if st in (AckStatus.COMPLETED, AckStatus.FAILED):
            remote.processed(router.conn, message_id, agent, status, now)
        return None
    return send_acknowledgment(
        router,
        channel,
        agent,
        sender,
        note or status,
        now,
        ack_for=message_id,
        status=status,
        extra=extra,
        correlation_id=corr,
        trace_id=trace_id,
    )


def _queued_elsewhere(conn: sqlite3.Connection, msg: Message, agent: str) -> bool:
    """A work-queue message and one of its workers (the ack of an expired claim)."""
    ch = channels.channel_by_id(conn, msg.channel_id)
    return (
        ch is not None
        and ch.type == ChannelType.QUEUE
        and bool(msg.deliveries)
        and ch.role_of(agent) is not None
    )


def _check_forward(message_id: int, state: str, previous: str | None, st: AckStatus) -> None:
    if state == DeliveryState.DEAD.value:
        raise InvalidState(
            f"message {message_id} was dead-lettered for this agent; replay it first",
            field="message",
            value=message_id,
        )
    if previous is not None and ACK_ORDER[AckStatus(previous)] >= ACK_ORDER[st]:
        raise InvalidState(
            f"ack status cannot go from {previous} to {st.value} (forward only: received -> "
            "in_progress -> completed | failed)",
            field="status",
            value=st.value,
            current=previous,
        )


# ---------------------------------------------------------------- several at a time


def ack_many(
    conn: sqlite3.Connection,
    message_ids: Sequence[int],
    agent: str,
    status: str,
    note: str | None,
    now: int,
) -> list[AckResult]:
    """Acknowledge several messages in one transaction, results in the order given. Any id
    that `ack` would refuse fails the whole call with that id's error: nothing is acked."""
    model.agent_id(agent)
    st = model.ack_status(status)
    if not message_ids:
        raise ValidationFailed("message: name at least one message id", field="message")
    seen: set[int] = set()
    for mid in message_ids:
        if mid in seen:
            raise ValidationFailed(f"message: {mid} is named twice", field="message", value=mid)
        seen.add(mid)
    with write(conn):
        directory.known(conn, agent, "as", now)
        presence.seen(conn, agent, now)
        router = Router(conn)  # the channels of the acks, read once
        return [record_ack(conn, mid, agent, st, note, now, router) for mid in message_ids]


def receive_ack(
    conn: sqlite3.Connection,
    agent: str,
    f: MessageFilter,
    status: str,
    now: int,
    *,
    note: str | None = None,
    emit: Emit | None = None,
    wait_s: float | None = None,
) -> QueryResult:
    """`receive` that also acknowledges what it returns with `status`, in the same one
    transaction: exactly the messages handed over are the ones acked. `wait_s` as
    `receive --wait`.

    As in `inbox.receive`, `emit` gets the result inside the transaction, after the acks are
    written and before the commit: if the output fails (or the process is killed before the
    commit), nothing is read or acked and the messages are handed out again."""
    model.agent_id(agent, "recipient")
    st = model.ack_status(status)

    def read(
        conn: sqlite3.Connection,
        agent: str,
        f: MessageFilter,
        now: int,
        peek: bool,
        emit: Emit | None,
    ) -> tuple[QueryResult, bool]:
        return _read_acked(conn, agent, f, now, st, note, emit)

    if wait_s is not None:
        return receive_wait(conn, agent, f, wait_s, emit=emit, read=read)
    result, emitted = read(conn, agent, f, now, False, emit)
    if emit is not None and not emitted:
        emit(result)
    return result


def _read_acked(
    conn: sqlite3.Connection,
    agent: str,
    f: MessageFilter,
    now: int,
    st: AckStatus,
    note: str | None,
    emit: Emit | None,
) -> tuple[QueryResult, bool]:
    with write(conn):
        if timers.has_due(conn, now, agent):  # the agent's own timers, as receive applies
            advance(conn, now, agent)
        # claims work-queue messages as receive does, marks nothing: the acks below do
        result, _ = read_inbox(conn, agent, f, now, mark=False)
        presence.seen(conn, agent, now)  # in this transaction: it commits with the acks
        if result.messages:
            acknowledge_unread(conn, agent, result, st, note, now)
            if emit is not None:
                emit(result)  # holds the write lock while it prints: see inbox.read_inbox
                return result, True
    return result, False


def acknowledge_unread(
    conn: sqlite3.Connection,
    agent: str,
    result: QueryResult,
    st: AckStatus,
    note: str | None,
    now: int,
) -> None:
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
        if ch.config.notifies(st):
            tell_sender(
                router,
                m.id,
                m.channel,
                m.sender,
                m.correlation_id,
                agent,
                st,
                note,
                now,
                None,
                m.trace_id,
            )
        d = m.delivery
        assert d is not None  # an inbox row carries the reader's delivery
        d.state, d.read_at, d.ack_status, d.acked_at = DeliveryState.ACKED, now, st.value, now
        if d.first_read_at is None:
            d.first_read_at = now
        # received/in_progress hold the delivery for the channel's lease
        d.next_timer_at = (
            leases.renew(conn, leases.view(conn, m.id, agent), st, now)
            if st.value in leases.HOLDING
            else None
        )
    if limited:
        release(conn, now, sorted(limited))


def _retry(conn: sqlite3.Connection, m: Message, agent: str, note: str | None, now: int) -> None:
    """A `failed` ack of an unread delivery on a --retry-failed channel: read, then given back
    after the back-off (or dead-lettered past max_retries), as `ack --status failed` does
    after a `receive`; its sender gets no acknowledgement. The printed delivery is the row
    as the give-back left it (on a work queue: back to the queue, recipient '*'; on a
    worker pool: back to the pool, '*NAME')."""
    acks.mark_read(conn, agent, [m.id], now)
    from acomm_cli.store import queues as queue_sql  # a retried failure only

    pool = queue_sql.pool_of(conn, m.id, agent)  # a worker pool's row goes back to the pool
    given = leases.retry_failed(conn, leases.view(conn, m.id, agent), note, now)
    assert given is not None  # the caller picked this channel for its retry_failed
    stored = reads.message_by_id(conn, m.id)
    assert stored is not None  # read in this same transaction
    m.delivery = next(
        d for d in stored.deliveries if d.recipient in (agent, pool or model.QUEUE_RECIPIENT)
    )
