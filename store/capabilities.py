"""SQL for capabilities, hosted skills, routing misses and review incidents
(m008_capabilities). The rules are the engine's (acomm_cli/engine/capabilities.py, incidents.py)."""

from __future__ import annotations

import sqlite3
from typing import Any

CAP_COLS = (
    "id, owner, delegation_ref, delegation_version, executor_ref, executor_version,"
    " schema, schema_sha256, eta_ms, state, published_at, unpublished_at"
)
INCIDENT_COLS = (
    "id, capability_id, delegation_skill, executor_skill, failure_class,"
    " sample_corr_ids, samples, task_id, occurrence, created_at, state,"
    " resolved_at, resolved_by, note, message_id"
)


# ---------------------------------------------------------------- hosted skills


def host_skill(conn: sqlite3.Connection, agent: str, ref: str, version: str, now: int) -> None:
    conn.execute(
        "INSERT INTO agent_skills (agent, ref, version, added_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (agent, ref) DO UPDATE SET version = excluded.version,"
        " added_at = excluded.added_at",
        (agent, ref, version, now),
    )


def unhost_skill(conn: sqlite3.Connection, agent: str, ref: str) -> bool:
    return (
        conn.execute("DELETE FROM agent_skills WHERE agent = ? AND ref = ?", (agent, ref)).rowcount
        > 0
    )


def hosted_version(conn: sqlite3.Connection, agent: str, ref: str) -> str | None:
    row = conn.execute(
        "SELECT version FROM agent_skills WHERE agent = ? AND ref = ?", (agent, ref)
    ).fetchone()
    return None if row is None else str(row[0])


def skills_of(conn: sqlite3.Connection, agent: str | None) -> list[tuple[str, str, str, int]]:
    where, params = ("WHERE agent = ?", (agent,)) if agent is not None else ("", ())
    return conn.execute(
        f"SELECT agent, ref, version, added_at FROM agent_skills {where} ORDER BY agent, ref",
        params,
    ).fetchall()


# ---------------------------------------------------------------- the catalog


def put_capability(conn: sqlite3.Connection, row: dict[str, Any]) -> None:
    names = ", ".join(row)
    updates = ", ".join(f"{k} = excluded.{k}" for k in row if k != "id")
    conn.execute(
        f"INSERT INTO capabilities ({names}) VALUES ({', '.join('?' for _ in row)})"
        f" ON CONFLICT (id) DO UPDATE SET {updates}",
        tuple(row.values()),
    )


def set_capability_state(
    conn: sqlite3.Connection, cap_id: str, state: str, unpublished_at: int | None
) -> None:
    conn.execute(
        "UPDATE capabilities SET state = ?, unpublished_at = ? WHERE id = ?",
        (state, unpublished_at, cap_id),
    )


def capability_row(conn: sqlite3.Connection, cap_id: str) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {CAP_COLS} FROM capabilities WHERE id = ?", (cap_id,)
    ).fetchone()
    return row


def capability_rows(conn: sqlite3.Connection, state: str | None) -> list[tuple[Any, ...]]:
    where, params = ("WHERE state = ?", (state,)) if state is not None else ("", ())
    return conn.execute(
        f"SELECT {CAP_COLS} FROM capabilities {where} ORDER BY id", params
    ).fetchall()


def published_of(conn: sqlite3.Connection, owner: str) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT id FROM capabilities WHERE owner = ? AND state = 'published' ORDER BY id",
            (owner,),
        )
    ]


def active_agents(conn: sqlite3.Connection, system_channel: str, system_agent: str) -> list[str]:
    """Agents taking part in any channel but `_system`: this store's active agents."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT p.agent FROM participants p JOIN channels c ON c.id = p.channel_id"
            " WHERE c.name != ? AND p.agent != ? ORDER BY p.agent",
            (system_channel, system_agent),
        )
    ]


def distribution_rows(conn: sqlite3.Connection, cap_id: str) -> list[tuple[Any, ...]]:
    """(task id, owner, state, created_at, note, finished_at) of a capability's
    skill_distribution tasks, oldest first."""
    return conn.execute(
        "SELECT id, owner, state, created_at, note, finished_at FROM tasks"
        " WHERE capability_id = ? AND task_type = 'skill_distribution' ORDER BY id",
        (cap_id,),
    ).fetchall()


def task_requested_version(conn: sqlite3.Connection, task_id: int) -> str | None:
    row = conn.execute("SELECT metadata FROM messages WHERE id = ?", (task_id,)).fetchone()
    return None if row is None else row[0]


# ---------------------------------------------------------------- routing misses


def insert_miss(conn: sqlite3.Connection, cap_id: str, agent: str, reason: str, at: int) -> int:
    cur = conn.execute(
        "INSERT INTO routing_misses (capability_id, agent, reason, at) VALUES (?, ?, ?, ?)",
        (cap_id, agent, reason, at),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def misses_since(
    conn: sqlite3.Connection, cap_id: str, since: int, after_id: int
) -> list[tuple[int, str, str, int]]:
    """(id, agent, reason, at) of the misses at or after `since` with an id above
    `after_id` (the last one an incident already counted), oldest first."""
    return conn.execute(
        "SELECT id, agent, reason, at FROM routing_misses"
        " WHERE capability_id = ? AND at >= ? AND id > ? ORDER BY id",
        (cap_id, since, after_id),
    ).fetchall()


def miss_count(conn: sqlite3.Connection, cap_id: str) -> int:
    return int(
        conn.execute(
            "SELECT count(*) FROM routing_misses WHERE capability_id = ?", (cap_id,)
        ).fetchone()[0]
    )


# ---------------------------------------------------------------- incidents


def incident_by_occurrence(conn: sqlite3.Connection, occurrence: str) -> int | None:
    row = conn.execute("SELECT id FROM incidents WHERE occurrence = ?", (occurrence,)).fetchone()
    return None if row is None else int(row[0])


def last_miss_counted(conn: sqlite3.Connection, cap_id: str) -> int:
    """The id of the last routing miss an incident of this capability counted (0: none)."""
    row = conn.execute(
        "SELECT max(CAST(substr(occurrence, instr(occurrence, '#') + 1)"
        " AS INTEGER)) FROM incidents WHERE capability_id = ?"
        " AND failure_class = 'routing_miss'",
        (cap_id,),
    ).fetchone()
    return int(row[0] or 0)


def insert_incident(conn: sqlite3.Connection, row: dict[str, Any]) -> int:
    names = ", ".join(row)
    cur = conn.execute(
        f"INSERT INTO incidents ({names}) VALUES ({', '.join('?' for _ in row)})",
        tuple(row.values()),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def update_incident(conn: sqlite3.Connection, incident_id: int, changes: dict[str, Any]) -> None:
    sets = ", ".join(f"{k} = ?" for k in changes)
    conn.execute(f"UPDATE incidents SET {sets} WHERE id = ?", (*changes.values(), incident_id))


def incident_row(conn: sqlite3.Connection, incident_id: int) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {INCIDENT_COLS} FROM incidents WHERE id = ?", (incident_id,)
    ).fetchone()
    return row


def incident_counts(conn: sqlite3.Connection) -> list[tuple[str, int]]:
    """(state, count) of review incidents."""
    return conn.execute("SELECT state, count(*) FROM incidents GROUP BY state").fetchall()


def incident_rows(
    conn: sqlite3.Connection, state: str | None, cap_id: str | None
) -> list[tuple[Any, ...]]:
    where, params = [], []
    if state is not None:
        where.append("state = ?")
        params.append(state)
    if cap_id is not None:
        where.append("capability_id = ?")
        params.append(cap_id)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    return conn.execute(
        f"SELECT {INCIDENT_COLS} FROM incidents{clause} ORDER BY id", params
    ).fetchall()
