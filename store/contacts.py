"""SQL of contact rules: an agent's `accept` rule and team (read on every direct send, by
primary key) and its `agent_contacts` list."""

from __future__ import annotations

import sqlite3

from acomm_cli.store.connection import agents_cache


def rule_of(conn: sqlite3.Connection, agent: str) -> tuple[str, str | None] | None:
    """(accept, team) of a registered agent; None for a name the directory does not hold.
    Kept by the connection's AgentCache while it answers."""
    cache = agents_cache(conn)
    if cache is not None:
        hit = cache.rules.get(agent)
        if hit is not None:
            return hit
    row: tuple[str, str | None] | None = conn.execute(
        "SELECT accept, team FROM agents WHERE name = ?", (agent,)
    ).fetchone()
    if cache is not None and row is not None:
        cache.keep(cache.rules, agent, row)
    return row


def team_of(conn: sqlite3.Connection, agent: str) -> str | None:
    row = conn.execute("SELECT team FROM agents WHERE name = ?", (agent,)).fetchone()
    return row[0] if row else None


def is_contact(conn: sqlite3.Connection, agent: str, contact: str) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM agent_contacts WHERE agent = ? AND contact = ?", (agent, contact)
        ).fetchone()
        is not None
    )


def add(conn: sqlite3.Connection, agent: str, contact: str, now_ms: int) -> bool:
    """False when `contact` was listed already (its first added_at is kept)."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO agent_contacts (agent, contact, added_at) VALUES (?, ?, ?)",
        (agent, contact, now_ms),
    )
    return cur.rowcount > 0


def remove(conn: sqlite3.Connection, agent: str, contact: str) -> bool:
    """False when `contact` was not listed."""
    cur = conn.execute(
        "DELETE FROM agent_contacts WHERE agent = ? AND contact = ?", (agent, contact)
    )
    return cur.rowcount > 0


def contacts_of(conn: sqlite3.Connection, agent: str) -> list[tuple[str, int]]:
    """(contact, added_at) of an agent's contacts, by name."""
    return conn.execute(
        "SELECT contact, added_at FROM agent_contacts WHERE agent = ? ORDER BY contact",
        (agent,),
    ).fetchall()
