"""SQL of a delivery's reading and acknowledgement: mark read, ack, their lookups."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from acomm_cli.store.channels import CHANNELS_TOKEN
from acomm_cli.store.connection import AGENTS_TOKEN
from acomm_cli.store.timers import LEASE_COLUMNS

TYPE_CHECKING = False  # typing's, without importing typing (a receive's start-up time)
if TYPE_CHECKING:
    from typing import Any


def delivery_of(
    conn: sqlite3.Connection, message_id: int, recipient: str
) -> tuple[str, str | None, int | None] | None:
    """(state, ack_status, delivered_at) of one delivery."""
    return conn.execute(
        "SELECT state, ack_status, delivered_at FROM deliveries WHERE message_id = ?"
        " AND recipient = ?",
        (message_id, recipient),
    ).fetchone()


_ACK_VIEW = (
    f"SELECT m.sender, m.correlation_id, m.trace_id, {LEASE_COLUMNS} FROM messages m"
    " LEFT JOIN deliveries d ON d.message_id = m.id AND d.recipient = ?"
    " LEFT JOIN channels c ON c.id = d.channel_id WHERE m.id = ?"
)
# the tokens and the view in one statement, the view's columns None when the message does not
# exist (the tokens always come)
_TOKENS_ACK_VIEW = (
    f"SELECT {CHANNELS_TOKEN}, {AGENTS_TOKEN}, v.* FROM (SELECT 1) LEFT JOIN ({_ACK_VIEW}) v"
)


def ack_view(conn: sqlite3.Connection, message_id: int, recipient: str) -> tuple[Any, ...] | None:
    """What an ack reads, in one statement: (sender, correlation id, trace id) of the
    message, then the recipient's delivery as timers.lease_view gives it (its columns None
    when the recipient has none); None when the message does not exist."""
    row: tuple[Any, ...] | None = conn.execute(_ACK_VIEW, (recipient, message_id)).fetchone()
    return row


def tokens_ack_view(
    conn: sqlite3.Connection, message_id: int, recipient: str
) -> tuple[int, int, tuple[Any, ...] | None]:
    """(channels token, agents token, ack_view's row): an ack's first read in a transaction
    it began, one statement."""
    row = conn.execute(_TOKENS_ACK_VIEW, (recipient, message_id)).fetchone()
    return row[0], row[1], (None if row[2] is None else row[2:])


def ack_unread(
    conn: sqlite3.Connection,
    recipient: str,
    message_ids: Sequence[int],
    status: str,
    note: str | None,
    now: int,
) -> int:
    """`receive --ack`: unread deliveries read and acknowledged in one statement."""
    marks = ",".join("?" * len(message_ids))
    return conn.execute(
        "UPDATE deliveries SET state = 'acked', ack_status = ?, ack_note = coalesce(?, ack_note),"
        " acked_at = ?,"
        " next_timer_at = NULL, read_at = ?, first_read_at = coalesce(first_read_at, ?)"
        " WHERE recipient = ? AND +state = 'unread'"
        f" AND message_id IN ({marks})",
        (status, note, now, now, now, recipient, *message_ids),
    ).rowcount


def set_ack(
    conn: sqlite3.Connection,
    message_id: int,
    recipient: str,
    status: str,
    note: str | None,
    now: int,
    lease_until: int | None = None,
) -> None:
    """`lease_until`: the end of the lease a received/in_progress ack holds (None: none)."""
    conn.execute(
        "UPDATE deliveries SET state = 'acked', ack_status = ?, ack_note = coalesce(?, ack_note),"
        # an ack of a delivery not read yet (a redelivery acked without a second read) is
        # its read: read_at is the latest read, first_read_at the first
        " acked_at = ?, next_timer_at = ?, read_at = CASE WHEN state = 'unread' THEN ?"
        " ELSE coalesce(read_at, ?) END, first_read_at = coalesce(first_read_at, ?)"
        " WHERE message_id = ? AND recipient = ?",
        (status, note, now, lease_until, now, now, now, message_id, recipient),
    )


def correlated_deliveries(
    conn: sqlite3.Connection, correlation_id: str, type_: str, recipient: str
) -> list[tuple[int, str, str | None]]:
    """(message_id, state, ack_status) of a recipient's deliveries of correlated messages."""
    return conn.execute(
        "SELECT d.message_id, d.state, d.ack_status FROM messages m JOIN deliveries d"
        " ON d.message_id = m.id WHERE m.correlation_id = ? AND m.type = ? AND d.recipient = ?"
        " AND d.delivered_at IS NOT NULL",
        (correlation_id, type_, recipient),
    ).fetchall()


def mark_read(
    conn: sqlite3.Connection,
    agent: str,
    message_ids: Sequence[int],
    now: int,
    *,
    read_clock: bool | None = None,
) -> int:
    """Mark an agent's deliveries of `message_ids` read. `read_clock`: whether any channel
    starts its ack deadlines at the read, when the caller knows (store/facts.py)."""
    if not message_ids:
        return 0
    marks = ",".join("?" * len(message_ids))
    # `+state`: look the rows up by their primary key (message, recipient) rather than walk
    # the agent's unread entries in the inbox index, which this same UPDATE rewrites (about
    # 15% of marking 100 read)
    cur = conn.execute(
        f"UPDATE deliveries SET state = 'read', read_at = ?, first_read_at ="
        f" coalesce(first_read_at, ?) WHERE recipient = ? AND +state = 'unread' AND"
        f" message_id IN ({marks})",
        (now, now, agent, *message_ids),
    )
    if cur.rowcount and (read_clock_in_use(conn) if read_clock is None else read_clock):
        # A tracked delivery handed out without a deadline (ack_clock read) gets one now. A
        # statement of its own, only on a store with such a channel: setting next_timer_at in
        # the UPDATE above rewrites the timer index for every row read (about 20% of it).
        conn.execute(
            "UPDATE deliveries SET next_timer_at = ? + (SELECT c.ack_timeout_ms FROM channels c"
            " WHERE c.id = deliveries.channel_id) WHERE recipient = ? AND +state = 'read'"
            f" AND tracked = 1 AND next_timer_at IS NULL AND message_id IN ({marks})",
            (now, agent, *message_ids),
        )
    return cur.rowcount


def read_clock_in_use(conn: sqlite3.Connection) -> bool:
    """Does any channel start its ack deadlines at the read? (the channels table is small)"""
    return (
        conn.execute("SELECT 1 FROM channels WHERE ack_clock = 'read' LIMIT 1").fetchone()
        is not None
    )
