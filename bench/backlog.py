"""A channel's backlog and its deliveries in flight: the SQL before the partial index (a scan of
every delivery) against the SQL on the partial index deliveries_active, interleaved.

    .venv/bin/python bench/backlog.py                  # the 100,000-message store
    .venv/bin/python bench/backlog.py --messages 20000

On bench/stores.py's cached store as built (almost every delivery read: few active), then on
copies where one delivery in ten, and every delivery, is unread (all active: the index's worst
case, each of its entries looked up in the table). Prints a Markdown table;
docs/BENCHMARKS.md "Channel backlog on deliveries_active" holds a run.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Callable
from time import perf_counter

from harness import WORK, median
from stores import big_store, copy_store

from acomm_cli.engine import opening
from acomm_cli.store import backlog

# As they were before they used deliveries_active (tests/test_backlog_indexes.py holds the
# same text).
OLD_BACKLOG = (
    "SELECT count(DISTINCT CASE WHEN (state = 'unread' OR (tracked = 1 AND state IN ('read',"
    " 'waiting'))) THEN message_id END), count(DISTINCT CASE WHEN state = 'queued' THEN"
    " message_id END) FROM deliveries WHERE channel_id = ? AND state IN ('queued', 'waiting',"
    " 'unread', 'read')"
)
OLD_IN_FLIGHT = (
    "SELECT message_id, recipient, retry_count FROM deliveries WHERE channel_id = ?"
    " AND (state IN ('unread', 'waiting', 'queued') OR (tracked = 1 AND state = 'read'))"
    " ORDER BY message_id, recipient"
)


def _rows(conn: sqlite3.Connection, label: str, rounds: int) -> list[str]:
    deliveries = conn.execute("SELECT count(*) FROM deliveries").fetchone()[0]
    active = conn.execute(
        f"SELECT count(*) FROM deliveries INDEXED BY deliveries_active WHERE {backlog.ACTIVE}"
    ).fetchone()[0]
    out = []
    for cid, name in conn.execute(
        "SELECT id, name FROM channels WHERE name IN ('team', 'ops') ORDER BY name"
    ).fetchall():
        cases: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
            (
                "channel_backlog",
                lambda c=cid: conn.execute(OLD_BACKLOG, (c,)).fetchone(),
                lambda c=cid: backlog.channel_backlog(conn, c),
            ),
            (
                "in_flight",
                lambda c=cid: conn.execute(OLD_IN_FLIGHT, (c,)).fetchall(),
                lambda c=cid: backlog.in_flight(conn, c),
            ),
        ]
        for case, old, new in cases:
            assert old() == new(), (case, name)  # the same answer, or no timing at all
            times: dict[str, list[float]] = {"old": [], "new": []}
            for i in range(rounds):  # alternate which goes first
                for key, fn in sorted((("old", old), ("new", new)), reverse=bool(i % 2)):
                    start = perf_counter()
                    fn()
                    times[key].append(perf_counter() - start)
            o, n = median(times["old"]) * 1e3, median(times["new"]) * 1e3
            out.append(
                f"| {label} ({deliveries:,} deliveries, {active:,} active) | {case}"
                f" `{name}` | {o:.2f} ms | {n:.2f} ms | {o / n:.2f}x |"
            )
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    src, _ = big_store(args.messages)
    conn = opening.connect(src, create=False)
    rows = _rows(conn, "as built", args.rounds)
    conn.close()
    for label, where in (("1 in 10 unread", "message_id % 10 = 0"), ("all unread", "1")):
        copy = copy_store(src, WORK / "backlog-unread.acomm")
        conn = opening.connect(copy, create=False)
        conn.execute(f"UPDATE deliveries SET state = 'unread', read_at = NULL WHERE {where}")
        conn.commit()
        rows += _rows(conn, label, args.rounds)
        conn.close()
    print(
        f"{args.messages:,} messages, SQLite {sqlite3.sqlite_version}, medians of"
        f" {args.rounds}, interleaved\n"
    )
    print("| store | statement, channel | before (scan) | deliveries_active | speed-up |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
