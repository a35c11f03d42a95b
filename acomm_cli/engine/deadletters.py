"""Dead-lettering: the dead-letter rows, the delivery states and the `_system` notifications,
written together from one staged set (see `acomm_cli.store.timers`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from acomm_cli import model
from acomm_cli.store import queries, timers
from acomm_cli.topics import SubscriptionIndex


def system_route(conn: sqlite3.Connection) -> tuple[int, str]:
    """The `_system` channel id and, as JSON, who subscribes to dead-letter notifications."""
    ch = queries.channel_by_name(conn, model.SYSTEM_CHANNEL)
    assert ch is not None, "every store has the _system channel (m001)"
    agents = SubscriptionIndex(queries.subscriptions(conn, ch.id)).route(model.DEADLETTER_TOPIC)
    return ch.id, json.dumps(sorted(agents))


def apply(conn: sqlite3.Connection) -> int:
    """Dead-letter everything staged so far; returns how many deliveries died."""
    cid, subscribers = system_route(conn)
    return timers.apply_staged(conn, cid, subscribers, model.DEADLETTER_TOPIC)


def dead_letter(conn: sqlite3.Connection, items: Sequence[tuple[int, str, int, int]],
                reason: str, last_error: str | None, now: int) -> int:
    """Dead-letter deliveries given as (message_id, recipient, channel_id, retry_count)."""
    if not items:
        return 0
    timers.stage_clear(conn)
    timers.stage_rows(conn, [(m, r, c, reason, n, last_error, now) for m, r, c, n in items])
    return apply(conn)
