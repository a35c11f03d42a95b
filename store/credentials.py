"""SQL of agent credentials (identity.auth: token): an agent's secrets are rows of
`agent_tokens` with the scope `identity` (only the SHA-256 of each secret is kept), the admin
flag is `agents.is_admin`, and the store's mode is the store_meta key `identity.auth`."""

from __future__ import annotations

import sqlite3

from acomm_cli.store.connection import identity_auth

IDENTITY = "identity"  # the scope of a secret that proves an agent's identity
RUN_PREFIX = "run:"  # the token_id of a dispatch run's secret: run:<run id>
MODE_KEY = "identity.auth"


def mode(conn: sqlite3.Connection) -> str | None:
    return identity_auth(conn)


def set_mode(conn: sqlite3.Connection, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)", (MODE_KEY, value))


def holder(conn: sqlite3.Connection, secret_sha256: str, now_ms: int) -> str | None:
    """The agent an identity secret belongs to, when it is neither revoked nor expired."""
    row = conn.execute(
        "SELECT agent FROM agent_tokens WHERE token_sha256 = ? AND scopes = ?"
        " AND revoked_at IS NULL AND expires_at > ?",
        (secret_sha256, IDENTITY, now_ms),
    ).fetchone()
    return row[0] if row else None


def active_secrets(conn: sqlite3.Connection, agent: str, now_ms: int) -> list[str]:
    """The ids of an agent's own secrets in force (a dispatch run's are not among them)."""
    rows = conn.execute(
        "SELECT token_id FROM agent_tokens WHERE agent = ? AND scopes = ?"
        " AND revoked_at IS NULL AND expires_at > ? AND token_id NOT LIKE 'run:%'",
        (agent, IDENTITY, now_ms),
    ).fetchall()
    return [r[0] for r in rows]


def revoke_secrets(conn: sqlite3.Connection, agent: str, now_ms: int, *, runs: bool) -> int:
    """Revoke an agent's identity secrets still in force; with `runs`, a running dispatch's
    too."""
    return conn.execute(
        "UPDATE agent_tokens SET revoked_at = ? WHERE agent = ? AND scopes = ?"
        " AND revoked_at IS NULL AND expires_at > ? AND (? OR token_id NOT LIKE 'run:%')",
        (now_ms, agent, IDENTITY, now_ms, runs),
    ).rowcount


def delete_run_secret(conn: sqlite3.Connection, run_id: str) -> None:
    conn.execute("DELETE FROM agent_tokens WHERE token_id = ?", (RUN_PREFIX + run_id,))


def delete_expired_run_secrets(conn: sqlite3.Connection, now_ms: int) -> None:
    """A dispatcher that died mid-run leaves its run's secret: expired, it goes here."""
    conn.execute(
        "DELETE FROM agent_tokens WHERE token_id LIKE 'run:%' AND expires_at <= ?", (now_ms,)
    )


def is_admin(conn: sqlite3.Connection, agent: str) -> bool:
    row = conn.execute(
        "SELECT is_admin FROM agents WHERE name = ? AND retired_at IS NULL", (agent,)
    ).fetchone()
    return bool(row and row[0])


def admins(conn: sqlite3.Connection) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT name FROM agents WHERE is_admin = 1 AND retired_at IS NULL ORDER BY name"
        )
    ]


def standing(conn: sqlite3.Connection, agent: str) -> str | None:
    """`active` or `retired` for a registered agent, None for a name nobody registered."""
    row = conn.execute("SELECT retired_at FROM agents WHERE name = ?", (agent,)).fetchone()
    return None if row is None else "active" if row[0] is None else "retired"


def make_admin(conn: sqlite3.Connection, agent: str, now_ms: int) -> None:
    """Register `agent` as an admin, or make the registered one an admin."""
    conn.execute(
        "INSERT INTO agents (name, is_admin, registered_at, updated_at) VALUES (?, 1, ?, ?)"
        " ON CONFLICT (name) DO UPDATE SET is_admin = 1, updated_at = excluded.updated_at",
        (agent, now_ms, now_ms),
    )
