"""SQL of full-text search: the FTS5 index `message_search` over messages and their events,
queried with the history filters, and rebuilt from scratch.

The index is external-content (its text stays in `messages` and `message_events`, read
through the view `message_search_source`) and kept by triggers; m026 created it. `rebuild`
writes the same objects again, so this module holds a copy of m026's statements: a test
compares a rebuilt store's schema with a migrated one.
"""

from __future__ import annotations

import sqlite3

from acomm_cli.model import Message, MessageFilter, SearchHit
from acomm_cli.store import reads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# bm25 weights per column: content, subject, event (a word in the subject counts double)
_RANK = "bm25(message_search, 1.0, 2.0, 1.0)"
# snippet(): the column with the best match, the match in [ ], about 12 words around it
_SNIPPET = "snippet(message_search, -1, '[', ']', '…', 12)"

_EVENT_TEXT = (
    "trim(coalesce({e}.thread_id, '') || ' ' || coalesce({e}.actor, '') || ' '"
    " || coalesce({e}.target, ''))"
)

_OBJECTS = (
    "message_search_insert",
    "message_search_update",
    "message_search_delete",
    "message_search_event_insert",
    "message_search_event_update",
    "message_search_event_delete",
)


def history(conn: sqlite3.Connection, f: MessageFilter) -> tuple[list[Message], int]:
    """Messages matching `f.search` (an FTS5 expression) and the other filters, best first
    by default, each with its bm25 rank and snippet. sqlite3.OperationalError: the index
    refused the expression (or is missing)."""
    assert f.search is not None
    where, params = reads._filter_sql(f, conn)
    body = (
        " FROM message_search s JOIN messages m ON m.id = s.rowid"
        " JOIN channels c ON c.id = m.channel_id WHERE message_search MATCH ?"
    )
    params = [f.search, *params]
    if where:
        body += " AND " + " AND ".join(where)
    if f.sort is None or f.sort == "rank":  # best first (bm25: the lower, the better)
        order = f"score {'DESC' if f.order == 'desc' else 'ASC'}, m.id DESC"
    else:
        order = reads._order(f, "", "desc")
    rows = conn.execute(
        f"SELECT {reads._MSG_COLS}, {_RANK} AS score, {_SNIPPET} {body}"
        f" ORDER BY {order} LIMIT ? OFFSET ?",
        (*params, f.limit + 1, f.offset),
    ).fetchall()
    total = reads._total(conn, body, params, rows, f)
    msgs = []
    for r in rows:
        m = reads._message(r[:-2])
        m.search = SearchHit(r[-2], r[-1])
        msgs.append(m)
    reads.attach_deliveries(conn, msgs)
    reads.attach_events(conn, msgs)
    return msgs, total


def rebuild(conn: sqlite3.Connection) -> int:
    """Drop the index, its view and its triggers (whatever is left of them) and write them
    again, then index every message; returns how many messages are indexed."""
    for trigger in _OBJECTS:
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    _drop_table(conn)
    conn.execute("DROP VIEW IF EXISTS message_search_source")
    for statement in _create_statements():
        conn.execute(statement)
    conn.execute("INSERT INTO message_search (message_search) VALUES ('rebuild')")
    count: int = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    return count


def _drop_table(conn: sqlite3.Connection) -> None:
    """DROP TABLE on the FTS5 table, or, when it is too damaged for FTS5 to open, on its
    shadow tables one by one and then its row in the schema."""
    try:
        conn.execute("DROP TABLE IF EXISTS message_search")
    except sqlite3.DatabaseError:
        for suffix in ("data", "idx", "docsize", "config", "content"):
            conn.execute(f"DROP TABLE IF EXISTS message_search_{suffix}")
        conn.execute("PRAGMA writable_schema = ON")
        try:
            conn.execute("DELETE FROM sqlite_master WHERE name = 'message_search'")
        finally:
            conn.execute("PRAGMA writable_schema = OFF")


def check(conn: sqlite3.Connection) -> str | None:
    """What is wrong with the index, or None: it or one of its triggers is missing, or it
    does not hold one row per message (cheap enough for every `doctor`: two counts)."""
    names = {
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'message_search%'"
            " AND type IN ('table', 'trigger', 'view')"
        )
    }
    missing = [n for n in ("message_search", "message_search_source", *_OBJECTS) if n not in names]
    if missing:
        return f"missing: {', '.join(missing)}"
    try:
        indexed = conn.execute("SELECT count(*) FROM message_search_docsize").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        return f"unreadable: {exc}"
    stored = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    if indexed != stored:
        return f"it holds {indexed} messages of {stored}"
    return None


def _create_statements() -> list[str]:
    ev = _EVENT_TEXT.format(e="e")
    old_ev = _EVENT_TEXT.format(e="old")
    src = "SELECT id, content, subject, event FROM message_search_source"
    add = "INSERT INTO message_search (rowid, content, subject, event)"
    remove = "INSERT INTO message_search (message_search, rowid, content, subject, event)"
    return [
        "CREATE VIEW message_search_source AS"
        " SELECT m.id AS id, m.content AS content, m.subject AS subject,"
        f" (SELECT {ev} FROM message_events e WHERE e.message_id = m.id) AS event"
        " FROM messages m",
        "CREATE VIRTUAL TABLE message_search USING fts5("
        " content, subject, event,"
        " content = 'message_search_source', content_rowid = 'id',"
        " tokenize = 'unicode61 remove_diacritics 2')",
        "CREATE TRIGGER message_search_insert AFTER INSERT ON messages BEGIN"
        f" {add} {src} WHERE id = new.id; END",
        "CREATE TRIGGER message_search_update AFTER UPDATE OF content, subject ON messages BEGIN"
        f" {remove} SELECT 'delete', old.id, old.content, old.subject, s.event"
        " FROM message_search_source s WHERE s.id = old.id;"
        f" {add} {src} WHERE id = new.id; END",
        "CREATE TRIGGER message_search_delete AFTER DELETE ON messages BEGIN"
        f" {remove} VALUES ('delete', old.id, old.content, old.subject,"
        f" (SELECT {ev} FROM message_events e WHERE e.message_id = old.id)); END",
        "CREATE TRIGGER message_search_event_insert AFTER INSERT ON message_events BEGIN"
        f" {remove} SELECT 'delete', id, content, subject, NULL FROM messages"
        " WHERE id = new.message_id;"
        f" {add} {src} WHERE id = new.message_id; END",
        "CREATE TRIGGER message_search_event_update"
        " AFTER UPDATE OF thread_id, actor, target ON message_events BEGIN"
        f" {remove} SELECT 'delete', id, content, subject, {old_ev} FROM messages"
        " WHERE id = old.message_id;"
        f" {add} {src} WHERE id = new.message_id; END",
        "CREATE TRIGGER message_search_event_delete AFTER DELETE ON message_events BEGIN"
        f" {remove} SELECT 'delete', id, content, subject, {old_ev} FROM messages"
        " WHERE id = old.message_id;"
        f" {add} {src} WHERE id = old.message_id; END",
    ]


def without_triggers(conn: sqlite3.Connection) -> list[Any]:
    """Drop the triggers that keep the index (a benchmark's baseline send); returns their
    statements, which `restore_triggers` runs again."""
    rows = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'message_search%'"
    ).fetchall()
    for trigger in _OBJECTS:
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    return [r[0] for r in rows]


def restore_triggers(conn: sqlite3.Connection, statements: list[Any]) -> None:
    for sql in statements:
        conn.execute(sql)
