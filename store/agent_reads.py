"""Reads of the agent directory for the views that show it (`acomm ui`'s directory pane,
shell completion): plain rows, never a credential. The directory's own verbs and rules live
elsewhere; these reads only list it.

A store opened read-only before its migrations ran has no `agents` table yet: every read here
answers as for an empty directory instead of failing (completion must never print an error).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True)
class DirectoryRow:
    """One registered name as the views list it."""

    name: str
    kind: str
    team: str | None
    display_name: str | None
    registered_at: int
    last_seen_at: int | None
    retired_at: int | None


_ROWS = (
    "SELECT name, kind, team, display_name, registered_at, last_seen_at, retired_at"
    " FROM agents ORDER BY name"
)


def _missing_table(exc: sqlite3.OperationalError) -> bool:
    return "no such table" in str(exc)


def directory_rows(conn: sqlite3.Connection) -> list[DirectoryRow]:
    """Every registered agent, retired ones included, by name."""
    try:
        return [DirectoryRow(*r) for r in conn.execute(_ROWS)]
    except sqlite3.OperationalError as exc:
        if _missing_table(exc):
            return []
        raise


def active_names(conn: sqlite3.Connection) -> list[str]:
    """The registered names that can still be written to (not retired), sorted: what a
    shell completes after `--to` or `--as`. The primary key serves it in order."""
    try:
        return [
            r[0]
            for r in conn.execute("SELECT name FROM agents WHERE retired_at IS NULL ORDER BY name")
        ]
    except sqlite3.OperationalError as exc:
        if _missing_table(exc):
            return []
        raise
