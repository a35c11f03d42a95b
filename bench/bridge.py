"""Benchmarks of the mailbox bridge.

    .venv/bin/python bench/bridge.py            # rewrites its section of docs/BENCHMARKS.md
    .venv/bin/python bench/bridge.py --no-write # prints only

- send: what mirroring adds per delivery to a send. In process, on a store that already holds
  5,000 mirrored unread deliveries, each round sends a message (to 1 recipient, and to a group
  of 10 agents of one team) with and without the after-write mirror of `acomm send`
  (`bridge.prepare` before, `bridge.sync(full=False)` after: inbox file, and a team inbox
  append for agent@team, plus the check of the deliveries made unread), both
  measured, alternating; the difference per delivery is the figure (target <= 2 ms). As a
  cross-check, real `acomm send` processes with and without the bridge configured.
- idle hook: the after-write hook's fixed cost per command with nothing to mirror.
- tick: `acomm tick` (a real process) ingesting 1,000 response files from 10 agents, each a
  direct message to another agent, with the inbox mirror on (so each new message is also
  mirrored in the same tick); target < 2 s.

This script owns the section "## Mailbox bridge" of docs/BENCHMARKS.md.
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

from acomm_cli.bridge import sync as bridge
from acomm_cli.engine import channels, opening, sending
from acomm_cli.model import SendRequest

SECTION = "## Mailbox bridge"
ACOMM = str(Path(sys.executable).parent / "acomm")


def _store(work: Path, backlog: int) -> tuple[object, bridge.BridgeConfig]:
    path = work / "store.acomm"
    opening.init_store(path, 0)
    conn = opening.connect(path, create=False)
    cfg = bridge.BridgeConfig(inbox_dir=work / "inbox", teams_dir=work / "teams")
    channels.create_channel(conn, "crew", "group", "lead", channels.channel_config(), 0)
    for i in range(10):
        channels.join_channel(conn, "crew", f"w{i}@crew", "member", 0, by="lead")
    channels.create_channel(conn, "pair", "group", "lead", channels.channel_config(), 0)
    channels.join_channel(conn, "pair", "solo", "member", 0, by="lead")
    for i in range(backlog):  # mirrored unread deliveries: 10 per message
        sending.send(conn, SendRequest(sender="lead", content=f"old {i}", channel="crew"), i)
    bridge.sync(conn, cfg, 1000)
    return conn, cfg


CASES = (
    ("1 recipient", "pair", 1, 500),
    ("10 team recipients, native inboxes of 0 to R entries", "crew", 10, 0),
    ("10 team recipients, native inboxes of 500 to 500+R entries", "crew", 10, 500),
)


def bench_send(rounds: int) -> dict[str, object]:
    out: dict[str, object] = {}
    for label, channel, n, backlog in CASES:
        work = Path(tempfile.mkdtemp(prefix="acomm-bridge-"))
        try:
            conn, cfg = _store(work, backlog)
            os.sync()  # no write-back of the set-up (or of the last case) during the timing
            plain, mirrored = [], []
            for r in range(rounds):
                now = 10_000 + r
                t = perf_counter()
                sending.send(conn, SendRequest(sender="lead", content="x", channel=channel), now)
                plain.append(perf_counter() - t)
                t = perf_counter()
                before = bridge.prepare(conn)  # what the hook does before the command
                sending.send(conn, SendRequest(sender="lead", content="y", channel=channel), now)
                bridge.sync(conn, cfg, now, after_message_id=before, full=False)
                mirrored.append(perf_counter() - t)
            added = (median(mirrored) - median(plain)) * 1000 / n
            out[label.replace("R", str(rounds))] = {
                "plain_ms": median(plain) * 1000,
                "mirrored_ms": median(mirrored) * 1000,
                "added_ms_per_delivery": added,
            }
            conn.close()
        finally:
            shutil.rmtree(work, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix="acomm-bridge-"))
    try:
        _store(work, 0)[0].close()  # type: ignore[attr-defined]
        # cross-check with real processes
        env = {**os.environ, "ACOMM_STORE": str(work / "store.acomm")}
        benv = {
            **env,
            "ACOMM_BRIDGE_INBOX_DIR": str(work / "inbox"),
            "ACOMM_BRIDGE_TEAMS_DIR": str(work / "teams"),
        }
        procs: dict[str, list[float]] = {"plain": [], "mirrored": []}
        for _ in range(max(10, rounds // 10)):
            for name, e in (("plain", env), ("mirrored", benv)):
                t = perf_counter()
                subprocess.run(
                    [ACOMM, "send", "pair", "z", "--as", "lead"],
                    env=e,
                    check=True,
                    capture_output=True,
                )
                procs[name].append(perf_counter() - t)
        out["process"] = {k: median(v) * 1000 for k, v in procs.items()}
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def bench_idle_hook(rounds: int) -> dict[str, float]:
    """The hook's fixed cost per writing command when there is nothing to mirror: the
    triggers' check and watermark before, the queries for deliveries made unread, stale
    mirrors and messages above the watermark after (5,000 mirrored unread deliveries)."""
    work = Path(tempfile.mkdtemp(prefix="acomm-bridge-"))
    try:
        conn, cfg = _store(work, 500)
        times = []
        for r in range(rounds):
            t = perf_counter()
            before = bridge.prepare(conn)
            bridge.sync(conn, cfg, 10_000 + r, after_message_id=before, full=False)
            times.append(perf_counter() - t)
        conn.close()  # type: ignore[attr-defined]
        return {"ms": median(times) * 1000}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def bench_tick(files: int) -> dict[str, object]:
    work = Path(tempfile.mkdtemp(prefix="acomm-bridge-"))
    try:
        path = work / "store.acomm"
        opening.init_store(path, 0)
        outbox = work / "outbox"
        for i in range(files):
            d = outbox / f"agent{i % 10}"
            d.mkdir(parents=True, exist_ok=True)
            (d / f"r{i:05d}.json").write_text(
                json.dumps({"to": f"agent{(i + 1) % 10}", "content": f"response {i}"})
            )
        env = {
            **os.environ,
            "ACOMM_STORE": str(path),
            "ACOMM_BRIDGE_OUTBOX_DIR": str(outbox),
            "ACOMM_BRIDGE_INBOX_DIR": str(work / "inbox"),
        }
        t = perf_counter()
        r = subprocess.run(
            [ACOMM, "tick", "--json"], env=env, check=True, capture_output=True, text=True
        )
        seconds = perf_counter() - t
        doc = json.loads(r.stdout)["bridge"]
        mirrored = sum(len(os.listdir(outdir)) for outdir in (work / "inbox").iterdir())
        left = sum(len(os.listdir(d)) for d in outbox.iterdir())
        return {
            "seconds": seconds,
            "ingested": doc["ingested"],
            "written": doc["written"],
            "mirror_files": mirrored,
            "left": left,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def section(
    send: dict[str, object],
    tick: dict[str, object],
    files: int,
    rounds: int,
    idle: dict[str, float],
) -> str:
    m = machine()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    rows = []
    for label, s in send.items():
        if label == "process":
            continue
        added = s["added_ms_per_delivery"]
        rows.append(
            f"| send to {label}: added per delivery | {added:.3f} ms "
            f"| {s['plain_ms']:.2f} ms send without bridge "
            f"({s['mirrored_ms']:.2f} ms with) | <= 2 ms "
            f"| {'PASS' if added <= 2 else 'FAIL'} |"
        )
    rows.append(
        f"| after-write hook with nothing to mirror, per command | {idle['ms']:.3f} ms "
        "| - | - | - |"
    )
    p = send["process"]  # type: ignore[index]
    rows.append(
        f"| `acomm send` process, with bridge | {p['mirrored']:.1f} ms "
        f"| {p['plain']:.1f} ms without | - | - |"
    )
    secs = tick["seconds"]
    rows.append(
        f"| `acomm tick` ingesting {files:,} response files | {secs:.2f} s "
        f"| - | < 2 s | {'PASS' if secs < 2 and tick['ingested'] == files else 'FAIL'} |"
    )
    return "\n".join(
        [
            SECTION,
            "",
            "Written by `bench/bridge.py` (it replaces only this section). Reproduce from the "
            "repository root:",
            "",
            "```sh",
            ".venv/bin/python bench/bridge.py",
            "```",
            "",
            f"Run {when} on nproc {m['nproc']}, SQLite {m['sqlite']}, {m['os']}.",
            "",
            "| Benchmark | Measured | Baseline | Target | Result |",
            "|---|---|---|---|---|",
            *rows,
            "",
            f"- send: in process, {rounds} rounds per case (the 1-recipient case on a store "
            "already holding 5,000 mirrored unread deliveries); each round times "
            "`sending.send` alone and `sending.send` with the mirror every writing command "
            "runs (`bridge.prepare` before it: the triggers' check and the watermark; "
            "`bridge.sync(full=False)` after it: the deliveries made unread since (none here), "
            "taking away stale mirrors, and an inbox file per recipient, written to a temporary "
            "file and renamed, plus, for agent@team, an append to the team inbox under its lock, "
            "one locked read-modify-write per file), medians compared. The 10 recipients share "
            "one team but each has its own native inbox file; the second case starts from empty "
            "files, the third from 500 unread entries each (unread entries are never pruned; "
            "native inboxes are known to stall near 1,000). Appending parses the whole array (a "
            "file that is not one is never overwritten), so its cost grows with the file. "
            "Each team delivery costs four file opens and two renames (inbox file; team "
            "inbox lock, read, temporary file); on this virtual machine's ext4 the figures of "
            "that case vary between runs from about 0.9 to 2.2 ms, so it sits at the target "
            "rather than safely under it. The process rows "
            "are medians of real `acomm send` runs to 1 recipient, alternating. The machine is "
            "shared with other workers: under their load the team cases have also been seen at "
            "up to 3 ms for the same code; the hook's fixed cost (the row with nothing to "
            "mirror, median of 2,000 calls) is what the code adds on every command besides the "
            "file writes.",
            f"- tick: {tick['ingested']} of {files} files ingested (a direct message each, through "
            "the pipeline, one transaction per file holding its message and the record that the "
            "file was ingested, the file deleted after its commit, the records forgotten in one "
            f"transaction at the end), {tick['written']} "
            f"mirror files written in the same tick, {tick['left']} files left in the outbox.",
            "",
        ]
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--files", type=int, default=1000)
    args = ap.parse_args()
    send = bench_send(args.rounds)
    idle = bench_idle_hook(2000)
    tick = bench_tick(args.files)
    text = section(send, tick, args.files, args.rounds, idle)
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
        print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
