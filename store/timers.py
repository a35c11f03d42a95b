"""Set-based SQL for timers: scheduled deliveries, ack deadlines, retries, expiry, dead letters.

Every statement takes `now` and an optional recipient (receive applies only its own timers).
New times are computed from the scheduled time in `next_timer_at`, never from `now`, so a late
tick writes the same history as a punctual one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from acomm_cli.store.backlog import ACTIVE_D

TYPE_CHECKING = False  # typing's, without importing typing (a send must not load it)
if TYPE_CHECKING:
    from typing import Any

# A recipient's own timers, and those of the queues and worker pools it works on (an
# expired claim of a crashed worker, a queued message's back-off): any worker's `receive`
# moves its queues and pools on.
_WHO = (
    " AND (d.recipient = :recipient OR d.channel_id IN (SELECT p.channel_id FROM"
    " participants p JOIN channels q ON q.id = p.channel_id WHERE p.agent = :recipient"
    " AND p.role != 'observer' AND q.type = 'queue') OR (d.pool IS NOT NULL"
    " AND (d.channel_id, d.pool) IN (SELECT s.channel_id, '*' || s.grp FROM subscriptions s"
    " WHERE s.agent = :recipient AND s.grp IS NOT NULL)))"
)
# Where a claim ends (a missed ack, a lapsed lease): a queue's row goes back to the queue
# ('*'), a worker pool's to its pool ('*NAME'), any other stays with its recipient.
_BACK = "CASE WHEN c.type = 'queue' THEN '*' ELSE coalesce(d.pool, d.recipient) END"
_POOLED = "(c.type = 'queue' OR d.pool IS NOT NULL)"


def _who(recipient: str | None) -> str:
    return _WHO if recipient is not None else ""


# Due-time order (a late tick = punctual ones, DECISIONS.md "Late tick: due-time order"): a
# delivery that can expire (unread, waiting) whose message expired before its timer fell due
# never sees that timer; the expiry comes first. Ties go to the timer, as in a tick at that
# very time (its timer statements run before stage_expired).
_EXPIRED_FIRST = (
    "EXISTS (SELECT 1 FROM messages m WHERE m.id = d.message_id AND m.expires_at < d.next_timer_at)"
)


def deliver_waiting(
    conn: sqlite3.Connection, now: int, recipient: str | None, retried: bool
) -> int:
    """Waiting deliveries whose time has come become unread; returns how many.

    `retried` picks redeliveries after back-off (retry_count > 0) or first scheduled sends."""
    cur = conn.execute(
        "UPDATE deliveries AS d SET state = 'unread', delivered_at = d.next_timer_at,"
        # a queue's or pool's timer starts at the claim, an ack_clock `read` channel's at the
        # read
        " next_timer_at = CASE WHEN d.tracked AND substr(d.recipient, 1, 1) != '*'"
        " AND c.ack_clock = 'sent' THEN d.next_timer_at + c.ack_timeout_ms END"
        " FROM channels c WHERE c.id = d.channel_id AND d.state = 'waiting'"
        f" AND d.next_timer_at <= :now AND d.retry_count {'>' if retried else '='} 0"
        f" AND NOT {_EXPIRED_FIRST}" + _who(recipient),
        {"now": now, "recipient": recipient},
    )
    return cur.rowcount


_DEADLINE = (
    " FROM channels c WHERE c.id = d.channel_id AND d.tracked = 1"
    " AND d.state IN ('unread', 'read') AND d.next_timer_at <= :now"
)
_BACKOFF = "c.retry_backoff_ms * (1 << d.retry_count)"
# an unread delivery's deadline after its message's expiry: it expires instead (read ones
# cannot expire: their deadline retries them, and the retry may then expire)
_NOT_EXPIRED_FIRST = f" AND NOT (d.state = 'unread' AND {_EXPIRED_FIRST})"
_EXACTLY_ONCE_READ = "(c.delivery = 'exactly-once' AND d.read_at IS NOT NULL)"


def schedule_retries(conn: sqlite3.Connection, now: int, recipient: str | None) -> int:
    """Ack deadlines passed with budget left: wait out the back-off, then redeliver. On a
    queue the claim ends: the message goes back to the queue ('*'), for any worker."""
    cur = conn.execute(
        "UPDATE deliveries AS d SET state = 'waiting', retry_count = d.retry_count + 1,"
        f" recipient = {_BACK},"
        f" read_at = CASE WHEN {_POOLED} THEN NULL ELSE d.read_at END,"
        f" ack_status = CASE WHEN {_POOLED} THEN NULL ELSE d.ack_status END,"
        f" next_timer_at = d.next_timer_at + {_BACKOFF}"
        f" + CAST({_BACKOFF} * c.retry_jitter * (abs(random()) % 1000000) / 1000000.0"
        " AS INTEGER)"
        + _DEADLINE
        + f" AND d.retry_count < c.max_retries AND NOT {_EXACTLY_ONCE_READ}"
        + _NOT_EXPIRED_FIRST
        + _who(recipient),
        {"now": now, "recipient": recipient},
    )
    return cur.rowcount


def restart_read_exactly_once(conn: sqlite3.Connection, now: int, recipient: str | None) -> int:
    """Exactly-once: a message already read is never handed out again; the retry only
    restarts its ack timer (at the time the redelivery would have happened). delivered_at
    stays: nothing was handed out, and an audit reads a delivery after the read as a
    violation."""
    cur = conn.execute(
        "UPDATE deliveries AS d SET retry_count = d.retry_count + 1,"
        f" next_timer_at = d.next_timer_at + {_BACKOFF} + c.ack_timeout_ms"
        + _DEADLINE
        + f" AND d.retry_count < c.max_retries AND {_EXACTLY_ONCE_READ}"
        + _NOT_EXPIRED_FIRST
        + _who(recipient),
        {"now": now, "recipient": recipient},
    )
    return cur.rowcount


# ---------------------------------------------------------------- leases
# A `received` or `in_progress` ack on a tracked delivery holds it until next_timer_at, the
# lease's end. A lease that runs out is a missing ack at that time: the same back-off, the
# same retry budget, counted in retry_count (and in lease_expired).

_LEASE_DUE = (
    " FROM channels c WHERE c.id = d.channel_id AND d.tracked = 1 AND d.state = 'acked'"
    " AND d.ack_status IN ('received', 'in_progress') AND d.next_timer_at <= :now"
)
_LOST = "'the ' || d.ack_status || ' lease ran out at delivery ' || (d.retry_count + 1)"


def expire_leases(conn: sqlite3.Connection, now: int, recipient: str | None) -> int:
    """Leases run out with budget left: wait out the back-off, then redeliver (exactly-once:
    the message was read, so only its ack timer restarts, as for a missing ack)."""
    args = {"now": now, "recipient": recipient}
    n = conn.execute(
        "UPDATE deliveries AS d SET state = 'waiting', retry_count = d.retry_count + 1,"
        # on a work queue or pool the claim ends: back to it, for any worker
        f" recipient = {_BACK},"
        f" read_at = CASE WHEN {_POOLED} THEN NULL ELSE d.read_at END,"
        f" next_timer_at = d.next_timer_at + {_BACKOFF}"
        f" + CAST({_BACKOFF} * c.retry_jitter * (abs(random()) % 1000000) / 1000000.0"
        " AS INTEGER), ack_status = NULL, acked_at = NULL, lease_expired = d.lease_expired + 1,"
        f" last_error = {_LOST}"
        + _LEASE_DUE
        + " AND d.retry_count < c.max_retries AND c.delivery != 'exactly-once'"
        + _who(recipient),
        args,
    ).rowcount
    n += conn.execute(
        "UPDATE deliveries AS d SET state = 'read', retry_count = d.retry_count + 1,"
        f" next_timer_at = d.next_timer_at + {_BACKOFF} + c.ack_timeout_ms,"
        " ack_status = NULL, acked_at = NULL, lease_expired = d.lease_expired + 1,"
        f" last_error = {_LOST}"
        + _LEASE_DUE
        + " AND d.retry_count < c.max_retries AND c.delivery = 'exactly-once'"
        + _who(recipient),
        args,
    ).rowcount
    return n


def stage_lease_exhausted(conn: sqlite3.Connection, now: int, recipient: str | None) -> int:
    """Leases run out with no budget left: counted, then staged as max_retries_exceeded."""
    args = {"now": now, "recipient": recipient}
    where = _LEASE_DUE + " AND d.retry_count >= c.max_retries" + _who(recipient)
    conn.execute(
        "UPDATE deliveries AS d SET lease_expired = d.lease_expired + 1"
        + where
        + " AND NOT EXISTS (SELECT 1 FROM temp.dying x WHERE x.message_id ="
        " d.message_id AND x.recipient = d.recipient)",
        args,
    )
    return conn.execute(
        "INSERT OR IGNORE INTO temp.dying SELECT d.message_id, d.recipient, d.channel_id,"
        " 'max_retries_exceeded', c.max_retries, 'the ' || d.ack_status || ' lease ran out"
        " after ' || (c.max_retries + 1) || ' deliveries', d.next_timer_at FROM deliveries d,"
        + where[len(" FROM ") :],
        args,
    ).rowcount


# a delivery (d) and its channel (c) as leases.from_row reads them, in this order
LEASE_COLUMNS = (
    "d.state, d.ack_status, d.delivered_at, d.tracked, d.retry_count, d.next_timer_at,"
    " d.channel_id, c.name, c.type, c.delivery, c.ack_timeout_ms, c.lease_ms, c.max_retries,"
    " c.retry_backoff_ms, c.retry_failed, c.ack_clock"
)


def lease_view(conn: sqlite3.Connection, message_id: int, recipient: str) -> tuple[Any, ...] | None:
    """One delivery with what its lease and retries depend on: (state, ack_status,
    delivered_at, tracked, retry_count, next_timer_at, channel_id, channel name, channel type,
    delivery mode, ack_timeout_ms, lease_ms, max_retries, retry_backoff_ms, retry_failed,
    ack_clock)."""
    return conn.execute(
        f"SELECT {LEASE_COLUMNS} FROM deliveries d JOIN channels c ON c.id = d.channel_id"
        " WHERE d.message_id = ? AND d.recipient = ?",
        (message_id, recipient),
    ).fetchone()


def hold(conn: sqlite3.Connection, message_id: int, recipient: str, until: int) -> None:
    """Renew a held delivery's lease (a repeated received/in_progress ack, `extend`)."""
    conn.execute(
        "UPDATE deliveries SET next_timer_at = ? WHERE message_id = ? AND recipient = ?",
        (until, message_id, recipient),
    )


def give_back(
    conn: sqlite3.Connection,
    message_id: int,
    recipient: str,
    at: int,
    now: int,
    ack_timeout_ms: int | None,
    note: str | None,
    *,
    queue: bool = False,
) -> None:
    """A delivery handed back by its recipient (`nack --requeue`, a retried `failed` ack):
    one more attempt, unread again at `at` (now, or waiting until then), its ack cleared. On
    a work queue it goes back to the queue ('*'), on a worker pool to the pool, for any
    worker, its timer starting at the next claim. `ack_timeout_ms` None: the deadline starts
    at the next read (ack_clock read)."""
    conn.execute(
        "UPDATE deliveries SET retry_count = retry_count + 1, ack_status = NULL,"
        " acked_at = NULL, last_error = :note,"
        " recipient = CASE WHEN :queue THEN '*' ELSE coalesce(pool, recipient) END,"
        " read_at = CASE WHEN :queue OR pool IS NOT NULL THEN NULL ELSE read_at END,"
        " state = CASE WHEN :at > :now THEN 'waiting' ELSE 'unread' END,"
        " delivered_at = CASE WHEN :at > :now THEN delivered_at ELSE :now END,"
        " next_timer_at = CASE WHEN :at > :now THEN :at"
        " WHEN tracked AND NOT :queue AND pool IS NULL THEN :now + :timeout END"
        " WHERE message_id = :mid AND recipient = :who",
        {
            "note": note,
            "at": at,
            "now": now,
            "timeout": ack_timeout_ms,
            "mid": message_id,
            "who": recipient,
            "queue": int(queue),
        },
    )


def start_unread_deadlines(
    conn: sqlite3.Connection, channel_id: int, now: int, ack_timeout_ms: int
) -> int:
    """A channel's ack clock switched from `read` to `sent`: its unread deliveries still
    without a deadline get one from now (else they would have none until read)."""
    return conn.execute(
        "UPDATE deliveries SET next_timer_at = ? WHERE channel_id = ? AND tracked = 1"
        " AND state = 'unread' AND next_timer_at IS NULL AND recipient != '*'",
        (now + ack_timeout_ms, channel_id),
    ).rowcount


# ---------------------------------------------------------------- dead letters
# Deliveries about to die are first staged in a temporary table, so that the dead-letter rows,
# the delivery states and the `_system` notifications are written from the same set.

_STAGE = (
    "CREATE TEMP TABLE IF NOT EXISTS dying (message_id INTEGER, recipient TEXT,"
    " channel_id INTEGER, reason TEXT, retry_count INTEGER, last_error TEXT, at INTEGER,"
    " PRIMARY KEY (message_id, recipient))"
)


def stage_clear(conn: sqlite3.Connection) -> None:
    conn.execute(_STAGE)
    conn.execute("DELETE FROM temp.dying")


def stage_rows(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    """rows: (message_id, recipient, channel_id, reason, retry_count, last_error, at)."""
    conn.executemany("INSERT OR IGNORE INTO temp.dying VALUES (?, ?, ?, ?, ?, ?, ?)", rows)


def stage_exhausted(conn: sqlite3.Connection, now: int, recipient: str | None) -> int:
    cur = conn.execute(
        "INSERT OR IGNORE INTO temp.dying SELECT d.message_id, d.recipient, d.channel_id,"
        " 'max_retries_exceeded', c.max_retries, 'no acknowledgement after '"
        " || (c.max_retries + 1) || ' deliveries', d.next_timer_at"
        " FROM deliveries d JOIN channels c ON c.id = d.channel_id WHERE d.tracked = 1"
        " AND d.state IN ('unread', 'read') AND d.next_timer_at <= :now"
        " AND d.retry_count >= c.max_retries" + _who(recipient),
        {"now": now, "recipient": recipient},
    )
    return cur.rowcount


def stage_expired(conn: sqlite3.Connection, now: int, recipient: str | None) -> int:
    cur = conn.execute(
        "INSERT OR IGNORE INTO temp.dying SELECT d.message_id, d.recipient, d.channel_id,"
        " 'expired', d.retry_count, 'not read before the message expired', m.expires_at"
        " FROM messages m JOIN deliveries d ON d.message_id = m.id"
        " WHERE m.expires_at IS NOT NULL AND m.expires_at <= :now"
        " AND d.state IN ('unread', 'waiting', 'queued')"
        # a timer due before the expiry goes first (a redelivery, a retry, retries spent):
        # the timer statements of this pass or the next move it, then it is looked at again
        # (no timer, as a queue's unclaimed delivery: the expiry is all that is due)
        " AND NOT ((d.state = 'waiting' OR d.tracked = 1)"
        " AND coalesce(d.next_timer_at < m.expires_at, 0))" + _who(recipient),
        {"now": now, "recipient": recipient},
    )
    return cur.rowcount


def apply_staged(
    conn: sqlite3.Connection, system_channel_id: int, subscribers_json: str, topic: str
) -> int:
    """Dead-letter every staged delivery and publish one `_system` notification for each."""
    n = conn.execute("SELECT count(*) FROM temp.dying").fetchone()[0]
    if not n:
        return 0
    conn.execute(
        "INSERT OR REPLACE INTO dead_letters SELECT message_id, recipient, channel_id, reason,"
        " retry_count, last_error, at FROM temp.dying"
    )
    conn.execute(
        "UPDATE deliveries AS d SET state = 'dead', next_timer_at = NULL,"
        " retry_count = x.retry_count, last_error = x.last_error FROM temp.dying x"
        " WHERE d.message_id = x.message_id AND d.recipient = x.recipient"
    )
    before = conn.execute(
        "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0)"
    ).fetchone()[0]
    conn.execute(
        "INSERT INTO messages (channel_id, sender, type, content, topic, priority, created_at,"
        " trace_id)"
        " SELECT ?, 'acomm', 'notification', json_object('message_id', x.message_id,"
        " 'recipient', x.recipient, 'channel', c.name, 'reason', x.reason, 'retry_count',"
        " x.retry_count), ?, 1, x.at,"
        # the notice joins the dead message's trace
        " (SELECT m.trace_id FROM messages m WHERE m.id = x.message_id)"
        " FROM temp.dying x JOIN channels c ON c.id = x.channel_id"
        " ORDER BY x.at, x.message_id, x.recipient",
        (system_channel_id, topic),
    )
    conn.execute(
        "INSERT INTO deliveries (message_id, recipient, channel_id, state, rank, tracked,"
        " delivered_at) SELECT m.id, s.value, m.channel_id, 'unread', 0, 0, m.created_at"
        " FROM messages m, json_each(?) s WHERE m.id > ?",
        (subscribers_json, before),
    )
    conn.execute("DELETE FROM temp.dying")
    return n


def expire_exactly_once(conn: sqlite3.Connection, now: int) -> int:
    return conn.execute("DELETE FROM exactly_once WHERE expires_at <= ?", (now,)).rowcount


def count_due(conn: sqlite3.Connection, now: int) -> int:
    """Deliveries whose timer is due (the size of a tick, for its progress bar)."""
    return conn.execute(
        "SELECT count(*) FROM deliveries WHERE next_timer_at <= ?", (now,)
    ).fetchone()[0]


def has_due(conn: sqlite3.Connection, now: int, recipient: str | None) -> bool:
    """Cheap check: is any timer of this recipient (or anyone) due?"""
    if recipient is None:
        row = conn.execute(
            "SELECT 1 FROM deliveries WHERE next_timer_at <= ? LIMIT 1", (now,)
        ).fetchone()
    else:  # due timers are few (ticks clear them): walk those, not the agent's inbox
        row = conn.execute(
            "SELECT 1 FROM deliveries d INDEXED BY deliveries_timer WHERE next_timer_at IS NOT"
            " NULL AND next_timer_at <= :now" + _WHO + " LIMIT 1",
            {"now": now, "recipient": recipient},
        ).fetchone()
    if row:
        return True
    if recipient is None:
        row = conn.execute(
            "SELECT 1 FROM messages m WHERE m.expires_at IS NOT NULL AND m.expires_at <= ?"
            " AND EXISTS (SELECT 1 FROM deliveries d WHERE d.message_id = m.id AND d.state IN"
            " ('unread', 'waiting', 'queued')) LIMIT 1",
            (now,),
        ).fetchone()
    else:
        # Messages past their expiry are few (a tick or a receive dead-letters their
        # deliveries, compact removes them): walk up to EXPIRED_WALK of them with a
        # primary-key probe each, rather than the agent's whole inbox (a receive's cost
        # would grow with its backlog). Only a store keeping more than that walks the
        # agent's pending deliveries instead.
        found = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM deliveries d WHERE d.message_id = m.id AND"
            " d.recipient = ? AND d.state IN ('unread', 'waiting', 'queued'))"
            " FROM messages m INDEXED BY messages_expiry"
            " WHERE m.expires_at IS NOT NULL AND m.expires_at <= ? LIMIT ?",
            (recipient, now, EXPIRED_WALK + 1),
        ).fetchall()
        if len(found) <= EXPIRED_WALK:
            return any(r[0] for r in found)
        if any(r[0] for r in found):
            return True
        # this agent's pending deliveries (deliveries_agent_active, which the ACTIVE_D
        # term lets the planner use), not all history
        row = conn.execute(
            "SELECT 1 FROM deliveries d JOIN messages m ON m.id = d.message_id"
            " WHERE d.recipient = ? AND d.state IN ('unread', 'waiting', 'queued')"
            f" AND {ACTIVE_D}"
            " AND m.expires_at IS NOT NULL AND m.expires_at <= ? LIMIT 1",
            (recipient, now),
        ).fetchone()
    return row is not None


# has_due's reads for one reader, and whether a schedule of a channel it reads fell due, as
# three columns of one statement (reader_due_params names its parameters): a timer due; an
# expired message the reader has pending, found among the first EXPIRED_WALK + 1 expired
# messages by primary key or, only when the store keeps more, in the reader's pending
# deliveries (a CASE: SQLite evaluates its branches only as needed); a schedule due
_FIRST_EXPIRED = (
    "SELECT m.id FROM messages m INDEXED BY messages_expiry"
    " WHERE m.expires_at IS NOT NULL AND m.expires_at <= :now LIMIT :walk"
)
READER_DUE_COLUMNS = (
    "EXISTS (SELECT 1 FROM deliveries d INDEXED BY deliveries_timer"
    " WHERE next_timer_at IS NOT NULL AND next_timer_at <= :now" + _WHO + "),"
    f" CASE WHEN EXISTS (SELECT 1 FROM ({_FIRST_EXPIRED}) e JOIN deliveries d"
    " ON d.message_id = e.id WHERE d.recipient = :recipient"
    " AND d.state IN ('unread', 'waiting', 'queued')) THEN 1"
    f" WHEN (SELECT count(*) FROM ({_FIRST_EXPIRED})) > :walk - 1 THEN EXISTS (SELECT 1"
    " FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE d.recipient = :recipient"
    f" AND d.state IN ('unread', 'waiting', 'queued') AND {ACTIVE_D}"
    " AND m.expires_at IS NOT NULL AND m.expires_at <= :now) ELSE 0 END,"
    " EXISTS (SELECT 1 FROM schedules s WHERE s.state = 'active' AND s.next_at <= :now"
    " AND s.channel_id IN (SELECT channel_id FROM participants WHERE agent = :recipient"
    " UNION SELECT channel_id FROM subscriptions WHERE agent = :recipient))"
)
_READER_DUE = "SELECT " + READER_DUE_COLUMNS


def reader_due_params(now: int, recipient: str) -> dict[str, Any]:
    return {"now": now, "recipient": recipient, "walk": EXPIRED_WALK + 1}


def reader_due(conn: sqlite3.Connection, now: int, recipient: str) -> tuple[bool, bool]:
    """(has_due(conn, now, recipient), schedules.any_due(conn, now, recipient)) in one
    statement: whether the reader has a timer or an expiry to apply, and whether an
    occurrence of a schedule on a channel it reads (as a participant or a subscriber) fell
    due."""
    timer, expired, scheduled = conn.execute(
        _READER_DUE, reader_due_params(now, recipient)
    ).fetchone()
    return bool(timer or expired), bool(scheduled)


EXPIRED_WALK = 64  # expired messages has_due probes one by one before it walks the inbox


def next_timer_of(conn: sqlite3.Connection, agent: str) -> int | None:
    return conn.execute(
        "SELECT min(next_timer_at) FROM deliveries WHERE recipient = ? AND state = 'waiting'",
        (agent,),
    ).fetchone()[0]
