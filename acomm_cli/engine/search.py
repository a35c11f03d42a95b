"""Full-text search of messages (`messages --search`, the MCP `search` tool): what a query
means, and the index rebuilt (`doctor --rebuild-search`).

A query is words, not FTS5 syntax: each word is matched as itself (quoted as an FTS5 phrase),
every word must match, and a word ending in `*` matches as a prefix. So a query an agent
writes (`error: timeout`, `C++`, `don't`, `a-b`) is never a syntax error. FTS5's own syntax
(OR, NOT, NEAR, column filters `subject:`, phrases, parentheses) is there behind the prefix
`fts:`; a malformed one is exit 3 naming `search`.

Messages enter the index in batches, not inside each send: `tick` indexes what was sent
since its last pass (`index_new`), and a search first indexes whatever is still left
(`catch_up`), so it always sees every committed message.

A search's cost follows its page, not its matches: past `BOUND` matches the ranked order
scores the newest `BOUND` only, and the total is counted to `BOUND` and said to be a lower
bound (`total_is_lower_bound`).
"""

from __future__ import annotations

import sqlite3

from acomm_cli.engine import attachments
from acomm_cli.engine.channels import get_channel
from acomm_cli.engine.inbox import check_filter
from acomm_cli.errors import InvalidState, StoreReadOnly, ValidationFailed
from acomm_cli.model import MessageFilter, QueryResult
from acomm_cli.store import search as store_search
from acomm_cli.store import write

MAX_CHARS = 500  # a query's length: longer ones are refused, not cut
MAX_WORDS = 32  # words in a plain query: each is one more term list FTS5 walks
RAW = "fts:"  # what introduces a query in FTS5's own syntax
# matches a search ranks and counts: bm25 scores each match it ranks (about 3.5 µs apiece)
# and a count walks every one, so a word in 1 message of 10 of a million costs 150-360 ms
# unbounded, 5-10 ms within the newest 1,000 (bench/search.py)
BOUND = 1000  # `messages --search --help` and docs/CONSUMERS.md say 1000
BATCH = 5000  # messages indexed per write transaction: holds the write lock ~0.1 s

SYNTAX = (
    "words, each matched as written (a trailing * matches a prefix), all of them required;"
    f' or {RAW} followed by an FTS5 query (AND, OR, NOT, NEAR(...), "phrases", prefix*,'
    " column filters content: subject: event:)"
)


def expression(query: str) -> str:
    """The FTS5 expression a query means; refused (exit 3, `search`) when empty or too long."""
    if len(query) > MAX_CHARS:
        raise ValidationFailed(
            f"search: a query is at most {MAX_CHARS} characters (this one has {len(query)})",
            field="search",
            value=query[:40] + "…",
        )
    if query.startswith(RAW):
        raw = query[len(RAW) :].strip()
        if not raw:
            raise ValidationFailed(f"search: nothing after {RAW!r}", field="search", value=query)
        return raw
    words = query.split()
    if not words:
        raise ValidationFailed(
            "search: the query has no words; give " + SYNTAX, field="search", value=query
        )
    if len(words) > MAX_WORDS:
        raise ValidationFailed(
            f"search: a query is at most {MAX_WORDS} words (this one has {len(words)})",
            field="search",
            value=query[:40] + "…",
        )
    return " ".join(_phrase(w) for w in words)


def _phrase(word: str) -> str:
    prefix = word.endswith("*") and len(word.rstrip("*")) > 0
    text = word.rstrip("*") if prefix else word
    return '"' + text.replace('"', '""') + '"' + ("*" if prefix else "")


def history(conn: sqlite3.Connection, f: MessageFilter) -> QueryResult:
    """The messages matching `f.search` (an expression from `expression`) and the other
    filters, best first unless `f.sort` says otherwise. Writes nothing but the index: the
    messages sent since the last search are indexed first (`catch_up`)."""
    assert f.search is not None
    check_filter(f)
    if f.channel is not None:
        get_channel(conn, f.channel)
    try:
        try:
            store_search.parses(conn, f.search)  # a refusal writes nothing
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                raise
            raise ValidationFailed(
                f"search: {str(exc).removeprefix('fts5: ')} in {f.search!r}; a query is " + SYNTAX,
                field="search",
                value=f.search,
            ) from None
        catch_up(conn)
        msgs, total, lower = store_search.history(conn, f, BOUND)
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
        raise InvalidState(
            f"search: the search index is damaged ({exc});"
            " `acomm doctor --rebuild-search` builds it again",
            field="search",
        ) from None
    attachments.decorate(conn, msgs)
    return QueryResult(msgs, total, f.offset, total_is_lower_bound=lower)


def catch_up(conn: sqlite3.Connection, batch: int | None = None) -> int:
    """Index the messages stored past the index's mark, `batch` ids per write transaction
    (none when there are none; on a read-only store, none: the search sees what is
    indexed); returns how many. Sends leave this to `tick` and to the next search:
    indexing one message per transaction cost a send more than the whole rest of it
    (bench/search.py). Messages stored while it runs wait for the next call."""
    through, target = store_search.behind(conn)
    done = 0
    try:
        while through < target:
            with write(conn):
                through, _ = store_search.behind(conn)  # another process may have done it
                upto = min(target, through + (batch or BATCH))
                if upto > through:
                    done += store_search.catch_up(conn, through, upto)
                through = upto
    except StoreReadOnly:
        pass
    return done


def index_new(conn: sqlite3.Connection) -> int:
    """`tick`'s pass: `catch_up`, so that a search after it has nothing left to index. A
    missing index is left to `acomm doctor` (which finds it) and to
    `doctor --rebuild-search`: it is no reason for a tick to fail."""
    try:
        return catch_up(conn)
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
        return 0


def rebuild(conn: sqlite3.Connection) -> int:
    """`doctor --rebuild-search`: write the index, its view and its triggers again and index
    every message, in one transaction; returns how many messages it holds."""
    with write(conn):
        return store_search.rebuild(conn)
