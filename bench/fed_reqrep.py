"""Cross-node latency with the gateways' continuous pull, hop by hop (prints only).

    .venv/bin/python bench/fed_reqrep.py [--rounds 10]

Two nodes, each its own store and `gateway serve --pull` on a free loopback port (na the
seed, nb joined; nb owns bob). Each round: `acomm receive --as bob --wait 30s` is started on
nb, then a real `acomm send --to bob` on na; times taken:

- send: the `send` process, start-up included (its commit is inside it);
- to applied on nb: from `send` returning to the message's `created_at` on nb (written when
  nb's gateway applied the page its long poll brought);
- applied to receive: from that to `receive --wait` returning on nb;
- end to end: from `send` returning to `receive` returning.

The baseline, in the same run: a local `send --to bob` and `receive --wait` on one plain
store (the same two processes), end to end. Report the ratio, with `uptime`'s load."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ACOMM = str(Path(sys.executable).with_name("acomm"))
ENV = {**os.environ, "ACOMM_IDENTITY_DIRECTORY": "open"}
for _k in ("ACOMM_STORE", "ACOMM_AGENT", "ACOMM_CONFIG", "ACOMM_GATEWAY_PULL"):
    ENV.pop(_k, None)


def acomm(store: Path, *args: str) -> dict:
    r = subprocess.run(
        [ACOMM, "--store", str(store), "--json", *args], capture_output=True, text=True, env=ENV
    )
    if r.returncode:
        raise SystemExit(f"acomm {' '.join(args)}: {r.stderr}")
    return json.loads(r.stdout) if r.stdout.strip() else {}


def serve(store: Path, procs: list[subprocess.Popen[bytes]], *args: str) -> str:
    log = open(str(store) + ".gateway.log", "wb")
    procs.append(
        subprocess.Popen(
            [ACOMM, "--store", str(store), "gateway", "serve", "--listen", "127.0.0.1:0"]
            + ["--pull", *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=ENV,
            start_new_session=True,
        )
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        r = subprocess.run(
            [ACOMM, "--store", str(store), "--json", "gateway", "status"],
            capture_output=True,
            text=True,
            env=ENV,
        )
        if r.returncode == 0 and json.loads(r.stdout)["room_synced"]:
            return "http://" + json.loads(r.stdout)["listen"]
        time.sleep(0.2)
    raise SystemExit(f"the gateway of {store} did not start")


def one_round(sender: Path, reader: Path, content: str) -> tuple[float, float, float]:
    """(send's time, from send returning to receive returning, the reader's created_at)."""
    rcv = subprocess.Popen(
        [ACOMM, "--store", str(reader), "--json", "receive", "--as", "bob", "--wait", "30s"],
        stdout=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    time.sleep(0.5)  # the reader is waiting
    t0 = time.time()
    acomm(sender, "send", "--to", "bob", content, "--as", "alice")
    t1 = time.time()
    out, _ = rcv.communicate(timeout=60)
    t2 = time.time()
    (msg,) = json.loads(out)["messages"]
    with sqlite3.connect(reader) as c:
        made = c.execute("SELECT created_at FROM messages WHERE id = ?", (msg["id"],)).fetchone()
    return t1 - t0, t2 - t1, made[0] / 1000 - t1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        a, b, plain = work / "a.acomm", work / "b.acomm", work / "plain.acomm"
        acomm(plain, "init")
        acomm(a, "node", "init", "--id", "na")
        acomm(b, "node", "init", "--id", "nb")
        try:
            url = serve(a, procs, "--seed")
            token = acomm(a, "invite", "create", "--expect", "nb")["invite_token"]
            serve(b, procs, "--join", url, "--invite", token)
            acomm(b, "agent", "own", "bob")
            while acomm(a, "peers")["peers"] == [] or not _owned(a):
                time.sleep(0.2)
            fed, local = [], []
            for i in range(args.rounds):  # interleaved: the load hits both alike
                fed.append(one_round(a, b, f"fed {i}"))
                local.append(one_round(plain, plain, f"local {i}"))
        finally:
            for p in procs:
                os.killpg(p.pid, signal.SIGTERM)
            for p in procs:
                p.wait(timeout=30)

    def med(xs: list[float]) -> str:
        return f"median {statistics.median(xs) * 1000:7.1f} ms, max {max(xs) * 1000:7.1f} ms"

    print(f"load: {os.getloadavg()[0]:.2f}; rounds: {args.rounds}")
    print("federated, send:              ", med([r[0] for r in fed]))
    print("federated, to applied on nb:  ", med([r[2] for r in fed]))
    print("federated, applied to receive:", med([r[1] - r[2] for r in fed]))
    print("federated, end to end:        ", med([r[1] for r in fed]))
    print("local, end to end (baseline): ", med([r[1] for r in local]))
    ratio = statistics.median([r[1] for r in fed]) / statistics.median([r[1] for r in local])
    print(f"federated / local, end to end: {ratio:.2f}x")
    return 0


def _owned(a: Path) -> bool:
    r = subprocess.run(
        [ACOMM, "--store", str(a), "--json", "agent", "where", "bob"],
        capture_output=True,
        text=True,
        env=ENV,
    )
    return r.returncode == 0 and json.loads(r.stdout)["owner_node"] == "nb"


if __name__ == "__main__":
    sys.exit(main())
