"""SQL of a send: message and delivery inserts, dedupe, correlation, exactly-once."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from acomm_cli.store.connection import AGENTS_TOKEN

TYPE_CHECKING = False  # typing's, without importing typing (a send must not load it)
if TYPE_CHECKING:
    from typing import Any


MESSAGE_INSERT = (
    "INSERT INTO messages (id, channel_id, sender, type, content, topic, priority,"
    " correlation_id, dedupe_key, metadata, created_at, deliver_at, expires_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

# a planned row with its id: a batch's (the row ends with the trace id)
_BATCH_INSERT = (
    "INSERT INTO messages (id, channel_id, sender, type, content, topic, priority,"
    " correlation_id, dedupe_key, metadata, created_at, deliver_at, expires_at, trace_id)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


DELIVERY_INSERT = (
    "INSERT INTO deliveries (message_id, recipient, channel_id, state, rank, tracked,"
    " delivered_at, next_timer_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def start(conn: sqlite3.Connection, at_least: int | None) -> tuple[int, int, int]:
    """A send's first read, one statement: (active messages, the channels token, the agents
    token). The count is backlog.active_messages's (0 when `at_least` is None: no limit to
    check); the tokens validate the connection's caches (m011, m030)."""
    sql = _START or _start_sql()
    if at_least is None:
        ctoken, atoken = conn.execute(sql[0]).fetchone()
        return 0, ctoken, atoken
    low, last, ctoken, atoken = conn.execute(sql[1]).fetchone()
    if low is None or last - low + 1 < at_least:
        return 0, ctoken, atoken  # an upper bound below the limit: no need to count
    from acomm_cli.store.backlog import active_messages

    return active_messages(conn, at_least)[0], ctoken, atoken


_START: tuple[str, str] | None = None  # start's two statements, built by its first call


def _start_sql() -> tuple[str, str]:
    global _START
    # here, not at import: store.channels and store.backlog import this module
    from acomm_cli.store.backlog import ACTIVE
    from acomm_cli.store.channels import CHANNELS_TOKEN

    _START = (
        f"SELECT {CHANNELS_TOKEN}, {AGENTS_TOKEN}",
        f"SELECT (SELECT min(message_id) FROM deliveries INDEXED BY deliveries_active WHERE"
        f" {ACTIVE}), (SELECT seq FROM sqlite_sequence WHERE name = 'messages'),"
        f" {CHANNELS_TOKEN}, {AGENTS_TOKEN}",
    )
    return _START


def inserted(cur: sqlite3.Cursor) -> int:
    """The rowid the INSERT just run on `cur` assigned (sqlite3 types it `int | None`: None
    only before any INSERT)."""
    rowid = cur.lastrowid
    assert rowid is not None
    return rowid


def insert_message(conn: sqlite3.Connection, row: tuple[Any, ...]) -> int:
    """Insert one message row (id None = assign); returns its id."""
    return inserted(conn.execute(MESSAGE_INSERT, row))


_NEW_MESSAGE_INSERT = (
    "INSERT INTO messages (channel_id, sender, type, content, topic, priority,"
    " correlation_id, dedupe_key, metadata, created_at, deliver_at, expires_at, trace_id)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


_PLAIN_MESSAGE_INSERT = (
    "INSERT INTO messages (channel_id, sender, type, content, priority, created_at, trace_id)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def insert_new_message(conn: sqlite3.Connection, row: Sequence[Any]) -> int:
    """insert_message for a row without its id (SQLite assigns it): a send's row as planned,
    with no tuple built around it. A plain message (no topic, correlation, dedupe key,
    metadata, schedule or expiry) binds only its seven set values (the trace id among them):
    about 3 us less per send than binding six NULLs too."""
    if (
        row[4] is None
        and row[6] is None
        and row[7] is None
        and row[8] is None
        and row[10] is None
        and row[11] is None
    ):
        return inserted(
            conn.execute(
                _PLAIN_MESSAGE_INSERT, (row[0], row[1], row[2], row[3], row[5], row[9], row[12])
            )
        )
    return inserted(conn.execute(_NEW_MESSAGE_INSERT, row))


_ACK_MESSAGE_INSERT = (
    "INSERT INTO messages (channel_id, sender, type, content, priority, correlation_id,"
    " metadata, created_at, trace_id) VALUES (?, ?, 'acknowledgment', ?, ?, ?, ?, ?, ?)"
)
_ACK_DELIVERY_INSERT = (
    "INSERT INTO deliveries (message_id, recipient, channel_id, state, rank, tracked,"
    " delivered_at, next_timer_at) VALUES (?, ?, ?, 'unread', ?, 0, ?, NULL)"
)


def insert_acknowledgment(
    conn: sqlite3.Connection,
    channel_id: int,
    sender: str,
    content: str,
    priority: int,
    correlation_id: str | None,
    metadata: str,
    now: int,
    trace_id: str,
    recipient: str | None,
    rank: int,
) -> int:
    """An acknowledgement message and its one unread, untracked delivery (none when
    `recipient` is None): the rows insert_new_message and insert_deliveries write for it,
    with only its set values bound."""
    mid = inserted(
        conn.execute(
            _ACK_MESSAGE_INSERT,
            (channel_id, sender, content, priority, correlation_id, metadata, now, trace_id),
        )
    )
    if recipient is not None:
        conn.execute(_ACK_DELIVERY_INSERT, (mid, recipient, channel_id, rank, now))
    return mid


def insert_messages(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    conn.executemany(_BATCH_INSERT, rows)


def insert_deliveries(conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    if len(rows) == 1:  # a direct send's one row: execute() is cheaper than executemany()
        conn.execute(DELIVERY_INSERT, rows[0])
    else:
        conn.executemany(DELIVERY_INSERT, rows)


def last_message_id(conn: sqlite3.Connection) -> int:
    """The highest id ever assigned (AUTOINCREMENT never reuses one, even after deletes)."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'messages'").fetchone()
    return row[0] if row else 0


def find_dedupe(
    conn: sqlite3.Connection, channel_id: int, key: str, since: int
) -> tuple[int, int, str | None] | None:
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
    return [
        r[0]
        for r in conn.execute(
            "SELECT recipient FROM deliveries WHERE message_id = ? ORDER BY recipient",
            (message_id,),
        )
    ]


def first_of_type(
    conn: sqlite3.Connection, correlation_id: str, type_: str
) -> tuple[int, int, str, str | None] | None:
    """(id, channel_id, sender, trace_id) of the first message of a type in a thread."""
    return conn.execute(
        "SELECT id, channel_id, sender, trace_id FROM messages"
        " WHERE correlation_id = ? AND type = ?"
        " ORDER BY id LIMIT 1",
        (correlation_id, type_),
    ).fetchone()


def trace_of_correlation(conn: sqlite3.Connection, correlation_id: str) -> str | None:
    """The trace of the first message of a thread (what a correlated send inherits)."""
    row = conn.execute(
        "SELECT trace_id FROM messages WHERE correlation_id = ? ORDER BY id LIMIT 1",
        (correlation_id,),
    ).fetchone()
    return row[0] if row else None


def exactly_once_seen(
    conn: sqlite3.Connection,
    correlation_id: str,
    sender: str,
    type_: str,
    recipients: Sequence[str],
    now: int,
) -> set[str]:
    if not recipients:
        return set()
    rows = conn.execute(
        "SELECT recipient FROM exactly_once WHERE correlation_id = ? AND sender = ?"
        f" AND type = ? AND expires_at > ? AND recipient IN ({','.join('?' * len(recipients))})",
        (correlation_id, sender, type_, now, *recipients),
    )
    return {r[0] for r in rows}


def exactly_once_record(
    conn: sqlite3.Connection,
    correlation_id: str,
    sender: str,
    type_: str,
    recipients: Sequence[str],
    expires_at: int,
) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO exactly_once VALUES (?, ?, ?, ?, ?)",
        [(correlation_id, r, sender, type_, expires_at) for r in recipients],
    )
