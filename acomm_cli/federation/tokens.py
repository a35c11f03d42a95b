"""Scoped session tokens for external agents (`acomm token create|list|revoke`):
an agent that is not a transport peer sends and receives through this node's gateway as
itself only (agentapi.py), and never touches the room or the outbox.

A token is 256 random bits shown once; the store keeps only its SHA-256 (as for invites), so
a copy of the store does not hand out sessions, and a revocation takes effect at the next
request. Its agent must be local to this node: owned by it in the room, or unowned and a
participant of a local channel (agent ownership routing, without fallbacks)."""

from __future__ import annotations

import secrets
import sqlite3
from dataclasses import dataclass
from typing import Any

from acomm_cli import clock, model
from acomm_cli.engine import credentials, directory
from acomm_cli.errors import InvalidState, NotFound, ValidationFailed
from acomm_cli.federation import identity
from acomm_cli.federation.invites import token_hash
from acomm_cli.store import federation as fed_sql
from acomm_cli.store import tokens as sql
from acomm_cli.store.connection import write

SCOPES = ("send", "receive")
DEFAULT_TTL_MS = 3_600_000
MAX_TTL_MS = 30 * 86_400_000
PREFIX = "acomm_at_"  # never mistaken for a PASETO ticket (v4.public.) or an invite


@dataclass(frozen=True)
class Session:
    """What a valid token grants: its id, its agent, its scopes."""

    token_id: str
    agent: str
    scopes: frozenset[str]


def parse_scopes(value: str | list[str] | None) -> tuple[str, ...]:
    """`send,receive` (or a list) -> the scopes in their canonical order; exit 3 naming the
    unknown one."""
    if value is None:
        return SCOPES
    items = value.split(",") if isinstance(value, str) else value
    wanted = {s.strip() for s in items if isinstance(s, str) and s.strip()}
    bad = sorted(s for s in wanted if s not in SCOPES)
    if bad or not wanted or not all(isinstance(s, str) for s in items):
        shown = bad[0] if bad else value
        raise ValidationFailed(
            f"scope: {shown!r} is not one of {', '.join(SCOPES)} (comma-separated, at least one)",
            field="scope",
            value=shown,
        )
    return tuple(s for s in SCOPES if s in wanted)


def _owner(conn: sqlite3.Connection, agent: str) -> str | None:
    from acomm_cli.engine import remote

    owner = remote.room_value(conn, "agents", agent).get("ownerNodeId")
    return owner if isinstance(owner, str) else None


def owner_elsewhere(conn: sqlite3.Connection, self_node: str, agent: str) -> str | None:
    """The other node that owns `agent` in the room, or None."""
    owner = _owner(conn, agent)
    return owner if owner is not None and owner != self_node else None


def check_local(conn: sqlite3.Connection, self_node: str, agent: str) -> None:
    """Refuse an agent this node does not host: exit 5 when another node owns it, exit 4
    when nothing here knows it."""
    owner = _owner(conn, agent)
    if owner is not None and owner != self_node:
        raise InvalidState(
            f"agent: {agent!r} is owned by node {owner!r}; a token is made "
            "on the node that hosts the agent",
            field="agent",
            value=agent,
        )
    if owner is None and not fed_sql.local_participant(conn, agent):
        raise NotFound(
            f"agent: {agent!r} is not hosted by this node (own it with `acomm "
            "agent own`, or add it to a local channel)",
            field="agent",
            value=agent,
        )


def create(
    conn: sqlite3.Connection, *, agent: str, ttl_ms: int, scopes: tuple[str, ...], now_ms: int
) -> dict[str, Any]:
    """A new token: {token_id, token, agent, expires_at, scopes}; the token is in this
    result only."""
    model.agent_id(agent, "agent")
    if not 0 < ttl_ms <= MAX_TTL_MS:
        raise ValidationFailed(
            "ttl: must be more than 0 and at most 30d", field="ttl", value=ttl_ms
        )
    token = PREFIX + secrets.token_urlsafe(32)  # 256 bits
    token_id = "tok-" + secrets.token_hex(8)
    expires_at = now_ms + ttl_ms
    with write(conn):
        me = identity.require(conn)
        directory.known(conn, agent, "agent", now_ms)
        check_local(conn, me.node_id, agent)
        sql.insert(conn, token_id, token_hash(token), agent, ",".join(scopes), now_ms, expires_at)
    return {
        "token_id": token_id,
        "token": token,
        "agent": agent,
        "expires_at": clock.iso(expires_at),
        "scopes": list(scopes),
    }


def state(row: tuple[Any, ...], now_ms: int) -> str:
    if row[5] is not None:
        return "revoked"
    return "expired" if row[4] <= now_ms else "active"


def doc(row: tuple[Any, ...], now_ms: int) -> dict[str, Any]:
    """A token as `token list` shows it: never its secret nor the secret's hash."""
    return {
        "token_id": row[0],
        "agent": row[1],
        "scopes": row[2].split(","),
        "state": state(row, now_ms),
        "created_at": clock.iso(row[3]),
        "expires_at": clock.iso(row[4]),
        "revoked_at": clock.iso(row[5]),
    }


def list_tokens(conn: sqlite3.Connection, now_ms: int) -> list[dict[str, Any]]:
    return [doc(row, now_ms) for row in sql.all_tokens(conn)]


def revoke(conn: sqlite3.Connection, token_id: str, now_ms: int) -> tuple[dict[str, Any], bool]:
    """Revoke a token: (its doc, changed); again is a no-op, an unknown id exit 4."""
    with write(conn):
        changed = sql.revoke(conn, token_id, now_ms)
        row = sql.by_id(conn, token_id)
    if row is None:
        raise NotFound(f"no token {token_id!r}", field="token", value=token_id)
    return doc(row, now_ms), changed


def authenticate(conn: sqlite3.Connection, token: str | None, now_ms: int) -> Session | None:
    """The session a bearer token grants now, or None: unknown, revoked and expired look
    alike to the caller (401 invalid_token). Reads only. An agent's own secret (`agent
    token`, a dispatch run's) is accepted too, with both scopes: it proves the agent here
    as it does on the command line."""
    if isinstance(token, str) and token.startswith(credentials.PREFIX):
        agent = credentials.holder(conn, token, now_ms)
        return None if agent is None else Session("identity", agent, frozenset(SCOPES))
    if not isinstance(token, str) or not token.startswith(PREFIX):
        return None
    row = sql.by_hash(conn, token_hash(token))
    if row is None or state(row, now_ms) != "active":
        return None
    return Session(row[0], row[1], frozenset(row[2].split(",")))
