"""Full-text search: how long `messages --search` takes on a large store, side by side with
the raw FTS5 statements that give the same answer (the floor), and what keeping the index
costs a send.

Searches: the engine function `messages --search` calls (`engine/search.history`: the FTS5
match, the other filters' join, bm25 within the newest `search.BOUND` matches, the bounded
count, snippets, the page's deliveries and events), in process on an open connection (a
command adds its start-up, the same for every command), on a store of `--messages` messages
(default 1,000,000) built straight into the tables with executemany and indexed as `doctor
--rebuild-search` does (FTS5's `rebuild`, then `optimize`; both timed). Beside each, the raw
FTS5 statements of the same answer, and of the exact answer (every match ranked and counted),
which is what the bound saves. Shapes: a rare word (5 messages), a common word (one message in
10) ranked, the same newest first (--sort id), the same ranked within --channel, and two words
together.

The store is cached outside the repository (`$ACOMM_BENCH_CACHE`, else /dev/shm or the temp
directory), keyed by this script's VERSION, the message count and the schema's last
migration, so a rerun does not build it again; `--rebuild` builds it anyway.

Send: `engine/sending.send` in process on two fresh stores side by side, one with the index
(its triggers) and one without them (dropped), in interleaved rounds of 50 sends. Sends do
not index: `tick` does (`search.index_new`), timed after each round of the store with the
index and reported per message, beside the send it follows.

    .venv/bin/python bench/search.py [--messages N] [--quick] [--no-write] [--rebuild]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from time import perf_counter

from harness import WORK, machine, median, rotate, spread, synchronous_name, write_section
from stores import group_store, remove

from acomm_cli import clock
from acomm_cli.engine import channels, opening, search, sending
from acomm_cli.model import ChannelConfig, MessageFilter, SendRequest
from acomm_cli.store import search as store_search
from acomm_cli.store import write
from acomm_cli.store.migrations import MIGRATIONS

VERSION = 2  # of the store this script builds: a change to `build` bumps it
SECTION = "## Full-text search (`messages --search`)"
TARGET_S = 0.020  # a search's median
SEND_LIMIT = 1.15  # a send with the index / without
RARE = "kumquat"  # in 5 messages
COMMON = "deploy"  # in every 10th message
CHUNK = 100_000
WORDS = 12  # words a body draws from the vocabulary, besides the fixed ones
_RANK = "bm25(message_search, 1.0, 2.0, 1.0)"


def _vocabulary(rng: random.Random, size: int = 20_000) -> tuple[list[str], list[float]]:
    """Pseudo-words with Zipf-like frequencies, as natural text has (a few very common)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = sorted({"".join(rng.choices(letters, k=rng.randint(3, 9))) for _ in range(size)})
    rng.shuffle(words)
    cum, total = [], 0.0
    for rank in range(1, len(words) + 1):
        total += 1.0 / rank
        cum.append(total)
    return words, cum


def cache_dir() -> Path:
    base = os.environ.get("ACOMM_BENCH_CACHE") or (
        "/dev/shm" if Path("/dev/shm").is_dir() else tempfile.gettempdir()
    )
    return Path(base) / f"acomm-bench-search-v{VERSION}"


def cached(n: int, rebuild: bool) -> tuple[Path, dict[str, float]]:
    """The store of n messages, built once per VERSION and schema; (its path, the build's
    timings in seconds)."""
    path = cache_dir() / f"search-{n}-{MIGRATIONS[-1].__name__}.acomm"
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists() and not rebuild:
        print(f"the cached store {path}", file=sys.stderr, flush=True)
        return path, json.loads(meta.read_text())
    building = path.with_name("building-" + path.name)
    print(f"building a {n:,}-message store at {path} ...", file=sys.stderr, flush=True)
    timings = build(building, n)
    remove(path)
    building.rename(path)
    meta.write_text(json.dumps(timings))
    return path, timings


def build(path: Path, n: int) -> dict[str, float]:
    """A store of n messages on `team`; the seconds to insert, to index and to optimize."""
    remove(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    words, cum = _vocabulary(rng)
    now = clock.now_ms() - n
    conn = opening.connect(path, create=True, now=now)
    try:
        conn.execute("PRAGMA cache_size = -262144")
        channels.create_channel(conn, "team", "group", "alice", ChannelConfig(), now)
        channels.join_channel(conn, "team", "bob", "member", now, by="alice")
        cid = conn.execute("SELECT id FROM channels WHERE name = 'team'").fetchone()[0]
        rare = {n * k // 5 for k in range(5)}  # each also has the common word
        with write(conn):
            triggers = store_search.without_triggers(conn)
        t0 = perf_counter()
        for lo in range(0, n, CHUNK):
            hi = min(n, lo + CHUNK)
            drawn = rng.choices(words, cum_weights=cum, k=WORDS * (hi - lo))
            rows = []
            for i in range(lo, hi):
                body = " ".join(drawn[(i - lo) * WORDS : (i - lo + 1) * WORDS])
                if i % 10 == 0:
                    body = f"{COMMON} {body}"
                if i in rare:
                    body = f"{body} {RARE}"
                rows.append((cid, ("alice", "bob")[i % 2], f"message {i}: {body}", now + i))
            with write(conn):
                conn.executemany(
                    "INSERT INTO messages (channel_id, sender, type, content, priority,"
                    " created_at) VALUES (?, ?, 'text', ?, 1, ?)",
                    rows,
                )
            print(f"  inserted {hi:,} / {n:,}", file=sys.stderr, flush=True)
        inserted = perf_counter() - t0
        t0 = perf_counter()
        with write(conn):  # what store_search.rebuild runs, the table kept
            conn.execute("INSERT INTO message_search (message_search) VALUES ('rebuild')")
            indexed = perf_counter() - t0
            t0 = perf_counter()
            store_search.optimize(conn)
            optimized = perf_counter() - t0
            conn.execute("UPDATE search_state SET indexed_through = (SELECT max(id) FROM messages)")
            store_search.restore_triggers(conn, triggers)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return {"inserted": inserted, "indexed": indexed, "optimized": optimized}


def _raw(conn: sqlite3.Connection, f: MessageFilter, bounded: bool) -> Callable[[], object]:
    """The raw FTS5 statements of a shape's answer: its page of ids (and ranks) and its
    total, bounded as the engine bounds them or exact; no messages, snippets or deliveries."""
    assert f.search is not None
    body = " FROM message_search s"
    params: list[object] = [f.search]
    if f.channel is not None:
        body += (
            " CROSS JOIN messages m ON m.id = s.rowid CROSS JOIN channels c ON c.id = m.channel_id"
        )
    body += " WHERE message_search MATCH ?"
    if f.channel is not None:
        body += " AND c.name = ?"
        params.append(f.channel)
    limit, b = f.limit, search.BOUND

    def ranked() -> object:
        if not bounded:
            page = conn.execute(
                f"SELECT s.rowid, {_RANK} AS score {body} ORDER BY score LIMIT ?", (*params, limit)
            ).fetchall()
            return page, conn.execute(f"SELECT count(*) {body}", params).fetchone()
        ids = conn.execute(
            f"SELECT s.rowid {body} ORDER BY s.rowid DESC LIMIT ?", (*params, b + 1)
        ).fetchall()
        floor = ids[b - 1][0] if len(ids) > b else 0
        return conn.execute(
            f"SELECT s.rowid, {_RANK} AS score {body} AND s.rowid >= ? ORDER BY score LIMIT ?",
            (*params, floor, limit),
        ).fetchall()

    def newest() -> object:
        page = conn.execute(
            f"SELECT s.rowid {body} ORDER BY s.rowid DESC LIMIT ?", (*params, limit + 1)
        ).fetchall()
        count = (
            f"SELECT count(*) FROM (SELECT 1 {body} LIMIT {b + 1})"
            if bounded
            else f"SELECT count(*) {body}"
        )
        return page, conn.execute(count, params).fetchone()

    return newest if f.sort == "id" else ranked


def searches(path: Path, n: int) -> list[tuple[str, int, bool, list[list[float]]]]:
    """(shape, total, whether the total is a lower bound, [engine, raw same answer, raw exact
    answer] durations) for each query shape, the three rotated in each round."""
    conn = opening.connect(path, create=False)
    conn.execute("PRAGMA cache_size = -262144")
    shapes = [
        (f"a rare word (`{RARE}`), ranked, --limit 100", RARE, {"limit": 100}),
        (f"a common word (`{COMMON}`), ranked, --limit 20", COMMON, {"limit": 20}),
        (
            f"a common word (`{COMMON}`), newest first (--sort id), --limit 20",
            COMMON,
            {"limit": 20, "sort": "id"},
        ),
        (
            f"a common word (`{COMMON}`), ranked, --channel team, --limit 20",
            COMMON,
            {"limit": 20, "channel": "team"},
        ),
        (f"two words (`{COMMON} {RARE}`), ranked, --limit 20", f"{COMMON} {RARE}", {"limit": 20}),
    ]
    out = []
    try:
        for title, text, kw in shapes:
            f = MessageFilter(search=search.expression(text), **kw)  # type: ignore[arg-type]
            engine = lambda f=f: search.history(conn, f)  # noqa: E731
            runs = [engine, _raw(conn, f, True), _raw(conn, f, False)]

            def timed(fn: Callable[[], object]) -> Callable[[], float]:
                def run() -> float:
                    t0 = perf_counter()
                    fn()
                    return perf_counter() - t0

                return run

            times = rotate([timed(r) for r in runs], n)
            result = search.history(conn, f)
            out.append((title, result.total_count, bool(result.total_is_lower_bound), times))
            print(f"  {title}: {spread(times[0])}", file=sys.stderr, flush=True)
    finally:
        conn.close()
    return out


def sends(rounds: int, per: int = 50) -> tuple[list[float], list[float], list[float], str]:
    """Per-send seconds with the index and without, interleaved; and per message, what
    `tick`'s indexing (`search.index_new`) took after each round of the store with it."""
    with_index = group_store(WORK / "search-send-with.acomm")
    without = group_store(WORK / "search-send-without.acomm")
    c = opening.connect(without, create=False)
    with write(c):
        store_search.without_triggers(c)
    c.close()
    conns = {p: opening.connect(p, create=False) for p in (with_index, without)}
    sync = synchronous_name(conns[with_index])
    rng = random.Random(3)
    words, cum = _vocabulary(rng, 5000)
    counter = [0]
    indexing: list[float] = []

    def batch(path: Path) -> float:
        conn = conns[path]
        bodies = [" ".join(rng.choices(words, cum_weights=cum, k=WORDS)) for _ in range(per)]
        t0 = perf_counter()
        for body in bodies:
            counter[0] += 1
            req = SendRequest(
                sender="alice", content=f"update {counter[0]}: {body}", channel="team"
            )
            sending.send(conn, req, clock.now_ms())
        took = (perf_counter() - t0) / per
        if path == with_index:  # the next tick's share, untimed for the send
            t0 = perf_counter()
            indexed = search.index_new(conn)
            assert indexed == per, indexed
            indexing.append((perf_counter() - t0) / per)
        return took

    try:
        a, b = rotate([lambda: batch(with_index), lambda: batch(without)], rounds)
    finally:
        for conn in conns.values():
            conn.close()
    return a, b, indexing, sync


def _ms(x: float) -> str:
    return f"{x * 1e3:.2f} ms"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--quick", action="store_true", help="20,000 messages, fewer samples")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--rebuild", action="store_true", help="build the store even if cached")
    args = ap.parse_args(argv)
    n = 20_000 if args.quick else args.messages
    samples, rounds = (10, 10) if args.quick else (50, 40)
    info = machine()
    started = datetime.now(UTC)
    path, built = cached(n, args.rebuild)
    size = path.stat().st_size
    fts_pages = _fts_bytes(path)
    found = searches(path, samples)
    with_s, without_s, indexing, sync = sends(rounds)
    ratio = median(with_s) / median(without_s)
    rows = []
    for title, total, lower, (engine, raw, exact) in found:
        ok = median(engine) <= TARGET_S
        qs = sorted(engine)
        rows.append(
            f"| {title} | {total:,}{'+' if lower else ''} | {_ms(median(engine))} |"
            f" {_ms(qs[int(len(qs) * 0.9) - 1])} | {_ms(median(raw))} | {_ms(median(exact))} |"
            f" <= {TARGET_S * 1e3:.0f} ms | {'PASS' if ok else 'FAIL'} |"
        )
    table = "\n".join(rows)
    send_table = "\n".join(
        [
            f"| Send (per send, {rounds} interleaved rounds of 50, synchronous = {sync})"
            " | With the index | Without | Ratio | Target | |",
            "|---|---|---|---|---|---|",
            f"| `engine/sending.send` | {median(with_s) * 1e3:.3f} ms"
            f" | {median(without_s) * 1e3:.3f} ms | {ratio:.2f}x | <= {SEND_LIMIT:.2f}x"
            f" | {'PASS' if ratio <= SEND_LIMIT else 'FAIL'} |",
            "| `tick`'s indexing of the round's 50 (`search.index_new`), per message"
            f" | {median(indexing) * 1e3:.3f} ms | - | - | - | - |",
        ]
    )
    text = f"""{SECTION}

Generated by `bench/search.py` on a store of {n:,} messages ({size / 2**20:,.0f} MiB, of
which the FTS5 index {fts_pages / 2**20:,.0f} MiB): bodies of about 14 words drawn from a
20,000-word vocabulary with Zipf-like frequencies, `{COMMON}` in every 10th, `{RARE}` in 5.
The messages were inserted with executemany ({built["inserted"]:.0f} s), indexed by FTS5's
`rebuild` in {built["indexed"]:.0f} s and merged into one segment by `optimize` in
{built["optimized"]:.0f} s: what `acomm doctor --rebuild-search` does, on a store this size.
Searches: `engine/search.history` in process, as `messages --search` runs it after
start-up, {samples} runs each (median and p90), rotated in each round with the raw FTS5
statements of the same answer (page and total bounded at {search.BOUND:,} as the engine
bounds them: the floor) and of the exact answer (every match ranked, every match counted).

| What | Matches | Median | p90 | Raw, same answer | Raw, exact answer | Target | |
|---|---|---|---|---|---|---|---|
{table}

{send_table}

A total shown as `1,000+` is a lower bound (`total_is_lower_bound` in `--json`): past
{search.BOUND:,} matches a search ranks the newest {search.BOUND:,} and counts no further.
The raw exact answer is what ranking and counting every match costs: bm25 scores each match
it ranks and `count(*)` walks every one, so it grows with the commonest word's matches.
What bm25 cannot bound is its weight of each word, read once per query from the word's
whole list of matches: that is most of the ranked rows' time (the two-word row has only 5
matches, but weighs `{COMMON}` over its 100,000). A send does not index: tick does, in
batches.

Run {started:%Y-%m-%d %H:%M} UTC on {info.get("nproc", "?")} cores, load average at start
{info.get("load average at start", "?")}, SQLite {info.get("sqlite", "?")}.
"""
    print(text)
    if not (args.quick or args.no_write):
        write_section(SECTION, text)
    return 0


def _fts_bytes(path: Path) -> int:
    """The index's own bytes: its segments and its per-message sizes."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        data = "SELECT coalesce(sum(length(block)), 0) FROM message_search_data"
        sizes = "SELECT coalesce(sum(length(sz)) + 8 * count(*), 0) FROM message_search_docsize"
        return int(conn.execute(data).fetchone()[0] + conn.execute(sizes).fetchone()[0])
    finally:
        conn.close()


if __name__ == "__main__":
    sys.exit(main())
