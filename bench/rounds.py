"""The start-up and per-message cases, and the two rows they must not regress, in rounds;
prints only.

    .venv/bin/python bench/rounds.py               # each case once
    .venv/bin/python bench/rounds.py --rounds 3    # each case 3 times, cases taken in turn
    .venv/bin/python bench/rounds.py --compact     # also compact (about 6 minutes a round)
    .venv/bin/python bench/rounds.py --quick       # small sizes, a smoke test

The cases are those of `bench/run.py` (send_process and send_process_editable,
receive_process, send_inproc, receive_ack, and receive, a no-regression row) and `stats`
with overdue timers from `bench/ops.py` (its ratio to stats after a tick), with the same
baselines and targets. With --rounds, round r runs every case once before round r + 1
starts, so a change of the machine's load spreads over all of them; the table gives each
round's ratio, their median and the load average (1 minute) when each case started. The
1,000,000-message stores are built once and cached under bench/out/ (a first run takes a few
minutes longer). Exit status 0 when every median meets its target.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import cases
import ops
from harness import WORK, machine

RUN_CASES = ("send_process", "receive_process", "send_inproc", "receive_ack", "receive")


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/rounds.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=1, help="times each case runs (default 1)")
    ap.add_argument("--compact", action="store_true", help="also compact (no-regression row)")
    ap.add_argument("--quick", action="store_true", help="small sizes; indicative only")
    args = ap.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    ctx = cases.Context(cases.QUICK if args.quick else cases.FULL)
    n = 100_000 if args.quick else 1_000_000
    # name -> (kind, target, [(ratio, load at its start), ...])
    rows: dict[str, tuple[str, float, list[tuple[float, str]]]] = {}

    def record(name: str, kind: str, limit: float, ratio: float, load: str) -> None:
        rows.setdefault(name, (kind, limit, []))[2].append((ratio, load))

    info = machine()
    for r in range(args.rounds):
        for name in RUN_CASES:
            load = _load()
            print(f"round {r + 1}: {name} (load {load}) ...", file=sys.stderr, flush=True)
            for res in cases.CASES[name](ctx):
                if res.error:
                    raise SystemExit(f"{res.name}: {res.error}")
                record(res.name, res.kind, res.limit, res.ratio, load)
        load = _load()
        print(f"round {r + 1}: stats (load {load}) ...", file=sys.stderr, flush=True)
        st, _ = ops.bench_stats(n, 10)
        record(
            "stats, overdue timers / after a tick",
            "time",
            2.0,
            statistics.median(st["overdue"]) / statistics.median(st["times"]),
            load,
        )
        if args.compact:
            load = _load()
            print(f"round {r + 1}: compact (load {load}) ...", file=sys.stderr, flush=True)
            cp = ops.bench_compact(n, 3)
            record(
                "compact / raw DELETE",
                "time",
                3.0,
                statistics.median(cp["mine"]) / statistics.median(cp["base"]),
                load,
            )

    print(
        f"\n{info.get('nproc', '?')} cores; python {sys.version.split()[0]}; "
        f"{args.rounds} round(s){' (quick sizes)' if args.quick else ''}"
    )
    ok = True
    for name, (kind, limit, got) in rows.items():
        med = statistics.median(ratio for ratio, _ in got)
        passed = med <= limit if kind == "time" else med >= limit
        ok = ok and passed

        def fmt(x: float, kind: str = kind) -> str:
            return f"{x:.0%}" if kind == "rate" else f"{x:.2f}x"

        each = ", ".join(f"{fmt(ratio)} (load {load})" for ratio, load in got)
        print(
            f"{name:40s} median {fmt(med):>6s}  target {'<=' if kind == 'time' else '>='} "
            f"{fmt(limit)}  {'PASS' if passed else 'FAIL'}  [{each}]"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
