"""SQL of the Prometheus scrape (`acomm_cli.monitoring.metrics`): totals per channel read from
the rows as they stand, so a scrape writes nothing and keeps no state of its own."""

from __future__ import annotations

import sqlite3


def sent_by_channel(conn: sqlite3.Connection) -> list[tuple[str, int]]:
    """(channel, messages stored on it)."""
    return conn.execute(
        "SELECT c.name, count(m.id) FROM channels c JOIN messages m ON m.channel_id = c.id"
        " GROUP BY c.id ORDER BY c.name"
    ).fetchall()


def deliveries_by_channel(conn: sqlite3.Connection) -> list[tuple[str, int, int]]:
    """(channel, deliveries read at least once, deliveries acknowledged); a work queue's
    unclaimed row (recipient `*`) is nobody's yet and counts in neither."""
    return conn.execute(
        "SELECT c.name,"
        " count(coalesce(d.first_read_at, d.read_at)),"
        " count(d.acked_at)"
        " FROM channels c JOIN deliveries d ON d.channel_id = c.id"
        " GROUP BY c.id ORDER BY c.name"
    ).fetchall()


def dead_letters_by_channel(conn: sqlite3.Connection) -> list[tuple[str, str, int]]:
    """(channel, reason, dead letters held)."""
    return conn.execute(
        "SELECT coalesce(c.name, '#' || dl.channel_id), dl.reason, count(*)"
        " FROM dead_letters dl LEFT JOIN channels c ON c.id = dl.channel_id"
        " GROUP BY dl.channel_id, dl.reason ORDER BY 1, 2"
    ).fetchall()


def receipts_by_status(conn: sqlite3.Connection) -> list[tuple[str, str, int]]:
    """(agent, status, dispatch runs recorded)."""
    return conn.execute(
        "SELECT agent, status, count(*) FROM dispatch_receipts GROUP BY agent, status"
        " ORDER BY agent, status"
    ).fetchall()
