"""Waiting for messages: `receive --wait`, `receive --follow` and `messages --follow`. A waiter
sleeps until another process commits (PRAGMA data_version), one of its timers falls due, or
its time runs out; it holds no lock while it waits."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator

from acomm_cli import clock
from acomm_cli.engine import presence
from acomm_cli.engine.channels import channel_by_id, release
from acomm_cli.engine.inbox import Emit, history, read_inbox
from acomm_cli.engine.timers import advance, read_due
from acomm_cli.errors import ValidationFailed
from acomm_cli.model import DeliveryState, Limits, MessageFilter, QueryResult
from acomm_cli.store import acks, notify, sending, stats, write
from acomm_cli.store import timers as sql
from acomm_cli.store.connection import StoreConnection
from acomm_cli.store.maintenance import snapshot

TYPE_CHECKING = False  # typing's, without importing typing (a send's start-up time)
if TYPE_CHECKING:
    from dataclasses import replace
else:  # the same classes, without importing dataclasses (a send's start-up time)
    from acomm_cli.lite.records import replace

POLL_S = 0.05  # PRAGMA data_version is a shared-memory read: 20 a second cost nothing


def wait_change(
    conn: sqlite3.Connection,
    version: int,
    until: float,
    wake_at_ms: int | None,
    stop: Callable[[], bool],
    watched_poll_s: float | None = None,
) -> int:
    """Sleep until another process commits, a timer falls due, `until` passes or `stop()`.

    Where the platform tells of writes to the store's files (store/notify.py), a write wakes
    the wait at once; a poll every `watched_poll_s` stays underneath (POLL_S, read when the
    wait begins, unless given; always POLL_S with no watch), so a commit is never missed. A
    long-lived waiter that must stay cheap while idle (the gateway's outbox publisher) asks
    for a slower poll."""
    w = _watch(conn)
    watched = POLL_S if watched_poll_s is None else watched_poll_s
    fileno = getattr(stop, "fileno", None)  # a stop request's pipe wakes the wait too
    also = fileno() if fileno is not None and w is not None else None
    while not stop():
        v = stats.data_version(conn)  # also a commit made before the watch was
        if v != version:
            return v
        now = time.monotonic()
        if now >= until:
            break
        left = min(POLL_S if w is None else watched, until - now)
        if wake_at_ms is not None:
            due_in = (wake_at_ms - clock.now_ms()) / 1000
            if due_in <= 0:
                break
            left = min(left, due_in)
        if w is None:
            time.sleep(left)
        elif notify.wait(w, left, also):
            # a write to the WAL: its commit shows once the writer updates the WAL's index
            # (shared memory, no event), so look again every RECHECK_S until it does, or
            # until POLL_S passes with no further write (a checkpoint, a rolled-back write)
            hot_until = time.monotonic() + POLL_S
            while (now := time.monotonic()) < hot_until and now < until and not stop():
                v = stats.data_version(conn)
                if v != version:
                    return v
                if notify.wait(w, notify.RECHECK_S, also):
                    hot_until = time.monotonic() + POLL_S
    return stats.data_version(conn)


def _watch(conn: sqlite3.Connection) -> notify.Watch | None:
    """The connection's watch on its store, made by its first wait and closed with it."""
    if not isinstance(conn, StoreConnection):
        return None
    if conn.watch is None:
        conn.watch = notify.watch(conn.path) or False
    return conn.watch or None


def check_wait(wait_s: float) -> None:
    # NaN and inf are named as text: JSON has no number for them
    value = wait_s if wait_s - wait_s == 0 else f"{wait_s:g}"
    if not wait_s >= 0:  # also NaN
        raise ValidationFailed(
            f"wait: {wait_s:g} seconds must not be negative", field="wait", value=value
        )
    if wait_s * 1000 > clock.MAX_DURATION_MS:  # also inf: the longest duration acomm takes
        raise ValidationFailed(
            f"wait: {wait_s:g} seconds is longer than the longest duration acomm accepts "
            f"(365000d, {clock.MAX_DURATION_MS // 1000} seconds)",
            field="wait",
            value=value,
        )


Read = Callable[
    [sqlite3.Connection, str, MessageFilter, int, bool, Emit | None], tuple[QueryResult, bool]
]


def receive_wait(
    conn: sqlite3.Connection,
    agent: str,
    f: MessageFilter,
    wait_s: float,
    *,
    peek: bool = False,
    stop: Callable[[], bool] = lambda: False,
    emit: Emit | None = None,
    read: Read | None = None,
    limits: Limits | None = None,
) -> QueryResult:
    """Receive, blocking up to `wait_s` seconds for something to arrive. `emit` hears the one
    result it ends with (inside the transaction that marks it read, if any). `read` replaces
    the read itself (`receive --ack` reads and acknowledges). `limits`: the configured ones,
    for a schedule's occurrence this reader sends."""

    def read_limited(
        conn: sqlite3.Connection,
        agent: str,
        f: MessageFilter,
        now: int,
        peek: bool,
        emit: Emit | None,
    ) -> tuple[QueryResult, bool]:
        return read_due(conn, agent, f, now, peek, emit, limits=limits)

    read = read or read_limited
    check_wait(wait_s)
    until = time.monotonic() + wait_s
    while True:
        version = stats.data_version(conn)
        result, emitted = read(conn, agent, f, clock.now_ms(), peek, emit)
        if result.messages or time.monotonic() >= until or stop():
            if emit is not None and not emitted:
                emit(result)
            return result
        wait_change(conn, version, until, sql.next_timer_of(conn, agent), stop)


def follow(
    conn: sqlite3.Connection,
    agent: str,
    f: MessageFilter,
    emit: Emit,
    *,
    peek: bool = False,
    stop: Callable[[], bool] = lambda: False,
    gone: Callable[[], bool] = lambda: False,
    limits: Limits | None = None,
) -> None:
    """Hand each new message to `emit` as it arrives, until `stop()`; with `peek`, each new
    batch once, marking nothing.

    Print before commit, per message: one message is read (a work queue's claimed),
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
        _follow_peek(conn, agent, f, emit, ended, limits)
        return
    one = replace(f, limit=1)
    while not ended():
        version = stats.data_version(conn)
        now = clock.now_ms()
        if not getattr(conn, "read_only", False) and sql.has_due(conn, now, agent):
            with write(conn):
                advance(conn, now, agent)
        result, _ = read_inbox(conn, agent, one, now, mark=False)
        if not result.messages:
            wait_change(conn, version, float("inf"), sql.next_timer_of(conn, agent), ended)
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
            presence.seen(conn, agent, now)
            # 0 rows: another receive of this agent marked it meanwhile (it printed it too)
            if (
                acks.mark_read(conn, agent, [m.id], now)
                and channel_by_id(conn, m.channel_id).config.max_pending > 0
            ):
                release(conn, now, [m.channel_id])  # a place freed for a queued message


def _follow_peek(
    conn: sqlite3.Connection,
    agent: str,
    f: MessageFilter,
    emit: Emit,
    stop: Callable[[], bool],
    limits: Limits | None,
) -> None:
    """`receive --peek --follow`: what is unread now, then each message new to this follow,
    as it arrives; nothing is marked read, so nothing waits for the reader."""
    seen: set[int] = set()
    while not stop():
        version = stats.data_version(conn)
        result, _ = read_due(conn, agent, f, clock.now_ms(), True, None, limits=limits)
        fresh = [m for m in result.messages if m.id not in seen]
        seen.update(m.id for m in fresh)
        if fresh:
            emit(QueryResult(fresh, len(fresh)))
        wait_change(conn, version, float("inf"), sql.next_timer_of(conn, agent), stop)


def follow_history(
    conn: sqlite3.Connection, f: MessageFilter, *, stop: Callable[[], bool] = lambda: False
) -> Iterator[QueryResult]:
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
        wait_change(conn, version, float("inf"), None, stop)
