"""SQL of metadata filters and the expression indexes that serve them.

A filter's JSON path is written into the statement (never bound) so that SQLite can match
it against an expression index on the same path; keys are checked against a small
character set before they get here (`model.meta_key`), and values are always bound.
"""

from __future__ import annotations

import sqlite3

TYPE_CHECKING = False  # typing's, without importing typing (a receive's start-up time)
if TYPE_CHECKING:
    from typing import Any

    from acomm_cli.model import MetaCondition

_PREFIX = "messages_meta_c"


def path_sql(key: str) -> str:
    """`json_extract(m.metadata, '$."KEY"')`, the expression an index on KEY is built on."""
    return f"json_extract(metadata, '$.\"{key}\"')"


def _values(value: str) -> list[Any]:
    """What a filter value matches: the text, and the number it spells when it is one (a
    JSON number, or true/false stored as 1/0, matches its decimal form)."""
    out: list[Any] = [value]
    try:
        out.append(int(value))
    except ValueError:
        try:
            number = float(value)
        except ValueError:
            return out
        if number - number == 0:  # neither nan nor infinite
            out.append(number)
    return out


def where(conds: tuple[MetaCondition, ...], alias: str = "m") -> tuple[list[str], list[Any]]:
    """SQL terms (ANDed) and their parameters for metadata conditions on `alias`."""
    terms: list[str] = []
    params: list[Any] = []
    for c in conds:
        expr = path_sql(c.key).replace("metadata", f"{alias}.metadata", 1)
        if c.op in ("has", "absent"):
            # json_type tells a key holding JSON null from a missing key
            typed = f"json_type({alias}.metadata, '$.\"{c.key}\"')"
            terms.append(f"{typed} IS {'NOT ' if c.op == 'has' else ''}NULL")
            continue
        values = _values(c.value or "")
        marks = ",".join("?" * len(values))
        if c.op == "eq":
            terms.append(f"{expr} IN ({marks})")
        else:  # a message without the key is not VALUE, as label selectors read `!=`
            terms.append(f"({expr} IS NULL OR {expr} NOT IN ({marks}))")
        params.extend(values)
    return terms, params


def index_name(channel_id: int, key: str) -> str:
    import hashlib

    return f"{_PREFIX}{channel_id}_{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def create_index(conn: sqlite3.Connection, channel_id: int, key: str) -> bool:
    """An expression index on KEY for one channel's messages; False if it was there."""
    name = index_name(channel_id, key)
    if _exists(conn, name):
        return False
    conn.execute(
        f"CREATE INDEX {name} ON messages({path_sql(key)}) WHERE channel_id = {int(channel_id)}"
    )
    return True


def drop_index(conn: sqlite3.Connection, channel_id: int, key: str) -> bool:
    """Drop the channel's index on KEY; False if it had none."""
    name = index_name(channel_id, key)
    if not _exists(conn, name):
        return False
    conn.execute(f"DROP INDEX {name}")
    return True


def indexed_keys(conn: sqlite3.Connection, channel_id: int) -> list[str]:
    """The metadata keys a channel has indexes on, read back from the schema itself."""
    rows = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND name LIKE ? ESCAPE '\\'",
        (f"{_PREFIX}{int(channel_id)}\\_%",),
    ).fetchall()
    keys = []
    for (sql,) in rows:
        start = sql.find("'$.\"") + 4
        keys.append(sql[start : sql.find("\"')", start)])
    return sorted(keys)


def _exists(conn: sqlite3.Connection, name: str) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)
        ).fetchone()
        is not None
    )
