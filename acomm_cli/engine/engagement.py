"""Engagement: for each recipient of a message, routed -> notified -> engaged, with times,
derived from what acomm already keeps (docs/EVENTS.md "Engagement")."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from acomm_cli.model import Message
from acomm_cli.store import engagement as store

STATES = ("routed", "notified", "engaged")


@dataclass(frozen=True)
class Engagement:
    recipient: str
    state: str  # the furthest of STATES reached
    routed_at: int | None
    notified_at: int | None
    notified_by: str | None  # inbox, team (the bridge's mirrors) or dispatch
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
    when it exists: at its delivered_at, else when the message became deliverable. The MCP
    server's notifications leave no record, so they are not among the notified."""
    mirrors = store.mirrored(conn, msg.id)
    runs = store.dispatched(conn, msg.id)
    replies = store.replied(conn, msg.id)
    out = []
    for d in msg.deliveries:
        routed = d.delivered_at or msg.deliver_at or msg.created_at
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
