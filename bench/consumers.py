"""Worker pools and FIFO groups against today's work queue: 4 worker processes draining the
same number of messages, claim by claim, side by side in one run.

    .venv/bin/python bench/consumers.py            # rewrites its section of docs/BENCHMARKS.md
    .venv/bin/python bench/consumers.py --quick    # 400 messages, one round, prints only

Cases (each an at-least-once channel named `jobs`, 4 members w0-w3):
- queue: a work queue (`type queue`), no group keys: the baseline.
- pool: a pubsub channel whose 4 members subscribe `job.#` with `--group workers`.
- fifo queue: the work queue, each message with one of KEYS group keys (`--group-key`).
- fifo pool: the worker pool, the same keys.

Each worker process loops the engine of `acomm receive --limit 10` (timers.receive_due) and
`acomm ack` per message (acking.ack), as bench/queues.py does. A FIFO worker can find every
head in flight with others while messages remain: it then asks again (1 ms later) until all
are acked. Workers start together (a start file); throughput is N over the time from the
start to the last worker's end; every case checks each message was handed out once. Rounds
alternate the cases; the table shows each case's median and its rate as a share of the
queue's median. This script owns the section "## Worker pools and FIFO groups".
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from harness import PYTHON, WORK, machine, synchronous_name, write_section

from acomm_cli import clock
from acomm_cli.engine import acking, channels, opening, sending, timers
from acomm_cli.model import MessageFilter, SendRequest

SECTION = "## Worker pools and FIFO groups"
BATCH = 10
WORKERS = 4
KEYS = 64
TARGET = 0.80  # of the work queue's claim rate
CASES = ("queue", "pool", "fifo queue", "fifo pool")


def _store(path: Path, case: str, n: int) -> None:
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        p.unlink(missing_ok=True)
    now = clock.now_ms()
    conn = opening.connect(path, create=True, now=now)
    cfg = channels.channel_config(delivery="at-least-once", ack_timeout_ms=600_000)
    pooled = case.endswith("pool")
    channels.create_channel(conn, "jobs", "pubsub" if pooled else "queue", "boss", cfg, now)
    for k in range(WORKERS):
        if pooled:
            channels.subscribe(conn, "jobs", "job.#", f"w{k}", now, "workers")
        else:
            channels.join_channel(conn, "jobs", f"w{k}", "member", now, by="boss")
    keyed = case.startswith("fifo")
    items = [
        (
            SendRequest(
                sender="boss",
                content=f"job {i}",
                channel="jobs",
                topic="job.run" if pooled else None,
                group_key=f"k{i % KEYS}" if keyed else None,
            ),
            None,
            i + 1,
        )
        for i in range(n)
    ]
    sending.send_batch(conn, items, now)
    conn.close()


def worker(store: Path, agent: str, go: Path, n: int) -> list[int]:
    conn = opening.connect(store, create=False)
    f = MessageFilter(channel="jobs", limit=BATCH)
    got: list[int] = []
    while not go.exists():
        time.sleep(0.001)
    while True:
        msgs = timers.receive_due(conn, agent, f, clock.now_ms()).messages
        if not msgs:
            done = conn.execute(
                "SELECT count(*) FROM deliveries WHERE state = 'acked' AND recipient != 'boss'"
            ).fetchone()[0]
            if done >= n:
                return got
            time.sleep(0.001)  # every head is in flight with another worker
            continue
        for m in msgs:
            acking.ack(conn, m.id, agent, "completed", None, clock.now_ms())
            got.append(m.id)


def _run(store: Path, n: int) -> float:
    go = store.with_suffix(".go")
    go.unlink(missing_ok=True)
    procs = [
        subprocess.Popen(
            [str(PYTHON), __file__, "--worker", str(store), f"w{k}", str(go), str(n)],
            stdout=subprocess.PIPE,
        )
        for k in range(WORKERS)
    ]
    time.sleep(1.0)  # let them start (imports, open) before the start file
    t0 = time.monotonic()
    go.touch()
    ids: list[int] = []
    for p in procs:
        out, _ = p.communicate()
        assert p.returncode == 0
        ids.extend(json.loads(out))
    elapsed = time.monotonic() - t0
    if len(ids) != n or len(set(ids)) != n:
        raise SystemExit(f"{store.name}: {len(ids)} handed out, {len(set(ids))} distinct, of {n}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--worker", nargs=4)
    args = ap.parse_args(argv)
    if args.worker:
        store, agent, go, n = args.worker
        print(json.dumps(worker(Path(store), agent, Path(go), int(n))))
        return 0
    n = 400 if args.quick else 1000
    rounds = 1 if args.quick else args.rounds
    WORK.mkdir(parents=True, exist_ok=True)
    rates: dict[str, list[float]] = {c: [] for c in CASES}
    started = datetime.now(UTC)
    synchronous = "?"
    for r in range(rounds):
        order = CASES if r % 2 == 0 else tuple(reversed(CASES))
        for case in order:
            path = WORK / f"consumers-{case.replace(' ', '-')}.acomm"
            _store(path, case, n)
            c = opening.connect(path, create=False)
            synchronous = synchronous_name(c)
            c.close()
            rate = n / _run(path, n)
            rates[case].append(rate)
            print(f"round {r + 1} {case}: {rate:,.0f} msg/s", file=sys.stderr)
    med = {c: statistics.median(v) for c, v in rates.items()}
    base = med["queue"]
    ok = all(med[c] / base >= TARGET for c in CASES)
    lines = [
        f"| {c} | {med[c]:,.0f} msg/s | {', '.join(f'{x:,.0f}' for x in rates[c])} |"
        f" {med[c] / base:.0%} |"
        for c in CASES
    ]
    info = machine()
    table = "\n".join(lines)
    text = f"""{SECTION}

Generated by `bench/consumers.py` ({n:,} messages, {WORKERS} worker processes, claims of
{BATCH}, an ack per message in its own transaction; {rounds} rounds alternating the order of
the cases; synchronous = {synchronous}). Each case is an at-least-once channel drained
through the engine of `acomm receive` / `acomm ack`: `queue`, today's work queue; `pool`, a
pubsub channel whose members subscribe with `--group`; `fifo queue` and `fifo pool`, the
same with every message given one of {KEYS} group keys (`--group-key`), so each key has at
most one message in flight. Every message was handed out exactly once in every run.
Target: each case at least {TARGET:.0%} of the queue's rate: {"PASS" if ok else "FAIL"}.

| Case | median | rounds | of the queue's rate |
|---|---|---|---|
{table}

The pool's claim is the queue's compare-and-set on a placeholder recipient (`*workers`
instead of `*`), found through the member's grouped subscriptions (an index on
`subscriptions(agent)` where a group is set); a FIFO claim adds, per candidate, one probe of
the partial index `deliveries_fifo` (a pool's keyed rows not yet finished) for an earlier
open message of its key. With fewer keys than workers x claim size, workers wait for heads
more often: FIFO throughput is bounded by the number of keys in flight, by design.

Run {started:%Y-%m-%d %H:%M} UTC on {info.get("nproc", "?")} cores, load average at start
{info.get("load average at start", "?")}.
"""
    print(text)
    if not (args.quick or args.no_write):
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
