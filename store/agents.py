"""SQL of the agent directory (`agents`): who a name is, its kind, team, contact rule and
role, when it was registered, retired and last seen; and the store's directory default."""

from __future__ import annotations

import sqlite3

from acomm_cli.store.connection import agents_cache

TYPE_CHECKING = False  # typing's, without importing typing (a send's start-up time)
if TYPE_CHECKING:
    from typing import Any

COLUMNS = (
    "name",
    "kind",
    "display_name",
    "description",
    "team",
    "accept",
    "is_admin",
    "registered_at",
    "updated_at",
    "retired_at",
    "last_seen_at",
)
_SELECT = f"SELECT {', '.join(COLUMNS)} FROM agents"
# what `update` may set (a column name is never taken from outside this list)
EDITABLE = ("kind", "display_name", "description", "team", "accept", "is_admin")
DEFAULT_KEY = "identity.directory_default"


def insert(
    conn: sqlite3.Connection,
    name: str,
    now_ms: int,
    *,
    kind: str = "agent",
    display_name: str | None = None,
    description: str | None = None,
    team: str | None = None,
) -> bool:
    """Register `name`; False (nothing written) when it is registered already."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO agents (name, kind, display_name, description, team,"
        " registered_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (name, kind, display_name, description, team, now_ms, now_ms),
    )
    return cur.rowcount > 0


def get(conn: sqlite3.Connection, name: str) -> tuple[Any, ...] | None:
    """The row in COLUMNS order, or None."""
    return conn.execute(f"{_SELECT} WHERE name = ?", (name,)).fetchone()


def lookup(conn: sqlite3.Connection, name: str) -> tuple[int | None] | None:
    """The hot path's check, one primary-key lookup: None for a name not registered, else
    (retired_at,). Kept by the connection's AgentCache while it answers."""
    cache = agents_cache(conn)
    if cache is not None:
        hit = cache.lookups.get(name)
        if hit is not None:
            return hit
    row: tuple[int | None] | None = conn.execute(
        "SELECT retired_at FROM agents WHERE name = ?", (name,)
    ).fetchone()
    if cache is not None and row is not None:
        cache.keep(cache.lookups, name, row)
    return row


def retired_of(conn: sqlite3.Connection, names: list[str]) -> dict[str, int | None]:
    """name -> retired_at for the names that are registered (one statement)."""
    marks = ", ".join("?" * len(names))
    rows = conn.execute(f"SELECT name, retired_at FROM agents WHERE name IN ({marks})", names)
    return dict(rows.fetchall())


def retired_names(conn: sqlite3.Connection) -> frozenset[str]:
    """Kept by the connection's AgentCache while it answers."""
    cache = agents_cache(conn)
    if cache is not None and cache.retired is not None:
        return cache.retired
    found = frozenset(
        r[0] for r in conn.execute("SELECT name FROM agents WHERE retired_at IS NOT NULL")
    )
    if cache is not None:
        cache.retired = found
    return found


def update(conn: sqlite3.Connection, name: str, now_ms: int, changes: dict[str, Any]) -> bool:
    """Set the given EDITABLE columns; False when `name` is not registered."""
    cols = [c for c in EDITABLE if c in changes]
    sets = "".join(f"{c} = ?, " for c in cols)
    cur = conn.execute(
        f"UPDATE agents SET {sets}updated_at = ? WHERE name = ?",
        (*(changes[c] for c in cols), now_ms, name),
    )
    return cur.rowcount > 0


def retire(conn: sqlite3.Connection, name: str, now_ms: int) -> bool:
    """Mark `name` retired; False when it is not registered or retired already."""
    cur = conn.execute(
        "UPDATE agents SET retired_at = ?, updated_at = ? WHERE name = ? AND retired_at IS NULL",
        (now_ms, now_ms, name),
    )
    return cur.rowcount > 0


def list_agents(
    conn: sqlite3.Connection,
    *,
    kind: str | None = None,
    active_since: int | None = None,
    include_retired: bool = False,
) -> list[tuple[Any, ...]]:
    """Rows in COLUMNS order, by name: `kind` only, seen at or after `active_since` only,
    retired ones only with `include_retired`."""
    where: list[str] = []
    args: list[Any] = []
    if kind is not None:
        where.append("kind = ?")
        args.append(kind)
    if active_since is not None:
        where.append("last_seen_at >= ?")
        args.append(active_since)
    if not include_retired:
        where.append("retired_at IS NULL")
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    return conn.execute(f"{_SELECT}{clause} ORDER BY name", args).fetchall()


def names(conn: sqlite3.Connection) -> list[str]:
    """Every registered name not retired, by name: what a suggestion is chosen from and
    what a shell completes after `--to` or `--as`."""
    return _or_empty(conn, "SELECT name FROM agents WHERE retired_at IS NULL ORDER BY name", 0)


def directory_rows(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    """(name, kind, team, display_name, registered_at, last_seen_at, retired_at) of every
    registered agent, retired ones included, by name: the ui's directory pane."""
    return _or_empty(
        conn,
        "SELECT name, kind, team, display_name, registered_at, last_seen_at, retired_at"
        " FROM agents ORDER BY name",
    )


def _or_empty(conn: sqlite3.Connection, sql: str, column: int | None = None) -> list[Any]:
    """The rows (or one column of them). A store opened read-only before its migrations
    ran has no directory yet: an empty one, never an error (completion prints nothing)."""
    try:
        rows = conn.execute(sql).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise
    return rows if column is None else [r[column] for r in rows]


def channels_of(conn: sqlite3.Connection, name: str) -> list[tuple[str, str, str]]:
    """(channel, type, role) of each channel `name` takes part in, by channel name."""
    return conn.execute(
        "SELECT c.name, c.type, p.role FROM participants p JOIN channels c ON c.id = p.channel_id"
        " WHERE p.agent = ? ORDER BY c.name",
        (name,),
    ).fetchall()


def unread(conn: sqlite3.Connection, name: str) -> int:
    return int(
        conn.execute(
            "SELECT count(*) FROM deliveries WHERE recipient = ? AND state = 'unread'", (name,)
        ).fetchone()[0]
    )


def directory_default(conn: sqlite3.Connection) -> str | None:
    """store_meta's `identity.directory_default`: open or strict (None: not written)."""
    row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (DEFAULT_KEY,)).fetchone()
    return None if row is None else str(row[0])


def set_directory_default(conn: sqlite3.Connection, value: str) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)", (DEFAULT_KEY, value)
    )
