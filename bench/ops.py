"""Benchmarks of the store operations: `stats` and `compact` on big stores.

    .venv/bin/python bench/ops.py            # both; rewrites its section of docs/BENCHMARKS.md
    .venv/bin/python bench/ops.py --quick    # 100,000 messages, prints only
    .venv/bin/python bench/ops.py --no-write # full size, prints only

- stats: `operations.stats` in process on 1,000,000 messages to 1,000 agents; target under
  1 s. Prints the EXPLAIN QUERY PLAN of every statement it runs (captured by a trace
  callback, so the plans are those of the real statements).
- compact: `operations.compact` removing 1,000,000 terminal messages (keeping 10,000 active
  ones) against a raw `DELETE` of the same rows from a copy of the same store; target within
  3x.

The stores are written straight into the real schema (made by `opening.connect`) with
executemany, cached under bench/out/ keyed by size and schema, and copied before a write.
This script owns the section "## Store operations" of docs/BENCHMARKS.md and
replaces only that section, so `bench/run.py` and this script can each be rerun alone.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path
from time import perf_counter

from harness import DOC, OUT, WORK, duration, machine, median, spread, write_section
from stores import remove, schema_key

from acomm_cli import clock
from acomm_cli.engine import opening, operations, timers

SECTION = "## Store operations"
BUILD_VERSION = 2
AGENTS = 1000
GROUPS = 10
GROUP_SIZE = 20
CHUNK = 100_000

_CHANNEL = (
    "INSERT INTO channels (id, name, type, owner, state, created_at, delivery, max_message_size,"
    " ack_timeout_ms, max_retries, retry_backoff_ms, retry_jitter, echo, priority_ordering,"
    " max_pending, dedupe_window_ms) VALUES (?, ?, ?, ?, ?, ?, ?, 1048576, 30000, 3, 1000, 0,"
    " 0, 0, 0, 86400000)"
)
_PARTICIPANT = "INSERT INTO participants (channel_id, agent, role, joined_at) VALUES (?, ?, ?, ?)"
_MESSAGE = (
    "INSERT INTO messages (id, channel_id, sender, type, content, priority, created_at)"
    " VALUES (?, ?, ?, 'text', ?, 1, ?)"
)
_DELIVERY = (
    "INSERT INTO deliveries (message_id, recipient, channel_id, state, rank, tracked,"
    " retry_count, delivered_at, read_at, acked_at, ack_status, next_timer_at)"
    " VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)"
)
_DEAD = "INSERT INTO dead_letters VALUES (?, ?, ?, 'max_retries_exceeded', 3, NULL, ?)"


def agent(i: int) -> str:
    return f"agent{i % AGENTS:04d}"


def layout(n: int, active: int, dead_letters: bool) -> str:
    return (
        f"{n:,} messages, {AGENTS:,} agents (agent0000-agent{AGENTS - 1:04d}). Channels: "
        f"{AGENTS:,} direct channels (agent i -> agent i+1; odd ones at-least-once, so their "
        f"deliveries are ack-tracked; 10 of them closed) and {GROUPS} group channels of "
        f"{GROUP_SIZE} agents. Traffic: 98% direct, 2% group, about 1.4 delivery rows per "
        f"message. The newest {active:,} messages are not done with (unread, read awaiting an "
        "ack, waiting for a retry, queued); older deliveries are acked (tracked) or read, and "
        "1 in 100 tracked ones is dead"
        + (" with its dead letter." if dead_letters else " with its dead letter discarded.")
    )


def build(path: Path, n: int, active: int, dead_letters: bool) -> None:
    """Write the store with executemany; the schema and the `_system` channel come from
    `opening.connect`, exactly as `acomm init` makes them."""
    remove(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    start = perf_counter()
    now = clock.now_ms()
    t0 = now - n * 100  # one message every 100 ms, ending now
    conn = opening.connect(path, create=True, now=t0)
    rng = random.Random(4)
    try:
        conn.execute("PRAGMA cache_size = -524288")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("BEGIN")
        channels, participants = [], []
        for i in range(AGENTS):
            cid = 100 + i
            state = "closed" if i < 10 else "active"
            channels.append(
                (
                    cid,
                    f"d{i:04d}",
                    "direct",
                    agent(i),
                    state,
                    t0,
                    "at-least-once" if i % 2 else "at-most-once",
                )
            )
            participants += [(cid, agent(i), "owner", t0), (cid, agent(i + 1), "member", t0)]
        for g in range(GROUPS):
            cid = 10_000 + g
            members = [agent(g * GROUP_SIZE + k) for k in range(GROUP_SIZE)]
            channels.append((cid, f"g{g}", "group", members[0], "active", t0, "at-least-once"))
            participants += [
                (cid, m, "owner" if k == 0 else "member", t0) for k, m in enumerate(members)
            ]
        conn.executemany(_CHANNEL, channels)
        conn.executemany(_PARTICIPANT, participants)
        conn.execute("COMMIT")
        for lo in range(1, n + 1, CHUNK):
            msgs, dels, dead = [], [], []
            for mid in range(lo, min(n + 1, lo + CHUNK)):
                at = t0 + mid * 100
                if mid % 50 == 7:
                    g = mid % GROUPS
                    cid, sender = 10_000 + g, agent(g * GROUP_SIZE + mid % GROUP_SIZE)
                    recipients = [agent(g * GROUP_SIZE + k) for k in range(GROUP_SIZE)]
                    recipients.remove(sender)
                    tracked = 1
                else:
                    i = mid % AGENTS
                    cid, sender, recipients, tracked = 100 + i, agent(i), [agent(i + 1)], i % 2
                msgs.append((mid, cid, sender, f"message {mid}: a status update", at))
                fresh = mid > n - active
                for r in recipients:
                    state = _state(rng, fresh, tracked)
                    timer = (
                        at + 30_000
                        if (
                            tracked and state in ("unread", "read", "waiting") or state == "waiting"
                        )
                        else None
                    )
                    delivered = None if state == "queued" else at
                    read = at + 50 if state in ("read", "acked") else None
                    acked = at + 60 if state == "acked" else None
                    dels.append(
                        (
                            mid,
                            r,
                            cid,
                            state,
                            tracked,
                            3 if state == "dead" else 0,
                            delivered,
                            read,
                            acked,
                            "completed" if acked else None,
                            timer,
                        )
                    )
                    if state == "dead" and dead_letters:
                        dead.append((mid, r, cid, at + 127_000))
            conn.execute("BEGIN")
            conn.executemany(_MESSAGE, msgs)
            conn.executemany(_DELIVERY, dels)
            conn.executemany(_DEAD, dead)
            conn.execute("COMMIT")
            print(
                f"  {min(n, lo + CHUNK - 1):,} / {n:,} messages ({perf_counter() - start:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def _state(rng: random.Random, fresh: bool, tracked: int) -> str:
    x = rng.random()
    if not fresh:
        if tracked:
            return "dead" if x < 0.01 else "acked"
        return "read"
    if tracked:
        return "unread" if x < 0.4 else "read" if x < 0.8 else "waiting" if x < 0.95 else "queued"
    return "unread" if x < 0.9 else "queued"


def cached(name: str, n: int, active: int, dead_letters: bool) -> Path:
    path = OUT / f"ops-{name}-{n}-{schema_key()}-o{BUILD_VERSION}.acomm"
    if path.exists():
        return path
    for stale in OUT.glob(f"ops-{name}-{n}-*.acomm*"):
        stale.unlink()
    print(f"building {path.name} ...", file=sys.stderr, flush=True)
    tmp = OUT / f"building-{path.name}"
    build(tmp, n, active, dead_letters)
    tmp.rename(path)
    remove(tmp)
    return path


def copy(src: Path, name: str) -> Path:
    dst = WORK / name
    remove(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    return dst


# ---------------------------------------------------------------- stats


def bench_stats(n: int, reps: int) -> tuple[dict[str, object], list[str]]:
    # Two copies of the store, built with its newest timers due now, as if no tick had run
    # for hours: one is ticked once (what cron keeps doing: the stats target is for that
    # case), the other is left overdue. stats counts overdue timers without applying them
    # (target: at most 2x the time after the tick), so neither copy changes between runs
    # and the two are timed alternately.
    src = cached("stats", n, 100_000 * n // 1_000_000, True)
    conn = opening.connect(copy(src, "ops-stats.acomm"), create=False)
    over = opening.connect(copy(src, "ops-stats-overdue.acomm"), create=False)
    statements: list[str] = []
    try:
        now = clock.now_ms()
        due_rows = conn.execute(
            "SELECT count(*) FROM deliveries WHERE next_timer_at <= ?", (now,)
        ).fetchone()[0]
        projected = operations.stats(conn, now)
        ticked = timers.tick(conn, now)
        after = operations.stats(conn, now)
        agrees = (after.agents, after.channels, after.store.messages) == (
            projected.agents,
            projected.channels,
            projected.store.messages,
        )
        conn.set_trace_callback(statements.append)
        first_t = perf_counter()
        result = operations.stats(conn, clock.now_ms())
        first = perf_counter() - first_t
        conn.set_trace_callback(None)
        times: list[float] = []
        overdue_times: list[float] = []
        before = None
        for i in range(reps):
            for which in (conn, over) if i % 2 else (over, conn):
                t = perf_counter()
                got = operations.stats(which, clock.now_ms())
                (overdue_times if which is over else times).append(perf_counter() - t)
                if which is over:
                    before = got
        plans = []
        for sql in statements:
            if not sql.lstrip().upper().startswith("SELECT"):
                continue
            t = perf_counter()
            conn.execute(sql).fetchall()
            took = perf_counter() - t
            rows = conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
            plans.append(f"{sql}  -- {duration(took)}\n" + "\n".join(f"    {r[3]}" for r in rows))
        deliveries = conn.execute("SELECT count(*) FROM deliveries").fetchone()[0]
        active = conn.execute(
            "SELECT count(*) FROM deliveries WHERE state IN ('queued', 'waiting', 'unread')"
            " OR (tracked = 1 AND state = 'read')"
        ).fetchone()[0]
    finally:
        conn.close()
        over.close()
    unread = sum(a.unread for a in result.agents)
    return {
        "overdue": overdue_times,
        "ticked": ticked.total,
        "due_rows": due_rows,
        "agrees": agrees,
        "overdue_unread": sum(a.unread for a in before.agents) if before else 0,
        "first": first,
        "times": times,
        "agents": len(result.agents),
        "channels": len(result.channels),
        "unread": unread,
        "deliveries": deliveries,
        "active": active,
        "messages": result.store.messages,
        "bytes": result.store.bytes,
        "layout": layout(n, 100_000 * n // 1_000_000, True),
    }, plans


# ---------------------------------------------------------------- compact


def bench_compact(n: int, reps: int) -> dict[str, object]:
    keep = 10_000 * n // 1_000_000
    src = cached("compact", n + keep, keep, False)

    def ours() -> tuple[float, object]:
        path = copy(src, "ops-compact.acomm")
        conn = opening.connect(path, create=False)
        try:
            t = perf_counter()
            r = operations.compact(conn, clock.now_ms())
            took = perf_counter() - t
        finally:
            conn.close()
        assert r.removed_messages == n, (r.removed_messages, n)
        return took, r

    def raw() -> float:
        path = copy(src, "ops-compact-raw.acomm")
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("PRAGMA synchronous = NORMAL")
            t = perf_counter()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM deliveries WHERE message_id <= ?", (n,))
            gone = conn.execute("DELETE FROM messages WHERE id <= ?", (n,)).rowcount
            conn.execute("COMMIT")
            took = perf_counter() - t
        finally:
            conn.close()
        assert gone == n, (gone, n)
        return took

    mine, base, last = [], [], None
    for i in range(reps):
        if i % 2:
            base.append(raw())
            took, last = ours()
            mine.append(took)
        else:
            took, last = ours()
            mine.append(took)
            base.append(raw())
    for name in ("ops-compact.acomm", "ops-compact-raw.acomm"):
        remove(WORK / name)
    return {
        "mine": mine,
        "base": base,
        "result": last,
        "kept": keep,
        "layout": layout(n + keep, keep, False),
    }


# ---------------------------------------------------------------- report


def report(n: int, st: dict, plans: list[str], cp: dict, reps: int) -> str:
    s_med = median(st["times"])
    o_med = median(st["overdue"])
    c_med, b_med = median(cp["mine"]), median(cp["base"])
    ratio = c_med / b_med
    r = cp["result"]
    verdict = {True: "PASS", False: "FAIL"}
    lines = [
        SECTION,
        "",
        "Written by `bench/ops.py` (it replaces only this section). Reproduce from the "
        "repository root:",
        "",
        "```sh",
        ".venv/bin/python bench/ops.py",
        "```",
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on "
        + ", ".join(f"{k} {v}" for k, v in machine().items() if k in ("nproc", "sqlite"))
        + ".",
        "",
        "| Benchmark | Measured | Baseline | Ratio | Target | Result |",
        "|---|---|---|---|---|---|",
        f"| stats ({n:,} messages, {AGENTS:,} agents) | {duration(s_med)} | 1 s (absolute) | "
        f"{s_med:.2f}x | < 1 s | {verdict[s_med < 1]} |",
        f"| stats with {st['due_rows']:,} deliveries overdue (no tick for hours) | "
        f"{duration(o_med)} | {duration(s_med)} (after a tick) | {o_med / s_med:.2f}x | "
        f"<= 2x | {verdict[o_med <= 2 * s_med]} |",
        f"| compact ({n:,} terminal messages) | {duration(c_med)} | {duration(b_med)} (raw "
        f"DELETE) | {ratio:.2f}x | <= 3x | {verdict[ratio <= 3]} |",
        "",
        "### stats",
        "",
        f"- Store: {st['layout']} {st['deliveries']:,} deliveries, {st['active']:,} of them "
        f"not done with; {st['bytes'] / 2**20:,.0f} MiB.",
        f"- `operations.stats(conn, now)` in process on an open connection (what `acomm stats` "
        f"runs after opening the store), after one `tick`: {spread(st['times'])}; the first "
        f"call {duration(st['first'])}. Result: {st['agents']:,} agents, {st['channels']:,} "
        f"channels, {st['unread']:,} unread.",
        f"- Before that tick, with {st['due_rows']:,} deliveries overdue (a store no tick has "
        f"run on for hours; the tick then made {st['ticked']:,} moves): {spread(st['overdue'])}."
        " stats counts the due timers as the tick will apply them without applying them "
        "(engine/projection.py follows each due delivery through the tick's steps in Python; "
        "the breakdown of the deliveries not yet done with sets the due ones apart); the "
        "result equals stats after the tick: "
        f"{'yes' if st['agrees'] else 'NO'}. Before the projection, stats applied them in a "
        "transaction it rolled back: 8.17 s against 268 ms after the tick (30x).",
        "- How: totals per agent walk the covering index `deliveries_inbox` once (it is "
        "ordered by recipient, so GROUP BY needs no sort); everything else (unread, awaiting "
        "ack, oldest unread, pending, queued) reads only the deliveries not yet done with, "
        "through the partial index `deliveries_active`; dead letters are grouped from their "
        "own table; the message count walks the smallest index of `messages`.",
        "- Every statement, the time it took alone, and its EXPLAIN QUERY PLAN:",
        "",
        "```",
        *plans,
        "```",
        "",
        "### compact",
        "",
        f"- Store: {cp['layout']}",
        "- `operations.compact(conn, now)` (one transaction per chunk of 20,000 ids; selects"
        " the terminal messages into a temp table, keeping those with an active delivery read"
        f" from the partial index, then two set-based DELETEs): {spread(cp['mine'])}. Removed "
        f"{r.removed_messages:,} messages and {r.removed_deliveries:,} deliveries, kept "
        f"{cp['kept']:,}.",
        f"- Baseline: on a copy of the same store, `BEGIN IMMEDIATE; DELETE FROM deliveries "
        f"WHERE message_id <= {n}; DELETE FROM messages WHERE id <= {n}; COMMIT` through plain "
        f"sqlite3 (foreign keys off, synchronous NORMAL): {spread(cp['base'])}.",
        f"- {reps} runs each, alternating which goes first, each on a fresh copy of the cached "
        "store (the copy is not timed).",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="100,000 messages; prints only")
    ap.add_argument("--no-write", action="store_true", help="do not touch docs/BENCHMARKS.md")
    ap.add_argument("--reps", type=int, default=None, help="timed runs of each side")
    args = ap.parse_args()
    n = 100_000 if args.quick else 1_000_000
    st, plans = bench_stats(n, args.reps or 10)
    print(f"stats: {spread(st['times'])} (first {duration(st['first'])})")
    for p in plans:
        print(p)
    reps = args.reps or 3
    cp = bench_compact(n, reps)
    print(
        f"compact: {spread(cp['mine'])}; raw DELETE {spread(cp['base'])}; "
        f"ratio {median(cp['mine']) / median(cp['base']):.2f}x"
    )
    text = report(n, st, plans, cp, reps)
    if not (args.quick or args.no_write):
        write_section(SECTION, text)
        print(f"wrote the section {SECTION!r} of {DOC}")
    ok = (
        median(st["times"]) < 1
        and median(st["overdue"]) <= 2 * median(st["times"])
        and st["agrees"]
        and median(cp["mine"]) / median(cp["base"]) <= 3
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
