"""The replay guards' memory (docs/DECISIONS.md, "Replay guards"): each
handshake nonce and each signed outbox read is accepted once, and remembered only while a
request carrying it could still be accepted.

One window, WINDOW_MS (60 s), the clock skew two nodes may have: a signed read is accepted
while its X-Acomm-Timestamp is within it of the gateway's clock, and so is a handshake nonce
that carries its time (`t<ms>-<random>`, which this version's nodes send: the time rides in
the nonce, which the node proof signs, so an older seed takes it as any nonce). A row is
kept until its request's time + the window; after that a replay is refused by the time
check, and the row can go. An older node's nonce carries no time: its proof can be replayed
whenever, so its row is kept for good, as before.

Where pruning runs: the handshake nonces in the exchange itself (the table grows only
there, so it is bounded whether or not anything else runs); the read signatures in the
gateway's heartbeat pass, every 5 s (the gateway is their only writer; a read costs one
insert, never a delete)."""

from __future__ import annotations

import re
import secrets
import sqlite3

from acomm_cli.store import nonces as sql
from acomm_cli.store.connection import write

WINDOW_MS = 60_000
_STAMPED = re.compile(r"t([0-9]{10,16})-[A-Za-z0-9_-]{16,}", re.ASCII)


def stamped_nonce(now_ms: int) -> str:
    """A fresh handshake nonce carrying its time: `t<ms>-<24 random characters>`."""
    return f"t{now_ms}-{secrets.token_urlsafe(18)}"


def nonce_time(nonce: str) -> int | None:
    """The time a nonce carries, or None (an older node's opaque nonce)."""
    m = _STAMPED.fullmatch(nonce)
    return int(m.group(1)) if m else None


def handshake_replay(conn: sqlite3.Connection, nonce: str, now_ms: int) -> str | None:
    """Why this nonce cannot be accepted (a message for 409 replay_detected), or None."""
    stamp = nonce_time(nonce)
    if stamp is not None and abs(now_ms - stamp) > WINDOW_MS:
        return (
            f"the nonce's time is more than {WINDOW_MS // 1000} s from this gateway's "
            "clock: a replayed request, or a clock to set right"
        )
    if sql.nonce_seen(conn, nonce):
        return "this request was seen before"
    return None


def record_handshake(conn: sqlite3.Connection, nonce: str, node_id: str, now_ms: int) -> None:
    """Remember an accepted nonce, forgetting those past their window first (inside the
    exchange's transaction)."""
    sql.prune_nonces(conn, now_ms)
    stamp = nonce_time(nonce)
    sql.insert_nonce(conn, nonce, node_id, now_ms, None if stamp is None else stamp + WINDOW_MS)


def first_request(conn: sqlite3.Connection, signature: bytes, node_id: str, stamp_ms: int) -> bool:
    """True the first time this signed read (its signature, as bytes: a base64 text can be
    spelt two ways) is seen; False for a replay. The caller checked the time window."""
    return sql.first_request(conn, signature, node_id, stamp_ms + WINDOW_MS)


def prune(conn: sqlite3.Connection, now_ms: int) -> int:
    """Forget every nonce and read signature whose window has passed; how many."""
    with write(conn):
        return sql.prune_nonces(conn, now_ms) + sql.prune_requests(conn, now_ms)
