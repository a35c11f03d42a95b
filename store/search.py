"""SQL of full-text search: the FTS5 index `message_search` over messages and their events,
queried with the history filters, and rebuilt from scratch.

The index is external-content (its text stays in `messages` and `message_events`, read
through the view `message_search_source`); messages enter it in id order up to
`search_state.indexed_through` (`catch_up`), and triggers keep what it holds in step; m026
created it. `rebuild` writes the same objects again, so this module holds a copy of m026's
statements: a test compares a rebuilt store's schema with a migrated one.
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
    "message_search_update",
    "message_search_delete",
    "message_search_event_insert",
    "message_search_event_update",
    "message_search_event_delete",
)


def history(
    conn: sqlite3.Connection, f: MessageFilter, bound: int
) -> tuple[list[Message], int, bool]:
    """Messages matching `f.search` (an FTS5 expression) and the other filters, best first
    by default, each with its bm25 rank and snippet; the total, and whether the total is
    only a lower bound. sqlite3.OperationalError: the index refused the expression (or is
    missing).

    `bound` keeps a search's cost in step with its page, not with its matches: when more
    than `bound` messages match, the ranked order scores only the newest `bound` of them
    (bm25 scores every match it ranks), and the total is counted no further than `bound`
    (or the page's end, if deeper) and reported as a lower bound. Below that both are
    exact. The page's ids and ranks come first, from the index alone when no other filter
    or sort needs the message row; then the page's messages and snippets. In another order
    than rank no rank is computed (None)."""
    assert f.search is not None
    where, params = reads._filter_sql(f, conn)
    joined = bool(where) or f.sort in ("created", "priority")
    body = " FROM message_search s"
    if joined:  # CROSS JOIN: the index outermost, walked in its order (newest first)
        body += (
            " CROSS JOIN messages m ON m.id = s.rowid CROSS JOIN channels c ON c.id = m.channel_id"
        )
    body += " WHERE message_search MATCH ?"
    params = [f.search, *params]
    if where:
        body += " AND " + " AND ".join(where)
    o = "DESC" if (f.order or ("asc" if f.sort in (None, "rank") else "desc")) == "desc" else "ASC"
    ranked = f.sort is None or f.sort == "rank"
    if ranked:  # best first (bm25: the lower, the better)
        # the index walked from the newest match, no further than `bound` + 1 of them: that
        # many ids cost less than counting every match would
        newest = conn.execute(
            f"SELECT s.rowid {body} ORDER BY s.rowid DESC LIMIT ?", (*params, bound + 1)
        ).fetchall()
        total, lower = min(len(newest), bound), len(newest) > bound
        if lower:  # rank the newest `bound` only
            body += " AND s.rowid >= ?"
            params.append(newest[bound - 1][0])
        hits = (
            conn.execute(
                f"SELECT s.rowid, {_RANK} AS score {body}"
                f" ORDER BY score {o}, s.rowid DESC LIMIT ? OFFSET ?",
                (*params, f.limit, f.offset),
            ).fetchall()
            if newest
            else []
        )
    else:
        order = f"s.rowid {o}" if f.sort == "id" else reads._order(f, "", "desc")
        hits = conn.execute(
            f"SELECT s.rowid, NULL {body} ORDER BY {order} LIMIT ? OFFSET ?",
            (*params, f.limit + 1, f.offset),
        ).fetchall()
        total, lower = _total(conn, body, params, hits, f, bound)
    found = {
        r[0]: r
        for r in conn.execute(
            f"SELECT {reads._MSG_COLS} FROM messages m JOIN channels c ON c.id = m.channel_id"
            f" WHERE m.id IN ({','.join('?' * len(hits))})",
            [h[0] for h in hits],
        )
    }
    snippets = _snippets(conn, f.search, [h[0] for h in hits])
    msgs = []
    for mid, score in hits:
        m = reads._message(found[mid])
        m.search = SearchHit(score, snippets.get(mid, ""))
        msgs.append(m)
    reads.attach_deliveries(conn, msgs)
    reads.attach_events(conn, msgs)
    return msgs, total, lower


def _total(
    conn: sqlite3.Connection,
    body: str,
    params: list[Any],
    rows: list[Any],
    f: MessageFilter,
    bound: int,
) -> tuple[int, bool]:
    """(total, whether it is a lower bound): the page fetched with one row to spare shows
    whether more exist; when they do, the matches are counted up to `bound` or just past
    the page, whichever is further (counting every match of a common word costs more than
    the page does)."""
    if len(rows) <= f.limit and (f.offset == 0 or rows):
        del rows[f.limit :]
        return f.offset + len(rows), False
    del rows[f.limit :]
    cap = max(bound, f.offset + f.limit + 1)
    n = conn.execute(f"SELECT count(*) FROM (SELECT 1 {body} LIMIT ?)", (*params, cap + 1))
    counted: int = n.fetchone()[0]
    return (cap, True) if counted > cap else (counted, False)


def _snippets(conn: sqlite3.Connection, expression: str, ids: list[int]) -> dict[int, str]:
    """The page's rows only, in one statement (FTS5 looks each id up): a snippet reads the
    message's text back, so it is not worth making for every match before the sort keeps a
    page of them."""
    if not ids:
        return {}
    rows = conn.execute(
        f"SELECT rowid, {_SNIPPET} FROM message_search WHERE message_search MATCH ?"
        f" AND rowid IN ({','.join('?' * len(ids))})",
        (expression, *ids),
    )
    return dict(rows.fetchall())


def rebuild(conn: sqlite3.Connection) -> int:
    """Drop the index, its view, its triggers and its state (whatever is left of them) and
    write them again, then index every message; returns how many messages are indexed."""
    for trigger in (*_OBJECTS, "message_search_insert"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    _drop_table(conn)
    conn.execute("DROP VIEW IF EXISTS message_search_source")
    conn.execute("DROP TABLE IF EXISTS search_state")
    for statement in _create_statements():
        conn.execute(statement)
    conn.execute("INSERT INTO message_search (message_search) VALUES ('rebuild')")
    optimize(conn)
    conn.execute(
        "UPDATE search_state SET indexed_through = (SELECT coalesce(max(id), 0) FROM messages)"
    )
    count: int = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    return count


def optimize(conn: sqlite3.Connection) -> None:
    """Merge the index into one segment. FTS5 writes a large index as several segments
    and reads each word's matches from every one of them: counting or weighing a common
    word over nine segments took five times as long as over one (bench/search.py)."""
    conn.execute("INSERT INTO message_search (message_search) VALUES ('optimize')")


def behind(conn: sqlite3.Connection) -> tuple[int, int]:
    """(the highest message id indexed, the highest stored): two lookups."""
    through = conn.execute("SELECT indexed_through FROM search_state").fetchone()[0]
    top = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
    return through, top


def catch_up(conn: sqlite3.Connection, through: int, top: int) -> int:
    """Index the messages with ids in (through, top], in one statement, and move the mark
    to `top`; returns how many were indexed. In the caller's write transaction."""
    n = conn.execute(
        "INSERT INTO message_search (rowid, content, subject, event)"
        " SELECT id, content, subject, event FROM message_search_source"
        " WHERE id > ? AND id <= ? ORDER BY id",
        (through, top),
    ).rowcount
    conn.execute("UPDATE search_state SET indexed_through = ?", (top,))
    return n


def parses(conn: sqlite3.Connection, expression: str) -> None:
    """Let FTS5 read the expression (sqlite3.OperationalError when it cannot): before
    anything is written."""
    conn.execute(
        "SELECT rowid FROM message_search WHERE message_search MATCH ? LIMIT 1", (expression,)
    ).fetchall()


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
    """What is wrong with the index, or None: it, its state or one of its triggers is
    missing, or it does not hold one row per message up to its mark (two counts)."""
    names = {
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE (name LIKE 'message_search%'"
            " OR name = 'search_state') AND type IN ('table', 'trigger', 'view')"
        )
    }
    wanted = ("message_search", "message_search_source", "search_state", *_OBJECTS)
    missing = [n for n in wanted if n not in names]
    if missing:
        return f"missing: {', '.join(missing)}"
    try:
        indexed = conn.execute("SELECT count(*) FROM message_search_docsize").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        return f"unreadable: {exc}"
    stored = conn.execute(
        "SELECT count(*) FROM messages WHERE id <= (SELECT indexed_through FROM search_state)"
    ).fetchone()[0]
    if indexed != stored:
        return f"it holds {indexed} messages of the {stored} it should"
    return None


def _create_statements() -> list[str]:
    ev = _EVENT_TEXT.format(e="e")
    old_ev = _EVENT_TEXT.format(e="old")
    src = "SELECT id, content, subject, event FROM message_search_source"
    add = "INSERT INTO message_search (rowid, content, subject, event)"
    remove = "INSERT INTO message_search (message_search, rowid, content, subject, event)"
    through = "(SELECT indexed_through FROM search_state)"
    return [
        "CREATE TABLE search_state (id INTEGER PRIMARY KEY CHECK (id = 1),"
        " indexed_through INTEGER NOT NULL)",
        "INSERT INTO search_state VALUES (1, 0)",
        "CREATE VIEW message_search_source AS"
        " SELECT m.id AS id, m.content AS content, m.subject AS subject,"
        f" (SELECT {ev} FROM message_events e WHERE e.message_id = m.id) AS event"
        " FROM messages m",
        "CREATE VIRTUAL TABLE message_search USING fts5("
        "content, subject, event,"
        " content = 'message_search_source', content_rowid = 'id',"
        " tokenize = 'unicode61 remove_diacritics 2')",
        "CREATE TRIGGER message_search_update AFTER UPDATE OF content, subject ON messages"
        f" WHEN old.id <= {through}"
        " AND (old.content IS NOT new.content OR old.subject IS NOT new.subject) BEGIN"
        f" {remove} SELECT 'delete', old.id, old.content, old.subject, s.event"
        " FROM message_search_source s WHERE s.id = old.id;"
        f" {add} {src} WHERE id = new.id; END",
        f"CREATE TRIGGER message_search_delete AFTER DELETE ON messages WHEN old.id <= {through}"
        f" BEGIN {remove} VALUES ('delete', old.id, old.content, old.subject,"
        f" (SELECT {ev} FROM message_events e WHERE e.message_id = old.id)); END",
        "CREATE TRIGGER message_search_event_insert AFTER INSERT ON message_events"
        f" WHEN new.message_id <= {through} BEGIN"
        f" {remove} SELECT 'delete', id, content, subject, NULL FROM messages"
        " WHERE id = new.message_id;"
        f" {add} {src} WHERE id = new.message_id; END",
        "CREATE TRIGGER message_search_event_update"
        " AFTER UPDATE OF thread_id, actor, target ON message_events"
        f" WHEN old.message_id <= {through} BEGIN"
        f" {remove} SELECT 'delete', id, content, subject, {old_ev} FROM messages"
        " WHERE id = old.message_id;"
        f" {add} {src} WHERE id = new.message_id; END",
        "CREATE TRIGGER message_search_event_delete AFTER DELETE ON message_events"
        f" WHEN old.message_id <= {through} BEGIN"
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
