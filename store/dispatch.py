"""SQL of agent dispatch: due deliveries, claims with leases, receipts (one per run)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

# A claim row lets its delivery be dispatched again when its round is over (done or dead:
# the delivery became unread again), its retry time has come, or its lease has run out.
_DUE = (
    "(cl.message_id IS NULL OR cl.state IN ('done', 'dead')"
    " OR (cl.state = 'retry' AND cl.next_retry_at <= :now)"
    " OR (cl.state = 'running' AND cl.lease_until <= :now))"
)


# agent, types, channels, senders, and whether every message to the agent is a candidate
# (`unmatched: ignore`: those the rules do not let through are settled as ignored)
Rule = tuple[str, Sequence[str], Sequence[str], Sequence[str], bool]

_CANDIDATE_COLS = (
    "SELECT d.message_id, d.recipient, c.name, m.sender, m.type, m.topic, m.metadata,"
    " m.priority, cl.state, cl.attempts, m.dedupe_key, d.channel_id FROM "
)
_CANDIDATE_JOINS = " JOIN messages m ON m.id = d.message_id JOIN channels c ON c.id = d.channel_id"


def _rules_sql(rules: Sequence[Rule]) -> tuple[str, list[Any]]:
    """The part of the trigger rules SQL can check (types, channels, senders; topics and
    metadata are left to acomm_cli.dispatch.agents.Rules), one alternative per agent, and never a
    message from the agent itself; an agent that takes everything: every message to it."""
    alternatives, params = [], []
    for agent, types, channels, senders, everything in rules:
        terms = ["d.recipient = ?"]
        params.append(agent)
        if not everything:
            terms.append("m.sender != d.recipient")
            for col, values in (("m.type", types), ("c.name", channels), ("m.sender", senders)):
                if values:
                    terms.append(f"{col} IN ({','.join('?' * len(values))})")
                    params.extend(values)
        alternatives.append("(" + " AND ".join(terms) + ")")
    agents = [r[0] for r in rules]
    where = (
        f"d.recipient IN ({','.join('?' * len(agents))})"
        f" AND c.state != 'closed' AND ({' OR '.join(alternatives)})"
    )
    return where, [*agents, *params]


def candidates(conn: sqlite3.Connection, rules: Sequence[Rule], now: int) -> list[tuple[Any, ...]]:
    """Deliveries to the rules' agents that dispatch may take, on channels not closed, whose
    claim (if any) is due, most urgent first, then oldest: unread ones, and ack-tracked ones
    that dispatch itself acknowledged `in_progress` and is retrying. Rows: (message_id,
    agent, channel, sender, type, topic, metadata, priority, claim state, claim attempts,
    dedupe key, channel id)."""
    if not rules:
        return []
    where, params = _rules_sql(rules)
    due = _DUE.replace(":now", "?")
    return conn.execute(
        _CANDIDATE_COLS
        + "deliveries d"
        + _CANDIDATE_JOINS
        + " LEFT JOIN dispatch_claims cl ON cl.message_id = d.message_id"
        f" AND cl.agent = d.recipient WHERE d.state = 'unread' AND {where} AND {due}"
        " UNION ALL "
        + _CANDIDATE_COLS
        + "dispatch_claims cl JOIN deliveries d ON d.message_id = cl.message_id"
        " AND d.recipient = cl.agent"
        + _CANDIDATE_JOINS
        + " WHERE cl.state IN ('retry', 'running') AND d.state = 'acked'"
        f" AND d.ack_status = 'in_progress' AND {where} AND {due}"
        " ORDER BY 8 DESC, 1, 2",
        (*params, now, now, *params, now, now),
    ).fetchall()


def expired_claims(
    conn: sqlite3.Connection, now: int, agent: str | None = None
) -> list[tuple[int, str, str, int]]:
    """Runs whose lease ran out, whatever their delivery's state: (message_id, agent, run_id,
    attempts)."""
    sql = (
        "SELECT message_id, agent, run_id, attempts FROM dispatch_claims"
        " WHERE state = 'running' AND lease_until <= ?"
    )
    if agent is None:
        return conn.execute(sql + " ORDER BY message_id, agent", (now,)).fetchall()
    return conn.execute(sql + " AND agent = ? ORDER BY message_id", (now, agent)).fetchall()


def running_key(
    conn: sqlite3.Connection, agent: str, dedupe_key: str, message_id: int, now: int
) -> bool:
    """Another message with this dedupe key whose run for this agent holds a live lease."""
    return (
        conn.execute(
            "SELECT 1 FROM dispatch_receipts r JOIN dispatch_claims cl ON cl.run_id = r.run_id"
            " AND cl.message_id = r.message_id AND cl.agent = r.agent"
            " WHERE r.agent = ? AND r.dedupe_key = ? AND r.message_id != ? AND r.status = 'running'"
            " AND cl.state = 'running' AND cl.lease_until > ? LIMIT 1",
            (agent, dedupe_key, message_id, now),
        ).fetchone()
        is not None
    )


def dead_letter_reason(conn: sqlite3.Connection, message_id: int, agent: str) -> str | None:
    row = conn.execute(
        "SELECT reason FROM dead_letters WHERE message_id = ? AND recipient = ?",
        (message_id, agent),
    ).fetchone()
    return row[0] if row else None


def claim_of(
    conn: sqlite3.Connection, message_id: int, agent: str
) -> tuple[str, str, int, int | None, int | None] | None:
    """(state, run_id, attempts, lease_until, next_retry_at) of a delivery's claim."""
    return conn.execute(
        "SELECT state, run_id, attempts, lease_until, next_retry_at FROM dispatch_claims"
        " WHERE message_id = ? AND agent = ?",
        (message_id, agent),
    ).fetchone()


def delivery_of(
    conn: sqlite3.Connection, message_id: int, agent: str
) -> tuple[str, int, str | None, int] | None:
    """(state, tracked, ack_status, channel_id) of one delivery."""
    return conn.execute(
        "SELECT state, tracked, ack_status, channel_id FROM deliveries WHERE message_id = ?"
        " AND recipient = ?",
        (message_id, agent),
    ).fetchone()


def insert_claim(
    conn: sqlite3.Connection,
    message_id: int,
    agent: str,
    run_id: str,
    attempts: int,
    lease_until: int,
) -> bool:
    """A first claim; False when another dispatcher made one first."""
    return (
        conn.execute(
            "INSERT OR IGNORE INTO dispatch_claims (message_id, agent, state, run_id, attempts,"
            " lease_until) VALUES (?, ?, 'running', ?, ?, ?)",
            (message_id, agent, run_id, attempts, lease_until),
        ).rowcount
        == 1
    )


def take_claim(
    conn: sqlite3.Connection,
    message_id: int,
    agent: str,
    previous_run_id: str,
    run_id: str,
    attempts: int,
    lease_until: int,
    now: int,
) -> bool:
    """Claim again a delivery whose claim is due, compared and set on the previous run id:
    False when it is not due or another dispatcher took it."""
    return (
        conn.execute(
            "UPDATE dispatch_claims AS cl SET state = 'running', run_id = :run, attempts = :n,"
            " lease_until = :lease, next_retry_at = NULL"
            " WHERE cl.message_id = :mid AND cl.agent = :agent AND cl.run_id = :prev AND " + _DUE,
            {
                "run": run_id,
                "n": attempts,
                "lease": lease_until,
                "mid": message_id,
                "agent": agent,
                "prev": previous_run_id,
                "now": now,
            },
        ).rowcount
        == 1
    )


def settle_claim(
    conn: sqlite3.Connection,
    message_id: int,
    agent: str,
    run_id: str,
    state: str,
    next_retry_at: int | None,
    attempts: int | None = None,
) -> bool:
    """End a run's hold: done, dead, or retry at a time (`attempts` given: the count the run
    leaves behind, when it did not count). False if the claim is no longer this run's (its
    lease ran out and another dispatcher took it over)."""
    return (
        conn.execute(
            "UPDATE dispatch_claims SET state = ?, lease_until = NULL, next_retry_at = ?,"
            " attempts = coalesce(?, attempts) WHERE message_id = ? AND agent = ? AND run_id = ?",
            (state, next_retry_at, attempts, message_id, agent, run_id),
        ).rowcount
        == 1
    )


def mark_done(conn: sqlite3.Connection, message_id: int, agent: str, run_id: str) -> None:
    """A delivery settled without a command (a duplicate): its round is over."""
    conn.execute(
        "INSERT INTO dispatch_claims (message_id, agent, state, run_id, attempts)"
        " VALUES (?, ?, 'done', ?, 0) ON CONFLICT (message_id, agent) DO UPDATE SET"
        " state = 'done', run_id = excluded.run_id, attempts = 0, lease_until = NULL,"
        " next_retry_at = NULL",
        (message_id, agent, run_id),
    )


# ---------------------------------------------------------------- receipts

_RECEIPT_COLS = (
    "run_id, message_id, agent, status, reason, exit_code, started_at,"
    " finished_at, attempt, next_retry_at"
)


def insert_receipt(
    conn: sqlite3.Connection,
    run_id: str,
    message_id: int,
    agent: str,
    status: str,
    attempt: int,
    started_at: int,
    dedupe_key: str | None,
    *,
    reason: str | None = None,
    finished_at: int | None = None,
) -> None:
    conn.execute(
        "INSERT INTO dispatch_receipts (run_id, message_id, agent, status, reason, started_at,"
        " finished_at, attempt, dedupe_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (run_id, message_id, agent, status, reason, started_at, finished_at, attempt, dedupe_key),
    )


def finish_receipt(
    conn: sqlite3.Connection,
    run_id: str,
    status: str,
    reason: str | None,
    exit_code: int | None,
    finished_at: int,
    next_retry_at: int | None,
) -> bool:
    """Record a run's outcome; False if it was already recorded (e.g. as lease_expired)."""
    return (
        conn.execute(
            "UPDATE dispatch_receipts SET status = ?, reason = ?, exit_code = ?, finished_at = ?,"
            " next_retry_at = ? WHERE run_id = ? AND status = 'running'",
            (status, reason, exit_code, finished_at, next_retry_at, run_id),
        ).rowcount
        == 1
    )


def handled_key(
    conn: sqlite3.Connection, agent: str, dedupe_key: str, since: int, message_id: int
) -> int | None:
    """Another message with this dedupe key that the agent's command accepted or ignored
    (not a duplicate: those ran nothing) since `since`: its id, or None."""
    row = conn.execute(
        "SELECT message_id FROM dispatch_receipts WHERE agent = ? AND dedupe_key = ?"
        " AND message_id != ? AND status IN ('accepted', 'ignored') AND exit_code IS NOT NULL"
        " AND started_at >= ? ORDER BY seq LIMIT 1",
        (agent, dedupe_key, message_id, since),
    ).fetchone()
    return row[0] if row else None


def receipt(conn: sqlite3.Connection, run_id: str) -> tuple[Any, ...] | None:
    return conn.execute(
        f"SELECT {_RECEIPT_COLS} FROM dispatch_receipts WHERE run_id = ?", (run_id,)
    ).fetchone()


def receipts(
    conn: sqlite3.Connection,
    *,
    agent: str | None,
    message_id: int | None,
    status: str | None,
    limit: int,
    offset: int,
) -> tuple[list[tuple[Any, ...]], int]:
    """Receipts, newest first."""
    where, params = [], []
    for col, val in (("agent", agent), ("message_id", message_id), ("status", status)):
        if val is not None:
            where.append(f"{col} = ?")
            params.append(val)
    body = " FROM dispatch_receipts" + (" WHERE " + " AND ".join(where) if where else "")
    rows = conn.execute(
        f"SELECT {_RECEIPT_COLS} {body} ORDER BY seq DESC LIMIT ? OFFSET ?",
        (*params, limit, offset),
    ).fetchall()
    total = conn.execute(f"SELECT count(*) {body}", params).fetchone()[0]
    return rows, total
