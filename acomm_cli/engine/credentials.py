"""Agent credentials: who may act as an agent when the store's `identity.auth` is `token`
(docs/SECURITY.md, "Agent credentials").

A secret is 256 random bits shown once; the store keeps its SHA-256 only. A fast hash is
enough here: a slow one guards guessable passwords, and a 256-bit random secret cannot be
guessed, so the hash only has to make a copy of the store useless for acting as anyone.

The checks never read the directory for the name being claimed: the presented secret is
hashed, its row found by that hash, and its holder compared with the claim through digests
of equal length. A wrong, revoked or expired secret and a name nobody registered get the
same refusal after the same work, so the answer says nothing of which names exist.

`auth` is on when the store says so (`config set identity.auth token`) or when this
process's configuration does: the environment can turn it on, never off."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
from collections.abc import Iterable
from typing import Any

from acomm_cli import model
from acomm_cli.errors import Duplicate, Forbidden, InvalidState, NotFound, ValidationFailed
from acomm_cli.store import credentials as sql
from acomm_cli.store import tokens as tokens_sql
from acomm_cli.store.connection import write

MODES = ("none", "token")
PREFIX = "acomm_as_"  # an agent's secret, never mistaken for a gateway session token
NEVER_MS = 253_402_300_799_999  # 9999-12-31: a secret lasts until rotated or revoked
HOW = "give its secret in $ACOMM_AGENT_TOKEN or --token-file FILE"
HOW_ADMIN = "give an admin's secret in $ACOMM_AGENT_TOKEN or --token-file FILE"


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()


def mode(conn: sqlite3.Connection, configured: str | None = None) -> str:
    """`token` when the store or this process's configuration says so, else `none`."""
    if configured == "token":
        return "token"
    return "token" if sql.mode(conn) == "token" else "none"


def set_auth(
    conn: sqlite3.Connection, value: str, *, secret: str | None, now: int, configured: str | None
) -> str:
    """`config set identity.auth VALUE`: the store's setting, which binds every process.
    Turning it on needs an admin to exist (else nobody could do an admin's work again);
    while it is on, changing it needs an admin's secret. Returns the value set."""
    with write(conn):
        if value not in MODES:
            raise ValidationFailed(
                f"identity.auth: {value!r} is not one of none, token",
                field="identity.auth",
                value=value,
            )
        require_admin(conn, secret, now, configured)
        if value == "token" and not sql.admins(conn):
            raise InvalidState(
                "identity.auth: the store has no admin: make one first (`acomm init --admin NAME`)",
                field="identity.auth",
                value=value,
            )
        sql.set_mode(conn, value)
    return value


def holder(conn: sqlite3.Connection, secret: str | None, now: int) -> str | None:
    """The agent a presented secret proves, or None."""
    if not secret:
        return None
    return sql.holder(conn, digest(secret), now)


def _same(a: str | None, b: str) -> bool:
    return hmac.compare_digest(digest(a or "\0"), digest(b)) and a is not None


def refusal(agent: str) -> Forbidden:
    """The one answer for every agent that is not proven, whether or not it exists."""
    return Forbidden(
        f"agent {agent!r}: not proven (identity.auth is token: {HOW}; a wrong, revoked or "
        "expired secret is refused the same way)",
        field="agent",
        value=agent,
    )


def verify(
    conn: sqlite3.Connection, agents: Iterable[str], secret: str | None, now: int
) -> str | None:
    """Refuse (exit 5) unless `secret` proves every agent in `agents`; the proven agent."""
    proven = holder(conn, secret, now)
    for agent in agents:
        if not _same(proven, agent):
            raise refusal(agent)
    return proven


def require_admin(
    conn: sqlite3.Connection, secret: str | None, now: int, configured: str | None = None
) -> str | None:
    """With auth on, refuse (exit 5) unless `secret` is an admin's; the admin, or None when
    auth is off (anyone may then do what admins do)."""
    if mode(conn, configured) != "token":
        return None
    proven = holder(conn, secret, now)
    if proven is None or not sql.is_admin(conn, proven):
        raise Forbidden(
            f"this needs an admin (identity.auth is token): {HOW_ADMIN}",
            field="admin",
        )
    return proven


def issue_secret(
    conn: sqlite3.Connection,
    agent: str,
    now: int,
    *,
    expires_at: int = NEVER_MS,
    token_id: str | None = None,
) -> str:
    """A new secret for `agent`, stored hashed, inside the caller's transaction; the only
    time the secret exists in the clear is in what this returns."""
    secret = PREFIX + secrets.token_urlsafe(32)
    token_id = token_id or "sec-" + secrets.token_hex(8)
    tokens_sql.insert(conn, token_id, digest(secret), agent, sql.IDENTITY, now, expires_at)
    return secret


def token(conn: sqlite3.Connection, agent: str, action: str, now: int) -> dict[str, Any]:
    """`agent token NAME [--rotate|--revoke]`: {agent, token?, revoked}. A plain issue for an
    agent that has a secret already is refused: that one cannot be shown again."""
    model.agent_id(agent, "agent")
    with write(conn):
        standing = sql.standing(conn, agent)
        if standing is None:
            raise NotFound(
                f"agent: {agent!r} is not registered (`acomm agent register {agent}`)",
                field="agent",
                value=agent,
            )
        if standing == "retired" and action != "revoke":
            raise InvalidState(
                f"agent {agent!r} is retired: it gets no secret", field="agent", value=agent
            )
        if action == "issue" and sql.active_secrets(conn, agent, now):
            raise Duplicate(
                f"agent {agent!r} has a secret already, which is never shown again: "
                "--rotate replaces it, --revoke withdraws it",
                field="agent",
                value=agent,
            )
        revoked = (
            sql.revoke_secrets(conn, agent, now, runs=action == "revoke")
            if action != "issue"
            else 0
        )
        doc: dict[str, Any] = {"agent": agent, "revoked": revoked}
        if action != "revoke":
            doc["token"] = issue_secret(conn, agent, now)
    return doc


def first_admin(conn: sqlite3.Connection, agent: str, now: int) -> dict[str, Any]:
    """`init --admin NAME`: register NAME as an admin with a new secret. Refused once the
    store has an admin: from then on admins grant the role."""
    model.agent_id(agent, "admin")
    with write(conn):
        present = sql.admins(conn)
        if present:
            raise InvalidState(
                f"admin: the store has an admin already ({', '.join(present)}); an admin "
                f"grants the role (`acomm agent update {agent} --admin`)",
                field="admin",
                value=agent,
            )
        if sql.standing(conn, agent) == "retired":
            raise InvalidState(
                f"admin: {agent!r} is retired; name an agent in service", field="admin", value=agent
            )
        sql.make_admin(conn, agent, now)
        secret = issue_secret(conn, agent, now)
    return {"agent": agent, "admin": True, "token": secret, "identity_auth": mode(conn)}


def run_secret(conn: sqlite3.Connection, agent: str, run_id: str, expires_at: int, now: int) -> str:
    """A dispatch run's secret: `agent`'s identity until `expires_at` (the run's time limit),
    in its own transaction; expired ones left by a dispatcher that died go first."""
    with write(conn):
        sql.delete_expired_run_secrets(conn, now)
        return issue_secret(
            conn, agent, now, expires_at=expires_at, token_id=sql.RUN_PREFIX + run_id
        )


def drop_run_secret(conn: sqlite3.Connection, run_id: str) -> None:
    """The run is over: its secret goes."""
    with write(conn):
        sql.delete_run_secret(conn, run_id)
