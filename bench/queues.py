"""Work-queue throughput: 1, 2 and 4 worker processes draining one queue, against
pgmq-style raw SQL on the same machine in the same run.

    .venv/bin/python bench/queues.py            # rewrites its section of docs/BENCHMARKS.md
    .venv/bin/python bench/queues.py --quick    # 500 messages, prints only

- acomm: an at-least-once `queue` channel of N messages; each worker process opens the store
  and loops `timers.receive_due` (the engine of `acomm receive --limit B`: claim, read,
  commit) then `acking.ack` per message (one transaction each, as `acomm ack`), until a
  receive hands over nothing.
- raw: one table `q(msg_id, vt, read_ct, message)` in the same WAL mode and synchronous
  setting; a claim is pgmq's `UPDATE ... SET vt = now + 30 s, read_ct = read_ct + 1 WHERE
  msg_id IN (SELECT ... WHERE vt <= now ORDER BY msg_id LIMIT B) RETURNING` in BEGIN
  IMMEDIATE, an ack a `DELETE` per message in its own transaction.

Workers start together (a start file), so process start-up is not counted; throughput is N
over the time from the start to the last worker's end. Both sides check each message was
handed out exactly once. This script owns the section "## Work queues".
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from harness import PYTHON, WORK, machine, synchronous_name, write_section

from acomm_cli import clock
from acomm_cli.engine import acking, channels, opening, sending, timers
from acomm_cli.model import MessageFilter, SendRequest

SECTION = "## Work queues"
BATCH = 10


def _acomm_store(path: Path, n: int, workers: int) -> None:
    path.unlink(missing_ok=True)
    now = clock.now_ms()
    conn = opening.connect(path, create=True, now=now)
    cfg = channels.channel_config(delivery="at-least-once", ack_timeout_ms=600_000)
    channels.create_channel(conn, "queue", "queue", "boss", cfg, now)
    for k in range(workers):
        channels.join_channel(conn, "queue", f"w{k}", "member", now, by="boss")
    for i in range(n):
        sending.send(conn, SendRequest(sender="boss", content=f"job {i}", channel="queue"), now)
    conn.close()


def _raw_store(path: Path, n: int) -> None:
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(
        "CREATE TABLE q (msg_id INTEGER PRIMARY KEY, vt INTEGER NOT NULL,"
        " read_ct INTEGER NOT NULL DEFAULT 0, message TEXT NOT NULL)"
    )
    conn.execute("CREATE INDEX q_vt ON q(vt, msg_id)")
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO q (vt, message) VALUES (0, ?)", [(json.dumps({"job": i}),) for i in range(n)]
    )
    conn.execute("COMMIT")
    conn.close()


def _wait_start(go: Path) -> None:
    while not go.exists():
        time.sleep(0.001)


def worker_acomm(store: Path, agent: str, go: Path) -> list[int]:
    conn = opening.connect(store, create=False)
    f = MessageFilter(channel="queue", limit=BATCH)
    got: list[int] = []
    _wait_start(go)
    while True:
        msgs = timers.receive_due(conn, agent, f, clock.now_ms()).messages
        if not msgs:
            return got
        for m in msgs:
            acking.ack(conn, m.id, agent, "completed", None, clock.now_ms())
            got.append(m.id)


def worker_raw(store: Path, synchronous: str, go: Path) -> list[int]:
    conn = sqlite3.connect(store, isolation_level=None, timeout=30)
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    got: list[int] = []
    _wait_start(go)
    while True:
        now = clock.now_ms()
        conn.execute("BEGIN IMMEDIATE")
        rows = conn.execute(
            "UPDATE q SET vt = ? + 30000, read_ct = read_ct + 1 WHERE msg_id IN (SELECT msg_id"
            " FROM q WHERE vt <= ? ORDER BY msg_id LIMIT ?) RETURNING msg_id, message",
            (now, now, BATCH),
        ).fetchall()
        conn.execute("COMMIT")
        if not rows:
            return got
        for mid, _message in rows:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM q WHERE msg_id = ?", (mid,))
            conn.execute("COMMIT")
            got.append(mid)


def _run(kind: str, store: Path, workers: int, synchronous: str) -> tuple[float, list[int]]:
    go = store.with_suffix(".go")
    go.unlink(missing_ok=True)
    procs = [
        subprocess.Popen(
            [str(PYTHON), __file__, "--worker", kind, str(store), f"w{k}", synchronous, str(go)],
            stdout=subprocess.PIPE,
        )
        for k in range(workers)
    ]
    time.sleep(1.0)  # let them start (imports, open) before the start file
    t0 = time.monotonic()
    go.touch()
    ids: list[int] = []
    for p in procs:
        out, _ = p.communicate()
        assert p.returncode == 0
        ids.extend(json.loads(out))
    return time.monotonic() - t0, ids


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--worker", nargs=5)
    args = ap.parse_args(argv)
    if args.worker:
        kind, store, agent, synchronous, go = args.worker
        ids = (
            worker_acomm(Path(store), agent, Path(go))
            if kind == "acomm"
            else worker_raw(Path(store), synchronous, Path(go))
        )
        print(json.dumps(ids))
        return 0
    n = 500 if args.quick else 2000
    WORK.mkdir(parents=True, exist_ok=True)
    a_store, r_store = WORK / "queue.acomm", WORK / "queue-raw.db"
    rows = []
    started = datetime.now(UTC)
    for workers in (1, 2, 4):
        _acomm_store(a_store, n, workers)
        c = opening.connect(a_store, create=False)
        synchronous = synchronous_name(c)
        c.close()
        _raw_store(r_store, n)
        raw_s, raw_ids = _run("raw", r_store, workers, synchronous)
        acomm_s, acomm_ids = _run("acomm", a_store, workers, synchronous)
        for name, ids in (("raw", raw_ids), ("acomm", acomm_ids)):
            if sorted(ids) != sorted(set(ids)) or len(ids) != n:
                print(
                    f"{name}: {len(ids)} handed out, {len(set(ids))} distinct, of {n}",
                    file=sys.stderr,
                )
                return 1
        rows.append((workers, n / acomm_s, n / raw_s))
        print(
            f"{workers} workers: acomm {n / acomm_s:,.0f} msg/s, raw {n / raw_s:,.0f} msg/s",
            file=sys.stderr,
        )
    info = machine()
    table = "\n".join(
        f"| {w} | {a:,.0f} msg/s | {r:,.0f} msg/s | {a / r:.0%} |" for w, a, r in rows
    )
    text = f"""{SECTION}

Generated by `bench/queues.py` ({n:,} messages, claims of {BATCH}, an ack per message in its
own transaction on both sides; synchronous = {synchronous}). acomm: worker processes on the
engine of `acomm receive` / `acomm ack` on an at-least-once `queue` channel; raw: pgmq-style
SQL (`UPDATE ... WHERE msg_id IN (SELECT ... LIMIT 10) RETURNING` under BEGIN IMMEDIATE, then
`DELETE`). Every message was handed out exactly once on both sides.

| Workers | acomm | raw SQL (pgmq-style) | acomm / raw |
|---|---|---|---|
{table}

Where acomm's time goes beyond the raw claim: the claim also marks the message read and
builds it (channel, sender, metadata) for the output; each `ack` records the ack on the
delivery, tells the sender with an `acknowledgment` message (one more message and delivery
row) and checks the channel's `max_pending`, where the raw side deletes one row.
More workers do not add throughput on one SQLite file: every claim and ack takes the one
write lock, so workers take turns; what parallel workers buy is parallel *work* between
claims (a real job runs for far longer than its claim). Through the command line each
`acomm receive` / `acomm ack` is a process (about 0.1 s to start, see `send_process` above),
which bounds a shell-loop worker, not the queue.

Run {started:%Y-%m-%d %H:%M} UTC on {info.get("nproc", "?")} cores, load average at start
{info.get("load average at start", "?")}.
"""
    print(text)
    if not (args.quick or args.no_write):
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
