"""Directory rows written straight into a test store: the kind, team, last-seen and retired
times a view must show, set exactly, whatever the directory's own commands would add."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def put(
    store: Path,
    name: str,
    *,
    kind: str = "agent",
    team: str | None = None,
    display_name: str | None = None,
    description: str | None = None,
    accept: str = "anyone",
    is_admin: bool = False,
    registered_at: int = 0,
    updated_at: int | None = None,
    retired_at: int | None = None,
    last_seen_at: int | None = None,
) -> None:
    """Register `name` (or overwrite its row) with exactly these values."""
    c = sqlite3.connect(store)
    try:
        with c:
            c.execute(
                "INSERT OR REPLACE INTO agents (name, kind, display_name, description, team,"
                " accept, is_admin, registered_at, updated_at, retired_at, last_seen_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    name,
                    kind,
                    display_name,
                    description,
                    team,
                    accept,
                    int(is_admin),
                    registered_at,
                    registered_at if updated_at is None else updated_at,
                    retired_at,
                    last_seen_at,
                ),
            )
    finally:
        c.close()
