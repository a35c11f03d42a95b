"""SQL of work queues (channel type `queue`, m011): the claim, giving claims back, and the
queue channels an agent works on.

A queue message has one delivery row. Its recipient is '*' (model.QUEUE_RECIPIENT) while it
waits in the queue; a claim rewrites the recipient to the claiming agent with a compare-and-set
(`WHERE recipient = '*'`), inside the caller's write transaction, so two workers can never
hold the same message at once. From then on it is that agent's delivery like any other (read,
acked, retried, dead-lettered); an at-least-once claim not acked in time goes back to '*'
(store/timers.schedule_retries).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from acomm_cli.model import QUEUE_RECIPIENT, MessageFilter
from acomm_cli.store import reads

Q = QUEUE_RECIPIENT
# The claimable rows, written as the WHERE of the partial index deliveries_queue (m015).
# `IS`, not `=`: an index WHERE comparing recipient to a constant with `=` made SQLite plan
# again, on every run, each statement comparing recipient to a bound parameter (receive, ack).
CLAIMABLE = f"recipient IS '{Q}' AND state = 'unread'"

# How long a claim is held before it returns to the queue, from the claim time (:now).
# Leases (m010) replace this with the channel's lease when one is set: the hook is
# this one expression, used by `claim` only.
CLAIM_DEADLINE = "(SELECT c.ack_timeout_ms FROM channels c WHERE c.id = deliveries.channel_id)"

# The queue channels an agent may claim from: it takes part in them and does not only observe.
WORKS_ON = (
    "SELECT p.channel_id FROM participants p JOIN channels q ON q.id = p.channel_id"
    " WHERE p.agent = :agent AND p.role != 'observer' AND q.type = 'queue'"
)


def works_on_any(conn: sqlite3.Connection, agent: str) -> bool:
    """Does the agent take part in a queue? (one indexed read: participants_agent)."""
    row = conn.execute(
        "SELECT 1 FROM participants p JOIN channels q ON q.id = p.channel_id"
        " WHERE p.agent = ? AND p.role != 'observer' AND q.type = 'queue' LIMIT 1",
        (agent,),
    ).fetchone()
    return row is not None


def claim(
    conn: sqlite3.Connection, agent: str, f: MessageFilter, count: int, now: int
) -> list[int]:
    """Claim up to `count` queued messages for `agent`, best first (rank, then oldest), from
    the queues it works on that are not closed, matching the receive filter. The claimed
    rows become the agent's unread deliveries, delivered now, their ack timer (tracked
    channels) starting now. Returns the claimed message ids."""
    if count <= 0:
        return []
    where, params = reads._filter_sql(f, conn)  # the same filter as the inbox
    cond = "".join(f" AND {w}" for w in where)
    named = {f"p{i}": v for i, v in enumerate(params)}
    for i in range(len(params)):  # positional -> named, in order
        cond = cond.replace("?", f":p{i}", 1)
    rows = conn.execute(
        f"UPDATE deliveries SET recipient = :agent, delivered_at = :now,"
        f" next_timer_at = CASE WHEN tracked THEN :now + {CLAIM_DEADLINE} END"
        f" WHERE recipient = '{Q}' AND state = 'unread' AND message_id IN ("
        " SELECT d.message_id FROM deliveries d JOIN messages m ON m.id = d.message_id"
        " JOIN channels c ON c.id = d.channel_id"
        f" WHERE d.recipient IS '{Q}' AND d.state = 'unread' AND c.state != 'closed'"
        f" AND d.channel_id IN ({WORKS_ON}) AND (m.sender != :agent OR c.echo){cond}"
        " ORDER BY d.rank DESC, d.message_id LIMIT :count)"
        " RETURNING message_id",
        {"agent": agent, "now": now, "count": count, **named},
    ).fetchall()
    return sorted(r[0] for r in rows)


def unclaim_held(conn: sqlite3.Connection, channel_id: int, agent: str) -> int:
    """Give an agent's unfinished claims on a queue back to it (the agent leaves): unread
    again for anyone, no timer, the retry count kept."""
    return conn.execute(
        f"UPDATE deliveries SET recipient = '{Q}', state = 'unread', read_at = NULL,"
        " next_timer_at = NULL WHERE channel_id = ? AND recipient = ?"
        " AND (state = 'unread' OR (tracked = 1 AND state IN ('read', 'waiting')))",
        (channel_id, agent),
    ).rowcount


def back_to_queue(conn: sqlite3.Connection, message_id: int, recipient: str) -> None:
    """A replayed dead letter of a queue: back in the queue for any member, not the last
    holder (deadletters.redeliver made it unread with a fresh retry budget)."""
    conn.execute(
        f"UPDATE deliveries SET recipient = '{Q}', next_timer_at = NULL"
        " WHERE message_id = ? AND recipient = ?",
        (message_id, recipient),
    )


def queue_ids(conn: sqlite3.Connection) -> list[int]:
    return [r[0] for r in conn.execute("SELECT id FROM channels WHERE type = 'queue'")]


def depth(conn: sqlite3.Connection, channel_ids: Sequence[int]) -> dict[int, int]:
    """Unclaimed messages per queue channel."""
    if not channel_ids:
        return {}
    rows = conn.execute(
        "SELECT channel_id, count(*) FROM deliveries INDEXED BY deliveries_queue"
        f" WHERE {CLAIMABLE}"
        f" AND channel_id IN ({','.join('?' * len(channel_ids))}) GROUP BY channel_id",
        tuple(channel_ids),
    ).fetchall()
    return dict(rows)
