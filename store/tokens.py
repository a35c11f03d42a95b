"""SQL of agent session tokens (`acomm token ...`, the gateway's agent endpoints): one row per
token, keyed by its id, found by the SHA-256 of its secret."""

from __future__ import annotations

import sqlite3
from typing import Any

_COLUMNS = "token_id, agent, scopes, created_at, expires_at, revoked_at"


def insert(
    conn: sqlite3.Connection,
    token_id: str,
    token_sha256: str,
    agent: str,
    scopes: str,
    created_at: int,
    expires_at: int,
) -> None:
    conn.execute(
        "INSERT INTO agent_tokens (token_id, token_sha256, agent, scopes, created_at,"
        " expires_at) VALUES (?, ?, ?, ?, ?, ?)",
        (token_id, token_sha256, agent, scopes, created_at, expires_at),
    )


def by_id(conn: sqlite3.Connection, token_id: str) -> tuple[Any, ...] | None:
    """(token_id, agent, scopes, created_at, expires_at, revoked_at) or None."""
    return conn.execute(
        f"SELECT {_COLUMNS} FROM agent_tokens WHERE token_id = ?", (token_id,)
    ).fetchone()


def by_hash(conn: sqlite3.Connection, token_sha256: str) -> tuple[Any, ...] | None:
    return conn.execute(
        f"SELECT {_COLUMNS} FROM agent_tokens WHERE token_sha256 = ?", (token_sha256,)
    ).fetchone()


def all_tokens(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return conn.execute(
        f"SELECT {_COLUMNS} FROM agent_tokens ORDER BY created_at, token_id"
    ).fetchall()


def revoke(conn: sqlite3.Connection, token_id: str, now_ms: int) -> bool:
    """Revoke a token not revoked yet; False when nothing changed."""
    cur = conn.execute(
        "UPDATE agent_tokens SET revoked_at = ? WHERE token_id = ? AND revoked_at IS NULL",
        (now_ms, token_id),
    )
    return cur.rowcount > 0
