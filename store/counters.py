"""SQL of `counters`: named totals of things that leave no row of their own (spans a trace
collector did not take), shown by `stats`."""

from __future__ import annotations

import sqlite3


def add(conn: sqlite3.Connection, name: str, n: int) -> None:
    conn.execute(
        "INSERT INTO counters (name, value) VALUES (?, ?)"
        " ON CONFLICT (name) DO UPDATE SET value = value + excluded.value",
        (name, n),
    )


def every(conn: sqlite3.Connection) -> dict[str, int]:
    return dict(conn.execute("SELECT name, value FROM counters ORDER BY name").fetchall())
