"""SQL of the federation's replay guards: the handshake's nonces (`fed_nonces`, on a seed)
and the signatures of signed outbox reads (`fed_request_nonces`, on any gateway). The rules
(windows, what is kept how long) are in acomm_cli/federation/nonces.py."""

from __future__ import annotations

import sqlite3


def nonce_seen(conn: sqlite3.Connection, nonce: str) -> bool:
    return conn.execute("SELECT 1 FROM fed_nonces WHERE nonce = ?", (nonce,)).fetchone() is not None


def insert_nonce(
    conn: sqlite3.Connection, nonce: str, node_id: str, now_ms: int, expires_at: int | None
) -> None:
    """expires_at None: kept (a nonce without its time can be replayed whenever)."""
    conn.execute(
        "INSERT INTO fed_nonces (nonce, node_id, seen_at, expires_at) VALUES (?, ?, ?, ?)",
        (nonce, node_id, now_ms, expires_at),
    )


def prune_nonces(conn: sqlite3.Connection, now_ms: int) -> int:
    """Forget the handshake nonces past their expiry (the partial index on expires_at)."""
    return conn.execute(
        "DELETE FROM fed_nonces WHERE expires_at IS NOT NULL AND expires_at < ?", (now_ms,)
    ).rowcount


def first_request(
    conn: sqlite3.Connection, signature: bytes, node_id: str, expires_at: int
) -> bool:
    """Record a signed read's signature: True the first time, False for a replay. One
    primary-key probe and, the first time, one insert."""
    return (
        conn.execute(
            "INSERT OR IGNORE INTO fed_request_nonces (signature, node_id,"
            " expires_at) VALUES (?, ?, ?)",
            (signature, node_id, expires_at),
        ).rowcount
        == 1
    )


def prune_requests(conn: sqlite3.Connection, now_ms: int) -> int:
    return conn.execute("DELETE FROM fed_request_nonces WHERE expires_at < ?", (now_ms,)).rowcount
