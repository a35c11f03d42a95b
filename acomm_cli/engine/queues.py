"""Work queues (channel type `queue`): each message goes to exactly one member, the
first `receive` that claims it (SQS / pgmq style: the claim is the read).

The data model (docs/DECISIONS.md, "Work queues"): a queue message gets ONE delivery row,
recipient '*' (the queue), no ack timer. `receive` claims rows inside its own write
transaction (store/queues.claim: a compare-and-set on recipient = '*'), then reads them as the
agent's own unread deliveries, so the output still leaves before the commit. An at-least-once
claim not acked by its deadline goes back to '*' through the ordinary retry timer (counted in
retry_count, dead-lettered past max_retries); an agent leaving gives its claims back."""

from __future__ import annotations

import sqlite3

from acomm_cli.errors import ValidationFailed
from acomm_cli.model import ChannelConfig, ChannelType, DeliveryMode, MessageFilter
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


def claim(conn: sqlite3.Connection, agent: str, f: MessageFilter, now: int) -> list[int]:
    """Inside `receive`'s transaction: claim up to `f.limit` messages matching `f` from the
    queues `agent` works on (none for an agent in no queue: one indexed read)."""
    if not sql.works_on_any(conn, agent):
        return []
    return sql.claim(conn, agent, f, f.limit, now)


def give_back(conn: sqlite3.Connection, channel_id: int, agent: str) -> int:
    """An agent leaving a queue: what it held but had not finished goes back to the queue
    (not to the dead letters, as on other channels: another worker can do it)."""
    return sql.unclaim_held(conn, channel_id, agent)
