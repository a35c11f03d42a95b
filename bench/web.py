"""Benchmarks of `acomm web` (docs/WEB.md, "Speed"):

- idle: the console's CPU with 5 browsers' event streams open and nothing happening, as a
  share of one core, beside the same console with no stream open (one watch of the store
  serves every stream, so five cost what none do). Target: under 1% of a core. An idle
  process's CPU is its wake-ups: uvicorn's tick (once a second) and, with `--no-inotify`
  (ACOMM_NO_INOTIFY=1: no inotify watch), the `data_version` poll every 0.3 s.
- change: from another connection's commit to `change` on an open event stream, median of
  N commits (each 0.5 s after the last: the console tells at most one change per 0.3 s).
- page: the agents page (`operations.stats` with the directory, rendered) fetched over HTTP
  from `acomm web` on the 1,000,000-message store, median of N, side by side with `acomm
  stats --json` on the same store (the command as a user runs it). Each fetch has a query of
  its own, so the console's per-change cache of a page's read never answers it: this is the
  cost of a render. Target: the page under 300 ms (median).

The store is bench/stores.py's big store, built once and cached under bench/out/ (outside
what git tracks), copied before the console opens it.

    .venv/bin/python bench/web.py                  # both, on 1,000,000 messages
    .venv/bin/python bench/web.py --n 100000 --idle-seconds 8 --reps 3   # quicker
"""

from __future__ import annotations

import argparse
import os
import re
import select
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from harness import ACOMM, duration, machine, median
from stores import big_store, copy_store

IDLE_TARGET = 1.0  # percent of one core
PAGE_TARGET_S = 0.300


def start(store: Path, inotify: bool = True) -> tuple[subprocess.Popen[bytes], str]:
    """`acomm web` on a free loopback port; its process and URL."""
    env = dict(os.environ)
    env.pop("ACOMM_NO_INOTIFY", None)
    if not inotify:
        env["ACOMM_NO_INOTIFY"] = "1"
    proc = subprocess.Popen(
        [str(ACOMM), "--store", str(store), "web", "--listen", "127.0.0.1:0", "--read-only"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=env,
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 1)
        if ready:
            line = proc.stderr.readline()
            found = re.search(rb"serving (http://\S+/)", line)
            if found:
                return proc, found.group(1).decode()
            if not line:
                break
    stop(proc)
    raise RuntimeError("acomm web did not start")


def stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU of the process, from /proc (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_streams(url: str, n: int) -> list[socket.socket]:
    """`n` event streams, held open as a browser holds them; each has read its first line."""
    host, port = url.split("//")[1].rstrip("/").split(":")
    out = []
    for _ in range(n):
        s = socket.create_connection((host, int(port)))
        s.sendall(f"GET /events HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        got = b""
        while b"retry:" not in got:
            got += s.recv(4096)
        out.append(s)
    return out


def idle_share(proc: subprocess.Popen[bytes], seconds: float) -> float:
    """The process's CPU over `seconds` of wall time, as a percentage of one core."""
    t0, c0 = time.monotonic(), cpu_seconds(proc.pid)
    time.sleep(seconds)  # the measurement window itself, not a wait for an event
    return 100 * (cpu_seconds(proc.pid) - c0) / (time.monotonic() - t0)


def change_latency(store: Path, stream: socket.socket, reps: int) -> list[float]:
    """Seconds from a commit by another connection to `change` on `stream`, `reps` times.
    The commits insert into a table of the benchmark's own, in the store's copy."""

    def told() -> None:
        got = b""
        while b"event: change" not in got:
            chunk = stream.recv(4096)
            assert chunk, "the event stream closed"
            got += chunk

    conn = sqlite3.connect(store, isolation_level=None)
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_touch (x)")
        told()
        out = []
        for i in range(reps):
            time.sleep(0.5)  # past the console's least gap between two changes
            started = time.perf_counter()
            conn.execute("INSERT INTO bench_touch VALUES (?)", (i,))
            told()
            out.append(time.perf_counter() - started)
        return out
    finally:
        conn.close()


def fetch(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as r:
        body = r.read()
    spent = time.perf_counter() - started
    assert r.status == 200 and b'id="agents"' in body, "the agents page did not render"
    return spent


def stats_json(store: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [str(ACOMM), "--store", str(store), "stats", "--json"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="messages in the store")
    ap.add_argument("--reps", type=int, default=7, help="page fetches and stats runs")
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    ap.add_argument("--clients", type=int, default=5)
    ap.add_argument(
        "--no-inotify",
        action="store_true",
        help="the console without its inotify watch: the 0.3 s data_version poll instead",
    )
    args = ap.parse_args()
    print(", ".join(f"{k}: {v}" for k, v in machine().items()))
    print(f"load average (1 min) at the start: {os.getloadavg()[0]:.2f}")
    src, _ = big_store(args.n)
    store = copy_store(src, src.parent / "work" / "web.acomm")
    proc, url = start(store, inotify=not args.no_inotify)
    try:
        fetch(url)  # warm: the first page opens the store's pages into the cache
        stats_json(store)
        pages, stats = [], []
        for i in range(args.reps):  # interleaved: a noisy neighbour moves both
            pages.append(fetch(f"{url}?cold={i}"))  # a query of its own: never the cache
            stats.append(stats_json(store))
        none = idle_share(proc, args.idle_seconds)
        streams = open_streams(url, args.clients)
        try:
            five = idle_share(proc, args.idle_seconds)
            changes = change_latency(store, streams[0], args.reps)
        finally:
            for s in streams:
                s.close()
    finally:
        stop(proc)
    page_med, stats_med = median(pages), median(stats)
    load = os.getloadavg()[0]
    print(f"load average (1 min) at the end: {load:.2f} on {os.cpu_count()} cores")
    print(
        f"page (agents, {args.n:,} messages): median {duration(page_med)} of {args.reps}; "
        f"`acomm stats --json` median {duration(stats_med)} "
        f"(ratio {page_med / stats_med:.2f}); target under {duration(PAGE_TARGET_S)}: "
        f"{'ok' if page_med < PAGE_TARGET_S else 'MISSED'}"
    )
    print(
        f"idle CPU: {five:.2f}% of a core with {args.clients} event streams open, "
        f"{none:.2f}% with none ({'poll' if args.no_inotify else 'inotify'}); "
        f"target under {IDLE_TARGET:.0f}%: "
        f"{'ok' if five < IDLE_TARGET else 'MISSED'}"
    )
    print(
        f"change: median {duration(median(changes))} of {args.reps} "
        f"(max {duration(max(changes))}) from a commit to `change` on an event stream"
    )
    return 0 if page_med < PAGE_TARGET_S and five < IDLE_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
