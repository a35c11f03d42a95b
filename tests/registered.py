"""Registering agents in a test's store with a kind. Rows are written straight into the
`agents` table: the `acomm agent register` command is another branch's work; once it is here,
`register` can run it instead and the tests that use it stay as they are."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def register(store: Path, *names: str, kind: str = "agent") -> None:
    """Each name in the directory with `kind` (agent, human or service)."""
    c = sqlite3.connect(store)
    try:
        with c:
            c.executemany(
                "INSERT INTO agents (name, kind, registered_at, updated_at) VALUES (?, ?, 0, 0)"
                " ON CONFLICT (name) DO UPDATE SET kind = excluded.kind",
                [(n, kind) for n in names],
            )
    finally:
        c.close()


def last_seen(store: Path, name: str) -> int | None:
    """The agent's `last_seen_at` as stored (ms), None when never seen."""
    c = sqlite3.connect(store)
    try:
        row = c.execute("SELECT last_seen_at FROM agents WHERE name = ?", (name,)).fetchone()
    finally:
        c.close()
    assert row is not None, f"{name} is not registered"
    return row[0]
