"""SQL of presence (when each agent last acted through acomm, `agents.last_seen_at`) and of
the kinds that delivery reads (`agents.kind`: a human is never dispatched)."""

from __future__ import annotations

from acomm_cli.store.connection import agents_cache

TYPE_CHECKING = False  # typing's, without importing typing (a send loads this module)
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable

# By primary key, and only when the time it holds is at or before `stale`: a row already
# fresher is not written at all (no page changes, no commit for other connections to see).
_TOUCH = (
    "UPDATE agents SET last_seen_at = ? WHERE name = ?"
    " AND (last_seen_at IS NULL OR last_seen_at <= ?)"
)


def touch(conn: sqlite3.Connection, agent: str, now: int, stale: int) -> None:
    """Set the agent's last seen time to `now` unless it is later than `stale`; a name not
    in `agents` is left alone. A time this connection wrote itself, under the agents
    token its cache holds (the row has not been removed or added since), is a lower bound
    of the stored one (it never moves back): while it is later than `stale` the UPDATE
    would change nothing, and is not run (a statement per send, receive and ack)."""
    cache = agents_cache(conn)
    if cache is not None:
        wrote = cache.seen.get(agent)
        if wrote is not None and wrote > stale:
            return
    if conn.execute(_TOUCH, (now, agent, stale)).rowcount == 1 and cache is not None:
        cache.keep(cache.seen, agent, now)


def last_seen(conn: sqlite3.Connection, agents: Iterable[str] | None = None) -> dict[str, int]:
    """agent -> last seen (ms), for the agents seen at least once (of `agents`, if given)."""
    rows = conn.execute(
        "SELECT name, last_seen_at FROM agents WHERE last_seen_at IS NOT NULL"
    ).fetchall()
    if agents is None:
        return dict(rows)
    wanted = set(agents)
    return {name: at for name, at in rows if name in wanted}


def kinds(conn: sqlite3.Connection, names: Iterable[str]) -> dict[str, str]:
    """name -> kind, for the names that are registered."""
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return {}
    marks = ",".join("?" * len(wanted))
    return dict(
        conn.execute(f"SELECT name, kind FROM agents WHERE name IN ({marks})", wanted).fetchall()
    )
