"""Invites on a seed (`acomm invite create|list|revoke`): a single-use token a new node
trades for a ticket at the exchange (handshake.py). The token has 256 bits of randomness and
is shown once; the store keeps only its SHA-256."""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from typing import Any

from acomm_cli import clock
from acomm_cli.errors import InvalidState, NotFound, ValidationFailed
from acomm_cli.federation import identity
from acomm_cli.store import federation as sql
from acomm_cli.store.connection import write

DEFAULT_TTL_MS = 10 * 60_000
MAX_TTL_MS = 7 * 86_400_000


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def create(
    conn: sqlite3.Connection, *, expect: str | None, ttl_ms: int, pin_key: str | None, now_ms: int
) -> dict[str, Any]:
    """A new invite on this node: {invite_id, invite_token, expires_at}. The token is in
    this result only."""
    if expect is not None:
        identity.node_id(expect, "expect")
    if not 0 < ttl_ms <= MAX_TTL_MS:
        raise ValidationFailed("ttl: must be more than 0 and at most 7d", field="ttl", value=ttl_ms)
    pinned = identity.parse_public_key(pin_key, "pin_key") if pin_key is not None else None
    token = secrets.token_urlsafe(32)  # 256 bits
    invite_id = "inv-" + secrets.token_hex(8)
    expires_at = now_ms + ttl_ms
    with write(conn):
        identity.require(conn)
        sql.insert_invite(conn, invite_id, token_hash(token), expect, pinned, now_ms, expires_at)
        publish(conn, invite_id, now_ms)
    return {"invite_id": invite_id, "invite_token": token, "expires_at": clock.iso(expires_at)}


def publish(conn: sqlite3.Connection, invite_id: str, now_ms: int) -> None:
    """On a seed, the invite's entry in the room's registry follows its row (the other
    seeds forward its exchange here: seeds.py)."""
    from acomm_cli.federation import seeds

    if seeds.is_seed(conn):
        seeds.publish_invite(conn, invite_id, now_ms)


def state(row: tuple[Any, ...], now_ms: int) -> str:
    if row[8] is not None:
        return "revoked"
    if row[6] is not None:
        return "used"
    return "expired" if row[5] <= now_ms else "pending"


def doc(row: tuple[Any, ...], now_ms: int) -> dict[str, Any]:
    """An invite as `invite list` shows it: never its token nor the token's hash."""
    return {
        "invite_id": row[0],
        "state": state(row, now_ms),
        "expected_node": row[2],
        "pinned_key": identity.paserk_public(bytes(row[3])) if row[3] is not None else None,
        "created_at": clock.iso(row[4]),
        "expires_at": clock.iso(row[5]),
        "used_at": clock.iso(row[6]),
        "used_by": row[7],
        "revoked_at": clock.iso(row[8]),
    }


def list_invites(conn: sqlite3.Connection, now_ms: int) -> list[dict[str, Any]]:
    return [doc(row, now_ms) for row in sql.invites(conn)]


def revoke(conn: sqlite3.Connection, invite_id: str, now_ms: int) -> tuple[dict[str, Any], bool]:
    """Revoke an invite: (its doc, changed). Revoking it again is a no-op; a used invite
    cannot be revoked (exit 5: its node has joined)."""
    with write(conn):
        row = sql.invite(conn, invite_id)
        if row is None:
            raise NotFound(f"no invite {invite_id!r}", field="invite", value=invite_id)
        if row[6] is not None:
            raise InvalidState(
                f"invite {invite_id!r} was used by node {row[7]!r}; it can no longer be revoked",
                field="invite",
                value=invite_id,
            )
        changed = sql.revoke_invite(conn, invite_id, now_ms)
        if changed:
            publish(conn, invite_id, now_ms)
        row = sql.invite(conn, invite_id)
    assert row is not None
    return doc(row, now_ms), changed
