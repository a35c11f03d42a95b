"""Every SQL statement the pipeline runs, as named functions with `?` parameters."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from os import stat as _stat

from acomm_cli.model import (
    Channel,
    ChannelConfig,
    ChannelState,
    ChannelType,
    Delivery,
    DeliveryMode,
    DeliveryState,
    Message,
    MessageFilter,
    MessageType,
    Participant,
    Priority,
    Role,
)

TYPE_CHECKING = False  # typing's, without importing typing (issue 17: DECISIONS.md)
if TYPE_CHECKING:
    from typing import Any

# ---------------------------------------------------------------- meta


def meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    one = conn.execute(
        "SELECT (SELECT count(*) FROM channels), (SELECT count(*) FROM messages),"
        " (SELECT count(*) FROM deliveries WHERE state = 'unread'),"
        " (SELECT count(*) FROM dead_letters)"
    ).fetchone()
    return dict(zip(("channels", "messages", "unread", "dead_letters"), one, strict=True))


# ---------------------------------------------------------------- channels

_CHANNEL_COLS = (
    "id, name, type, owner, state, created_at, delivery, max_message_size, ack_timeout_ms,"
    " max_retries, retry_backoff_ms, retry_jitter, echo, priority_ordering, max_pending,"
    " dedupe_window_ms, retention_count, retention_age_ms, lease_ms, message_ttl_ms,"
    " retry_failed"
)


# Plain dict lookups: calling an Enum by value costs about a microsecond each.
_MODES = {m.value: m for m in DeliveryMode}
_CH_TYPES = {t.value: t for t in ChannelType}
_CH_STATES = {s.value: s for s in ChannelState}
_ROLES = {r.value: r for r in Role}


def _channel(row: Sequence[Any], participants: tuple[Participant, ...]) -> Channel:
    cfg = ChannelConfig(
        delivery=_MODES[row[6]], max_message_size=row[7], ack_timeout_ms=row[8],
        max_retries=row[9], retry_backoff_ms=row[10], retry_jitter=row[11], echo=bool(row[12]),
        priority_ordering=bool(row[13]), max_pending=row[14], dedupe_window_ms=row[15],
        retention_count=row[16], retention_age_ms=row[17], lease_ms=row[18],
        message_ttl_ms=row[19], retry_failed=bool(row[20]),
    )
    return Channel(id=row[0], name=row[1], type=_CH_TYPES[row[2]], owner=row[3],
                   state=_CH_STATES[row[4]], config=cfg, created_at=row[5],
                   participants=participants)


def participants(conn: sqlite3.Connection, channel_id: int) -> tuple[Participant, ...]:
    rows = conn.execute(
        "SELECT agent, role, admin FROM participants WHERE channel_id = ?"
        " ORDER BY joined_at, agent", (channel_id,),
    ).fetchall()
    return tuple(Participant(a, _ROLES[r], bool(adm)) for a, r, adm in rows)


def channel_by_name(conn: sqlite3.Connection, name: str) -> Channel | None:
    row = conn.execute(f"SELECT {_CHANNEL_COLS} FROM channels WHERE name = ?", (name,)).fetchone()
    return _channel(row, participants(conn, row[0])) if row else None


def channel_by_id(conn: sqlite3.Connection, channel_id: int) -> Channel | None:
    row = conn.execute(f"SELECT {_CHANNEL_COLS} FROM channels WHERE id = ?",
                       (channel_id,)).fetchone()
    return _channel(row, participants(conn, row[0])) if row else None


def channel_by_pair(conn: sqlite3.Connection, pair: str) -> Channel | None:
    row = conn.execute(f"SELECT {_CHANNEL_COLS} FROM channels WHERE direct_pair = ?",
                       (pair,)).fetchone()
    return _channel(row, participants(conn, row[0])) if row else None


_NOT_DELETED = r"name NOT LIKE '\_deleted:%' ESCAPE '\'"


def list_channels(conn: sqlite3.Connection) -> list[Channel]:
    """Every channel but the deleted ones (their history stays, under `_deleted:ID:NAME`)."""
    rows = conn.execute(f"SELECT {_CHANNEL_COLS} FROM channels WHERE {_NOT_DELETED}"
                        " ORDER BY id").fetchall()
    members: dict[int, list[Participant]] = {}
    for cid, agent, role, admin in conn.execute(
        "SELECT channel_id, agent, role, admin FROM participants ORDER BY joined_at, agent"
    ):
        members.setdefault(cid, []).append(Participant(agent, _ROLES[role], bool(admin)))
    return [_channel(r, tuple(members.get(r[0], ()))) for r in rows]


def channel_names(conn: sqlite3.Connection) -> list[str]:
    """Names a user may type (shell completion): every channel but the implicit direct ones."""
    return [r[0] for r in conn.execute(
        f"SELECT name FROM channels WHERE direct_pair IS NULL AND {_NOT_DELETED}"
        " ORDER BY name")]


def agent_ids(conn: sqlite3.Connection) -> list[str]:
    """Every agent that takes part in a channel (shell completion); the index serves it."""
    return [r[0] for r in conn.execute("SELECT DISTINCT agent FROM participants ORDER BY agent")]


def insert_channel(conn: sqlite3.Connection, name: str, type_: str, owner: str,
                   cfg: ChannelConfig, now: int, direct_pair: str | None = None) -> int:
    cur = conn.execute(
        "INSERT INTO channels (name, type, owner, state, created_at, delivery, max_message_size,"
        " ack_timeout_ms, max_retries, retry_backoff_ms, retry_jitter, echo, priority_ordering,"
        " max_pending, dedupe_window_ms, retention_count, retention_age_ms, direct_pair,"
        " lease_ms, message_ttl_ms, retry_failed)"
        " VALUES (?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (name, type_, owner, now, cfg.delivery.value, cfg.max_message_size, cfg.ack_timeout_ms,
         cfg.max_retries, cfg.retry_backoff_ms, cfg.retry_jitter, int(cfg.echo),
         int(cfg.priority_ordering), cfg.max_pending, cfg.dedupe_window_ms,
         cfg.retention_count, cfg.retention_age_ms, direct_pair, cfg.lease_ms,
         cfg.message_ttl_ms, int(cfg.retry_failed)),
    )
    return _inserted(cur)


def set_channel_state(conn: sqlite3.Connection, channel_id: int, state: str) -> None:
    conn.execute("UPDATE channels SET state = ? WHERE id = ?", (state, channel_id))


def insert_participant(conn: sqlite3.Connection, channel_id: int, agent: str, role: str,
                       now: int) -> bool:
    cur = conn.execute("INSERT OR IGNORE INTO participants (channel_id, agent, role, joined_at)"
                       " VALUES (?, ?, ?, ?)", (channel_id, agent, role, now))
    return cur.rowcount == 1


def set_admin(conn: sqlite3.Connection, channel_id: int, agent: str, admin: bool) -> bool:
    """Grant or revoke a participant's admin flag; False when it already was so."""
    cur = conn.execute("UPDATE participants SET admin = ? WHERE channel_id = ? AND agent = ?"
                       " AND admin != ?", (int(admin), channel_id, agent, int(admin)))
    return cur.rowcount == 1


# The settings `channel update` may change: ChannelConfig fields = channels columns.
UPDATABLE = ("max_message_size", "ack_timeout_ms", "max_retries", "retry_backoff_ms",
             "retry_jitter", "echo", "priority_ordering", "max_pending", "dedupe_window_ms",
             "retention_count", "retention_age_ms", "lease_ms", "message_ttl_ms",
             "retry_failed")


def update_channel_config(conn: sqlite3.Connection, channel_id: int,
                          values: dict[str, Any]) -> None:
    """Write new settings (keys from UPDATABLE only: they become column names)."""
    cols = [k for k in values if k in UPDATABLE]
    assert len(cols) == len(values), f"not updatable: {set(values) - set(cols)}"
    if cols:
        conn.execute(f"UPDATE channels SET {', '.join(f'{c} = ?' for c in cols)} WHERE id = ?",
                     (*(int(v) if isinstance(v, bool) else v for v in values.values()),
                      channel_id))


def retire_channel(conn: sqlite3.Connection, channel_id: int, new_name: str) -> None:
    """`channel delete`: closed for good under a reserved name, its own free again."""
    conn.execute("UPDATE channels SET name = ?, state = 'closed', direct_pair = NULL"
                 " WHERE id = ?", (new_name, channel_id))


def in_flight(conn: sqlite3.Connection, channel_id: int) -> list[tuple[int, str, int]]:
    """(message_id, recipient, retry_count) of a channel's deliveries not yet finished:
    queued, waiting (scheduled or backing off), unread, or read and still owed an ack (as
    `pending_deliveries_of`, for every recipient)."""
    return conn.execute(
        "SELECT message_id, recipient, retry_count FROM deliveries WHERE channel_id = ?"
        " AND (state IN ('unread', 'waiting', 'queued') OR (tracked = 1 AND state = 'read'))"
        " ORDER BY message_id, recipient",
        (channel_id,),
    ).fetchall()


def delete_participant(conn: sqlite3.Connection, channel_id: int, agent: str) -> bool:
    cur = conn.execute("DELETE FROM participants WHERE channel_id = ? AND agent = ?",
                       (channel_id, agent))
    conn.execute("DELETE FROM subscriptions WHERE channel_id = ? AND agent = ?",
                 (channel_id, agent))
    return cur.rowcount == 1


# ---------------------------------------------------------------- subscriptions


def insert_subscription(conn: sqlite3.Connection, channel_id: int, agent: str, pattern: str,
                        now: int) -> bool:
    cur = conn.execute("INSERT OR IGNORE INTO subscriptions VALUES (?, ?, ?, ?)",
                       (channel_id, agent, pattern, now))
    return cur.rowcount == 1


def delete_subscription(conn: sqlite3.Connection, channel_id: int, agent: str,
                        pattern: str) -> bool:
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


# ---------------------------------------------------------------- messages and deliveries

MESSAGE_INSERT = (
    "INSERT INTO messages (id, channel_id, sender, type, content, topic, priority,"
    " correlation_id, dedupe_key, metadata, created_at, deliver_at, expires_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
DELIVERY_INSERT = (
    "INSERT INTO deliveries (message_id, recipient, channel_id, state, rank, tracked,"
    " delivered_at, next_timer_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def _inserted(cur: sqlite3.Cursor) -> int:
    """The rowid the INSERT just run on `cur` assigned (sqlite3 types it `int | None`: None
    only before any INSERT)."""
    rowid = cur.lastrowid
    assert rowid is not None
    return rowid


def insert_message(conn: sqlite3.Connection, row: tuple[Any, ...]) -> int:
    """Insert one message row (id None = assign); returns its id."""
    return _inserted(conn.execute(MESSAGE_INSERT, row))


_NEW_MESSAGE_INSERT = (
    "INSERT INTO messages (channel_id, sender, type, content, topic, priority,"
    " correlation_id, dedupe_key, metadata, created_at, deliver_at, expires_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


_PLAIN_MESSAGE_INSERT = (
    "INSERT INTO messages (channel_id, sender, type, content, priority, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)


def insert_new_message(conn: sqlite3.Connection, row: Sequence[Any]) -> int:
    """insert_message for a row without its id (SQLite assigns it): a send's row as planned,
    with no tuple built around it. A plain message (no topic, correlation, dedupe key,
    metadata, schedule or expiry) binds only its six set values: about 3 us less per send
    than binding six NULLs too (issue 17)."""
    if row[4] is None and row[6] is None and row[7] is None and row[8] is None \
            and row[10] is None and row[11] is None:
        return _inserted(conn.execute(_PLAIN_MESSAGE_INSERT,
                                      (row[0], row[1], row[2], row[3], row[5], row[9])))
    return _inserted(conn.execute(_NEW_MESSAGE_INSERT, row))


def insert_messages(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    conn.executemany(MESSAGE_INSERT, rows)


def insert_deliveries(conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    if len(rows) == 1:  # a direct send's one row: execute() is cheaper than executemany()
        conn.execute(DELIVERY_INSERT, rows[0])
    else:
        conn.executemany(DELIVERY_INSERT, rows)


def last_message_id(conn: sqlite3.Connection) -> int:
    """The highest id ever assigned (AUTOINCREMENT never reuses one, even after deletes)."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'messages'").fetchone()
    return row[0] if row else 0


def find_dedupe(conn: sqlite3.Connection, channel_id: int, key: str,
                since: int) -> tuple[int, int, str | None] | None:
    return conn.execute(
        "SELECT id, created_at, correlation_id FROM messages"
        " WHERE channel_id = ? AND dedupe_key = ? AND created_at >= ? ORDER BY id LIMIT 1",
        (channel_id, key, since),
    ).fetchone()


def has_correlated(conn: sqlite3.Connection, correlation_id: str, type_: str) -> int | None:
    """The channel of the first message of `type_` carrying `correlation_id`, if any."""
    row = conn.execute(
        "SELECT channel_id FROM messages WHERE correlation_id = ? AND type = ? ORDER BY id LIMIT 1",
        (correlation_id, type_),
    ).fetchone()
    return row[0] if row else None


def delivery_recipients(conn: sqlite3.Connection, message_id: int) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT recipient FROM deliveries WHERE message_id = ? ORDER BY recipient", (message_id,))]


def pending_deliveries_of(conn: sqlite3.Connection, channel_id: int,
                          agent: str) -> list[tuple[int, int]]:
    """(message_id, retry_count) of an agent's unfinished deliveries on a channel: not yet
    read, or read but still waiting for its acknowledgement."""
    return conn.execute(
        f"SELECT message_id, retry_count FROM deliveries WHERE channel_id = ? AND recipient = ?"
        f" AND {ACTIVE}",
        (channel_id, agent),
    ).fetchall()


def data_version(conn: sqlite3.Connection) -> int:
    """Changes whenever another connection commits: a cheap way to notice new messages."""
    return conn.execute("PRAGMA data_version").fetchone()[0]


def next_timer_of(conn: sqlite3.Connection, agent: str) -> int | None:
    return conn.execute(
        "SELECT min(next_timer_at) FROM deliveries WHERE recipient = ? AND state = 'waiting'",
        (agent,),
    ).fetchone()[0]


# ---------------------------------------------------------------- backpressure

# Deliveries not yet done with, written exactly as the WHERE clause of the partial index
# `deliveries_active` (m015), so that `INDEXED BY deliveries_active` can use it. A chain of `=`,
# not `state IN (...)`: SQLite evaluates an IN list in an index's WHERE through a temporary
# b-tree built for every row an UPDATE changes (DECISIONS.md "Issue 17, receive's indexes").
ACTIVE = ("(state = 'queued' OR state = 'waiting' OR state = 'unread'"
          " OR (tracked = 1 AND state = 'read'))")
# The same, on the alias `d`: what lets a query of an agent's deliveries in several states
# use deliveries_agent_active (`state IN (...)` alone does not imply the index's WHERE).
ACTIVE_D = ACTIVE.replace("state", "d.state").replace("tracked", "d.tracked")
_PENDING = "(state = 'unread' OR (tracked = 1 AND state IN ('read', 'waiting')))"


def active_messages(conn: sqlite3.Connection, at_least: int) -> tuple[int, int]:
    """(messages with a delivery not yet terminal, the channels token): the count is exact
    only when the id range of active messages is wide enough to matter (ids are monotonic,
    so this is usually O(log n)). The token (channels_token) comes in the same statement: a
    send validates its channel cache with it at no extra statement."""
    low, last, token = conn.execute(
        f"SELECT (SELECT min(message_id) FROM deliveries INDEXED BY deliveries_active WHERE"
        f" {ACTIVE}), (SELECT seq FROM sqlite_sequence WHERE name = 'messages'), {_TOKEN}"
    ).fetchone()
    if low is None:
        return 0, token
    if last - low + 1 < at_least:
        return 0, token  # an upper bound below the limit: no need to count
    return conn.execute(
        f"SELECT count(DISTINCT message_id) FROM deliveries INDEXED BY deliveries_active"
        f" WHERE {ACTIVE}"
    ).fetchone()[0], token


_TOKEN = "(SELECT token FROM channels_version WHERE id = 1)"


def channels_token(conn: sqlite3.Connection) -> int:
    """A counter every change to channels, participants or subscriptions adds one to
    (m011's triggers): equal committed tokens mean the same channels."""
    return conn.execute(f"SELECT {_TOKEN}").fetchone()[0]


def channel_backlog(conn: sqlite3.Connection, channel_id: int) -> tuple[int, int]:
    """(pending messages, queued messages) of a channel."""
    return conn.execute(
        f"SELECT count(DISTINCT CASE WHEN {_PENDING} THEN message_id END),"
        " count(DISTINCT CASE WHEN state = 'queued' THEN message_id END)"
        " FROM deliveries WHERE channel_id = ? AND state IN ('queued', 'waiting', 'unread',"
        " 'read')", (channel_id,),
    ).fetchone()


def channels_with_queued(conn: sqlite3.Connection,
                         among: Sequence[int] | None = None) -> list[tuple[int, int, int]]:
    """(channel_id, max_pending, ack_timeout_ms) of channels holding queued deliveries (of
    those `among`, if given)."""
    sql = "SELECT id, max_pending, ack_timeout_ms FROM channels WHERE max_pending > 0"
    if among is not None:
        if not among:
            return []
        sql += f" AND id IN ({','.join('?' * len(among))})"
    limited = conn.execute(sql, tuple(among or ())).fetchall()
    return [row for row in limited if conn.execute(
        "SELECT 1 FROM deliveries WHERE channel_id = ? AND state = 'queued' LIMIT 1",
        (row[0],)).fetchone()]


def release_queued(conn: sqlite3.Connection, channel_id: int, count: int, now: int,
                   ack_timeout_ms: int) -> int:
    """Deliver the `count` oldest queued messages of a channel; returns deliveries released."""
    return conn.execute(
        "UPDATE deliveries SET state = 'unread', delivered_at = ?,"
        " next_timer_at = CASE WHEN tracked AND recipient != '*' THEN ? END"  # queue: at claim
        " WHERE state = 'queued' AND channel_id = ? AND message_id IN (SELECT DISTINCT"
        " message_id FROM deliveries WHERE channel_id = ? AND state = 'queued'"
        " ORDER BY message_id LIMIT ?)",
        (now, now + ack_timeout_ms, channel_id, channel_id, count),
    ).rowcount


def store_bytes(conn: sqlite3.Connection) -> int:
    """Database plus WAL, in bytes (every send asks: two stat() calls, no loop)."""
    path = getattr(conn, "path", None) or conn.execute("PRAGMA database_list").fetchone()[2]
    try:
        total = _stat(path).st_size
    except OSError:
        total = 0
    try:
        return total + _stat(path + "-wal").st_size
    except OSError:
        return total


# ---------------------------------------------------------------- acknowledgements


def delivery_of(conn: sqlite3.Connection, message_id: int,
                recipient: str) -> tuple[str, str | None, int | None] | None:
    """(state, ack_status, delivered_at) of one delivery."""
    return conn.execute(
        "SELECT state, ack_status, delivered_at FROM deliveries WHERE message_id = ?"
        " AND recipient = ?", (message_id, recipient),
    ).fetchone()


def ack_target(conn: sqlite3.Connection, message_id: int, recipient: str,
               ) -> tuple[str, str, str | None, str | None, str | None, int | None] | None:
    """What an ack needs, in one statement: (channel name, sender, correlation id) of the
    message and (state, ack_status, delivered_at) of the recipient's delivery (None when the
    recipient has none); None when the message does not exist."""
    return conn.execute(
        "SELECT c.name, m.sender, m.correlation_id, d.state, d.ack_status, d.delivered_at"
        " FROM messages m JOIN channels c ON c.id = m.channel_id LEFT JOIN deliveries d"
        " ON d.message_id = m.id AND d.recipient = ? WHERE m.id = ?",
        (recipient, message_id),
    ).fetchone()


def ack_unread(conn: sqlite3.Connection, recipient: str, message_ids: Sequence[int],
               status: str, note: str | None, now: int) -> int:
    """`receive --ack`: unread deliveries read and acknowledged in one statement."""
    marks = ",".join("?" * len(message_ids))
    return conn.execute(
        "UPDATE deliveries SET state = 'acked', ack_status = ?, ack_note = coalesce(?, ack_note),"
        " acked_at = ?,"
        " next_timer_at = NULL, read_at = ?, first_read_at = coalesce(first_read_at, ?)"
        " WHERE recipient = ? AND +state = 'unread'"
        f" AND message_id IN ({marks})",
        (status, note, now, now, now, recipient, *message_ids),
    ).rowcount


def set_ack(conn: sqlite3.Connection, message_id: int, recipient: str, status: str,
            note: str | None, now: int, lease_until: int | None = None) -> None:
    """`lease_until`: the end of the lease a received/in_progress ack holds (None: none)."""
    conn.execute(
        "UPDATE deliveries SET state = 'acked', ack_status = ?, ack_note = coalesce(?, ack_note),"
        # an ack of a delivery not read yet (a redelivery acked without a second read) is
        # its read: read_at is the latest read, first_read_at the first (issue 19)
        " acked_at = ?, next_timer_at = ?, read_at = CASE WHEN state = 'unread' THEN ?"
        " ELSE coalesce(read_at, ?) END, first_read_at = coalesce(first_read_at, ?)"
        " WHERE message_id = ? AND recipient = ?",
        (status, note, now, lease_until, now, now, now, message_id, recipient),
    )


def correlated_deliveries(conn: sqlite3.Connection, correlation_id: str, type_: str,
                          recipient: str) -> list[tuple[int, str, str | None]]:
    """(message_id, state, ack_status) of a recipient's deliveries of correlated messages."""
    return conn.execute(
        "SELECT d.message_id, d.state, d.ack_status FROM messages m JOIN deliveries d"
        " ON d.message_id = m.id WHERE m.correlation_id = ? AND m.type = ? AND d.recipient = ?"
        " AND d.delivered_at IS NOT NULL",
        (correlation_id, type_, recipient),
    ).fetchall()


def first_of_type(conn: sqlite3.Connection, correlation_id: str,
                  type_: str) -> tuple[int, int, str] | None:
    """(id, channel_id, sender) of the first message of a type in a thread."""
    return conn.execute(
        "SELECT id, channel_id, sender FROM messages WHERE correlation_id = ? AND type = ?"
        " ORDER BY id LIMIT 1", (correlation_id, type_),
    ).fetchone()


def thread(conn: sqlite3.Connection, correlation_id: str) -> list[Message]:
    rows = conn.execute(
        f"SELECT {_MSG_COLS} FROM messages m JOIN channels c ON c.id = m.channel_id"
        " WHERE m.correlation_id = ? ORDER BY m.id", (correlation_id,),
    ).fetchall()
    msgs = [_message(r) for r in rows]
    attach_deliveries(conn, msgs)
    return msgs


def unread_response(conn: sqlite3.Connection, correlation_id: str,
                    agent: str) -> Message | None:
    row = conn.execute(
        f"SELECT {_MSG_COLS} FROM messages m JOIN channels c ON c.id = m.channel_id"
        " JOIN deliveries d ON d.message_id = m.id WHERE m.correlation_id = ?"
        " AND m.type = 'response' AND d.recipient = ? AND d.state = 'unread'"
        " ORDER BY m.id LIMIT 1", (correlation_id, agent),
    ).fetchone()
    return _message(row) if row else None


# ---------------------------------------------------------------- exactly-once


def exactly_once_seen(conn: sqlite3.Connection, correlation_id: str, sender: str, type_: str,
                      recipients: Sequence[str], now: int) -> set[str]:
    if not recipients:
        return set()
    rows = conn.execute(
        "SELECT recipient FROM exactly_once WHERE correlation_id = ? AND sender = ?"
        f" AND type = ? AND expires_at > ? AND recipient IN ({','.join('?' * len(recipients))})",
        (correlation_id, sender, type_, now, *recipients),
    )
    return {r[0] for r in rows}


def exactly_once_record(conn: sqlite3.Connection, correlation_id: str, sender: str, type_: str,
                        recipients: Sequence[str], expires_at: int) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO exactly_once VALUES (?, ?, ?, ?, ?)",
        [(correlation_id, r, sender, type_, expires_at) for r in recipients],
    )


# ---------------------------------------------------------------- dead letters

_DL_COLS = ("dl.message_id, dl.recipient, c.name, dl.reason, dl.retry_count, dl.last_error,"
            " dl.dead_lettered_at, m.content")
_DL_FROM = (" FROM dead_letters dl JOIN messages m ON m.id = dl.message_id"
            " JOIN channels c ON c.id = dl.channel_id")


def _dl_where(message_id: int | None, recipient: str | None, channel: str | None,
              reason: str | None) -> tuple[str, list[Any]]:
    where, params = [], []
    for col, val in (("dl.message_id", message_id), ("dl.recipient", recipient),
                     ("c.name", channel), ("dl.reason", reason)):
        if val is not None:
            where.append(f"{col} = ?")
            params.append(val)
    return (" WHERE " + " AND ".join(where)) if where else "", params


def dead_letters(conn: sqlite3.Connection, *, message_id: int | None = None,
                 recipient: str | None = None, channel: str | None = None,
                 reason: str | None = None, limit: int = 100,
                 offset: int = 0) -> tuple[list[tuple[Any, ...]], int]:
    where, params = _dl_where(message_id, recipient, channel, reason)
    rows = conn.execute(
        f"SELECT {_DL_COLS} {_DL_FROM}{where} ORDER BY dl.dead_lettered_at, dl.message_id,"
        " dl.recipient LIMIT ? OFFSET ?", (*params, limit, offset),
    ).fetchall()
    total = conn.execute(f"SELECT count(*) {_DL_FROM}{where}", params).fetchone()[0]
    return rows, total


def delivery_attempts(conn: sqlite3.Connection, message_id: int) -> list[tuple[Any, ...]]:
    """A message's ended attempts (m012), oldest first: (recipient, attempt, delivered_at,
    read_at, ack_status)."""
    return conn.execute(
        "SELECT recipient, attempt, delivered_at, read_at, ack_status FROM delivery_attempts"
        " WHERE message_id = ? ORDER BY seq", (message_id,)).fetchall()


def delete_dead_letters(conn: sqlite3.Connection, message_id: int,
                        recipient: str | None) -> int:
    if recipient is None:
        return conn.execute("DELETE FROM dead_letters WHERE message_id = ?",
                            (message_id,)).rowcount
    return conn.execute("DELETE FROM dead_letters WHERE message_id = ? AND recipient = ?",
                        (message_id, recipient)).rowcount


def purge_dead_letters(conn: sqlite3.Connection, before: int) -> int:
    return conn.execute("DELETE FROM dead_letters WHERE dead_lettered_at < ?",
                        (before,)).rowcount


def renew_expiry(conn: sqlite3.Connection, message_id: int, now: int) -> None:
    """A replayed message whose expiry has passed: the lifetime it was sent with, again,
    counted from now (else it would expire again at once)."""
    conn.execute("UPDATE messages SET expires_at = ? + (expires_at - created_at)"
                 " WHERE id = ? AND expires_at IS NOT NULL AND expires_at <= ?",
                 (now, message_id, now))


def dead_letters_matching(conn: sqlite3.Connection, *, channel_id: int | None,
                          recipient: str | None, reason: str | None,
                          since: int | None) -> list[tuple[int, str, str]]:
    """(message_id, recipient, channel name) of the dead letters a redrive takes, oldest
    first: every filter given must hold (`since`: dead-lettered at or after it)."""
    where, params = [], []
    for cond, val in (("dl.channel_id = ?", channel_id), ("dl.recipient = ?", recipient),
                      ("dl.reason = ?", reason), ("dl.dead_lettered_at >= ?", since)):
        if val is not None:
            where.append(cond)
            params.append(val)
    sql = ("SELECT dl.message_id, dl.recipient, c.name FROM dead_letters dl"
           " JOIN channels c ON c.id = dl.channel_id")
    if where:
        sql += " WHERE " + " AND ".join(where)
    return conn.execute(sql + " ORDER BY dl.dead_lettered_at, dl.message_id, dl.recipient",
                        params).fetchall()


def redeliver(conn: sqlite3.Connection, message_id: int, recipient: str, now: int,
              ack_timeout_ms: int) -> None:
    """A replayed dead letter: unread again, with a fresh retry budget."""
    conn.execute(
        "UPDATE deliveries SET state = 'unread', retry_count = 0, delivered_at = ?,"
        " read_at = NULL, ack_status = NULL, acked_at = NULL,"
        " next_timer_at = CASE WHEN tracked THEN ? END, last_error = NULL"
        " WHERE message_id = ? AND recipient = ?",
        (now, now + ack_timeout_ms, message_id, recipient),
    )


def mark_read(conn: sqlite3.Connection, agent: str, message_ids: Sequence[int], now: int) -> int:
    if not message_ids:
        return 0
    marks = ",".join("?" * len(message_ids))
    # `+state`: look the rows up by their primary key (message, recipient) rather than walk
    # the agent's unread entries in the inbox index, which this same UPDATE rewrites (about
    # 15% of marking 100 read)
    cur = conn.execute(
        f"UPDATE deliveries SET state = 'read', read_at = ?, first_read_at ="
        f" coalesce(first_read_at, ?) WHERE recipient = ? AND +state = 'unread' AND"
        f" message_id IN ({marks})",
        (now, now, agent, *message_ids),
    )
    return cur.rowcount


# ---------------------------------------------------------------- reading messages

_MSG_COLS = (
    "m.id, c.name, m.channel_id, m.sender, m.type, m.content, m.topic, m.priority,"
    " m.correlation_id, m.dedupe_key, m.metadata, m.created_at, m.deliver_at, m.global_id,"
    " m.origin_node"
)
_DELIVERY_COLS = ("recipient, state, retry_count, delivered_at, read_at, ack_status, acked_at,"
                  " next_timer_at, first_read_at")
_STATUS_SQL = (
    "(CASE WHEN EXISTS (SELECT 1 FROM deliveries x WHERE x.message_id = m.id AND x.state ="
    " 'dead') THEN 'dead_letter'"
    " WHEN EXISTS (SELECT 1 FROM deliveries x WHERE x.message_id = m.id) AND NOT EXISTS"
    " (SELECT 1 FROM deliveries x WHERE x.message_id = m.id AND x.state != 'acked')"
    " THEN 'acknowledged'"
    " WHEN EXISTS (SELECT 1 FROM deliveries x WHERE x.message_id = m.id AND x.state IN"
    " ('unread', 'read', 'acked')) THEN 'delivered' ELSE 'sent' END)"
)
# `--status in_progress`: a recipient holds the message with an in_progress ack (issue 18)
_HELD_SQL = ("m.id IN (SELECT x.message_id FROM deliveries x INDEXED BY deliveries_in_progress"
             " WHERE x.state = 'acked' AND x.ack_status = 'in_progress')")
_SORT = {"created": "m.created_at {o}, m.id {o}", "priority": "m.priority {o}, m.id {o}",
         "id": "m.id {o}"}


# Plain dict lookups: calling an Enum by value costs about a microsecond a row.
_TYPES = {t.value: t for t in MessageType}
_PRIORITIES = {int(p): p for p in Priority}
_STATES = {s.value: s for s in DeliveryState}


def _metadata(text: str) -> dict[str, Any]:
    """Stored metadata read back; `json` is imported only when a row has some (issue 17)."""
    import json

    metadata: dict[str, Any] = json.loads(text)
    return metadata


# Positional arguments, in the order of _MSG_COLS and _DELIVERY_COLS: building these is most
# of what `receive` costs beyond SQLite, and keywords take twice as long.
def _message(row: Sequence[Any]) -> Message:
    # id, channel, channel_id, sender, type, content, topic, priority, correlation_id,
    # dedupe_key, metadata, created_at, deliver_at, global_id, origin_node
    return Message(row[0], row[1], row[2], row[3], _TYPES[row[4]], row[5], row[6],
                   _PRIORITIES[row[7]], row[8], row[9], _metadata(row[10]) if row[10] else {},
                   row[11], row[12], row[13], row[14])


def _delivery(row: Sequence[Any]) -> Delivery:
    # recipient, state, retry_count, delivered_at, read_at, ack_status, acked_at, next_timer_at,
    # first_read_at
    return Delivery(row[0], _STATES[row[1]], row[2], row[3], row[4], row[5], row[6], row[7],
                    row[8])


def _filter_sql(f: MessageFilter) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    if f.channel is not None:
        where.append("c.name = ?")
        params.append(f.channel)
    if f.since is not None:
        where.append("m.created_at >= ?")
        params.append(f.since)
    if f.until is not None:
        where.append("m.created_at <= ?")
        params.append(f.until)
    if f.types:
        where.append(f"m.type IN ({','.join('?' * len(f.types))})")
        params.extend(t.value for t in f.types)
    if f.sender is not None:
        where.append("m.sender = ?")
        params.append(f.sender)
    if f.topic is not None:
        where.append("m.topic IS NOT NULL AND topic_match(?, m.topic)")
        params.append(f.topic)
    if f.grep is not None:
        where.append("m.content REGEXP ?")
        params.append(f.grep)
    if f.priority_min is not None:
        where.append("m.priority >= ?")
        params.append(int(f.priority_min))
    derived = [s for s in f.status if s != "in_progress"]
    if f.status:
        held = _HELD_SQL if len(derived) < len(f.status) else None
        alternatives = ([f"{_STATUS_SQL} IN ({','.join('?' * len(derived))})"] if derived
                        else []) + ([held] if held else [])
        where.append("(" + " OR ".join(alternatives) + ")")
        params.extend(derived)
    if f.after_id is not None:
        where.append("m.id > ?")
        params.append(f.after_id)
    if f.correlation_id is not None:
        where.append("m.correlation_id = ?")
        params.append(f.correlation_id)
    if f.recipient is not None or f.state:
        cond = ["x.message_id = m.id"]  # on the primary key (message_id, recipient)
        if f.recipient is not None:
            cond.append("x.recipient = ?")
            params.append(f.recipient)
        if f.state:
            cond.append(f"x.state IN ({','.join('?' * len(f.state))})")
            params.extend(f.state)
        where.append(f"EXISTS (SELECT 1 FROM deliveries x WHERE {' AND '.join(cond)})")
    return where, params


def _order(f: MessageFilter, default: str, direction: str) -> str:
    """ORDER BY for a filter: `default` (with `{o}`) unless --sort is given; --order alone
    flips the command's own direction (receive: oldest first; messages: newest first)."""
    o = "ASC" if (f.order or direction) == "asc" else "DESC"
    return (default if f.sort is None else _SORT[f.sort]).format(o=o)


def _total(conn: sqlite3.Connection, body: str, params: list[Any], rows: list[Any],
           f: MessageFilter) -> int:
    """total_count: a page fetched with one row to spare shows whether more exist, so the
    count query runs only when they do (or when an offset hides the rows before the page)."""
    if len(rows) <= f.limit and (f.offset == 0 or rows):
        total = f.offset + len(rows)
    else:
        total = conn.execute(f"SELECT count(*) {body}", params).fetchone()[0]
    del rows[f.limit:]
    return total


def _unfiltered(f: MessageFilter) -> bool:
    """No condition on the message or its channel: only the agent and the states."""
    return (f.channel is None and f.since is None and f.until is None and not f.types
            and f.sender is None and f.topic is None and f.grep is None
            and f.priority_min is None and not f.status and f.after_id is None)


def inbox(conn: sqlite3.Connection, agent: str, f: MessageFilter, *,
          marked_at: int | None = None) -> tuple[list[Message], int, set[int]]:
    """An agent's unread deliveries with their messages, FIFO (by rank first), the total,
    and which of their channels limit pending messages (reading may release queued ones).
    `marked_at`: each delivery as `mark_read(..., marked_at)` leaves it (the caller marks
    them in the same transaction), built so at once rather than changed afterwards.

    `d.state = 'unread'` is written out, never bound: SQLite uses the partial index
    deliveries_agent_active only for a WHERE that implies the index's own (m015)."""
    where, params = _filter_sql(f)
    where[:0] = ["d.recipient = ?", "d.state = 'unread'", "c.state != 'closed'"]
    params[:0] = [agent]
    body = (" FROM deliveries d JOIN messages m ON m.id = d.message_id"
            " JOIN channels c ON c.id = m.channel_id WHERE " + " AND ".join(where))
    order = _order(f, "d.rank DESC, d.message_id {o}", "asc")
    rows = conn.execute(  # the recipient and state are known: not fetched
        f"SELECT {_MSG_COLS}, d.retry_count, d.delivered_at, d.read_at, d.ack_status,"
        f" d.acked_at, d.next_timer_at, c.max_pending, d.first_read_at {body}"
        f" ORDER BY {order}"
        " LIMIT ? OFFSET ?",
        (*params, f.limit + 1, f.offset),
    ).fetchall()
    if (len(rows) > f.limit or (f.offset and not rows)) and _unfiltered(f) and not \
            conn.execute("SELECT 1 FROM channels WHERE state = 'closed' LIMIT 1").fetchone():
        # The count behind total_count, on the inbox index alone (about 4x cheaper than
        # with the joins, which looked up every message of the backlog on every receive):
        # with no filter on the messages and no closed channel, the agent and the states are
        # all it counts.
        body = " FROM deliveries d WHERE d.recipient = ? AND d.state = 'unread'"
        params = [agent]
    total = _total(conn, body, params, rows, f)
    out: list[Message] = []
    add = out.append
    limited = set()
    # _message and the Delivery inlined, the row unpacked at once and the names looked up
    # once: this loop is most of what a receive of 100 spends in Python (issue 17)
    types, priorities = _TYPES, _PRIORITIES
    state = DeliveryState.UNREAD if marked_at is None else DeliveryState.READ
    for (mid, channel, channel_id, sender, type_, content, topic, priority, correlation,
         dedupe, metadata, created, deliver_at, global_id, origin, retries, delivered, read_at,
         ack_status, acked_at, next_timer, max_pending, first_read) in rows:
        if marked_at is not None:  # as mark_read's UPDATE leaves it
            read_at = marked_at
            if first_read is None:
                first_read = marked_at
        add(Message(mid, channel, channel_id, sender, types[type_], content, topic,
                    priorities[priority], correlation, dedupe,
                    _metadata(metadata) if metadata else {}, created, deliver_at, global_id,
                    origin, [], Delivery(agent, state, retries, delivered, read_at, ack_status,
                                         acked_at, next_timer, first_read)))
        if max_pending:
            limited.add(channel_id)
    return out, total, limited


def history(conn: sqlite3.Connection, f: MessageFilter) -> tuple[list[Message], int]:
    """Messages matching a filter, newest first by default, with all their deliveries."""
    where, params = _filter_sql(f)
    body = " FROM messages m JOIN channels c ON c.id = m.channel_id"
    if where:
        body += " WHERE " + " AND ".join(where)
    rows = conn.execute(
        f"SELECT {_MSG_COLS} {body} ORDER BY {_order(f, 'm.id {o}', 'desc')} LIMIT ? OFFSET ?",
        (*params, f.limit + 1, f.offset),
    ).fetchall()
    total = _total(conn, body, params, rows, f)
    msgs = [_message(r) for r in rows]
    attach_deliveries(conn, msgs)
    return msgs, total


def message_by_id(conn: sqlite3.Connection, message_id: int) -> Message | None:
    row = conn.execute(
        f"SELECT {_MSG_COLS} FROM messages m JOIN channels c ON c.id = m.channel_id"
        " WHERE m.id = ?", (message_id,),
    ).fetchone()
    if row is None:
        return None
    msg = _message(row)
    attach_deliveries(conn, [msg])
    return msg


def attach_deliveries(conn: sqlite3.Connection, msgs: list[Message]) -> None:
    if not msgs:
        return
    by_id = {m.id: m for m in msgs}
    for chunk_start in range(0, len(msgs), 500):
        ids = [m.id for m in msgs[chunk_start:chunk_start + 500]]
        for r in conn.execute(
            f"SELECT message_id, {_DELIVERY_COLS} FROM deliveries WHERE message_id IN"
            f" ({','.join('?' * len(ids))}) ORDER BY message_id, recipient", ids,
        ):
            by_id[r[0]].deliveries.append(_delivery(r[1:]))
