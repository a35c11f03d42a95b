"""SQL of federation (spec 002): the node identity, and on a seed invites, nonces, tickets and
the nodes that joined. The outbox, cursors, inbound events, the sender's state and the room
copy have their tables (migration m005) but no statements yet: the gateway and `fed pull`
bring them. Nothing here runs on a store that is not a node."""

from __future__ import annotations

import sqlite3
from typing import Any


def node(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
    """(node_id, public_key, private_key, created_at) of this store, or None."""
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT node_id, public_key, private_key, created_at FROM fed_node WHERE id = 1"
    ).fetchone()
    return row


def insert_node(conn: sqlite3.Connection, node_id: str, public_key: bytes, private_key: bytes,
                now_ms: int) -> None:
    conn.execute("INSERT INTO fed_node (id, node_id, public_key, private_key, created_at)"
                 " VALUES (1, ?, ?, ?, ?)", (node_id, public_key, private_key, now_ms))


# ---------------------------------------------------------------- invites (on a seed)

_INVITE_COLUMNS = ("invite_id, token_sha256, expected_node, pinned_key, created_at, expires_at,"
                   " used_at, used_by, revoked_at")


def insert_invite(conn: sqlite3.Connection, invite_id: str, token_sha256: str,
                  expected_node: str | None, pinned_key: bytes | None, created_at: int,
                  expires_at: int) -> None:
    conn.execute(
        "INSERT INTO fed_invites (invite_id, token_sha256, expected_node, pinned_key,"
        " created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
        (invite_id, token_sha256, expected_node, pinned_key, created_at, expires_at))


def invites(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return conn.execute(
        f"SELECT {_INVITE_COLUMNS} FROM fed_invites ORDER BY created_at, invite_id").fetchall()


def invite(conn: sqlite3.Connection, invite_id: str) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {_INVITE_COLUMNS} FROM fed_invites WHERE invite_id = ?",
        (invite_id,)).fetchone()
    return row


def invite_by_hash(conn: sqlite3.Connection, token_sha256: str) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {_INVITE_COLUMNS} FROM fed_invites WHERE token_sha256 = ?",
        (token_sha256,)).fetchone()
    return row


def revoke_invite(conn: sqlite3.Connection, invite_id: str, now_ms: int) -> bool:
    """Revoke an invite not used nor revoked yet; False when nothing changed."""
    cur = conn.execute("UPDATE fed_invites SET revoked_at = ? WHERE invite_id = ?"
                       " AND revoked_at IS NULL AND used_at IS NULL", (now_ms, invite_id))
    return cur.rowcount == 1


def use_invite(conn: sqlite3.Connection, invite_id: str, node_id: str, now_ms: int) -> bool:
    """Consume an invite (the first successful WebSocket authentication); False if it was
    used or revoked meanwhile."""
    cur = conn.execute("UPDATE fed_invites SET used_at = ?, used_by = ? WHERE invite_id = ?"
                       " AND used_at IS NULL AND revoked_at IS NULL",
                       (now_ms, node_id, invite_id))
    return cur.rowcount == 1


# ---------------------------------------------------------------- the replay guard

def nonce_seen(conn: sqlite3.Connection, nonce: str) -> bool:
    return conn.execute("SELECT 1 FROM fed_nonces WHERE nonce = ?",
                        (nonce,)).fetchone() is not None


def insert_nonce(conn: sqlite3.Connection, nonce: str, node_id: str, now_ms: int) -> None:
    conn.execute("INSERT INTO fed_nonces (nonce, node_id, seen_at) VALUES (?, ?, ?)",
                 (nonce, node_id, now_ms))


def live_ticket_for_invite(conn: sqlite3.Connection, invite_id: str, now_ms: int) -> bool:
    """A ticket minted for this invite that is neither used nor expired."""
    return conn.execute(
        "SELECT 1 FROM fed_tickets WHERE invite_id = ? AND used_at IS NULL AND expires_at > ?",
        (invite_id, now_ms)).fetchone() is not None


def ticket_exists(conn: sqlite3.Connection, jti: str) -> bool:
    return conn.execute("SELECT 1 FROM fed_tickets WHERE jti = ?",
                        (jti,)).fetchone() is not None


def insert_ticket(conn: sqlite3.Connection, jti: str, invite_id: str | None, node_id: str,
                  public_key: bytes | None, issued_at: int, expires_at: int) -> None:
    conn.execute(
        "INSERT INTO fed_tickets (jti, invite_id, node_id, public_key, issued_at, expires_at)"
        " VALUES (?, ?, ?, ?, ?, ?)", (jti, invite_id, node_id, public_key, issued_at,
                                        expires_at))


def ticket(conn: sqlite3.Connection, jti: str) -> tuple[Any, ...] | None:
    """(jti, invite_id, node_id, public_key, issued_at, expires_at, used_at) or None."""
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT jti, invite_id, node_id, public_key, issued_at, expires_at, used_at"
        " FROM fed_tickets WHERE jti = ?", (jti,)).fetchone()
    return row


def use_ticket(conn: sqlite3.Connection, jti: str, now_ms: int) -> bool:
    cur = conn.execute("UPDATE fed_tickets SET used_at = ? WHERE jti = ? AND used_at IS NULL",
                       (now_ms, jti))
    return cur.rowcount == 1


# ---------------------------------------------------------------- members (rejoin by proof)

def member_key(conn: sqlite3.Connection, node_id: str) -> bytes | None:
    row = conn.execute("SELECT public_key FROM fed_members WHERE node_id = ?",
                       (node_id,)).fetchone()
    return None if row is None else bytes(row[0])


def upsert_member(conn: sqlite3.Connection, node_id: str, public_key: bytes,
                  now_ms: int) -> None:
    conn.execute(
        "INSERT INTO fed_members (node_id, public_key, joined_at, last_auth_at)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (node_id) DO UPDATE SET"
        " public_key = excluded.public_key, last_auth_at = excluded.last_auth_at",
        (node_id, public_key, now_ms, now_ms))


def touch_member(conn: sqlite3.Connection, node_id: str, now_ms: int) -> None:
    conn.execute("UPDATE fed_members SET last_auth_at = ? WHERE node_id = ?", (now_ms, node_id))
