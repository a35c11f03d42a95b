"""SQL of work queues (channel type `queue`, m011): the claim, giving claims back, and the
queue channels an agent works on.

A queue message has one delivery row. Its recipient is '*' (model.QUEUE_RECIPIENT) while it
waits in the queue; a claim rewrites the recipient to the claiming agent with a compare-and-set
(`WHERE recipient = '*'`), inside the caller's write transaction, so two workers can never
hold the same message at once. From then on it is that agent's delivery like any other (read,
acked, retried, dead-lettered); an at-least-once claim not acked in time goes back to '*'
(store/timers.schedule_retries).

A worker pool on a pubsub channel (a subscription `--group NAME`) works the same way under
the placeholder '*NAME': one row per pool per message, claimed by whichever member's
`receive` comes first, its `pool` column remembering where a give-back returns it.

FIFO groups: a row with a `group_key` is claimable only while no earlier row of the same
pool and key is still open (waiting, claimed, or held by a lease), so one key has at most
one message in flight and never overtakes itself; different keys run in parallel.
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


# A keyed row waits while an earlier row of its pool and key is open: the terms of the
# partial index deliveries_fifo (m025), repeated so that it serves the lookup.
OPEN = (
    "d2.group_key IS NOT NULL AND d2.state != 'dead'"
    " AND (d2.tracked = 1 OR (d2.state != 'read' AND d2.state != 'acked'))"
    " AND (d2.state != 'acked' OR d2.ack_status = 'received' OR d2.ack_status = 'in_progress')"
)
FIFO_HEAD = (
    " AND (d.group_key IS NULL OR NOT EXISTS (SELECT 1 FROM deliveries d2"
    " INDEXED BY deliveries_fifo WHERE d2.channel_id = d.channel_id AND d2.pool = d.pool"
    f" AND d2.group_key = d.group_key AND d2.message_id < d.message_id AND {OPEN}))"
)


def works_on_any(conn: sqlite3.Connection, agent: str) -> tuple[bool, list[tuple[int, str]]]:
    """Does the agent take part in a queue, and which worker pools (channel id,
    placeholder) does it serve? One statement, two indexed reads (participants_agent,
    subscriptions_group)."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM participants p JOIN channels q ON q.id = p.channel_id"
        " WHERE p.agent = :agent AND p.role != 'observer' AND q.type = 'queue'),"
        " (SELECT group_concat(DISTINCT s.channel_id || ':' || s.grp) FROM subscriptions s"
        " WHERE s.agent = :agent AND s.grp IS NOT NULL)",
        {"agent": agent},
    ).fetchone()
    pools = []
    for item in (row[1] or "").split(","):  # a pool name has no ',' and no ':'
        if item:
            cid, _, grp = item.partition(":")
            pools.append((int(cid), "*" + grp))
    return bool(row[0]), sorted(pools)


def _named_filter(f: MessageFilter, conn: sqlite3.Connection) -> tuple[str, dict[str, object]]:
    where, params = reads._filter_sql(f, conn)  # the same filter as the inbox
    cond = "".join(f" AND {w}" for w in where)
    named = {f"p{i}": v for i, v in enumerate(params)}
    for i in range(len(params)):  # positional -> named, in order
        cond = cond.replace("?", f":p{i}", 1)
    return cond, named


def claim(
    conn: sqlite3.Connection, agent: str, f: MessageFilter, count: int, now: int
) -> list[int]:
    """Claim up to `count` queued messages for `agent`, best first (rank, then oldest), from
    the queues it works on that are not closed, matching the receive filter. The claimed
    rows become the agent's unread deliveries, delivered now, their ack timer (tracked
    channels) starting now. Returns the claimed message ids."""
    if count <= 0:
        return []
    cond, named = _named_filter(f, conn)
    rows = conn.execute(
        f"UPDATE deliveries SET recipient = :agent, delivered_at = :now,"
        f" next_timer_at = CASE WHEN tracked THEN :now + {CLAIM_DEADLINE} END"
        f" WHERE recipient = '{Q}' AND state = 'unread' AND message_id IN ("
        " SELECT d.message_id FROM deliveries d JOIN messages m ON m.id = d.message_id"
        " JOIN channels c ON c.id = d.channel_id"
        f" WHERE d.recipient IS '{Q}' AND d.state = 'unread' AND c.state != 'closed'"
        f" AND d.channel_id IN ({WORKS_ON}) AND (m.sender != :agent OR c.echo){cond}"
        f"{FIFO_HEAD} ORDER BY d.rank DESC, d.message_id LIMIT :count)"
        " RETURNING message_id",
        {"agent": agent, "now": now, "count": count, **named},
    ).fetchall()
    return sorted(r[0] for r in rows)


def claim_pool(
    conn: sqlite3.Connection,
    agent: str,
    pool: tuple[int, str],
    f: MessageFilter,
    count: int,
    now: int,
) -> list[int]:
    """`claim` for one worker pool `agent` serves, (channel id, placeholder): the pool's
    row of each message becomes the agent's (a compare-and-set on its placeholder
    recipient, read in order through deliveries_agent_active). A message the agent already
    has a row of (its own copy from an earlier subscription) is left to others."""
    if count <= 0:
        return []
    cond, named = _named_filter(f, conn)
    rows = conn.execute(
        "UPDATE deliveries SET recipient = :agent, delivered_at = :now,"
        f" next_timer_at = CASE WHEN tracked THEN :now + {CLAIM_DEADLINE} END"
        " WHERE state = 'unread' AND (message_id, recipient) IN ("
        " SELECT d.message_id, d.recipient FROM deliveries d JOIN messages m ON m.id ="
        " d.message_id JOIN channels c ON c.id = d.channel_id"
        " WHERE d.recipient = :pool AND d.state = 'unread' AND d.channel_id = :cid"
        " AND c.state != 'closed' AND (m.sender != :agent OR c.echo)"
        " AND NOT EXISTS (SELECT 1 FROM deliveries x WHERE x.message_id = d.message_id"
        f" AND x.recipient = :agent){cond}{FIFO_HEAD}"
        " ORDER BY d.rank DESC, d.message_id LIMIT :count)"
        " RETURNING message_id",
        {"agent": agent, "now": now, "count": count, "cid": pool[0], "pool": pool[1], **named},
    ).fetchall()
    return sorted(r[0] for r in rows)


def mark_pool(conn: sqlite3.Connection, message_id: int, group_key: str | None) -> None:
    """A sent message's pool rows (a queue's '*', a worker pool's '*NAME'): remember the
    pool on each, and the FIFO group key when it has one."""
    conn.execute(
        "UPDATE deliveries SET pool = recipient, group_key = ?"
        " WHERE message_id = ? AND substr(recipient, 1, 1) = '*'",
        (group_key, message_id),
    )


def unclaim_pool(conn: sqlite3.Connection, channel_id: int, agent: str, pool: str) -> int:
    """A member leaving a worker pool gives back what it claimed from it and has not
    finished: unread again for the pool, no timer, the retry count kept."""
    return conn.execute(
        "UPDATE deliveries SET recipient = pool, state = 'unread', read_at = NULL,"
        " next_timer_at = NULL WHERE channel_id = ? AND recipient = ? AND pool = ?"
        " AND (state = 'unread' OR (tracked = 1 AND state IN ('read', 'waiting')))",
        (channel_id, agent, pool),
    ).rowcount


def pool_depth(conn: sqlite3.Connection) -> list[tuple[int, str, int, int]]:
    """(channel id, group, waiting to be claimed, claimed and open) per worker pool that
    has either, and per pool with members or kept without them."""
    return conn.execute(
        "SELECT channel_id, substr(pool, 2), sum(recipient = pool AND state = 'unread'),"
        " sum(recipient != pool) FROM deliveries WHERE pool IS NOT NULL AND pool != '*'"
        " AND (state IN ('unread', 'waiting', 'queued')"
        " OR (tracked = 1 AND state = 'read')"
        " OR (state = 'acked' AND ack_status IN ('received', 'in_progress')))"
        " GROUP BY channel_id, pool"
        " UNION ALL SELECT DISTINCT channel_id, grp, 0, 0 FROM subscriptions"
        " WHERE grp IS NOT NULL"
        " UNION ALL SELECT DISTINCT channel_id, grp, 0, 0 FROM pool_bindings ORDER BY 1, 2"
    ).fetchall()


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
    """A replayed dead letter of a queue or a worker pool: back in it for any member, not
    the last holder (deadletters.redeliver made it unread with a fresh retry budget)."""
    conn.execute(
        f"UPDATE deliveries SET recipient = coalesce(pool, '{Q}'), next_timer_at = NULL"
        " WHERE message_id = ? AND recipient = ?",
        (message_id, recipient),
    )


def pool_of(conn: sqlite3.Connection, message_id: int, recipient: str) -> str | None:
    row = conn.execute(
        "SELECT pool FROM deliveries WHERE message_id = ? AND recipient = ?",
        (message_id, recipient),
    ).fetchone()
    return row[0] if row else None


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


def pool_backlog(conn: sqlite3.Connection, channel_id: int, pool: str) -> list[tuple[int, int]]:
    """(message id, retry count) of what waits in a pool (unclaimed: unread, waiting out a
    back-off or held by max_pending), for the dead letters of a deleted pool."""
    return conn.execute(
        "SELECT message_id, retry_count FROM deliveries WHERE channel_id = ? AND recipient = ?"
        " AND state IN ('unread', 'waiting', 'queued') ORDER BY message_id",
        (channel_id, pool),
    ).fetchall()
