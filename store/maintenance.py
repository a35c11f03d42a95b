"""SQL of the store's upkeep: statistics, health checks, compaction and checkpoints.

Every statement is set-based and leans on the schema's indexes; `acomm_cli.engine.operations` holds
the rules that decide what these numbers mean.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from acomm_cli.store.backlog import ACTIVE

TYPE_CHECKING = False  # typing's, without importing typing (a send must not load it)
if TYPE_CHECKING:
    from typing import Any

STATES = ("queued", "waiting", "unread", "read", "acked", "dead")

# Deliveries not yet done with: written exactly as the partial index's WHERE (backlog.ACTIVE).
_ACTIVE_INDEX = "deliveries_active"


def _through_active(
    conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()
) -> sqlite3.Cursor:
    """Run `sql` (its `{src}` naming the deliveries table) through the partial index of active
    deliveries; a store without that index falls back to one scan of the table."""
    try:
        return conn.execute(sql.format(src=f"deliveries INDEXED BY {_ACTIVE_INDEX}"), params)
    except sqlite3.OperationalError as exc:
        if "no such index" not in str(exc) and "no query solution" not in str(exc):
            raise
        return conn.execute(sql.format(src="deliveries"), params)


@contextmanager
def snapshot(conn: sqlite3.Connection, *, scratch: bool = False) -> Iterator[bool]:
    """A read transaction (one consistent view), always rolled back: scratch rows written
    inside it vanish with it. With `scratch`, it takes the write lock first so that it may
    write rows it then throws away; yields whether it could (not on a read-only file)."""
    writable = False
    if scratch:
        try:
            conn.execute("BEGIN IMMEDIATE")
            writable = True
        except sqlite3.OperationalError as exc:
            if "readonly" not in str(exc):
                raise
    if not writable:
        conn.execute("BEGIN")
    try:
        yield writable
    finally:
        conn.rollback()


# ---------------------------------------------------------------- files


def db_path(conn: sqlite3.Connection) -> str:
    for _seq, name, file in conn.execute("PRAGMA database_list"):
        if name == "main":
            return file
    return ""


def file_sizes(conn: sqlite3.Connection) -> tuple[int, int]:
    """(database file bytes, WAL file bytes)."""
    path = db_path(conn)
    sizes = []
    for p in (path, path + "-wal"):
        try:
            sizes.append(os.stat(p).st_size)
        except OSError:
            sizes.append(0)
    return sizes[0], sizes[1]


def free_bytes(conn: sqlite3.Connection) -> int:
    """Bytes of free pages inside the database file (reused before the file grows)."""
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    return page * conn.execute("PRAGMA freelist_count").fetchone()[0]


# ---------------------------------------------------------------- statistics


def message_count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM messages").fetchone()[0]


def channel_list(conn: sqlite3.Connection, agent: str | None = None) -> list[tuple[int, str, str]]:
    """(id, name, state) of every channel, or of those `agent` takes part in."""
    if agent is None:
        return conn.execute("SELECT id, name, state FROM channels ORDER BY name").fetchall()
    return conn.execute(
        "SELECT c.id, c.name, c.state FROM participants p JOIN channels c ON c.id = p.channel_id"
        " WHERE p.agent = ? ORDER BY c.name",
        (agent,),
    ).fetchall()


def delivery_totals(conn: sqlite3.Connection, agent: str | None = None) -> list[tuple[str, int]]:
    """(recipient, deliveries) per recipient: one walk of the index deliveries_inbox (ordered
    by recipient, so GROUP BY needs no sort)."""
    if agent is None:
        return conn.execute(
            "SELECT recipient, count(*) FROM deliveries GROUP BY recipient"
        ).fetchall()
    return conn.execute(
        "SELECT recipient, count(*) FROM deliveries WHERE recipient = ? GROUP BY recipient",
        (agent,),
    ).fetchall()


def active_breakdown(
    conn: sqlite3.Connection, agent: str | None = None, due: tuple[int, str] | None = None
) -> list[tuple[str, int, str, int, int, int | None]]:
    """(recipient, channel_id, state, tracked, deliveries, oldest delivered_at) over the
    deliveries not yet done with; only those rows are read (the partial index).

    `due` = (now, JSON list of message ids whose expiry is due): rows a tick would move (a
    timer due by now, or a message that expired) are left out, so that statistics count
    them as the tick would leave them instead (engine/projection.py). Filtered, not grouped
    apart: a group per due flag sorted every due row into the temporary b-tree only to be
    dropped (on the 1M benchmark store 178 ms against 96 ms, DECISIONS.md "`stats`
    projects due timers instead of applying them")."""
    keep = ""
    pre: list[int | str] = []
    if due is not None:
        keep = " AND NOT coalesce(next_timer_at <= ?, 0)"
        pre.append(due[0])
        if due[1] != "[]":  # no json_each per row when nothing expired
            keep += " AND message_id NOT IN (SELECT value FROM json_each(?))"
            pre.append(due[1])
    cols = (
        "SELECT recipient, channel_id, state, tracked, count(*), min(delivered_at)"
        " FROM {src} WHERE "
    )
    group = keep + " GROUP BY recipient, channel_id, state, tracked"
    if agent is None:
        return _through_active(conn, cols + ACTIVE + group, tuple(pre)).fetchall()
    return conn.execute(  # deliveries_agent_active (recipient, state, ...)
        cols.format(src="deliveries") + "recipient = ? AND state IN ('queued', 'waiting',"
        f" 'unread', 'read') AND {ACTIVE}" + group,
        (agent, *pre),
    ).fetchall()


def expiring(conn: sqlite3.Connection, now: int) -> list[tuple[int, int]]:
    """(message id, expires_at) of messages expired by `now` with a delivery not yet done with
    (the ones a tick may dead-letter as `expired`)."""
    return conn.execute(
        "SELECT m.id, m.expires_at FROM messages m WHERE m.expires_at IS NOT NULL"
        " AND m.expires_at <= ? AND EXISTS (SELECT 1 FROM deliveries d WHERE d.message_id = m.id"
        " AND (d.state IN ('queued', 'waiting', 'unread') OR (d.tracked = 1 AND d.state ="
        " 'read')))",
        (now,),
    ).fetchall()


# A due delivery's starting point in one integer (store/maintenance.py and
# engine/projection.py agree on it through DUE_STATES and the shifts): converting 81,636 rows
# of 9 columns into Python tuples was most of what reading them cost.
DUE_STATES = ("queued", "waiting", "unread", "read", "acked", "dead")
_DUE_KEY = (
    "channel_id | ((tracked != 0) << 32) | ((read_at IS NOT NULL) << 33)"
    " | (CASE state"
    + "".join(f" WHEN '{st}' THEN {i}" for i, st in enumerate(DUE_STATES))
    + " ELSE 7 END << 34) | (retry_count << 40)"
)
_DUE_COLS = f"message_id, recipient, {_DUE_KEY}, delivered_at, next_timer_at"


def has_queues(conn: sqlite3.Connection) -> bool:
    return (
        conn.execute("SELECT 1 FROM channels WHERE type = 'queue' LIMIT 1").fetchone() is not None
    )


def due_deliveries(conn: sqlite3.Connection, now: int, expired: list[int]) -> list[tuple[Any, ...]]:
    """The deliveries a tick at `now` would look at: timer due (through the timer index), or
    not done with on an expired message: (message id, recipient, key, delivered_at,
    next_timer_at), the key as _DUE_KEY packs channel, tracked, read, state and retry count."""
    # the message id matters only for an expired message: without one, NULL saves
    # converting a column for every due row (81,636 on the benchmark store, about 10 ms)
    cols = _DUE_COLS if expired else "NULL" + _DUE_COLS[len("message_id") :]
    rows = conn.execute(
        f"SELECT {cols} FROM deliveries INDEXED BY deliveries_timer"
        " WHERE next_timer_at IS NOT NULL AND next_timer_at <= ?",
        (now,),
    ).fetchall()
    if expired:
        rows += conn.execute(
            f"SELECT {_DUE_COLS} FROM deliveries WHERE message_id IN (SELECT value FROM"
            f" json_each(?)) AND {ACTIVE} AND NOT (next_timer_at IS NOT NULL AND"
            " next_timer_at <= ?)",
            (json.dumps(expired), now),
        ).fetchall()
    return rows


def timer_settings(conn: sqlite3.Connection) -> dict[int, tuple[int, int, int, float, bool]]:
    """channel id -> (ack_timeout_ms, max_retries, retry_backoff_ms, retry_jitter,
    exactly-once)."""
    return {
        r[0]: (r[1], r[2], r[3], r[4], r[5] == "exactly-once")
        for r in conn.execute(
            "SELECT id, ack_timeout_ms, max_retries, retry_backoff_ms, retry_jitter, delivery"
            " FROM channels"
        )
    }


def channel_breakdown(conn: sqlite3.Connection, agent: str) -> list[tuple[int, str, int, int]]:
    """(channel_id, state, tracked, deliveries) over the not-done deliveries of the channels
    `agent` takes part in (the partial index again: only those rows are read)."""
    return _through_active(
        conn,
        "SELECT channel_id, state, tracked, count(*) FROM {src} WHERE "
        + ACTIVE
        + " AND channel_id IN (SELECT channel_id FROM participants WHERE agent = ?)"
        " GROUP BY channel_id, state, tracked",
        (agent,),
    ).fetchall()


def dead_letter_counts(conn: sqlite3.Connection) -> list[tuple[str, int, int]]:
    """(recipient, channel_id, dead letters)."""
    return conn.execute(
        "SELECT recipient, channel_id, count(*) FROM dead_letters GROUP BY recipient, channel_id"
    ).fetchall()


def lease_counts(
    conn: sqlite3.Connection, agent: str | None = None
) -> list[tuple[str, int, int, int]]:
    """(recipient, channel_id, deliveries held in_progress, leases run out): two walks of
    small partial indexes."""
    who = " AND recipient = ?" if agent is not None else ""
    args = (agent, agent) if agent is not None else ()
    return conn.execute(
        "SELECT recipient, channel_id, sum(held), sum(lapsed) FROM ("
        " SELECT recipient, channel_id, 1 AS held, 0 AS lapsed FROM deliveries"
        " INDEXED BY deliveries_in_progress WHERE state = 'acked'"
        f" AND ack_status = 'in_progress'{who}"
        " UNION ALL SELECT recipient, channel_id, 0, lease_expired FROM deliveries"
        f" INDEXED BY deliveries_lease_expired WHERE lease_expired > 0{who})"
        " GROUP BY recipient, channel_id",
        args,
    ).fetchall()


# ---------------------------------------------------------------- health


def integrity_check(conn: sqlite3.Connection, quick: bool = False) -> list[str]:
    """The problems SQLite finds in the file (empty when it says `ok`)."""
    pragma = "quick_check" if quick else "integrity_check"
    try:
        rows = [r[0] for r in conn.execute(f"PRAGMA {pragma}")]
    except sqlite3.DatabaseError as exc:
        if "malformed" not in str(exc):
            raise
        # SQLite reports the damaged pages in its first row, then stops with SQLITE_CORRUPT
        # when it reads them again (checking the indexes); Python's cursor reads a row ahead
        # and so loses that report. The first row alone is asked for again.
        rows = [r[0] for r in conn.execute(f"SELECT * FROM pragma_{pragma} LIMIT 1")]
        rows = [_name_pages(conn, r) for r in rows if r != "ok"] + [f"check stopped: {exc}"]
    return [] if rows == ["ok"] else rows


def _name_pages(conn: sqlite3.Connection, text: str) -> str:
    """`On tree page 16 cell 3: ...` -> `On tree page 16 (index messages_sender) cell 3: ...`
    for the root pages of tables and indexes (what SQLite says itself when it gets that far)."""
    import re

    names = {
        page: f"{kind} {name}"
        for kind, name, page in conn.execute(
            "SELECT type, name, rootpage FROM sqlite_master WHERE rootpage > 0"
        )
    }
    return re.sub(
        r"(tree page (\d+))",
        lambda m: f"{m[1]} ({names[int(m[2])]})" if int(m[2]) in names else m[1],
        text,
    )


def recorded_migrations(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM _acomm_migrations ORDER BY rowid")]


def foreign_key_violations(conn: sqlite3.Connection) -> list[tuple[str, int | None, str]]:
    """(table, rowid, parent table) of every row pointing at a row that is not there."""
    return [(r[0], r[1], r[2]) for r in conn.execute("PRAGMA foreign_key_check")]


_LIST = ", ".join(f"'{s}'" for s in STATES)

# check name -> (SQL counting the offending rows, SQL listing a few of them)
INVARIANTS: dict[str, tuple[str, str]] = {
    "delivery_state": (
        f"FROM deliveries WHERE state NOT IN ({_LIST})",
        "message_id, recipient, state",
    ),
    "tracked_flag": (
        "FROM deliveries WHERE tracked NOT IN (0, 1)",
        "message_id, recipient, tracked",
    ),
    "tracked_timer": (
        "FROM deliveries WHERE tracked = 1 AND state IN ('unread', 'read', 'waiting')"
        " AND next_timer_at IS NULL"
        # a work queue's or pool's unclaimed message: its timer starts at the claim
        " AND NOT (substr(recipient, 1, 1) = '*' AND state = 'unread')"
        # an unread one where the ack deadline starts at the read (ack_clock read)
        " AND NOT (state = 'unread' AND channel_id IN (SELECT id FROM channels"
        " WHERE ack_clock = 'read'))",
        "message_id, recipient, state",
    ),
    "waiting_timer": (
        "FROM deliveries WHERE state = 'waiting' AND next_timer_at IS NULL",
        "message_id, recipient, state",
    ),
    # a received/in_progress ack's timer is its lease: not terminal yet
    "terminal_timer": (
        "FROM deliveries WHERE state IN ('acked', 'dead') AND next_timer_at IS NOT NULL"
        " AND NOT (state = 'acked' AND ack_status IN ('received', 'in_progress'))",
        "message_id, recipient, state",
    ),
    "dead_letter_delivery": (
        "FROM dead_letters dl LEFT JOIN deliveries d ON d.message_id = dl.message_id"
        " AND d.recipient = dl.recipient WHERE d.state IS NOT 'dead'",
        "dl.message_id, dl.recipient, d.state",
    ),
    "message_channel": (
        "FROM messages m WHERE NOT EXISTS (SELECT 1 FROM channels c WHERE c.id = m.channel_id)",
        "m.id, m.channel_id, NULL",
    ),
    "delivery_message": (
        "FROM deliveries d WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = d.message_id)"
        " OR d.channel_id IS NOT (SELECT m.channel_id FROM messages m WHERE m.id = d.message_id)",
        "d.message_id, d.recipient, d.channel_id",
    ),
    "message_sequence": (
        "FROM (SELECT max(id) AS top FROM messages) WHERE top > coalesce((SELECT seq FROM"
        " sqlite_sequence WHERE name = 'messages'), 0)",
        "top, (SELECT seq FROM sqlite_sequence WHERE name = 'messages'), NULL",
    ),
}


def invariant_violations(
    conn: sqlite3.Connection, name: str, sample: int = 5
) -> tuple[int, list[tuple[Any, ...]]]:
    """How many rows break the named invariant, and the first few of them."""
    body, cols = INVARIANTS[name]
    n = conn.execute(f"SELECT count(*) {body}").fetchone()[0]
    rows = conn.execute(f"SELECT {cols} {body} LIMIT ?", (sample,)).fetchall() if n else []
    return n, rows


# ---------------------------------------------------------------- compaction


def message_id_bounds(conn: sqlite3.Connection) -> tuple[int, int]:
    lo, hi = conn.execute("SELECT min(id), max(id) FROM messages").fetchone()
    return (lo or 0, hi or -1)


def select_compactable(
    conn: sqlite3.Connection,
    created_before: int,
    dead_letters_kept_from: int,
    now: int,
    lo: int = 0,
    hi: int = 2**62,
) -> int:
    """Fill temp.compact_ids with every message created before `created_before` whose
    deliveries are all terminal (or that has none), and return how many.

    Kept: a message with a delivery not yet done with (read from the partial index of active
    deliveries, without touching the table), with a delivery in a state acomm does not know,
    or with a dead delivery whose dead letter stays (dead-lettered at or after
    `dead_letters_kept_from`); and one whose dedupe key is still inside its channel's dedupe
    window at `now`, so that a retried send stays deduplicated. Only ids in [lo, hi] are
    considered, so that compaction can go in chunks."""
    for table in ("compact_ids", "compact_keep"):
        conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {table} (id INTEGER PRIMARY KEY)")
        conn.execute(f"DELETE FROM temp.{table}")
    _through_active(
        conn,
        "INSERT OR IGNORE INTO temp.compact_keep SELECT message_id"
        " FROM {src} WHERE message_id BETWEEN ? AND ? AND " + ACTIVE,
        (lo, hi),
    )
    conn.execute(
        "INSERT OR IGNORE INTO temp.compact_keep SELECT message_id FROM deliveries"
        f" WHERE message_id BETWEEN ? AND ? AND state NOT IN ({_LIST})",
        (lo, hi),
    )
    # held under a lease: acked, but its lease may still give it back
    conn.execute(
        "INSERT OR IGNORE INTO temp.compact_keep SELECT message_id FROM deliveries"
        " INDEXED BY deliveries_timer WHERE next_timer_at IS NOT NULL"
        " AND message_id BETWEEN ? AND ?",
        (lo, hi),
    )
    conn.execute(
        "INSERT OR IGNORE INTO temp.compact_keep SELECT message_id FROM dead_letters"
        " WHERE message_id BETWEEN ? AND ? AND dead_lettered_at >= ?",
        (lo, hi, dead_letters_kept_from),
    )
    conn.execute(
        "INSERT OR IGNORE INTO temp.compact_keep SELECT m.id FROM messages m"
        " JOIN channels c ON c.id = m.channel_id WHERE m.id BETWEEN ? AND ?"
        " AND m.dedupe_key IS NOT NULL AND m.created_at >= ? - c.dedupe_window_ms",
        (lo, hi, now),
    )
    conn.execute(
        "INSERT INTO temp.compact_ids SELECT id FROM messages WHERE id BETWEEN ? AND ?"
        " AND created_at < ? AND id NOT IN (SELECT id FROM temp.compact_keep)",
        (lo, hi, created_before),
    )
    for cid, count, age in conn.execute(
        "SELECT id, retention_count, retention_age_ms FROM channels"
        " WHERE retention_count > 0 OR retention_age_ms > 0"
    ).fetchall():
        # per-channel retention: beyond the newest `count`, or older than `age`
        cut = (
            conn.execute(
                "SELECT id FROM messages WHERE channel_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?",
                (cid, count - 1),
            ).fetchone()
            if count
            else None
        )
        conn.execute(
            "INSERT OR IGNORE INTO temp.compact_ids SELECT id FROM messages WHERE channel_id = ?"
            " AND id BETWEEN ? AND ? AND (id < ? OR created_at < ?)"
            " AND id NOT IN (SELECT id FROM temp.compact_keep)",
            (cid, lo, hi, cut[0] if cut else -1, now - age if age else -1),
        )
    conn.execute("DELETE FROM temp.compact_keep")
    return conn.execute("SELECT count(*) FROM temp.compact_ids").fetchone()[0]


def selected_deliveries(conn: sqlite3.Connection) -> int:
    return conn.execute(
        "SELECT count(*) FROM deliveries WHERE message_id IN (SELECT id FROM temp.compact_ids)"
    ).fetchone()[0]


def delete_selected(conn: sqlite3.Connection) -> tuple[int, int]:
    """Delete the selected messages and their deliveries; returns (messages, deliveries).
    Message ids stay taken: AUTOINCREMENT keeps the highest in sqlite_sequence."""
    if conn.execute("SELECT 1 FROM cursors LIMIT 1").fetchone():
        from acomm_cli.store import cursors

        cursors.mark_compacted(conn)
    deliveries = conn.execute(
        "DELETE FROM deliveries WHERE message_id IN (SELECT id FROM temp.compact_ids)"
    ).rowcount
    # what refers to the message goes first (foreign keys): the names it gives its files (the
    # blobs go once no message names them), its event (its event id is free again, as a
    # dedupe key is once its message is gone) and the first notice of it
    for table in ("message_attachments", "message_events", "notifications"):
        conn.execute(f"DELETE FROM {table} WHERE message_id IN (SELECT id FROM temp.compact_ids)")
    messages = conn.execute(
        "DELETE FROM messages WHERE id IN (SELECT id FROM temp.compact_ids)"
    ).rowcount
    # agent dispatch and the delivery attempts (m012) go with them
    for table in ("dispatch_claims", "dispatch_receipts", "delivery_attempts"):
        conn.execute(f"DELETE FROM {table} WHERE message_id IN (SELECT id FROM temp.compact_ids)")
    conn.execute("DELETE FROM temp.compact_ids")
    return messages, deliveries


def count_dead_letters_before(conn: sqlite3.Connection, before: int) -> int:
    return conn.execute(
        "SELECT count(*) FROM dead_letters WHERE dead_lettered_at < ?", (before,)
    ).fetchone()[0]


def delete_dead_letters_before(conn: sqlite3.Connection, before: int) -> int:
    return conn.execute("DELETE FROM dead_letters WHERE dead_lettered_at < ?", (before,)).rowcount


def count_expired_exactly_once(conn: sqlite3.Connection, now: int) -> int:
    return conn.execute(
        "SELECT count(*) FROM exactly_once WHERE expires_at <= ?", (now,)
    ).fetchone()[0]


def delete_expired_exactly_once(conn: sqlite3.Connection, now: int) -> int:
    return conn.execute("DELETE FROM exactly_once WHERE expires_at <= ?", (now,)).rowcount


def vacuum(conn: sqlite3.Connection) -> None:
    """Rewrite the file without its free pages (outside any transaction)."""
    conn.execute("VACUUM")


# ---------------------------------------------------------------- checkpoints


def checkpoint(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """Move the WAL into the database file and truncate it.

    Returns (busy, frames in the WAL, frames moved): a passive checkpoint counts and copies
    what it can, then a truncating one waits (up to the busy timeout) for readers to finish."""
    _, log, done = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    log, done = max(log, 0), max(done, 0)
    return busy, log, done if busy else log
