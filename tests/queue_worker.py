"""A work-queue worker as a user would write it, for tests/test_queues.py: run `acomm receive
--json --limit N --as W` until it hands over nothing, log every message it got (one JSON line:
id, retry_count, claim time) and, with --ack, `acomm ack` them all at once. `--prefix` runs every
acomm under another program (faketime)."""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys

p = argparse.ArgumentParser()
p.add_argument("acomm")
p.add_argument("agent")
p.add_argument("log")
p.add_argument("--limit", default="10")
p.add_argument("--ack", action="store_true")
p.add_argument("--prefix", default="")
a = p.parse_args()
cmd = [*shlex.split(a.prefix), a.acomm]
with open(a.log, "a", encoding="utf-8") as log:
    while True:
        got = subprocess.run(
            [*cmd, "receive", "--as", a.agent, "--json", "--limit", a.limit, "queue"],
            capture_output=True,
            text=True,
            check=False,
        )
        if got.returncode != 0:
            sys.exit(f"receive failed: {got.stderr}")
        msgs = json.loads(got.stdout)["messages"]
        if not msgs:
            break
        for m in msgs:
            d = m["delivery"]
            log.write(
                json.dumps(
                    {
                        "id": m["id"],
                        "retry": d["retry_count"],
                        "at": d["delivered_at"],
                        "agent": a.agent,
                    }
                )
                + "\n"
            )
        log.flush()
        if a.ack:  # what it got, in one `acomm ack ID...` (one transaction)
            done = subprocess.run(
                [*cmd, "ack", *(str(m["id"]) for m in msgs), "--as", a.agent],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                sys.exit(f"ack failed: {done.stderr}")
