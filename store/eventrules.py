"""SQL of what dispatch's trigger rules read of a message's event (message_events)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

# event_type, event_id, actor, target, target_kind: acomm_cli.engine.eventrules.Facts' fields
Facts = tuple[str, str | None, str | None, str | None, str | None]

_COLS = "message_id, event_type, event_id, actor, target, target_kind"
_CHUNK = 500  # ids per query, well under SQLite's bound on parameters


def facts_of(conn: sqlite3.Connection, message_ids: Sequence[int]) -> dict[int, Facts]:
    """The events of these messages (those that carry one), by message id."""
    found: dict[int, Facts] = {}
    ids = list(dict.fromkeys(message_ids))
    for i in range(0, len(ids), _CHUNK):
        chunk = ids[i : i + _CHUNK]
        for mid, *rest in conn.execute(
            f"SELECT {_COLS} FROM message_events WHERE message_id IN"
            f" ({','.join('?' * len(chunk))})",
            chunk,
        ):
            found[mid] = (rest[0], rest[1], rest[2], rest[3], rest[4])
    return found
