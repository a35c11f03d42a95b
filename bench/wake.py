"""`receive --wait` woken by another process's commit, against an inotify-woken raw reader.

    .venv/bin/python bench/wake.py [--rounds 15] [--out docs/BENCHMARKS.md]

Each round starts both waiters (`acomm receive --wait 60 --body`, and a bare Python reader
that watches the store's directory with inotify, reads `PRAGMA data_version` on each event
and selects the message), waits until each says it is waiting, then commits one message from
this process and times until each has printed it. The two are interleaved round by round
(which one is measured first alternates); medians. A third row runs acomm with the watch
turned off (the data_version poll alone, as on a platform without inotify).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import machine, write_section

from acomm_cli.engine import channels, opening, sending
from acomm_cli.model import ChannelConfig, SendRequest

ROOT = Path(__file__).resolve().parent.parent
T0 = 1_700_000_000_000
SECTION = "## receive --wait wake-up"

# acomm's own `main`, saying "waiting" on stderr when it first waits (its read found nothing,
# its watch made);
# `poll` turns the watch off
ACOMM_WAITER = """
import os, sys
from acomm_cli.cli.main import main
from acomm_cli.engine import waiting
from acomm_cli.store import notify
if sys.argv.pop(1) == "poll":
    notify.watch = lambda path: None
watch = waiting._watch
def announce(conn):
    waiting._watch = watch
    made = watch(conn)
    os.write(2, b"waiting\\n")
    return made
waiting._watch = announce
sys.argv = ["acomm", *sys.argv[1:]]
main()
"""

# the floor: an inotify-woken reader of the same store that takes the message as receive
# does (select it, mark it read, commit, print), and nothing else
RAW_WAITER = """
import ctypes, os, select, sqlite3, sys
path = sys.argv[1]
conn = sqlite3.connect(path, isolation_level=None)
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0o4000 | 0o2000000)
libc.inotify_add_watch(fd, os.path.dirname(path).encode(), 0x2 | 0x100 | 0x80)
version = conn.execute("PRAGMA data_version").fetchone()[0]
os.write(2, b"waiting\\n")
while True:
    select.select([fd], [], [], 0.05)
    try:
        os.read(fd, 65536)
    except BlockingIOError:
        pass
    v = conn.execute("PRAGMA data_version").fetchone()[0]
    if v == version:
        continue
    conn.execute("BEGIN IMMEDIATE")
    row = conn.execute(
        "SELECT m.id, m.content FROM deliveries d JOIN messages m ON m.id = d.message_id"
        " WHERE d.recipient = 'bob' AND d.state = 'unread' ORDER BY d.message_id LIMIT 1"
    ).fetchone()
    if row:
        conn.execute(
            "UPDATE deliveries SET state = 'read' WHERE message_id = ? AND recipient = 'bob'",
            (row[0],),
        )
    conn.execute("COMMIT")
    if row:
        sys.stdout.write(row[1] + "\\n")
        sys.stdout.flush()
        break
    version = v
"""


def _readline(proc: subprocess.Popen[str], stream: str) -> str:
    line = getattr(proc, stream).readline()
    if not line:
        raise RuntimeError(f"{proc.args[:4]} ended: {proc.communicate()}")
    return line


def _one(argv: list[str], conn: object, store: Path, body: str) -> float:
    env = {**os.environ, "ACOMM_STORE": str(store)}
    waiter = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert _readline(waiter, "stderr") == "waiting\n"
        sending.send(
            conn,  # type: ignore[arg-type]
            SendRequest(sender="alice", content=body, channel="team"),
            int(time.time() * 1000),
        )
        committed = time.perf_counter()  # send() returns after its COMMIT
        line = _readline(waiter, "stdout")
        took = time.perf_counter() - committed
        assert line == body + "\n", line
        waiter.wait(timeout=30)
        return took
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()


def bench(rounds: int) -> dict[str, list[float]]:
    work = Path(tempfile.mkdtemp(prefix="acomm-wake-"))
    stores = {}
    conns = {}
    for name in ("acomm", "poll", "raw"):
        stores[name] = work / name / "wait.acomm"
        conn = opening.connect(stores[name], create=True)
        channels.create_channel(conn, "team", "group", "alice", ChannelConfig(), T0)
        channels.join_channel(conn, "team", "bob", "member", T0, by="alice")
        conns[name] = conn
    py = sys.executable
    argv = {
        "acomm": [py, "-c", ACOMM_WAITER, "inotify", "receive", "--as", "bob", "--wait", "60"],
        "poll": [py, "-c", ACOMM_WAITER, "poll", "receive", "--as", "bob", "--wait", "60"],
        "raw": [py, "-c", RAW_WAITER, str(stores["raw"])],
    }
    for name in ("acomm", "poll"):
        argv[name].append("--body")
    times: dict[str, list[float]] = {k: [] for k in argv}
    order = list(argv)
    for i in range(rounds + 1):  # the first round warms up
        for name in order:
            took = _one(argv[name], conns[name], stores[name], f"ping {i}")
            if i:
                times[name].append(took)
        order = order[1:] + order[:1]
    for conn in conns.values():
        conn.close()
    shutil.rmtree(work)
    return times


def _ms(xs: list[float]) -> str:
    q = statistics.quantiles(xs, n=10) if len(xs) > 1 else [xs[0]] * 9
    return (
        f"median {statistics.median(xs) * 1000:.1f} ms [p10 {q[0] * 1000:.1f} ms, "
        f"p90 {q[8] * 1000:.1f} ms] of {len(xs)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "BENCHMARKS.md")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    t = bench(args.rounds)
    med = {k: statistics.median(v) for k, v in t.items()}
    ok = med["acomm"] <= 0.010
    rows = [
        "| | median [p10, p90] | target |",
        "|---|---|---|",
        f"| acomm `receive --wait`, woken by inotify | {_ms(t['acomm'])} | <= 10 ms: "
        f"{'PASS' if ok else 'FAIL'} |",
        f"| baseline: a bare inotify-woken reader | {_ms(t['raw'])} | acomm "
        f"{(med['acomm'] - med['raw']) * 1000:+.1f} ms |",
        f"| acomm with the watch off (the data_version poll, every 50 ms) | {_ms(t['poll'])} | |",
    ]
    print("\n".join(rows))
    if args.no_write:
        return
    info = machine()
    text = "\n".join(
        [
            SECTION,
            "",
            f"Generated by `bench/wake.py` ({args.rounds} rounds, {started}); do not edit by "
            "hand. Each round starts a waiter, waits until it says it is waiting, commits one "
            "message from the benchmark's process and times from the end of that COMMIT until "
            "the waiter has printed the message (through a pipe). The waiters run in turn, "
            "rotated round by round, after one warm-up round. Reproduce:",
            "",
            "```sh",
            ".venv/bin/python bench/wake.py",
            "```",
            "",
            *rows,
            "",
            "acomm's waiter watches the store's directory (store/notify.py: inotify through "
            "libc by ctypes, a watch made by the first wait and kept with the connection); an "
            "event re-reads `PRAGMA data_version`, and the 50 ms poll stays beneath it as the "
            "safety net (and is all there is where inotify is not).",
            "",
            f"Machine: {'; '.join(f'{k}: {v}' for k, v in info.items())}; load average at "
            f"start: {load}",
        ]
    )
    write_section(SECTION, text, args.out)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
