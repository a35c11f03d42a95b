"""Leases, nack and retried failures: a consumer that does real work holds a
delivery while it works, gives it back, or has it retried.

- A `received` or `in_progress` ack on an ack-tracked delivery holds it for the channel's
  lease (`--lease`, default its ack timeout): the delivery stays `acked`, its next_timer_at is
  the lease's end. Repeating the ack, or `extend`, renews it. A lease that runs out is a
  missing ack at that time (store/timers.expire_leases): back-off, redelivery, retry_count,
  dead letter past max_retries. On an at-most-once channel nothing is retried, so an ack
  holds nothing.
- `nack` gives a delivery back: unread again now or after a delay (`--requeue`), or
  dead-lettered at once with reason `nacked`. A requeue is one more attempt: past
  max_retries the delivery is dead-lettered (max_retries_exceeded), so a message that
  always fails cannot loop for ever.
- On a channel created with `--retry-failed`, a `failed` ack is such a requeue, after the
  channel's back-off.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from acomm_cli import model
from acomm_cli.engine import deadletters, directory, presence
from acomm_cli.engine.channels import release
from acomm_cli.errors import InvalidState, NotFound, NotParticipant, ValidationFailed
from acomm_cli.model import AckStatus, DeliveryMode, DeliveryState
from acomm_cli.store import reads, timers, write

TYPE_CHECKING = False  # typing's, without importing typing (a send's start-up time)
if TYPE_CHECKING:
    from dataclasses import dataclass
    from typing import Any
else:  # the same classes, without importing dataclasses (receive and ack load this module)
    from acomm_cli.lite.records import dataclass

HOLDING = (AckStatus.RECEIVED.value, AckStatus.IN_PROGRESS.value)
NACKED = "nacked"  # one of model.DEAD_LETTER_REASONS
MAX_REASON = 4096  # characters of a nack's reason kept in last_error


# not frozen: one is built on every ack, and a frozen record sets each field by a call
@dataclass(slots=True)
class View:
    """One delivery and the channel settings its lease and retries depend on."""

    message_id: int
    agent: str
    state: str
    ack_status: str | None
    delivered_at: int | None
    tracked: bool
    retry_count: int
    next_timer_at: int | None
    channel_id: int
    channel: str
    channel_type: str
    delivery: str
    ack_timeout_ms: int
    lease_ms: int
    max_retries: int
    retry_backoff_ms: int
    retry_failed: bool
    ack_clock: str = model.AckClock.SENT.value

    @property
    def leased(self) -> bool:
        """Does a received/in_progress ack hold this delivery for a lease? Only where a
        missing ack is retried: ack-tracked deliveries."""
        return self.tracked

    @property
    def held(self) -> bool:
        return self.state == DeliveryState.ACKED.value and self.ack_status in HOLDING


def view(conn: sqlite3.Connection, message_id: int, agent: str) -> View:
    """The delivery of `message_id` to `agent`: NotFound / NotParticipant when there is none."""
    row = timers.lease_view(conn, message_id, agent)
    if row is None:
        if reads.message_by_id(conn, message_id) is None:
            raise NotFound(
                f"message {message_id} does not exist", field="message", value=message_id
            )
        raise not_recipient(message_id, agent)
    return from_row(message_id, agent, row)


def not_recipient(message_id: int, agent: str) -> NotParticipant:
    return NotParticipant(
        f"{agent!r} is not a recipient of message {message_id}", field="agent", value=agent
    )


def from_row(message_id: int, agent: str, row: Sequence[Any], at: int = 0) -> View:
    """The View of a row of timers.lease_view's columns, starting at `row[at]`."""
    (
        state,
        ack_status,
        delivered_at,
        tracked,
        retry_count,
        next_timer_at,
        channel_id,
        channel,
        channel_type,
        delivery,
        ack_timeout_ms,
        lease_ms,
        max_retries,
        retry_backoff_ms,
        retry_failed,
        ack_clock,
    ) = row[at:] if at else row
    return View(
        message_id,
        agent,
        state,
        ack_status,
        delivered_at,
        bool(tracked),
        retry_count,
        next_timer_at,
        channel_id,
        channel,
        channel_type,
        delivery,
        ack_timeout_ms,
        lease_ms or ack_timeout_ms,
        max_retries,
        retry_backoff_ms,
        bool(retry_failed),
        ack_clock,
    )


def lease_until(v: View, st: AckStatus, now: int) -> int | None:
    """Where the lease of a `st` ack on `v` ends (None: this ack holds no lease). A renewal
    never shortens a lease `extend` made longer."""
    if st.value not in HOLDING or not v.leased:
        return None
    until = now + v.lease_ms
    if v.held and v.next_timer_at is not None:
        until = max(until, v.next_timer_at)
    return until


def renew(conn: sqlite3.Connection, v: View, st: AckStatus, now: int) -> int | None:
    """A repeated received/in_progress ack: the delivery is held for a fresh lease."""
    until = lease_until(v, st, now) if v.held else None
    if until is not None:
        timers.hold(conn, v.message_id, v.agent, until)
    return until


# ---------------------------------------------------------------- extend


@dataclass(frozen=True)
class ExtendResult:
    message_id: int
    agent: str
    status: str
    lease_until: int


def extend(
    conn: sqlite3.Connection, message_id: int, agent: str, by_ms: int, now: int
) -> ExtendResult:
    """Hold a delivery the agent holds (received/in_progress) until `by_ms` from now, or
    longer if its lease already ends later."""
    model.agent_id(agent)
    positive("by", by_ms)
    with write(conn):
        directory.known(conn, agent, "as", now)
        presence.seen(conn, agent, now)
        v = view(conn, message_id, agent)
        if not v.held:
            raise InvalidState(
                f"message {message_id} is not held by {agent!r} (it is {_where(v)}); ack it "
                "received or in_progress first",
                field="message",
                value=message_id,
            )
        if not v.leased:
            raise InvalidState(
                f"message {message_id} is not ack-tracked on {v.channel!r} ({v.delivery}): "
                "nothing is redelivered, so no lease holds it",
                field="message",
                value=message_id,
            )
        until = max(now + by_ms, v.next_timer_at or 0)
        timers.hold(conn, message_id, agent, until)
        return ExtendResult(message_id, agent, v.ack_status or "", until)


# ---------------------------------------------------------------- nack


@dataclass(frozen=True)
class NackResult:
    message_id: int
    agent: str
    outcome: str  # requeued | dead_lettered
    redeliver_at: int | None
    retry_count: int
    reason: str | None  # the dead letter's reason, when dead-lettered


def positive(name: str, ms: int | None) -> None:
    if ms is not None and ms <= 0:
        raise ValidationFailed(f"{name}: {ms} ms must be longer than 0", field=name, value=ms)


def nack(
    conn: sqlite3.Connection,
    message_id: int,
    agent: str,
    *,
    requeue: bool,
    delay_ms: int | None,
    reason: str | None,
    now: int,
) -> NackResult:
    """Give a delivery back: unread again now or after `delay_ms` (requeue; a delay implies
    it), or dead-lettered at once with reason `nacked`."""
    model.agent_id(agent)
    positive("delay", delay_ms)
    if reason is not None:
        model.utf8(reason, "reason")
        if len(reason) > MAX_REASON:
            raise ValidationFailed(
                f"reason: {len(reason)} characters is more than {MAX_REASON}",
                field="reason",
                value_length=len(reason),
            )
    requeue = requeue or delay_ms is not None
    with write(conn):
        directory.known(conn, agent, "as", now)
        presence.seen(conn, agent, now)
        v = view(conn, message_id, agent)
        _check_nackable(v)
        text = reason or f"nacked by {agent}"
        if requeue and v.delivery == DeliveryMode.EXACTLY_ONCE.value:
            raise InvalidState(
                f"channel {v.channel!r} is exactly-once: a message is never handed out twice; "
                "nack without --requeue dead-letters it",
                field="requeue",
                value=True,
            )
        if requeue:
            result = give_back(conn, v, now + (delay_ms or 0), now, text)
        else:
            deadletters.dead_letter(
                conn, [(message_id, agent, v.channel_id, v.retry_count)], NACKED, text, now
            )
            result = NackResult(message_id, agent, "dead_lettered", None, v.retry_count, NACKED)
        release(conn, now)
        return result


def _check_nackable(v: View) -> None:
    if v.state in (DeliveryState.UNREAD.value, DeliveryState.READ.value) or v.held:
        return
    if v.state == DeliveryState.ACKED.value:
        raise InvalidState(
            f"message {v.message_id} is already acknowledged {v.ack_status} by "
            f"{v.agent!r}; only work not yet finished can be given back",
            field="message",
            value=v.message_id,
            current=v.ack_status,
        )
    raise InvalidState(
        f"message {v.message_id} is not with {v.agent!r} now (it is {_where(v)})",
        field="message",
        value=v.message_id,
        state=v.state,
    )


def _where(v: View) -> str:
    if v.state == DeliveryState.ACKED.value:
        return f"acknowledged {v.ack_status}"
    if v.state == DeliveryState.DEAD.value:
        return "dead-lettered"
    return v.state


def give_back(conn: sqlite3.Connection, v: View, at: int, now: int, note: str) -> NackResult:
    """One more attempt at `at` for the same recipient (on a work queue: back to the queue,
    for whichever member claims it next), or a dead letter past max_retries."""
    if v.retry_count >= v.max_retries:
        last = f"{note} (given back after {v.retry_count + 1} deliveries)"
        deadletters.dead_letter(
            conn,
            [(v.message_id, v.agent, v.channel_id, v.max_retries)],
            "max_retries_exceeded",
            last,
            now,
        )
        return NackResult(
            v.message_id, v.agent, "dead_lettered", None, v.max_retries, "max_retries_exceeded"
        )
    timers.give_back(
        conn,
        v.message_id,
        v.agent,
        at,
        now,
        # under ack_clock read the deadline starts again at the next read
        v.ack_timeout_ms if v.ack_clock == model.AckClock.SENT.value else None,
        note,
        queue=v.channel_type == model.ChannelType.QUEUE.value,
    )
    return NackResult(v.message_id, v.agent, "requeued", max(at, now), v.retry_count + 1, None)


def retry_failed(
    conn: sqlite3.Connection, v: View, note: str | None, now: int
) -> NackResult | None:
    """A `failed` ack on a `--retry-failed` channel: given back after the channel's back-off
    (retry_backoff x 2^retry_count), as a missing ack would be. None: not such a channel."""
    if not v.retry_failed:
        return None
    at = now + v.retry_backoff_ms * (1 << v.retry_count)
    return give_back(conn, v, at, now, "failed" + (f": {note}" if note else ""))
