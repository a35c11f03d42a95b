"""Engagement: for each recipient of a message, routed -> notified -> engaged, with times,
derived from what acomm already keeps (docs/EVENTS.md "Engagement")."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from acomm_cli.errors import CommError
from acomm_cli.model import Message
from acomm_cli.store import engagement as store
from acomm_cli.store import write

STATES = ("routed", "notified", "engaged")
# a kept notice's `how` (notifications.how) as the document says it: the bridge's two
# mirrors keep the names of their kinds
WORDS = {"bridge": "inbox", "team_inbox": "team", "mcp": "mcp", "dispatch": "dispatch"}


@dataclass(frozen=True)
class Engagement:
    recipient: str
    state: str  # the furthest of STATES reached
    routed_at: int | None
    notified_at: int | None
    notified_by: str | None  # inbox, team (the bridge's mirrors), mcp or dispatch
    engaged_at: int | None
    engaged_by: str | None  # read, ack or reply


def _earliest(*pairs: tuple[int | None, str]) -> tuple[int | None, str | None]:
    """The earliest known (time, how); on a tie the one listed first (the stronger sign:
    a response acknowledges its query in the same millisecond)."""
    best: tuple[int | None, str | None] = (None, None)
    for at, how in pairs:
        if at is not None and (best[0] is None or at < best[0]):
            best = (at, how)
    return best


def of(conn: sqlite3.Connection, msg: Message) -> list[Engagement]:
    """One row per delivery of the message, in the deliveries' order. A delivery is routed
    when it exists: at its delivered_at, else when the message became deliverable. It is
    notified at the first notice kept for it (`notifications`: a bridge mirror, a team inbox
    entry, an MCP client told, a dispatch run), which outlives the mirror a read takes away;
    a store that kept no notice for it (a message older than that table) falls back on the
    bridge's mirrors still there and the dispatch receipts."""
    notices = store.notified(conn, msg.id)
    replies = store.replied(conn, msg.id)
    fallback = len(notices) < len(msg.deliveries)
    mirrors = store.mirrored(conn, msg.id) if fallback else {}
    runs = store.dispatched(conn, msg.id) if fallback else {}
    out = []
    for d in msg.deliveries:
        routed = d.delivered_at or msg.deliver_at or msg.created_at
        notice = notices.get(d.recipient)
        notified: int | None
        by: str | None
        if notice is not None:
            notified, by = notice[0], WORDS.get(notice[1], notice[1])
        else:
            mirror = mirrors.get(d.recipient)
            notified, by = _earliest(
                (mirror[0] if mirror else None, mirror[1] if mirror else ""),
                (runs.get(d.recipient), "dispatch"),
            )
        engaged, how = _earliest(
            (replies.get(d.recipient), "reply"),
            (d.acked_at, "ack"),
            (d.first_read_at or d.read_at, "read"),
        )
        state = (
            "engaged" if engaged is not None else "notified" if notified is not None else "routed"
        )
        out.append(Engagement(d.recipient, state, routed, notified, by, engaged, how))
    return out


def told(
    conn: sqlite3.Connection, recipient: str, message_ids: Sequence[int], how: str, now: int
) -> bool:
    """Keep the notice a front end gave `recipient` of these messages (`how`: one of
    store.HOWS), in a transaction of its own, after the notice went out. Only the first
    notice per message and recipient is kept. Best effort: a store that is busy or cannot
    be written keeps no notice, and the notification stands (False)."""
    if not message_ids:
        return True
    try:
        with write(conn):
            store.notify(conn, [(mid, recipient, now, how) for mid in message_ids])
    except (CommError, sqlite3.Error):
        return False
    return True
