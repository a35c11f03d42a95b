"""Delivery guarantees: timers (tick), acknowledgements, request/response, dead letters, waiting.

Timers follow DESIGN.md §4: t0 = delivery; deadline k = (re)delivery + ack_timeout; at deadline
k <= max_retries the delivery waits retry_backoff * 2^(k-1) and is redelivered; past that it is
dead-lettered. A received/in_progress ack's lease (leases.py) ending is such a deadline. All
times derive from scheduled times, and each delivery's timers and its message's expiry apply in
the order they fell due (store/timers._EXPIRED_FIRST), so one late tick equals many punctual
ones; releases of max_pending queues are the exception (dated at `now`: DECISIONS.md).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator

from acomm_cli import clock, model
from acomm_cli.engine import deadletters, leases
from acomm_cli.engine.channels import channel_by_id, release
from acomm_cli.engine.inbox import Emit, history, read_inbox
from acomm_cli.engine.sending import Router, persist, plan_message
from acomm_cli.errors import InvalidState, NotFound, NotParticipant, ValidationFailed
from acomm_cli.model import (
    ACK_ORDER,
    AckStatus,
    ChannelType,
    DeliveryState,
    Message,
    MessageFilter,
    MessageType,
    QueryResult,
    SendRequest,
    SendResult,
)
from acomm_cli.store import acks, channels, reads, sending, stats, timers, write
from acomm_cli.store import deadletters as dl_queries
from acomm_cli.store.maintenance import snapshot

TYPE_CHECKING = False  # typing's, without importing typing (issue 17: DECISIONS.md)
if TYPE_CHECKING:
    from dataclasses import dataclass, replace
else:  # the same classes, without importing dataclasses (issue 17)
    from acomm_cli.lite.records import dataclass, replace

# ---------------------------------------------------------------- timers


@dataclass
class TickResult:
    """What one tick applied, by kind of timer."""

    now: int
    retried: int = 0
    redelivered: int = 0
    dead_lettered: int = 0
    scheduled_delivered: int = 0
    released: int = 0  # deliveries held by max_pending and let through
    expired: int = 0
    dedupe_expired: int = 0
    lease_expired: int = 0  # held deliveries whose lease ran out (retried or dead-lettered)

    @property
    def total(self) -> int:
        return (self.retried + self.redelivered + self.dead_lettered + self.scheduled_delivered
                + self.released + self.expired + self.dedupe_expired + self.lease_expired)


_MAX_PASSES = 10_000  # each pass moves every due timer one step; a catch-up needs a handful
LARGE_TICK = 1_000  # due timers worth a progress bar: smaller ticks end before one draws

Progress = Callable[[int], Callable[[int], None]]  # start(total) -> advance(n)


def advance(conn: sqlite3.Connection, now: int, recipient: str | None = None,
            on_pass: Callable[[int], None] | None = None) -> TickResult:
    """Apply every timer due at `now` (only `recipient`'s, if given), inside the caller's
    transaction, repeating until nothing is due so that a late run catches up completely.
    `on_pass(n)` hears how many timers each pass moved."""
    result = TickResult(now=now)
    timers.stage_clear(conn)
    for _ in range(_MAX_PASSES):
        scheduled = timers.deliver_waiting(conn, now, recipient, retried=False)
        redelivered = timers.deliver_waiting(conn, now, recipient, retried=True)
        retried = timers.schedule_retries(conn, now, recipient)
        retried += timers.restart_read_exactly_once(conn, now, recipient)
        lapsed = timers.expire_leases(conn, now, recipient)
        expired = timers.stage_expired(conn, now, recipient)
        exhausted = timers.stage_exhausted(conn, now, recipient)
        lapsed_dead = timers.stage_lease_exhausted(conn, now, recipient)
        dead = deadletters.apply(conn) if expired + exhausted + lapsed_dead else 0
        result.scheduled_delivered += scheduled
        result.redelivered += redelivered
        result.retried += retried + lapsed
        result.lease_expired += lapsed + lapsed_dead
        result.expired += expired
        result.dead_lettered += dead
        if on_pass is not None:
            on_pass(scheduled + redelivered + retried + lapsed + dead)
        if not (scheduled + redelivered + retried + lapsed + dead):
            break
    result.released = release(conn, now)
    if recipient is None:
        result.dedupe_expired = timers.expire_exactly_once(conn, now)
    return result


def tick(conn: sqlite3.Connection, now: int, progress: Progress | None = None) -> TickResult:
    """Advance every due timer in the store, in one transaction (two ticks never overlap).
    With `progress`, a large tick reports the timers it moves."""
    with write(conn):
        on_pass = None
        if progress is not None:
            due = timers.count_due(conn, now)
            on_pass = progress(due) if due >= LARGE_TICK else None
        return advance(conn, now, on_pass=on_pass)


def receive_due(conn: sqlite3.Connection, agent: str, f: MessageFilter, now: int, *,
                peek: bool = False, emit: Emit | None = None) -> QueryResult:
    """`receive`, after applying the agent's own due timers: redelivery needs no tick.
    `emit` as in `inbox.receive`: the output leaves before the read marks commit."""
    result, emitted = _read_due(conn, agent, f, now, peek, emit)
    if emit is not None and not emitted:
        emit(result)
    return result


def _read_due(conn: sqlite3.Connection, agent: str, f: MessageFilter, now: int, peek: bool,
              emit: Emit | None) -> tuple[QueryResult, bool]:
    """On a store opened read-only (`--peek` on a read-only mount or a full disk) the due
    timers wait for the next writer, and the messages are shown as they stand."""
    model.agent_id(agent, "recipient")
    if not getattr(conn, "read_only", False) and timers.has_due(conn, now, agent):
        with write(conn):
            advance(conn, now, agent)
    return read_inbox(conn, agent, f, now, peek=peek, emit=emit)


# ---------------------------------------------------------------- waiting

POLL_S = 0.05  # PRAGMA data_version is a shared-memory read: 20 a second cost nothing


def _wait_change(conn: sqlite3.Connection, version: int, until: float, wake_at_ms: int | None,
                 stop: Callable[[], bool]) -> int:
    """Sleep until another process commits, a timer falls due, `until` passes or `stop()`."""
    while not stop():
        now = time.monotonic()
        if now >= until:
            break
        if wake_at_ms is not None and clock.now_ms() >= wake_at_ms:
            break
        time.sleep(min(POLL_S, until - now))
        v = stats.data_version(conn)
        if v != version:
            return v
    return stats.data_version(conn)


def check_wait(wait_s: float) -> None:
    if not wait_s >= 0:  # also NaN
        raise ValidationFailed(f"wait: {wait_s:g} seconds must not be negative", field="wait",
                               value=wait_s)


Read = Callable[[sqlite3.Connection, str, MessageFilter, int, bool, Emit | None],
               tuple[QueryResult, bool]]


def receive_wait(conn: sqlite3.Connection, agent: str, f: MessageFilter, wait_s: float, *,
                 peek: bool = False, stop: Callable[[], bool] = lambda: False,
                 emit: Emit | None = None, read: Read | None = None) -> QueryResult:
    """Receive, blocking up to `wait_s` seconds for something to arrive. `emit` hears the one
    result it ends with (inside the transaction that marks it read, if any). `read` replaces
    the read itself (`receive --ack` reads and acknowledges)."""
    read = read or _read_due
    check_wait(wait_s)
    until = time.monotonic() + wait_s
    while True:
        version = stats.data_version(conn)
        result, emitted = read(conn, agent, f, clock.now_ms(), peek, emit)
        if result.messages or time.monotonic() >= until or stop():
            if emit is not None and not emitted:
                emit(result)
            return result
        _wait_change(conn, version, until, timers.next_timer_of(conn, agent), stop)


def follow(conn: sqlite3.Connection, agent: str, f: MessageFilter, emit: Emit, *,
           peek: bool = False, stop: Callable[[], bool] = lambda: False,
           gone: Callable[[], bool] = lambda: False) -> None:
    """Hand each new message to `emit` as it arrives, until `stop()`; with `peek`, each new
    batch once, marking nothing.

    Print before commit, per message (issue 19): one message is read (a work queue's claimed),
    handed to `emit`, which returns once its reader has taken it (cli/handover.py: on a pipe,
    once the pipe is drained) and raises if the output failed, and only then marked read, in
    a transaction of its own. So `receive --follow | head -1` marks one message read, not the
    whole backlog, and a reader that closes the pipe leaves every later message unread. No
    lock is held while a slow reader takes its time; another receive by the same agent in
    that moment may hand the same message out too (at least once, never zero times).

    `stop()`: a stop was requested (a signal); `gone()`: the reader has left, so there is no
    one to wait for new messages for."""
    ended = lambda: stop() or gone()  # noqa: E731
    if peek:
        _follow_peek(conn, agent, f, emit, ended)
        return
    one = replace(f, limit=1)
    while not ended():
        version = stats.data_version(conn)
        now = clock.now_ms()
        if not getattr(conn, "read_only", False) and timers.has_due(conn, now, agent):
            with write(conn):
                advance(conn, now, agent)
        result, _ = read_inbox(conn, agent, one, now, mark=False)
        if not result.messages:
            _wait_change(conn, version, float("inf"), timers.next_timer_of(conn, agent),
                         ended)
            continue
        m = result.messages[0]
        assert m.delivery is not None  # an inbox row carries the reader's delivery
        m.delivery.state, m.delivery.read_at = DeliveryState.READ, now  # as it will be
        if m.delivery.first_read_at is None:
            m.delivery.first_read_at = now
        emit(QueryResult([m], 1))
        if stop():  # interrupted before the reader took it: it stays unread
            return
        with write(conn):
            now = clock.now_ms()
            # 0 rows: another receive of this agent marked it meanwhile (it printed it too)
            if acks.mark_read(conn, agent, [m.id], now) and \
                    channel_by_id(conn, m.channel_id).config.max_pending > 0:
                release(conn, now, [m.channel_id])  # a place freed for a queued message


def _follow_peek(conn: sqlite3.Connection, agent: str, f: MessageFilter, emit: Emit,
                 stop: Callable[[], bool]) -> None:
    """`receive --peek --follow`: what is unread now, then each message new to this follow,
    as it arrives; nothing is marked read, so nothing waits for the reader."""
    seen: set[int] = set()
    while not stop():
        version = stats.data_version(conn)
        result, _ = _read_due(conn, agent, f, clock.now_ms(), True, None)
        fresh = [m for m in result.messages if m.id not in seen]
        seen.update(m.id for m in fresh)
        if fresh:
            emit(QueryResult(fresh, len(fresh)))
        _wait_change(conn, version, float("inf"), timers.next_timer_of(conn, agent), stop)


def follow_history(conn: sqlite3.Connection, f: MessageFilter, *,
                   stop: Callable[[], bool] = lambda: False) -> Iterator[QueryResult]:
    """`messages --follow`: the newest `f.limit` messages matching `f`, oldest first, then
    each message committed later, as it is committed. Reads only.

    Ids grow in commit order (a writer assigns them under the write lock), so "later" is
    simply a higher id; the first page and the highest id come from one snapshot, so a
    message committed meanwhile is printed exactly once."""
    with snapshot(conn):
        first = history(conn, replace(f, sort="id", order="desc"))
        last = sending.last_message_id(conn)
    yield QueryResult(first.messages[::-1], len(first.messages))
    page = replace(f, sort="id", order="asc", offset=0)
    while not stop():
        version = stats.data_version(conn)
        got = history(conn, replace(page, after_id=last))
        if got.messages:
            last = got.messages[-1].id
            yield got
            if got.has_more:
                continue  # more are committed already
        _wait_change(conn, version, float("inf"), None, stop)


# ---------------------------------------------------------------- acknowledgements


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


def ack(conn: sqlite3.Connection, message_id: int, agent: str, status: str, note: str | None,
        now: int) -> AckResult:
    """Record an acknowledgement (forward only; repeating is a no-op) and tell the sender."""
    model.agent_id(agent)
    st = model.ack_status(status)
    with write(conn):
        return record_ack(conn, message_id, agent, st, note, now)


def record_ack(conn: sqlite3.Connection, message_id: int, agent: str, st: AckStatus,
               note: str | None, now: int, router: Router | None = None,
               extra: dict[str, str] | None = None, *, lease: bool = True) -> AckResult:
    """`ack` inside the caller's transaction (agent dispatch acks as part of a receipt;
    `ack 4 5 6` passes one `router` for all, so their channel is read once). `extra`: more
    metadata for the acknowledgement message (a task's accept carries its `eta_at` there,
    spec 002 §6). `lease`: a received/in_progress ack holds the delivery for the channel's
    lease (leases.py); False for callers that hold it by their own timer (dispatch's claim,
    a task's ETA)."""
    msg = reads.message_by_id(conn, message_id)
    if msg is None:
        raise NotFound(f"message {message_id} does not exist", field="message",
                       value=message_id)
    try:
        v = leases.view(conn, message_id, agent)
    except NotParticipant:
        if _queued_elsewhere(conn, msg, agent):
            raise InvalidState(f"{agent!r} does not hold message {message_id}: it is in queue "
                               f"{msg.channel!r} and another claim (or none) has it; a claim "
                               "not acked in time goes back to the queue", field="message",
                               value=message_id) from None
        raise
    state, previous, delivered_at = v.state, v.ack_status, v.delivered_at
    if previous == st.value:  # a repeat changes nothing, but renews a lease
        until = leases.renew(conn, v, st, now) if lease else None
        return AckResult(message_id, agent, st.value, False, None, until)
    if delivered_at is None:
        raise InvalidState(f"message {message_id} has not been delivered to {agent!r} yet "
                           f"(it is {state})", field="message", value=message_id)
    _check_forward(message_id, state, previous, st)
    if st == AckStatus.FAILED and (given := leases.retry_failed(conn, v, note, now)):
        release(conn, now, [v.channel_id])
        return AckResult(message_id, agent, st.value, True, None, None,
                         requeued=given.outcome == "requeued")
    until = leases.lease_until(v, st, now) if lease else None
    acks.set_ack(conn, message_id, agent, st.value, note, now, until)
    router = router or Router(conn)
    ch = router.channel(v.channel)
    if ch.config.max_pending > 0:  # only a channel that limits pending ones queues any
        release(conn, now, [ch.id])
    ack_id = tell_sender(router, message_id, v.channel, msg.sender, msg.correlation_id, agent,
                         st, note, now, extra)
    return AckResult(message_id, agent, st.value, True, ack_id, until)


def tell_sender(router: Router, message_id: int, channel: str, sender: str, corr: str | None,
                agent: str, st: AckStatus, note: str | None, now: int,
                extra: dict[str, str] | None = None) -> int | None:
    """The acknowledgement message back to the sender (its id; None when it has no
    recipient); from another node, the ack travels as an event instead."""
    if channel.startswith("_fed:"):
        from acomm_cli.engine import remote

        if st in (AckStatus.COMPLETED, AckStatus.FAILED):
            remote.processed(router.conn, message_id, agent, st.value, now)
        return None
    plan = plan_message(router, SendRequest(
        sender=agent, content=note or st.value, channel=channel,
        type=MessageType.ACKNOWLEDGMENT.value, correlation_id=corr,
        metadata={**(extra or {}), "ack_for": str(message_id), "status": st.value},
    ), now, only_to=sender, internal=True)
    return persist(router, plan, now).id if plan.recipients else None


def _queued_elsewhere(conn: sqlite3.Connection, msg: Message, agent: str) -> bool:
    """A work-queue message and one of its workers (the ack of an expired claim)."""
    ch = channels.channel_by_id(conn, msg.channel_id)
    return (ch is not None and ch.type == ChannelType.QUEUE and bool(msg.deliveries)
            and ch.role_of(agent) is not None)


def _check_forward(message_id: int, state: str, previous: str | None, st: AckStatus) -> None:
    if state == DeliveryState.DEAD.value:
        raise InvalidState(f"message {message_id} was dead-lettered for this agent; replay it "
                           "first", field="message", value=message_id)
    if previous is not None and ACK_ORDER[AckStatus(previous)] >= ACK_ORDER[st]:
        raise InvalidState(
            f"ack status cannot go from {previous} to {st.value} (forward only: received -> "
            "in_progress -> completed | failed)", field="status", value=st.value,
            current=previous)


# ---------------------------------------------------------------- request / response


def query(conn: sqlite3.Connection, req: SendRequest, now: int,
          timeout_ms: int | None = None, limits: model.Limits | None = None,
          wait_s: float | None = None) -> SendResult:
    """Send a query; with a timeout, deliveries not read by then expire (dead letters).
    `wait_s` is checked here, before anything is sent, for `query --wait`."""
    from acomm_cli.engine.sending import send

    if wait_s is not None:
        check_wait(wait_s)
    if timeout_ms is not None and timeout_ms <= 0:
        raise ValidationFailed("timeout: must be longer than 0", field="timeout",
                               value=timeout_ms)
    req = replace(req, type=MessageType.QUERY.value,
                  expires_at=now + timeout_ms if timeout_ms is not None else None)
    return send(conn, req, now, limits)


def respond(conn: sqlite3.Connection, correlation_id: str, content: str, agent: str, now: int,
            priority: str | int = "normal") -> SendResult:
    """Answer a query: to its sender, on its channel; the response is the responder's ack."""
    model.agent_id(agent, "sender")
    model.correlation_id(correlation_id)
    with write(conn):
        return record_response(conn, correlation_id, content, agent, now, priority)


def record_response(conn: sqlite3.Connection, correlation_id: str, content: str, agent: str,
                    now: int, priority: str | int = "normal") -> SendResult:
    """`respond` inside the caller's transaction (agent dispatch answers with a receipt)."""
    found = sending.first_of_type(conn, correlation_id, MessageType.QUERY.value)
    if found is None:
        raise NotFound(f"no query has correlation id {correlation_id!r}",
                       field="correlation_id", value=correlation_id)
    _, channel_id, asker = found
    ch = channel_by_id(conn, channel_id)
    router = Router(conn)
    plan = plan_message(router, SendRequest(
        sender=agent, content=content, channel=ch.name,
        type=MessageType.RESPONSE.value, correlation_id=correlation_id, priority=priority,
    ), now, only_to=asker)
    return persist(router, plan, now)  # which also acknowledges the query


def await_response(conn: sqlite3.Connection, correlation_id: str, agent: str, wait_s: float,
                   stop: Callable[[], bool] = lambda: False,
                   emit: Callable[[Message], None] | None = None) -> Message | None:
    """Block up to `wait_s` for the first unread response to the asker; marks it read. With
    `emit`, the response is handed to it before the read mark commits (as `inbox.receive`):
    if the output fails, the response stays unread."""
    until = time.monotonic() + wait_s
    while True:
        version = stats.data_version(conn)
        with write(conn):
            msg = reads.unread_response(conn, correlation_id, agent)
            if msg is not None:
                acks.mark_read(conn, agent, [msg.id], clock.now_ms())
                if emit is not None:
                    emit(msg)  # holds the write lock while it prints: see inbox.read_inbox
                return msg
        if time.monotonic() >= until or stop():
            return None
        _wait_change(conn, version, until, None, stop)


def thread(conn: sqlite3.Connection, correlation_id: str) -> list[Message]:
    model.correlation_id(correlation_id)
    msgs = reads.thread(conn, correlation_id)
    if not msgs:
        raise NotFound(f"no message has correlation id {correlation_id!r}",
                       field="correlation_id", value=correlation_id)
    return msgs


# ---------------------------------------------------------------- dead letters


@dataclass(frozen=True)
class DeadLetter:
    """A dead-lettered delivery, as `deadletter list` shows it."""

    message_id: int
    recipient: str
    channel: str
    reason: str
    retry_count: int
    last_error: str | None
    dead_lettered_at: int
    content: str


def list_dead_letters(conn: sqlite3.Connection, *, message_id: int | None = None,
                      recipient: str | None = None, channel: str | None = None,
                      reason: str | None = None, limit: int = 100,
                      offset: int = 0) -> tuple[list[DeadLetter], int]:
    if limit < 0 or offset < 0:
        raise ValidationFailed("limit: --limit and --offset must not be negative", field="limit")
    if reason is not None and reason not in model.DEAD_LETTER_REASONS:
        raise ValidationFailed(f"reason: {reason!r} is not one of "
                               f"{', '.join(model.DEAD_LETTER_REASONS)}", field="reason",
                               value=reason)
    rows, total = dl_queries.dead_letters(conn, message_id=message_id, recipient=recipient,
                                       channel=channel, reason=reason, limit=limit,
                                       offset=offset)
    return [DeadLetter(*r) for r in rows], total


def dead_letters_of(conn: sqlite3.Connection, message_id: int,
                    recipient: str | None) -> list[DeadLetter]:
    """A message's dead letters (one recipient's, if named); NotFound when there are none."""
    found, _ = list_dead_letters(conn, message_id=message_id, recipient=recipient,
                                 limit=1_000_000)
    if not found:
        who = f" for {recipient!r}" if recipient else ""
        raise NotFound(f"message {message_id} has no dead letter{who}", field="message",
                       value=message_id)
    return found


def replay(conn: sqlite3.Connection, message_id: int, recipient: str | None,
           now: int) -> list[DeadLetter]:
    """Redeliver the same message id with a fresh retry budget, after re-validating."""
    with write(conn):
        replayed = dead_letters_of(conn, message_id, recipient)
        for dl in replayed:
            refused = deadletters.refusal(conn, dl.channel, dl.recipient)
            if refused is not None:
                raise refused
            deadletters.redeliver(conn, message_id, dl.channel, dl.recipient, now)
        return replayed


def discard(conn: sqlite3.Connection, message_id: int, recipient: str | None) -> int:
    with write(conn):
        dead_letters_of(conn, message_id, recipient)
        return dl_queries.delete_dead_letters(conn, message_id, recipient)


def purge(conn: sqlite3.Connection, older_than_ms: int, now: int) -> int:
    with write(conn):
        return dl_queries.purge_dead_letters(conn, now - older_than_ms)
