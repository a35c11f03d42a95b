"""Benchmark of agent dispatch: what acomm adds to each agent run.

    .venv/bin/python bench/dispatch.py            # rewrites its section of docs/BENCHMARKS.md
    .venv/bin/python bench/dispatch.py --no-write # prints only

- per message: in process, `dispatch.dispatch` over N unread messages to an agent whose
  command is `/bin/true` (a list: no shell), against N bare `subprocess.run(["/bin/true"])`
  with the same stdin document. Rounds alternate which goes first; the difference of the
  medians, per message, is acomm's overhead (claim, receipt, settle: two write transactions,
  the message read, the temporary files, the environment).
- tick: a real `acomm tick` process dispatching N messages, end to end.
- backlog: a real `acomm tick` over 50,000 unread messages that no rule wants, against
  `tick --no-dispatch`: what such a backlog costs every tick.

No target; this records what dispatch costs so that a change can be compared.
This script owns the section "## Agent dispatch" of docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from time import perf_counter

from harness import DOC, machine, median, write_section

from acomm_cli.dispatch import dispatcher as dispatch
from acomm_cli.dispatch.agents import parse_agents
from acomm_cli.engine import channels, opening, sending
from acomm_cli.model import SendRequest
from acomm_cli.output import render_worker

SECTION = "## Agent dispatch"
ACOMM = str(Path(sys.executable).parent / "acomm")
TRUE = shutil.which("true") or "/bin/true"


def _store(work: Path, n: int) -> Path:
    path = work / "store.acomm"
    opening.init_store(path, 0)
    conn = opening.connect(path, create=False)
    channels.create_channel(conn, "team", "group", "lead", channels.channel_config(), 0)
    channels.join_channel(conn, "team", "worker", "member", 0, by="lead")
    sending.send_batch(
        conn,
        [
            (
                SendRequest(sender="lead", content=f"job {i}", channel="team", type="command"),
                None,
                i,
            )
            for i in range(n)
        ],
        1,
    )
    conn.close()
    return path


def bench_inproc(n: int, rounds: int) -> dict[str, float]:
    agents = parse_agents({"worker": {"run": [TRUE]}}, None)
    doc = json.dumps({"id": 1, "content": "job"}).encode()
    ours, bare = [], []
    for r in range(rounds):
        work = Path(tempfile.mkdtemp(prefix="acomm-dispatch-"))
        try:
            path = _store(work, n)
            conn = opening.connect(path, create=False)

            def run_ours() -> float:
                t = perf_counter()
                res = dispatch.dispatch(
                    conn,  # noqa: B023
                    agents,
                    10_000,
                    store_path=str(path),  # noqa: B023
                    encode=render_worker.message_json,
                    max_runs=n,
                )
                assert len(res.receipts) == n and res.counts()["accepted"] == n
                return perf_counter() - t

            def run_bare() -> float:
                t = perf_counter()
                for _ in range(n):
                    subprocess.run([TRUE], input=doc, check=True)
                return perf_counter() - t

            if r % 2 == 0:
                ours.append(run_ours())
                bare.append(run_bare())
            else:
                bare.append(run_bare())
                ours.append(run_ours())
            conn.close()
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return {"ours_ms": median(ours) / n * 1000, "bare_ms": median(bare) / n * 1000}


def bench_tick(n: int) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="acomm-dispatch-"))
    try:
        path = _store(work, n)
        (work / "config.yaml").write_text(json.dumps({"agents": {"worker": {"run": [TRUE]}}}))
        env = {**os.environ, "ACOMM_STORE": str(path)}
        t = perf_counter()
        r = subprocess.run(
            [ACOMM, "tick", "--json"], env=env, check=True, capture_output=True, text=True
        )
        seconds = perf_counter() - t
        return {"seconds": seconds, "accepted": json.loads(r.stdout)["dispatch"]["accepted"]}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def bench_backlog(n: int, rounds: int) -> dict[str, float]:
    """A real `acomm tick` over N unread messages that no rule wants (text messages; the
    agent takes commands), against `tick --no-dispatch` on the same store: medians."""
    work = Path(tempfile.mkdtemp(prefix="acomm-dispatch-"))
    try:
        path = work / "store.acomm"
        opening.init_store(path, 0)
        conn = opening.connect(path, create=False)
        channels.create_channel(conn, "team", "group", "lead", channels.channel_config(), 0)
        channels.join_channel(conn, "team", "worker", "member", 0, by="lead")
        for start in range(0, n, 5000):
            sending.send_batch(
                conn,
                [
                    (SendRequest(sender="lead", content=f"chat {i}", channel="team"), None, i)
                    for i in range(start, min(n, start + 5000))
                ],
                1,
            )
        conn.close()
        (work / "config.yaml").write_text(
            json.dumps({"agents": {"worker": {"run": [TRUE], "on": {"types": ["command"]}}}})
        )
        env = {**os.environ, "ACOMM_STORE": str(path)}
        times: dict[str, list[float]] = {"dispatch": [], "none": []}
        for _ in range(rounds):
            for key, extra in (("dispatch", []), ("none", ["--no-dispatch"])):
                t = perf_counter()
                subprocess.run([ACOMM, "tick", *extra], env=env, check=True, capture_output=True)
                times[key].append(perf_counter() - t)
        return {k: median(v) for k, v in times.items()}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def section(
    inproc: dict[str, float],
    tick: dict[str, float],
    n: int,
    rounds: int,
    backlog: dict[str, float],
    backlog_n: int,
) -> str:
    m = machine()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    added = inproc["ours_ms"] - inproc["bare_ms"]
    return "\n".join(
        [
            SECTION,
            "",
            "Written by `bench/dispatch.py` (it replaces only this section). Reproduce from the "
            "repository root:",
            "",
            "```sh",
            ".venv/bin/python bench/dispatch.py",
            "```",
            "",
            f"Run {when} on nproc {m['nproc']}, SQLite {m['sqlite']}, {m['os']}.",
            "",
            "| Benchmark | Measured | Baseline | Target | Result |",
            "|---|---|---|---|---|",
            f"| dispatch per message, added to running the command | {added:.2f} ms "
            f"| {inproc['bare_ms']:.2f} ms bare `subprocess.run` ({inproc['ours_ms']:.2f} ms "
            "dispatched) | - | - |",
            f"| `acomm tick` dispatching {n} messages | {tick['seconds']:.2f} s | - | - | - |",
            f"| `acomm tick` over {backlog_n} unread messages no rule wants | "
            f"{backlog['dispatch']:.2f} s | {backlog['none']:.2f} s with `--no-dispatch` | - "
            "| - |",
            "",
            f"- per message: in process, {rounds} rounds of {n} unread messages to one agent "
            f"whose command is `{TRUE}` (no shell), alternating which side goes first, medians "
            "compared. Dispatched: per message a claim transaction (compare-and-set on the claim "
            "row, a `running` receipt), the message read and encoded as the `receive --json` "
            "document, a temporary file for stdin and two drained pipes for stdout and stderr, the "
            "command in its own "
            "session, and a settle transaction (delivery read, claim done, receipt). Bare: "
            "`subprocess.run` with the same stdin size, through a pipe.",
            f"- tick: one real process, {tick['accepted']:.0f} of {n} accepted, including "
            "Python start-up and the timers' pass.",
            f"- backlog: {backlog_n} unread text messages to an agent whose rule takes only "
            "commands, medians of "
            f"{rounds} real `tick` processes each way. The rule's types, channels and senders "
            "are matched in SQL, so the messages it does not want never reach Python.",
            "",
        ]
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--messages", type=int, default=100)  # one tick: --max 100
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--backlog", type=int, default=50_000)
    args = ap.parse_args()
    inproc = bench_inproc(args.messages, args.rounds)
    tick = bench_tick(args.messages)
    backlog = bench_backlog(args.backlog, args.rounds)
    text = section(inproc, tick, args.messages, args.rounds, backlog, args.backlog)
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
        print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
