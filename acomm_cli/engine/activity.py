"""What `acomm ui`'s charts show: traffic and unread backlog per minute over the
last hour, and the dead letters by reason. Read-only; the SQL is `store/activity.py`.

The backlog is rebuilt from the deliveries' own times (delivered, read, dead-lettered), so a
dashboard opened now shows the hour before it too: a delivery counts as unread at a minute's
end if it was delivered by then and not yet read nor dead-lettered. A delivery acknowledged
without ever being read, or on a channel closed since, is counted by these times alone."""

from __future__ import annotations

import sqlite3
from bisect import bisect_right
from dataclasses import dataclass, field

from acomm_cli import model
from acomm_cli.store import activity as sql
from acomm_cli.store import maintenance, stats

MINUTE_MS = 60_000


@dataclass(frozen=True)
class Activity:
    """Per-minute series, oldest minute first, the last one ending at `now`."""

    messages_per_minute: list[int]
    unread_backlog: list[int]
    dead_letters_by_reason: dict[str, int] = field(default_factory=dict)


def activity(conn: sqlite3.Connection, now: int, minutes: int = 60) -> Activity:
    """The last `minutes` minutes, one consistent snapshot."""
    since = now - minutes * MINUTE_MS
    with maintenance.snapshot(conn):
        times = sql.message_times(conn, since, now)
        spans = sql.unread_spans(conn, since, now, model.QUEUE_RECIPIENT)
        reasons = dict(sql.dead_letters_by_reason(conn))
    per_minute = [0] * minutes
    for t in times:
        per_minute[min((t - since) // MINUTE_MS, minutes - 1)] += 1
    starts = sorted(start for start, _ in spans)
    ends = sorted(max(start, end) for start, end in spans if end is not None)
    backlog = []
    for i in range(minutes):  # unread at the minute's end: delivered by then, not ended
        edge = since + (i + 1) * MINUTE_MS
        backlog.append(bisect_right(starts, edge) - bisect_right(ends, edge))
    return Activity(per_minute, backlog, reasons)


def data_version(conn: sqlite3.Connection) -> int:
    """SQLite's counter of commits by other connections: what `--follow` polls to wake."""
    return stats.data_version(conn)
