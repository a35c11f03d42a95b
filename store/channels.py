"""SQL of channels, their participants and subscriptions."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from acomm_cli.model import (
    AckClock,
    AckNotify,
    Channel,
    ChannelConfig,
    ChannelState,
    ChannelType,
    DeliveryMode,
    Participant,
    Role,
)
from acomm_cli.store.sending import inserted

TYPE_CHECKING = False  # typing's, without importing typing (a send must not load it)
if TYPE_CHECKING:
    from typing import Any


_CHANNEL_COLS = (
    "id, name, type, owner, state, created_at, delivery, max_message_size, ack_timeout_ms,"
    " max_retries, retry_backoff_ms, retry_jitter, echo, priority_ordering, max_pending,"
    " dedupe_window_ms, retention_count, retention_age_ms, lease_ms, message_ttl_ms,"
    " retry_failed, ack_clock, ack_notify"
)


# Plain dict lookups: calling an Enum by value costs about a microsecond each.
_MODES = {m.value: m for m in DeliveryMode}


_CH_TYPES = {t.value: t for t in ChannelType}


_CLOCKS = {c.value: c for c in AckClock}


_NOTIFY = {n.value: n for n in AckNotify}


_CH_STATES = {s.value: s for s in ChannelState}


_ROLES = {r.value: r for r in Role}


def _channel(row: Sequence[Any], participants: tuple[Participant, ...]) -> Channel:
    cfg = ChannelConfig(
        delivery=_MODES[row[6]],
        max_message_size=row[7],
        ack_timeout_ms=row[8],
        max_retries=row[9],
        retry_backoff_ms=row[10],
        retry_jitter=row[11],
        echo=bool(row[12]),
        priority_ordering=bool(row[13]),
        max_pending=row[14],
        dedupe_window_ms=row[15],
        retention_count=row[16],
        retention_age_ms=row[17],
        lease_ms=row[18],
        message_ttl_ms=row[19],
        retry_failed=bool(row[20]),
        ack_clock=_CLOCKS[row[21]],
        ack_notify=_NOTIFY[row[22]],
    )
    return Channel(
        id=row[0],
        name=row[1],
        type=_CH_TYPES[row[2]],
        owner=row[3],
        state=_CH_STATES[row[4]],
        config=cfg,
        created_at=row[5],
        participants=participants,
    )


def participants(conn: sqlite3.Connection, channel_id: int) -> tuple[Participant, ...]:
    rows = conn.execute(
        "SELECT agent, role, admin FROM participants WHERE channel_id = ?"
        " ORDER BY joined_at, agent",
        (channel_id,),
    ).fetchall()
    return tuple(Participant(a, _ROLES[r], bool(adm)) for a, r, adm in rows)


def channel_by_name(conn: sqlite3.Connection, name: str) -> Channel | None:
    row = conn.execute(f"SELECT {_CHANNEL_COLS} FROM channels WHERE name = ?", (name,)).fetchone()
    return _channel(row, participants(conn, row[0])) if row else None


def channel_by_id(conn: sqlite3.Connection, channel_id: int) -> Channel | None:
    row = conn.execute(
        f"SELECT {_CHANNEL_COLS} FROM channels WHERE id = ?", (channel_id,)
    ).fetchone()
    return _channel(row, participants(conn, row[0])) if row else None


def channel_by_pair(conn: sqlite3.Connection, pair: str) -> Channel | None:
    row = conn.execute(
        f"SELECT {_CHANNEL_COLS} FROM channels WHERE direct_pair = ?", (pair,)
    ).fetchone()
    return _channel(row, participants(conn, row[0])) if row else None


_NOT_DELETED = r"name NOT LIKE '\_deleted:%' ESCAPE '\'"


def list_channels(conn: sqlite3.Connection) -> list[Channel]:
    """Every channel but the deleted ones (their history stays, under `_deleted:ID:NAME`)."""
    rows = conn.execute(
        f"SELECT {_CHANNEL_COLS} FROM channels WHERE {_NOT_DELETED} ORDER BY id"
    ).fetchall()
    members: dict[int, list[Participant]] = {}
    for cid, agent, role, admin in conn.execute(
        "SELECT channel_id, agent, role, admin FROM participants ORDER BY joined_at, agent"
    ):
        members.setdefault(cid, []).append(Participant(agent, _ROLES[role], bool(admin)))
    return [_channel(r, tuple(members.get(r[0], ()))) for r in rows]


def channel_names(conn: sqlite3.Connection) -> list[str]:
    """Names a user may type (shell completion): every channel but the implicit direct ones."""
    return [
        r[0]
        for r in conn.execute(
            f"SELECT name FROM channels WHERE direct_pair IS NULL AND {_NOT_DELETED} ORDER BY name"
        )
    ]


def agent_ids(conn: sqlite3.Connection) -> list[str]:
    """Every agent that takes part in a channel (shell completion); the index serves it."""
    return [r[0] for r in conn.execute("SELECT DISTINCT agent FROM participants ORDER BY agent")]


def insert_channel(
    conn: sqlite3.Connection,
    name: str,
    type_: str,
    owner: str,
    cfg: ChannelConfig,
    now: int,
    direct_pair: str | None = None,
) -> int:
    cur = conn.execute(
        "INSERT INTO channels (name, type, owner, state, created_at, delivery, max_message_size,"
        " ack_timeout_ms, max_retries, retry_backoff_ms, retry_jitter, echo, priority_ordering,"
        " max_pending, dedupe_window_ms, retention_count, retention_age_ms, direct_pair,"
        " lease_ms, message_ttl_ms, retry_failed, ack_clock, ack_notify)"
        " VALUES (?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            name,
            type_,
            owner,
            now,
            cfg.delivery.value,
            cfg.max_message_size,
            cfg.ack_timeout_ms,
            cfg.max_retries,
            cfg.retry_backoff_ms,
            cfg.retry_jitter,
            int(cfg.echo),
            int(cfg.priority_ordering),
            cfg.max_pending,
            cfg.dedupe_window_ms,
            cfg.retention_count,
            cfg.retention_age_ms,
            direct_pair,
            cfg.lease_ms,
            cfg.message_ttl_ms,
            int(cfg.retry_failed),
            cfg.ack_clock.value,
            cfg.ack_notify.value,
        ),
    )
    return inserted(cur)


def set_channel_state(conn: sqlite3.Connection, channel_id: int, state: str) -> None:
    conn.execute("UPDATE channels SET state = ? WHERE id = ?", (state, channel_id))


def insert_participant(
    conn: sqlite3.Connection, channel_id: int, agent: str, role: str, now: int
) -> bool:
    cur = conn.execute(
        "INSERT OR IGNORE INTO participants (channel_id, agent, role, joined_at)"
        " VALUES (?, ?, ?, ?)",
        (channel_id, agent, role, now),
    )
    return cur.rowcount == 1


def set_admin(conn: sqlite3.Connection, channel_id: int, agent: str, admin: bool) -> bool:
    """Grant or revoke a participant's admin flag; False when it already was so."""
    cur = conn.execute(
        "UPDATE participants SET admin = ? WHERE channel_id = ? AND agent = ? AND admin != ?",
        (int(admin), channel_id, agent, int(admin)),
    )
    return cur.rowcount == 1


# The settings `channel update` may change: ChannelConfig fields = channels columns.
UPDATABLE = (
    "max_message_size",
    "ack_timeout_ms",
    "max_retries",
    "retry_backoff_ms",
    "retry_jitter",
    "echo",
    "priority_ordering",
    "max_pending",
    "dedupe_window_ms",
    "retention_count",
    "retention_age_ms",
    "lease_ms",
    "message_ttl_ms",
    "retry_failed",
    "ack_clock",
    "ack_notify",
)


def update_channel_config(
    conn: sqlite3.Connection, channel_id: int, values: dict[str, Any]
) -> None:
    """Write new settings (keys from UPDATABLE only: they become column names)."""
    cols = [k for k in values if k in UPDATABLE]
    assert len(cols) == len(values), f"not updatable: {set(values) - set(cols)}"
    if cols:
        conn.execute(
            f"UPDATE channels SET {', '.join(f'{c} = ?' for c in cols)} WHERE id = ?",
            (*(int(v) if isinstance(v, bool) else v for v in values.values()), channel_id),
        )


def retire_channel(conn: sqlite3.Connection, channel_id: int, new_name: str) -> None:
    """`channel delete`: closed for good under a reserved name, its own free again."""
    conn.execute(
        "UPDATE channels SET name = ?, state = 'closed', direct_pair = NULL WHERE id = ?",
        (new_name, channel_id),
    )


def delete_participant(conn: sqlite3.Connection, channel_id: int, agent: str) -> bool:
    cur = conn.execute(
        "DELETE FROM participants WHERE channel_id = ? AND agent = ?", (channel_id, agent)
    )
    conn.execute(
        "DELETE FROM subscriptions WHERE channel_id = ? AND agent = ?", (channel_id, agent)
    )
    return cur.rowcount == 1


def insert_subscription(
    conn: sqlite3.Connection,
    channel_id: int,
    agent: str,
    pattern: str,
    now: int,
    group: str | None = None,
) -> bool:
    cur = conn.execute(
        "INSERT OR IGNORE INTO subscriptions (channel_id, agent, pattern, created_at, grp)"
        " VALUES (?, ?, ?, ?, ?)",
        (channel_id, agent, pattern, now, group),
    )
    return cur.rowcount == 1


def delete_subscription(
    conn: sqlite3.Connection, channel_id: int, agent: str, pattern: str
) -> bool:
    cur = conn.execute(
        "DELETE FROM subscriptions WHERE channel_id = ? AND agent = ? AND pattern = ?",
        (channel_id, agent, pattern),
    )
    return cur.rowcount == 1


def subscriptions(conn: sqlite3.Connection, channel_id: int) -> list[tuple[str, str]]:
    return conn.execute(
        "SELECT agent, pattern FROM subscriptions WHERE channel_id = ? ORDER BY agent, pattern",
        (channel_id,),
    ).fetchall()


def routes(conn: sqlite3.Connection, channel_id: int) -> list[tuple[str, str]]:
    """What a send routes topics by: (recipient, pattern), where a worker pool's
    subscriptions route to its placeholder '*' || group (one copy for the pool), and so do
    the patterns a pool without members keeps (pool_bindings, m028)."""
    return conn.execute(
        "SELECT CASE WHEN grp IS NULL THEN agent ELSE '*' || grp END, pattern"
        " FROM subscriptions WHERE channel_id = ?"
        " UNION ALL SELECT '*' || grp, pattern FROM pool_bindings WHERE channel_id = ?",
        (channel_id, channel_id),
    ).fetchall()


def subscription_groups(conn: sqlite3.Connection, channel_id: int, agent: str) -> set[str | None]:
    """The pools an agent's subscriptions on a channel serve (None: its own copy)."""
    return {
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT grp FROM subscriptions WHERE channel_id = ? AND agent = ?",
            (channel_id, agent),
        )
    }


def subscriptions_grouped(
    conn: sqlite3.Connection, channel_id: int
) -> list[tuple[str, str, str | None]]:
    """(agent, pattern, group) of a channel's subscriptions, and of the pools without
    members the pattern each keeps, under the pool's placeholder '*' || group."""
    return conn.execute(
        "SELECT agent, pattern, grp FROM subscriptions WHERE channel_id = ?"
        " UNION ALL SELECT '*' || grp, pattern, grp FROM pool_bindings WHERE channel_id = ?"
        " ORDER BY 1, 2",
        (channel_id, channel_id),
    ).fetchall()


def has_groups(conn: sqlite3.Connection, channel_id: int) -> bool:
    """Does the channel have a worker pool (with members, or kept without)?"""
    return (
        conn.execute(
            "SELECT 1 FROM subscriptions WHERE channel_id = ? AND grp IS NOT NULL"
            " UNION ALL SELECT 1 FROM pool_bindings WHERE channel_id = ? LIMIT 1",
            (channel_id, channel_id),
        ).fetchone()
        is not None
    )


def pool_patterns(conn: sqlite3.Connection, channel_id: int, agent: str) -> list[tuple[str, str]]:
    """(group, pattern) of an agent's subscriptions for worker pools on a channel."""
    return conn.execute(
        "SELECT grp, pattern FROM subscriptions WHERE channel_id = ? AND agent = ?"
        " AND grp IS NOT NULL",
        (channel_id, agent),
    ).fetchall()


def pool_members(conn: sqlite3.Connection, channel_id: int, group: str) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT agent FROM subscriptions WHERE channel_id = ? AND grp = ?"
            " ORDER BY agent",
            (channel_id, group),
        )
    ]


def keep_pool(
    conn: sqlite3.Connection, channel_id: int, group: str, patterns: list[str], now: int
) -> None:
    """The patterns a pool whose last member left keeps routing by."""
    conn.executemany(
        "INSERT OR IGNORE INTO pool_bindings (channel_id, grp, pattern, created_at)"
        " VALUES (?, ?, ?, ?)",
        [(channel_id, group, p, now) for p in patterns],
    )


def drop_pool_bindings(conn: sqlite3.Connection, channel_id: int, group: str) -> int:
    return conn.execute(
        "DELETE FROM pool_bindings WHERE channel_id = ? AND grp = ?", (channel_id, group)
    ).rowcount


CHANNELS_TOKEN = "(SELECT token FROM channels_version WHERE id = 1)"


def channels_token(conn: sqlite3.Connection) -> int:
    """A counter every change to channels, participants or subscriptions adds one to
    (m011's triggers): equal committed tokens mean the same channels."""
    return conn.execute(f"SELECT {CHANNELS_TOKEN}").fetchone()[0]
