"""The hot-path benchmarks of `bench/run.py`, each a ratio against a baseline run alongside it."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter

import consume
import peers
import processes
import stores
from harness import (
    ACOMM,
    OUT,
    PYTHON,
    WORK,
    Result,
    Sample,
    interleave,
    median,
    profile,
    rotate,
    spread,
    synchronous_name,
    timed,
)

from acomm_cli import clock
from acomm_cli.engine import inbox, opening, sending
from acomm_cli.model import MessageFilter, SendRequest
from acomm_cli.topics import SubscriptionIndex, matches


@dataclass(frozen=True)
class Sizes:
    process_runs: int
    big_messages: int
    inproc_rounds: int
    inproc_per_round: int
    batch_messages: int
    batch_repeats: int
    subscriptions: int
    route_topics: int
    verify_topics: int
    route_rounds: int
    receive_runs: int


FULL = Sizes(
    process_runs=30,
    big_messages=1_000_000,
    inproc_rounds=10,
    inproc_per_round=500,
    batch_messages=100_000,
    batch_repeats=5,
    subscriptions=10_000,
    route_topics=200,
    verify_topics=2_000,
    route_rounds=5,
    receive_runs=200,
)
QUICK = Sizes(
    process_runs=8,
    big_messages=100_000,
    inproc_rounds=6,
    inproc_per_round=200,
    batch_messages=10_000,
    batch_repeats=3,
    subscriptions=10_000,
    route_topics=100,
    verify_topics=400,
    route_rounds=3,
    receive_runs=40,
)


@dataclass
class Context:
    sizes: Sizes
    profile: bool = False
    big_copy: Path | None = None  # the working copy of the large store, shared by 2 and 6

    def big(self) -> Path:
        if self.big_copy is None:
            self.big_copy = stores.work_copy(self.sizes.big_messages)
        return self.big_copy

    def show_profile(self, label: str, text: str) -> None:
        if self.profile:
            print(f"\n--- profile: {label}\n{text}", file=sys.stderr)


# ---------------------------------------------------------------- 1 and 2: `acomm send` processes


ENV_NOTE = (
    "processes run without ACOMM_* variables and with bytecode caching on "
    "(PYTHONPYCACHEPREFIX=bench/out/pycache), as for an installed acomm"
)


def _env() -> dict[str, str]:
    """The environment of timed processes: no ACOMM_* settings, and bytecode caching on (into
    bench/out/pycache), as for an installed acomm; without it (PYTHONDONTWRITEBYTECODE=1 and an
    editable install) every process would compile acomm's modules from source again."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ACOMM_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["PYTHONPYCACHEPREFIX"] = str(OUT / "pycache")
    env["NO_COLOR"] = "1"
    return env


def _send_command(store: Path) -> list[str]:
    return [
        str(ACOMM),
        "--store",
        str(store),
        "send",
        "team",
        "hello from the benchmark",
        "--as",
        "alice",
    ]


def _process(cmd: list[str]) -> Sample:
    env = _env()

    def run() -> float:
        t0 = perf_counter()
        done = subprocess.run(cmd, env=env, cwd=WORK, capture_output=True, text=True)
        elapsed = perf_counter() - t0
        if done.returncode != 0:
            raise RuntimeError(
                f"{' '.join(cmd[:4])}... exited {done.returncode}: {done.stderr.strip()[:300]}"
            )
        return elapsed

    return run


def _process_profile(ctx: Context, label: str, cmd: list[str]) -> None:
    if not ctx.profile:
        return
    done = subprocess.run(
        [str(PYTHON), "-m", "cProfile", "-s", "cumtime", *cmd],
        env=_env(),
        cwd=WORK,
        capture_output=True,
        text=True,
    )
    ctx.show_profile(label, "\n".join(done.stdout.splitlines()[:45]))
    done = subprocess.run(
        [str(PYTHON), "-X", "importtime", *cmd],
        env=_env(),
        cwd=WORK,
        capture_output=True,
        text=True,
    )
    rows = [ln for ln in done.stderr.splitlines() if ln.startswith("import time:")][1:]
    rows.sort(key=lambda ln: int(ln.split("|")[1]), reverse=True)
    ctx.show_profile(label + " (imports by cumulative us)", "\n".join(rows[:25]))


def send_big_store(ctx: Context) -> list[Result]:
    n_big = ctx.sizes.big_messages
    big = ctx.big()
    empty = stores.group_store(WORK / "send-empty.acomm")
    n = ctx.sizes.process_runs
    on_big, on_empty = interleave(
        _process(_send_command(big)), _process(_send_command(empty)), n, warmup=2
    )
    return [
        Result(
            "send_big_store",
            f"`acomm send` process, store of {n_big:,} messages",
            "time",
            median(on_big),
            median(on_empty),
            1.3,
            baseline_title="the same `acomm send` on an empty store",
            details=[
                f"{n_big:,}-message store: {spread(on_big)}",
                f"empty store: {spread(on_empty)}",
                f"{n} runs each, interleaved, after 2 warm-up runs each; " + ENV_NOTE,
                "Large store: " + stores.LAYOUT,
            ],
        )
    ]


# ---------------------------------------------------------------- 3: in-process send

# Where the in-process gains came from, shown under each row (DECISIONS.md, "Caches of the
# directory and of channel facts, checked by tokens").
SEND_GAINS = (
    "where the time went: a send runs 5 statements (BEGIN IMMEDIATE; the capacity count with "
    "the channels and agents tokens; the message; its delivery; COMMIT), 6 before: the "
    "sender's presence UPDATE is skipped while this connection itself wrote a time within "
    "the second under the same agents token (the stored time is at least that one, so the "
    "UPDATE would change nothing), and the capacity statement's text is built once, not per "
    "send; the retired names, the sender's retirement and a direct recipient's contact rule "
    "come from the connection's directory cache, the channel from its channel cache; what "
    "is left is mostly the commit, which writes the WAL pages the two raw rows write too "
    "(send_floor_vs_queue); measured old against new code in one process (10 interleaved "
    "rounds of 500, 2026-11-27, load average 8-10 on 2 cores): 188 -> 178 us of CPU a send"
)
RECEIVE_GAINS = (
    "where the time went: a receive runs BEGIN IMMEDIATE, one read of both tokens, the "
    "presence update (skipped within the second on one connection, as in a send), the "
    "inbox SELECT, the read marks and COMMIT (and a count when more are unread); before it, "
    "the check for due timers looks for expired messages among the few the store keeps "
    "(messages_expiry, a primary-key probe each, up to 64) where it walked every pending "
    "delivery of the reader; whether any channel is closed, whether any starts deadlines at "
    "the read and which queues and pools the agent serves come from store/facts.py (under "
    "the channels token), the reader's retirement from the directory cache, and the events "
    "and rich parts of the page are looked up only for the messages whose row says they "
    "have them"
)


LATE_CHECKPOINT = 1_000_000  # WAL pages: no automatic checkpoint within the rounds


def _bare(conn: sqlite3.Connection) -> None:
    """Drop every secondary index of messages and deliveries: their rows keep only their
    primary keys, as persist-queue's one table does (a diagnostic store, never acomm's)."""
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        " AND tbl_name IN ('messages', 'deliveries')"
    ).fetchall():
        conn.execute(f"DROP INDEX {name}")


def send_inproc(ctx: Context) -> list[Result]:
    s = ctx.sizes
    product = opening.connect(stores.direct_store(WORK / "send-inproc.acomm"), create=False)
    raw = opening.connect(stores.direct_store(WORK / "send-inproc-raw.acomm"), create=False)
    pair = opening.connect(stores.direct_store(WORK / "send-inproc-pair.acomm"), create=False)
    bare = opening.connect(stores.direct_store(WORK / "send-inproc-bare.acomm"), create=False)
    _bare(bare)
    sync = synchronous_name(product)
    channel_id = raw.execute("SELECT id FROM channels WHERE name = 'dm'").fetchone()[0]
    sql = (
        "INSERT INTO messages (channel_id, sender, type, content, priority, created_at)"
        " VALUES (?, ?, 'text', ?, 1, ?)"
    )
    # what a send writes: its message row with a new trace id (messages_trace), and the
    # delivery
    traced = (
        "INSERT INTO messages (channel_id, sender, type, content, priority, created_at,"
        " trace_id) VALUES (?, ?, 'text', ?, 1, ?, ?)"
    )
    delivery = (
        "INSERT INTO deliveries (message_id, recipient, channel_id, state, rank, tracked,"
        " delivered_at) VALUES (?, 'bob', ?, 'unread', 0, 0, ?)"
    )
    body = "hello from the benchmark"
    k = s.inproc_per_round

    def product_round() -> float:
        now = clock.now_ms()
        req = SendRequest(sender="alice", content=body, channel="dm")
        t0 = perf_counter()
        for _ in range(k):
            sending.send(product, req, now)
        return perf_counter() - t0

    def raw_one(now: int) -> None:
        raw.execute(sql, (channel_id, "alice", body, now))  # autocommit: insert + commit

    def raw_round() -> float:
        now = clock.now_ms()
        t0 = perf_counter()
        for _ in range(k):
            raw_one(now)
        return perf_counter() - t0

    def two_rows(conn: sqlite3.Connection, now: int) -> None:
        conn.execute("BEGIN IMMEDIATE")
        mid = conn.execute(traced, (channel_id, "alice", body, now, os.urandom(16).hex())).lastrowid
        conn.execute(delivery, (mid, channel_id, now))
        conn.execute("COMMIT")

    def rows_round(conn: sqlite3.Connection) -> Callable[[], float]:
        def run() -> float:  # the rows one send writes, without the pipeline
            now = clock.now_ms()
            t0 = perf_counter()
            for _ in range(k):
                two_rows(conn, now)
            return perf_counter() - t0

        return run

    found, notes = peers.open_peers(WORK, sync)
    # diagnostic: the floor and persist-queue with the WAL's automatic checkpoint put off
    # (both files are synced at a checkpoint: putting it off changes durability, acomm
    # does not; this shows what share of the floor's cost the checkpoints are)
    late = opening.connect(stores.direct_store(WORK / "send-inproc-late.acomm"), create=False)
    late.execute(f"PRAGMA wal_autocheckpoint = {LATE_CHECKPOINT}")
    late_pq = [p for p in found if p.name == "persist-queue"]
    if late_pq:
        (WORK / "late").mkdir(parents=True, exist_ok=True)
        late_pq = peers.open_peers(WORK / "late", sync, ("persist-queue",))[0]
        for p in late_pq:
            assert p.conn is not None
            p.conn.execute(f"PRAGMA wal_autocheckpoint = {LATE_CHECKPOINT}")
    samples = [product_round, rows_round(pair), raw_round, rows_round(bare)] + [
        peers.put_round(p, k) for p in found
    ]
    samples += [rows_round(late)] + [peers.put_round(p, k) for p in late_pq]
    try:
        if raw.in_transaction:
            raise RuntimeError("raw connection unexpectedly inside a transaction")
        times = rotate(samples, s.inproc_rounds)
        t_product, t_pair, t_raw, t_bare = times[:4]
        t_peers = times[4 : 4 + len(found)]
        t_late, *t_late_pq = times[4 + len(found) :]
        req = SendRequest(sender="alice", content=body, channel="dm")
        pages = {
            "sending.send": peers.pages_per_commit(
                product,
                WORK / "send-inproc.acomm",
                lambda: sending.send(product, req, clock.now_ms()),
            ),
            "its two rows": peers.pages_per_commit(
                pair, WORK / "send-inproc-pair.acomm", lambda: two_rows(pair, clock.now_ms())
            ),
            "the message row alone": peers.pages_per_commit(
                raw, WORK / "send-inproc-raw.acomm", lambda: raw_one(clock.now_ms())
            ),
            "the two rows, primary keys only": peers.pages_per_commit(
                bare, WORK / "send-inproc-bare.acomm", lambda: two_rows(bare, clock.now_ms())
            ),
        }
        for p in found:
            if p.conn is not None and p.file is not None:
                pages[f"{p.name} put"] = peers.pages_per_commit(p.conn, p.file, p.put)
        ctx.show_profile(
            "sending.send x1000",
            profile(
                lambda: [
                    sending.send(
                        product,
                        SendRequest(sender="alice", content=body, channel="dm"),
                        clock.now_ms(),
                    )
                    for _ in range(1000)
                ]
            ),
        )
    finally:
        for conn in (product, raw, pair, bare, late):
            conn.close()
        for p in found + late_pq:
            p.close()
    rates_p = [k / t for t in t_product]
    rates_r = [k / t for t in t_raw]
    rates_2 = [k / t for t in t_pair]
    rates_b = [k / t for t in t_bare]

    def per_s(x: float) -> str:
        return f"{x:,.0f}/s"

    page_line = "WAL pages a transaction writes (200 of each, untimed): " + ", ".join(
        f"{name} {n:.1f}" for name, n in pages.items()
    )
    mine = median(rates_p)
    floor = median(rates_2)
    late_lines = [
        f"(diagnostic, not a setting acomm uses) with the automatic checkpoint put off "
        f"(wal_autocheckpoint {LATE_CHECKPOINT:,} pages, both sides): the two rows "
        f"{spread([k / t for t in t_late], per_s)}, persist-queue "
        f"{spread([k / t for t in ts], per_s)}: the floor at "
        f"{median([k / t for t in t_late]) / median([k / t for t in ts]):.0%} of it; a "
        "checkpoint copies the WAL's pages back and syncs both files, and a send's pages "
        "bring one on several times as often as persist-queue's; putting it off leaves more "
        "committed transactions on an unsynced WAL (power loss), a change of durability"
        for ts in t_late_pq
    ]
    pq = next((ts for p, ts in zip(found, t_peers, strict=True) if p.name == "persist-queue"), None)
    against_pq = (
        []
        if pq is None
        else [
            Result(
                "send_vs_queue",
                "in-process `sending.send`, one message a transaction, against persist-queue",
                "rate",
                mine,
                median([k / t for t in pq]),
                0.5,
                unit="msg/s",
                baseline_title="persist-queue SQLiteAckQueue put (one row, no index but its "
                "primary key, one transaction)",
                details=[
                    f"the same rounds as send_inproc's (rotated with it); persist-queue: "
                    f"{spread([k / t for t in pq], lambda x: f'{x:,.0f}/s')} rounds of {k}",
                    "a send writes two rows (the message with its indexes, the delivery with "
                    "its own) and checks capacity, the channel, the sender and dedupe; "
                    "persist-queue writes one row",
                    f"acomm at {mine / floor:.0%} of the floor of its own rows (send_inproc), "
                    f"and the floor at {floor / median([k / t for t in pq]):.0%} of persist-"
                    "queue (send_floor_vs_queue)",
                    SEND_GAINS,
                ],
            ),
            Result(
                "send_floor_vs_queue",
                "the floor of a send (its two rows in one transaction, raw SQL), against "
                "persist-queue",
                "rate",
                floor,
                median([k / t for t in pq]),
                0.5,
                unit="msg/s",
                baseline_title="persist-queue SQLiteAckQueue put",
                details=[
                    f"raw message + delivery transaction: {spread(rates_2, per_s)} rounds of {k}",
                    f"the same two rows on a store without secondary indexes (primary keys "
                    f"only): {spread(rates_b, per_s)} rounds of {k}, "
                    f"{median(rates_b) / median([k / t for t in pq]):.0%} of persist-queue",
                    page_line,
                    *late_lines,
                    "equal durability: persist-queue commits every put (auto_commit; its "
                    "`with conn` runs the INSERT in a transaction and commits), in WAL mode "
                    f"(it sets journal_mode=WAL), here at synchronous={sync} like acomm's "
                    "store (its own default is FULL); so each side is one transaction a "
                    "message, synced alike",
                    "why the floor is below persist-queue: the cost of a commit follows the "
                    "pages it writes to the WAL (and the checkpoints those pages bring on); "
                    "persist-queue's row changes its table and sqlite_sequence, a send's "
                    "rows change the messages table, sqlite_sequence, four message indexes "
                    "(channel, created, sender, trace), the deliveries table and three "
                    "delivery indexes (inbox, agent_active, active); the same rows with "
                    "primary keys only come close to persist-queue",
                ],
            ),
        ]
    )
    peer_lines = [
        f"{p.name} put: {spread([k / t for t in ts], per_s)} rounds of {k}; acomm "
        f"sends at {mine / median([k / t for t in ts]):.0%} of its rate"
        for p, ts in zip(found, t_peers, strict=True)
    ]
    return against_pq + [
        Result(
            "send_inproc",
            "in-process `sending.send`, direct channel",
            "rate",
            mine,
            floor,
            0.75,
            unit="msg/s",
            baseline_title="raw SQL writing what one send writes (its message row with a trace "
            "id and its delivery row, with the same indexes) in one BEGIN IMMEDIATE transaction",
            details=[
                f"sending.send: {spread(rates_p, per_s)} rounds of {k}",
                SEND_GAINS,
                f"raw message + delivery transaction: {spread(rates_2, per_s)} rounds of {k}",
                f"(not a target) raw single-row INSERT + commit into `messages` (the first "
                f"baseline of this row): {spread(rates_r, per_s)} rounds of {k}; acomm at "
                f"{mine / median(rates_r):.0%} of it",
                page_line,
                *peer_lines,
                *notes,
                f"all on fresh stores opened with opening.connect (same pragmas, synchronous="
                f"{sync}); the peers each on a fresh file of their own, see bench/peers.py; "
                "rounds rotated",
            ],
        )
    ]


# ---------------------------------------------------------------- 4: send --batch


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def send_batch(ctx: Context) -> list[Result]:
    s = ctx.sizes
    n = s.batch_messages
    template = stores.group_store(WORK / "batch-template.acomm")
    items = [
        sending.batch_request(
            {
                "channel": "team",
                "from": ("alice", "bob", "carol")[i % 3],
                "content": f"batch message {i} with a little payload",
            },
            i + 1,
        )
        for i in range(n)
    ]
    rows: dict[str, tuple[list[str], list[tuple]]] = {}

    def product_run() -> float:
        conn = opening.connect(stores.copy_store(template, WORK / "batch.acomm"), create=False)
        try:
            now = clock.now_ms()
            t0 = perf_counter()
            results = sending.send_batch(conn, items, now)
            elapsed = perf_counter() - t0
            if len(results) != n:
                raise RuntimeError(f"send_batch returned {len(results)} results, not {n}")
            if not rows:
                for table in ("messages", "deliveries"):
                    cols = _columns(conn, table)
                    rows[table] = (
                        cols,
                        conn.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall(),
                    )
            return elapsed
        finally:
            conn.close()

    def raw_run() -> float:
        conn = opening.connect(stores.copy_store(template, WORK / "batch-raw.acomm"), create=False)
        try:
            t0 = perf_counter()
            conn.execute("BEGIN IMMEDIATE")
            for table, (cols, data) in rows.items():
                marks = ", ".join("?" * len(cols))
                conn.executemany(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})", data)
            conn.commit()
            return perf_counter() - t0
        finally:
            conn.close()

    product_run()  # also captures the rows the raw baseline inserts
    t_product, t_raw = interleave(product_run, raw_run, s.batch_repeats, warmup=0)
    if ctx.profile:
        conn = opening.connect(stores.copy_store(template, WORK / "batch.acomm"), create=False)
        ctx.show_profile(
            f"sending.send_batch of {n:,}",
            profile(lambda: sending.send_batch(conn, items, clock.now_ms())),
        )
        conn.close()
    deliveries = len(rows["deliveries"][1])

    def per_s(x: float) -> str:
        return f"{x:,.0f} msg/s"

    rate_p = [n / t for t in t_product]
    rate_r = [n / t for t in t_raw]
    return [
        Result(
            "send_batch",
            f"`sending.send_batch` of {n:,} messages",
            "rate",
            median(rate_p),
            median(rate_r),
            0.75,
            unit="msg/s",
            baseline_title="raw `executemany` of the same rows (messages + deliveries), one "
            "transaction",
            details=[
                f"send_batch: {spread(rate_p, per_s)}",
                f"raw executemany: {spread(rate_r, per_s)}",
                f"{n:,} messages on group channel `team` ({deliveries:,} delivery rows), items "
                "built beforehand with sending.batch_request; each run on a fresh copy of the "
                "same empty store, interleaved after one warm-up of send_batch",
            ],
        )
    ]


def send_batch_100(ctx: Context) -> list[Result]:
    """`send_batch` as a long-running process calls it: many batches of 100, one transaction
    each, against raw executemany of the same rows batch by batch."""
    per, batches = 100, (200 if ctx.sizes is FULL else 50)
    template = stores.group_store(WORK / "batch-template.acomm")
    items = [
        sending.batch_request(
            {
                "channel": "team",
                "from": ("alice", "bob", "carol")[i % 3],
                "content": f"batch message {i} with a little payload",
            },
            i + 1,
        )
        for i in range(per)
    ]
    chunks: list[dict[str, tuple[list[str], list[tuple]]]] = []

    def product_run() -> float:
        conn = opening.connect(stores.copy_store(template, WORK / "batch100.acomm"), create=False)
        try:
            now = clock.now_ms()
            t0 = perf_counter()
            for _ in range(batches):
                sending.send_batch(conn, items, now)
            elapsed = perf_counter() - t0
            if not chunks:
                cols = {t: _columns(conn, t) for t in ("messages", "deliveries")}
                ids = [r[0] for r in conn.execute("SELECT id FROM messages ORDER BY id")]
                for b in range(batches):
                    lo, hi = ids[b * per], ids[(b + 1) * per - 1]
                    chunks.append(
                        {
                            t: (
                                cols[t],
                                conn.execute(
                                    f"SELECT {', '.join(cols[t])} FROM {t} WHERE "
                                    f"{'id' if t == 'messages' else 'message_id'} BETWEEN ? AND ?",
                                    (lo, hi),
                                ).fetchall(),
                            )
                            for t in cols
                        }
                    )
            return elapsed
        finally:
            conn.close()

    def raw_run() -> float:
        conn = opening.connect(
            stores.copy_store(template, WORK / "batch100-raw.acomm"), create=False
        )
        try:
            sql = {
                t: f"INSERT INTO {t} ({', '.join(c)}) VALUES ({', '.join('?' * len(c))})"
                for t, (c, _) in chunks[0].items()
            }
            t0 = perf_counter()
            for chunk in chunks:
                conn.execute("BEGIN IMMEDIATE")
                for table, (_, data) in chunk.items():
                    conn.executemany(sql[table], data)
                conn.commit()
            return perf_counter() - t0
        finally:
            conn.close()

    product_run()  # also captures the rows the raw baseline inserts
    t_product, t_raw = interleave(product_run, raw_run, ctx.sizes.batch_repeats, warmup=0)
    n = per * batches

    def per_s(x: float) -> str:
        return f"{x:,.0f} msg/s"

    rate_p = [n / t for t in t_product]
    rate_r = [n / t for t in t_raw]
    return [
        Result(
            "send_batch_100",
            f"`sending.send_batch` of {per} messages, {batches} times on one connection",
            "rate",
            median(rate_p),
            median(rate_r),
            0.75,
            unit="msg/s",
            baseline_title=f"raw `executemany` of the same rows, {per} messages (and their "
            "deliveries) a transaction",
            details=[
                f"send_batch: {spread(rate_p, per_s)}",
                f"raw executemany: {spread(rate_r, per_s)}",
                "group channel `team` (2 delivery rows a message); each run on a fresh copy "
                "of the same empty store, interleaved after one warm-up of send_batch",
            ],
        )
    ]


# ---------------------------------------------------------------- 5: topic routing

WORDS = [
    [
        "build",
        "deploy",
        "test",
        "agent",
        "task",
        "review",
        "ci",
        "release",
        "alert",
        "metric",
        "log",
        "user",
        "repo",
        "issue",
        "doc",
        "plan",
        "cache",
        "db",
        "queue",
        "net",
    ],
    [f"svc{i}" for i in range(40)] + ["frontend", "backend", "api", "worker", "web", "infra"],
    [
        "started",
        "finished",
        "failed",
        "retried",
        "queued",
        "cancelled",
        "created",
        "updated",
        "deleted",
        "opened",
        "closed",
        "merged",
        "passed",
        "skipped",
        "timeout",
    ],
    ["eu", "us", "ap", "dev", "prod", "stage", "canary", "blue", "green", "local"],
]


def _topic(rng: random.Random) -> str:
    n = rng.choice((2, 3, 3, 3, 4))
    return ".".join(rng.choice(WORDS[i]) for i in range(n))


def _pattern(rng: random.Random, kind: str) -> str:
    segs = _topic(rng).split(".")
    if kind == "exact":
        return ".".join(segs)
    if kind == "star":
        starred = [s if rng.random() >= 0.3 else "*" for s in segs]
        if "*" not in starred:
            starred[rng.randrange(len(starred))] = "*"
        return ".".join(starred)
    prefix = segs[: rng.choice((1, 1, 2, 2, 3))] if rng.random() >= 0.02 else []
    prefix = [s if rng.random() >= 0.1 else "*" for s in prefix]
    return ".".join([*prefix, "#"])


def subscriptions(n: int, seed: int = 2) -> list[tuple[str, str]]:
    """n (agent, pattern) pairs: 40% exact, 35% with `*`, 25% ending in `#`."""
    rng = random.Random(seed)
    agents = [f"agent{i:04d}" for i in range(n // 4)]
    out: set[tuple[str, str]] = set()
    while len(out) < n:
        r = rng.random()
        kind = "exact" if r < 0.40 else "star" if r < 0.75 else "multi"
        out.add((rng.choice(agents), _pattern(rng, kind)))
    return sorted(out)


def route(ctx: Context) -> list[Result]:
    s = ctx.sizes
    subs = subscriptions(s.subscriptions)
    t0 = perf_counter()
    index = SubscriptionIndex(subs)
    build = perf_counter() - t0
    rng = random.Random(7)
    topics = [_topic(rng) for _ in range(s.verify_topics - 50)]
    topics += [f"unknown.topic{i}" for i in range(25)] + [f"build.svc1.x{i}.y.z" for i in range(25)]

    def brute(topic: str) -> set[str]:
        return {agent for agent, pattern in subs if matches(topic, pattern)}

    hits = 0
    for topic in topics:
        want = brute(topic)
        got = index.route(topic)
        assert got == want, (
            f"route({topic!r}) differs from testing every pattern: {sorted(got ^ want)[:5]}"
        )
        hits += len(want)
    timed_topics = topics[: s.route_topics]

    def run_index() -> None:
        for topic in timed_topics:
            index.route(topic)

    def run_brute() -> None:
        for topic in timed_topics:
            brute(topic)

    t_index, t_brute = interleave(timed(run_index), timed(run_brute), s.route_rounds)
    per = len(timed_topics)
    kinds = {"exact": 0, "*": 0, "#": 0}
    for _, p in subs:
        kinds["#" if p.endswith("#") else "*" if "*" in p else "exact"] += 1
    return [
        Result(
            "route",
            f"route 1 topic, {len(subs):,} subscriptions (SubscriptionIndex.route)",
            "speedup",
            median(t_index) / per,
            median(t_brute) / per,
            20.0,
            baseline_title="`topics.matches` against every subscription",
            details=[
                f"index: {spread([t / per for t in t_index])} per topic",
                f"every pattern: {spread([t / per for t in t_brute])} per topic",
                f"subscriptions: {kinds['exact']:,} exact, {kinds['*']:,} with `*`, "
                f"{kinds['#']:,} ending in `#`, {len(subs) // 4:,} agents; index built in "
                f"{build * 1e3:.1f} ms",
                f"identical agent sets asserted for {len(topics):,} topics ({hits:,} matches, "
                f"{hits / len(topics):.1f} agents per topic on average); timed over "
                f"{per:,} topics x {s.route_rounds} rounds, interleaved",
            ],
        )
    ]


# ---------------------------------------------------------------- 6: receive

RAW_INBOX = (
    "SELECT m.id, m.channel_id, m.sender, m.type, m.content, m.topic, m.priority,"
    " m.correlation_id, m.dedupe_key, m.metadata, m.created_at, m.deliver_at, d.recipient,"
    " d.state, d.retry_count, d.delivered_at, d.read_at, d.ack_status, d.acked_at,"
    " d.next_timer_at FROM deliveries d JOIN messages m ON m.id = d.message_id"
    " WHERE d.recipient = ? AND d.state = 'unread' ORDER BY d.rank DESC, d.message_id"
    " LIMIT ?"
)


def receive(ctx: Context) -> list[Result]:
    s = ctx.sizes
    n_big = s.big_messages
    # a copy of its own, as built: the `acomm send` processes of send_big_store change the
    # shared copy, and `--only receive` must measure what a full run does
    conn = opening.connect(stores.work_copy(n_big, "big-receive.acomm"), create=False)
    agent = stores.READER
    limit = stores.UNREAD_FOR_READER
    flt = MessageFilter(limit=limit)
    try:
        expected = [r[0] for r in conn.execute(RAW_INBOX, (agent, limit))]
        if len(expected) != limit:
            raise RuntimeError(f"{agent} has {len(expected)} unread messages, not {limit}")
        plan = " / ".join(
            r[-1] for r in conn.execute("EXPLAIN QUERY PLAN " + RAW_INBOX, (agent, limit))
        )

        def raw() -> list:
            return conn.execute(RAW_INBOX, (agent, limit)).fetchall()

        def peek() -> object:
            res = inbox.receive(conn, agent, flt, clock.now_ms(), peek=True)
            if [m.id for m in res.messages] != expected:
                raise RuntimeError("receive --peek returned other messages than the raw SELECT")
            return res

        marks = ",".join("?" * limit)
        unmark = (
            f"UPDATE deliveries SET state = 'unread', read_at = NULL WHERE recipient = ?"
            f" AND message_id IN ({marks})"
        )

        def read() -> float:
            t0 = perf_counter()
            res = inbox.receive(conn, agent, flt, clock.now_ms())
            elapsed = perf_counter() - t0
            if [m.id for m in res.messages] != expected:
                raise RuntimeError("receive returned other messages than the raw SELECT")
            conn.execute(unmark, (agent, *expected))  # untimed: make them unread again
            return elapsed

        mark = (
            "UPDATE deliveries SET state = 'read', read_at = ? WHERE recipient = ?"
            f" AND state = 'unread' AND message_id IN ({marks})"
        )

        def raw_write() -> float:  # diagnostic: the same read and mark-read, without Python
            t0 = perf_counter()
            conn.execute("BEGIN IMMEDIATE")
            ids = [r[0] for r in conn.execute(RAW_INBOX, (agent, limit))]
            conn.execute(mark, (clock.now_ms(), agent, *ids))
            conn.execute("COMMIT")
            elapsed = perf_counter() - t0
            conn.execute(unmark, (agent, *expected))
            return elapsed

        t_peek, t_raw1 = interleave(timed(peek), timed(raw), s.receive_runs, warmup=3)
        t_read, t_raw2, t_write = rotate([read, timed(raw), raw_write], s.receive_runs, warmup=3)
        ctx.show_profile(
            "inbox.receive --peek x200",
            profile(
                lambda: [
                    inbox.receive(conn, agent, flt, clock.now_ms(), peek=True) for _ in range(200)
                ]
            ),
        )
    finally:
        conn.close()
    common = (
        f"the newest {limit} deliveries of `{agent}` are its only unread ones, in a store "
        f"of {n_big:,} messages; raw SELECT plan: {plan}"
    )
    return [
        Result(
            "receive_peek",
            f"`inbox.receive --peek` of {limit}, {n_big:,}-message store",
            "time",
            median(t_peek),
            median(t_raw1),
            3.0,
            baseline_title="raw indexed SELECT ... JOIN messages of the same rows",
            details=[f"receive --peek: {spread(t_peek)}", f"raw SELECT: {spread(t_raw1)}", common],
        ),
        Result(
            "receive",
            f"`inbox.receive` (marks read) of {limit}, {n_big:,}-message store",
            "time",
            median(t_read),
            median(t_raw2),
            3.0,
            baseline_title="raw indexed SELECT ... JOIN messages of the same rows",
            details=[
                f"receive: {spread(t_read)}",
                f"raw SELECT: {spread(t_raw2)}",
                f"(not a target) raw SELECT + UPDATE marking them read + COMMIT: "
                f"{spread(t_write)} = {median(t_write) / median(t_raw2):.2f}x the "
                "baseline",
                "each timed receive marks the 100 read and commits; they are marked "
                "unread again, untimed, before the next run; runs interleaved",
                RECEIVE_GAINS,
                "on a fresh copy of the store as built, not the one send_big_store's "
                "processes wrote to",
            ],
        ),
    ]


CASES: dict[str, Callable[[Context], list[Result]]] = {
    "send_process": processes.send_process,
    "receive_process": processes.receive_process,
    "send_big_store": send_big_store,
    "send_inproc": send_inproc,
    "send_batch": send_batch,
    "send_batch_100": send_batch_100,
    "route": route,
    "receive": receive,
    "receive_ack": consume.receive_ack,
}
