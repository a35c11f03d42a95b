"""Work queues (channel type `queue`): each message goes to exactly one member, the
first `receive` that claims it (SQS / pgmq style: the claim is the read).

The data model (docs/DECISIONS.md, "Work queues"): a queue message gets ONE delivery row,
recipient '*' (the queue), no ack timer. `receive` claims rows inside its own write
transaction (store/queues.claim: a compare-and-set on recipient = '*'), then reads them as the
agent's own unread deliveries, so the output still leaves before the commit. An at-least-once
claim not acked by its deadline goes back to '*' through the ordinary retry timer (counted in
retry_count, dead-lettered past max_retries); an agent leaving gives its claims back.

Worker pools (`subscribe CH PATTERN --group NAME` on a pubsub channel) reuse all of it: the
pool's copy of each matching message is one row under the placeholder '*NAME', claimed the
same way by any member; other subscriptions and pools get their own copies. FIFO groups
(`send --group-key`): within a queue or pool, a key's messages are claimed one at a time,
in send order (store/queues.FIFO_HEAD)."""

from __future__ import annotations

import sqlite3

from acomm_cli.errors import InvalidState, NotFound, ValidationFailed
from acomm_cli.model import Channel, ChannelConfig, ChannelType, DeliveryMode, MessageFilter
from acomm_cli.store import channels as channels_sql
from acomm_cli.store import queues as sql


def check_config(ctype: ChannelType, cfg: ChannelConfig) -> None:
    """A queue hands each message to one worker, again after a missed ack: exactly-once
    (never hand a read message out again) would strand a crashed worker's message."""
    if ctype == ChannelType.QUEUE and cfg.delivery == DeliveryMode.EXACTLY_ONCE:
        raise ValidationFailed(
            "delivery: a queue is at-most-once or at-least-once, not exactly-once",
            field="delivery",
            value=cfg.delivery.value,
        )


def claim(
    conn: sqlite3.Connection,
    agent: str,
    f: MessageFilter,
    now: int,
    serves: tuple[bool, list[tuple[int, str]]] | None = None,
) -> list[int]:
    """Inside `receive`'s transaction: claim up to `f.limit` messages matching `f` from the
    queues `agent` works on (none for an agent in no queue: one indexed read, or none when
    the caller knows already: `serves`, sql.works_on_any's answer)."""
    queue, pools = sql.works_on_any(conn, agent) if serves is None else serves
    ids = sql.claim(conn, agent, f, f.limit, now) if queue else []
    for pool in pools:
        ids += sql.claim_pool(conn, agent, pool, f, f.limit - len(ids), now)
    return sorted(ids) if pools else ids


def give_back(conn: sqlite3.Connection, channel_id: int, agent: str) -> int:
    """An agent leaving a queue: what it held but had not finished goes back to the queue
    (not to the dead letters, as on other channels: another worker can do it)."""
    return sql.unclaim_held(conn, channel_id, agent)


def give_back_pool(conn: sqlite3.Connection, channel_id: int, agent: str, group: str) -> int:
    """A member leaving a worker pool: what it claimed and had not finished goes back to
    the pool (the pool's backlog stays queued for it even with no member left)."""
    return sql.unclaim_pool(conn, channel_id, agent, "*" + group)


def left_pools(
    conn: sqlite3.Connection,
    channel_id: int,
    agent: str,
    served: list[tuple[str, str]],
    now: int,
) -> None:
    """`agent`'s subscriptions (group, pattern) `served` are gone (unsubscribe, or leaving
    the channel). For each pool it no longer serves, what it claimed and had not finished
    goes back to the pool; a pool left with no member keeps the patterns it had, so new
    matching messages still wait in it for whoever joins it next (an SQS queue with no
    consumer still fills from its SNS topic)."""
    for group in {g for g, _ in served}:
        still = channels_sql.pool_members(conn, channel_id, group)
        if agent in still:
            continue
        give_back_pool(conn, channel_id, agent, group)
        if not still:
            channels_sql.keep_pool(
                conn, channel_id, group, [p for g, p in served if g == group], now
            )


def delete_pool(conn: sqlite3.Connection, ch: Channel, group: str, now: int) -> int:
    """Inside the caller's transaction: the pool goes, its waiting messages dead-lettered
    (`pool_deleted`); refused while it has members or when there is no such pool."""
    members = channels_sql.pool_members(conn, ch.id, group)
    if members:
        raise InvalidState(
            f"worker pool {group!r} on {ch.name!r} has members ({', '.join(members)}): they "
            "unsubscribe first",
            field="group",
            value=group,
            members=members,
        )
    kept = channels_sql.drop_pool_bindings(conn, ch.id, group)
    waiting = sql.pool_backlog(conn, ch.id, "*" + group)
    if not kept and not waiting:
        raise NotFound(
            f"channel {ch.name!r} has no worker pool {group!r}", field="group", value=group
        )
    from acomm_cli.engine import deadletters

    return deadletters.dead_letter(
        conn,
        [(mid, "*" + group, ch.id, n) for mid, n in waiting],
        "pool_deleted",
        f"worker pool {group} deleted",
        now,
    )


def pool_depths(conn: sqlite3.Connection) -> dict[tuple[int, str], tuple[int, int]]:
    """(channel id, group) -> (waiting to be claimed, claimed and not finished), for every
    worker pool with members or with messages."""
    out: dict[tuple[int, str], tuple[int, int]] = {}
    for cid, group, waiting, claimed in sql.pool_depth(conn):
        w, c = out.get((cid, group), (0, 0))
        out[(cid, group)] = (w + (waiting or 0), c + (claimed or 0))
    return out
