"""Delivery timers: applying what fell due (redelivery, retry, expiry, dead letters, releases of
held messages), store-wide (`tick`) or for one reader before it reads (`receive_due`).

Each tracked delivery's deadline k is its (re)delivery time plus the channel's ack_timeout; at
a deadline k <= max_retries it waits retry_backoff * 2^(k-1) and is delivered again, past that
it is dead-lettered. A received/in_progress ack's lease (leases.py) ending is such a deadline.
All times derive from scheduled times, and each delivery's timers and its message's expiry
apply in the order they fell due (store/timers.py orders expiry first), so one late tick
equals many punctual ones. Releases of max_pending queues are the exception: dated at `now`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from acomm_cli import model
from acomm_cli.engine import deadletters
from acomm_cli.engine.channels import release
from acomm_cli.engine.inbox import Emit, _DueFirst, read_inbox, reader
from acomm_cli.model import MessageFilter, QueryResult
from acomm_cli.store import timers as sql
from acomm_cli.store import write

TYPE_CHECKING = False  # typing's, without importing typing (a send's start-up time)
if TYPE_CHECKING:
    from dataclasses import dataclass
else:  # the same classes, without importing dataclasses (a send's start-up time)
    from acomm_cli.lite.records import dataclass


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
        return (
            self.retried
            + self.redelivered
            + self.dead_lettered
            + self.scheduled_delivered
            + self.released
            + self.expired
            + self.dedupe_expired
            + self.lease_expired
        )


_MAX_PASSES = 10_000  # each pass moves every due timer one step; a catch-up needs a handful
LARGE_TICK = 1_000  # due timers worth a progress bar: smaller ticks end before one draws

Progress = Callable[[int], Callable[[int], None]]  # start(total) -> advance(n)


def advance(
    conn: sqlite3.Connection,
    now: int,
    recipient: str | None = None,
    on_pass: Callable[[int], None] | None = None,
) -> TickResult:
    """Apply every timer due at `now` (only `recipient`'s, if given), inside the caller's
    transaction, repeating until nothing is due so that a late run catches up completely.
    `on_pass(n)` hears how many timers each pass moved."""
    result = TickResult(now=now)
    sql.stage_clear(conn)
    for _ in range(_MAX_PASSES):
        scheduled = sql.deliver_waiting(conn, now, recipient, retried=False)
        redelivered = sql.deliver_waiting(conn, now, recipient, retried=True)
        retried = sql.schedule_retries(conn, now, recipient)
        retried += sql.restart_read_exactly_once(conn, now, recipient)
        lapsed = sql.expire_leases(conn, now, recipient)
        expired = sql.stage_expired(conn, now, recipient)
        exhausted = sql.stage_exhausted(conn, now, recipient)
        lapsed_dead = sql.stage_lease_exhausted(conn, now, recipient)
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
        result.dedupe_expired = sql.expire_exactly_once(conn, now)
    return result


def tick(conn: sqlite3.Connection, now: int, progress: Progress | None = None) -> TickResult:
    """Advance every due timer in the store, in one transaction (two ticks never overlap).
    With `progress`, a large tick reports the timers it moves."""
    with write(conn):
        on_pass = None
        if progress is not None:
            due = sql.count_due(conn, now)
            on_pass = progress(due) if due >= LARGE_TICK else None
        return advance(conn, now, on_pass=on_pass)


def receive_due(
    conn: sqlite3.Connection,
    agent: str,
    f: MessageFilter,
    now: int,
    *,
    peek: bool = False,
    emit: Emit | None = None,
    limits: model.Limits | None = None,
) -> QueryResult:
    """`receive`, after applying the agent's own due timers: redelivery needs no tick.
    `emit` as in `inbox.receive`: the output leaves before the read marks commit. `limits`:
    the configured ones, which a schedule's occurrence sent by this reader respects as
    `tick`'s do."""
    result, emitted = read_due(conn, agent, f, now, peek, emit, limits=limits)
    if emit is not None and not emitted:
        emit(result)
    return result


def read_due(
    conn: sqlite3.Connection,
    agent: str,
    f: MessageFilter,
    now: int,
    peek: bool,
    emit: Emit | None,
    *,
    limits: model.Limits | None = None,
) -> tuple[QueryResult, bool]:
    """On a store opened read-only (`--peek` on a read-only mount or a full disk) the due
    timers wait for the next writer, and the messages are shown as they stand."""
    reader(agent)
    if not getattr(conn, "read_only", False):
        if not conn.in_transaction:
            # nothing due (the common case): the checks ride in the read's first statement
            try:
                return read_inbox(conn, agent, f, now, peek=peek, emit=emit, due_first=True)
            except _DueFirst:
                pass  # rolled back, nothing written: apply what is due, then read
        timers_due, schedules_due = sql.reader_due(conn, now, agent)  # one read for both
        if timers_due:
            with write(conn):
                advance(conn, now, agent)
        if schedules_due:  # a reader sends what fell due
            from acomm_cli.engine import schedules

            schedules.fire(conn, now, limits, agent=agent)
    return read_inbox(conn, agent, f, now, peek=peek, emit=emit)
