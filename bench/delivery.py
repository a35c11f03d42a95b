"""Delivery benchmarks: `tick` on 100,000 due timers, `receive --wait` wake-up.

    .venv/bin/python bench/delivery.py [--timers 100000] [--wakeups 15] [--out docs/BENCHMARKS.md]

Ratios are against baselines measured in the same run, because the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from harness import write_section

from acomm_cli.engine import channels, opening, sending, timers
from acomm_cli.model import ChannelConfig, DeliveryMode, Limits, SendRequest

ROOT = Path(__file__).resolve().parent.parent
ACOMM = str(Path(sys.executable).parent / "acomm")
T0 = 1_700_000_000_000
SECTION = "## Delivery"


def build_timer_store(path: Path, n: int) -> None:
    """n tracked deliveries whose first ack deadline is T0 + 30 s."""
    conn = opening.connect(path, create=True, now=T0)
    cfg = ChannelConfig(delivery=DeliveryMode.AT_LEAST_ONCE)
    channels.create_channel(conn, "work", "group", "planner", cfg, T0)
    channels.join_channel(conn, "work", "executor", "member", T0, by="planner")
    items = [
        (SendRequest(sender="planner", content=f"job {i}", channel="work"), None, i)
        for i in range(n)
    ]
    sending.send_batch(conn, items, T0, Limits(max_active_messages=0))
    conn.close()


def bench_tick(n: int, repeats: int) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="acomm-bench-"))
    master = work / "master.acomm"
    build_timer_store(master, n)
    due = T0 + 30_000
    tick_s, raw_s, peaks = [], [], []
    for r in range(repeats):
        for kind in ("tick", "raw") if r % 2 == 0 else ("raw", "tick"):
            copy = work / f"{kind}.acomm"
            for suffix in ("", "-wal", "-shm"):
                Path(str(copy) + suffix).unlink(missing_ok=True)
            shutil.copy(master, copy)
            conn = opening.connect(copy, create=False)
            if kind == "tick":
                tracemalloc.start()
                t = time.perf_counter()
                result = timers.tick(conn, due)
                tick_s.append(time.perf_counter() - t)
                peaks.append(tracemalloc.get_traced_memory()[1])
                tracemalloc.stop()
                assert result.retried == n, result
            else:
                t = time.perf_counter()
                conn.execute("BEGIN IMMEDIATE")
                cur = conn.execute(
                    "UPDATE deliveries SET state = 'waiting', retry_count = retry_count + 1,"
                    " next_timer_at = next_timer_at + 1000 WHERE next_timer_at <= ?",
                    (due,),
                )
                conn.execute("COMMIT")
                raw_s.append(time.perf_counter() - t)
                assert cur.rowcount == n
            conn.close()
    shutil.rmtree(work)
    return {
        "tick_s": statistics.median(tick_s),
        "raw_s": statistics.median(raw_s),
        "peak_bytes": max(peaks),
    }


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_wakeup(rounds: int) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="acomm-bench-"))
    store = work / "wait.acomm"
    conn = opening.connect(store, create=True)
    channels.create_channel(conn, "team", "group", "alice", ChannelConfig(), T0)
    channels.join_channel(conn, "team", "bob", "member", T0, by="alice")
    env = {**os.environ, "ACOMM_STORE": str(store)}
    wakeups, idle_cpu = [], []
    for i in range(rounds):
        waiter = subprocess.Popen(
            [ACOMM, "receive", "--as", "bob", "--wait", "60", "--body"],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        time.sleep(0.5)  # let it start up and begin to wait
        idle_from, cpu_from = time.monotonic(), _cpu_seconds(waiter.pid)
        time.sleep(1.0)
        idle_cpu.append((_cpu_seconds(waiter.pid) - cpu_from) / (time.monotonic() - idle_from))
        sending.send(
            conn,
            SendRequest(sender="alice", content=f"ping {i}", channel="team"),
            int(time.time() * 1000),
        )
        committed = time.perf_counter()  # send() returns after its COMMIT
        line = waiter.stdout.readline()  # type: ignore[union-attr]
        wakeups.append(time.perf_counter() - committed)
        assert line == f"ping {i}\n", line
        waiter.wait(timeout=30)
    conn.close()
    shutil.rmtree(work)
    return {
        "wake_median_s": statistics.median(wakeups),
        "wake_max_s": max(wakeups),
        "idle_cpu_fraction": statistics.median(idle_cpu),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--timers", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--wakeups", type=int, default=15)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "BENCHMARKS.md")
    args = ap.parse_args()

    t = bench_tick(args.timers, args.repeats)
    w = bench_wakeup(args.wakeups)
    ratio = t["tick_s"] / t["raw_s"]
    rows = [
        (
            f"tick, {args.timers:,} due ack deadlines",
            f"{t['tick_s'] * 1000:.0f} ms",
            f"raw UPDATE {t['raw_s'] * 1000:.0f} ms",
            f"{ratio:.2f}x",
            "<= 5x",
            ratio <= 5,
        ),
        (
            "tick peak Python memory",
            f"{t['peak_bytes'] / 1024:.0f} KiB",
            "-",
            "-",
            "bounded (set-based)",
            t["peak_bytes"] < 16 * 1024 * 1024,
        ),
        (
            "receive --wait wake-up after commit (median)",
            f"{w['wake_median_s'] * 1000:.0f} ms",
            f"max {w['wake_max_s'] * 1000:.0f} ms",
            "-",
            "< 200 ms",
            w["wake_median_s"] < 0.2,
        ),
        (
            "receive --wait idle CPU",
            f"{w['idle_cpu_fraction'] * 100:.2f}% of a core",
            "-",
            "-",
            "< 5%",
            w["idle_cpu_fraction"] < 0.05,
        ),
    ]
    table = [
        "| benchmark | measured | baseline | ratio | target | result |",
        "|---|---|---|---|---|---|",
    ]
    table += [
        f"| {a} | {b} | {c} | {d} | {e} | {'PASS' if ok else 'FAIL'} |"
        for a, b, c, d, e, ok in rows
    ]
    print("\n".join(table))
    body = "\n".join(
        [
            SECTION,
            "",
            f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores,"
            f" Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}.",
            "",
            "Reproduce: `.venv/bin/python bench/delivery.py`",
            "",
            *table,
            "",
            "`tick` moves every due deadline with a few set-based `UPDATE ... FROM channels`",
            "statements (one per timer kind), so its Python memory does not grow with the number",
            "of timers. `receive --wait` polls `PRAGMA data_version` (a shared-memory read) every",
            "50 ms, which is what bounds the wake-up latency and keeps the idle cost near zero.",
            "",
        ]
    )
    write_section(SECTION, body, args.out)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
