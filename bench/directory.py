"""`acomm send --to` on a strict directory against an open one, side by side.

    .venv/bin/python bench/directory.py              # rewrites its section of docs/BENCHMARKS.md
    .venv/bin/python bench/directory.py --no-write   # prints only
    .venv/bin/python bench/directory.py --runs 61    # more runs per side (default 41)

Two stores made alike by `acomm init`, each in its own directory: one whose directory is
`strict`, one `open`, the mode set both in its config file (`acomm config set
identity.directory ...`, when the key exists) and in the environment of every send
(`ACOMM_IDENTITY_DIRECTORY`). Both register the sender and the recipient first (`acomm agent
register` when the command exists, else a row written into `agents`), so the two sides differ
by the mode alone: what the strict check costs a send that passes it. Then `acomm send --to bob
MSG --as alice` runs as a process, alternately on each store (rotating which goes first, after
a warm-up), and every run must exit 0. The verdict is on the median CPU time of the send
process (user + system, from the kernel's accounting of the child): on a machine shared with
other work the wall time (shown beside it) moves with the load, the CPU time much less.

Afterwards each store is probed with a send to a name nobody registered: a strict store that
exits 0 there is not enforcing its mode (the report says so: the ratio then compares open
with open).

Target: strict within 5% of open (CPU time ratio <= 1.05). This script owns the section
"## Agent directory: strict against open" of docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from time import perf_counter

from harness import ACOMM, DOC, machine, median, rotate, spread, write_section

SECTION = "## Agent directory: strict against open"
TARGET = 1.05
MODES = ("open", "strict")
SENDER, RECIPIENT = "alice", "bob"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ACOMM), *argv], env=env, capture_output=True, text=True)


class Side:
    """One store and the environment its commands run with."""

    def __init__(self, work: Path, mode: str) -> None:
        self.mode = mode
        self.store = work / mode / "store.acomm"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("ACOMM_")},
            "ACOMM_STORE": str(self.store),
            "ACOMM_IDENTITY_DIRECTORY": mode,
        }
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.how: list[str] = []

    def setup(self) -> None:
        done = _run(["init"], self.env)
        assert done.returncode == 0, done.stderr
        configured = _run(["config", "set", "identity.directory", self.mode], self.env)
        self.how.append(
            f"config set identity.directory {self.mode}: "
            + ("done" if configured.returncode == 0 else f"exit {configured.returncode}")
        )
        for name in (SENDER, RECIPIENT):
            self.how.append(f"{name}: {self.register(name)}")

    def register(self, name: str) -> str:
        """`acomm agent register NAME` where the command exists, else the directory's row."""
        if _run(["agent", "register", "--help"], self.env).returncode == 0:
            done = _run(["agent", "register", name], self.env)
            assert done.returncode == 0, done.stderr
            return "acomm agent register"
        now = int(time.time() * 1000)
        c = sqlite3.connect(self.store)
        try:
            with c:
                c.execute(
                    "INSERT OR IGNORE INTO agents (name, registered_at, updated_at)"
                    " VALUES (?, ?, ?)",
                    (name, now, now),
                )
        finally:
            c.close()
        return "a row in agents (no `agent register` command)"

    def send(self) -> float:
        cpu0, t0 = _cpu(), perf_counter()
        done = _run(["send", "--to", RECIPIENT, "bench", "--as", SENDER], self.env)
        wall = perf_counter() - t0
        assert done.returncode == 0, f"{self.mode}: exit {done.returncode}: {done.stderr}"
        self.wall.append(wall)
        self.cpu.append(_cpu() - cpu0)
        return wall

    def probe(self) -> int:
        """The exit status of a send to a name nobody registered (strict: 4)."""
        return _run(["send", "--to", "nobody-registered", "x", "--as", SENDER], self.env).returncode


def measure(runs: int) -> tuple[dict[str, Side], dict[str, int]]:
    with tempfile.TemporaryDirectory(prefix="acomm-directory-bench-") as tmp:
        sides = {m: Side(Path(tmp), m) for m in MODES}
        for s in sides.values():
            s.setup()
        rotate([s.send for s in sides.values()], runs, warmup=2)
        for s in sides.values():  # the warm-up rounds are not counted
            s.wall, s.cpu = s.wall[2:], s.cpu[2:]
        probes = {m: s.probe() for m, s in sides.items()}
    return sides, probes


def report(
    sides: dict[str, Side], probes: dict[str, int], runs: int, info: dict[str, str]
) -> tuple[bool, str, str]:
    o, s = sides["open"], sides["strict"]
    cpu_ratio = median(s.cpu) / median(o.cpu)
    wall_ratio = median(s.wall) / median(o.wall)
    ok = cpu_ratio <= TARGET
    enforced = probes["strict"] == 4
    rows = [
        ("send --to, open (CPU)", spread(o.cpu), ""),
        ("send --to, strict (CPU)", spread(s.cpu), ""),
        ("strict / open (CPU)", f"{cpu_ratio:.3f}x", f"<= {TARGET:g}x: {'PASS' if ok else 'FAIL'}"),
        ("send --to, open (wall)", spread(o.wall), ""),
        ("send --to, strict (wall)", spread(s.wall), ""),
        ("strict / open (wall)", f"{wall_ratio:.3f}x", ""),
    ]
    probe = (
        f"a send to an unregistered name exited {probes['strict']} on the strict store and "
        f"{probes['open']} on the open one"
        + (
            ""
            if enforced
            else ": the strict store did NOT refuse it, so this run compared two stores "
            "that behave alike (the strict check is not in this build)"
        )
    )
    width = max(len(r[0]) for r in rows)
    text = [f"{n.ljust(width)}  {v}  {t}".rstrip() for n, v, t in rows]
    text += ["", probe, *(f"{m}: {h}" for m, side in sides.items() for h in side.how)]
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    md = [
        SECTION,
        "",
        f"Generated by `bench/directory.py` ({runs} sends per side, {now}); do not edit by "
        "hand. Two stores made alike by `acomm init`, one with `identity.directory: strict`, "
        "one `open` (in the config file and in `ACOMM_IDENTITY_DIRECTORY`), both with the "
        "sender and the recipient registered; `acomm send --to bob MSG --as alice` runs as a "
        "process on each in turn (rotating which goes first, after a warm-up). The target is "
        "on the send process's CPU time (user + system), which a shared machine moves much "
        "less than the wall time shown below it. Target: strict within 5% of open.",
        "",
        "| | median [p10, p90] | target |",
        "|---|---|---|",
        *(f"| {n} | {v} | {t} |" for n, v, t in rows),
        "",
        f"Check: {probe}.",
        "",
        "Set-up: " + "; ".join(f"{m}: {h}" for m, side in sides.items() for h in side.how) + ".",
        "",
        "Machine: " + "; ".join(f"{k}: {v}" for k, v in info.items()),
        "",
    ]
    return ok, "\n".join(text), "\n".join(md)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=41, help="sends per side (default 41)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    info = machine()
    sides, probes = measure(args.runs)
    ok, text, md = report(sides, probes, args.runs, info)
    print(text)
    if not args.no_write:
        write_section(SECTION, md)
        print(f"wrote {SECTION!r} in {DOC}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
