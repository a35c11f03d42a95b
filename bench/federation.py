"""Benchmark of federation: two nodes on one machine, the peer's outbox read with
the StoreTransport (`peers add NODE --url store:PATH`), not over HTTP.

    .venv/bin/python bench/federation.py            # rewrites its section of docs/BENCHMARKS.md
    .venv/bin/python bench/federation.py --no-write # prints only

- latency, explicit pull: `acomm send --to bob` on node na, then `acomm fed pull` on nb (two
  real processes), until the message is an unread delivery on nb; against a local `send` then
  `receive` on one plain store (two processes as well).
- latency, tick every 1 s: `acomm tick --every 1s` runs on nb; a real `send --to bob` on na,
  then nb's store is polled (read-only, every 5 ms) until the message is delivered there. The
  rounds start at random phases of the tick.
- throughput: a real `acomm fed pull` of N messages waiting in na's outbox, against a real
  `acomm send --batch` of the same N messages to a local agent on a plain store; fresh copies
  each round, rounds alternate, medians.
- start-up: real `acomm send` to a channel, and `send --to` an agent (owned by the other node
  on a node, a local one on a plain store), on a node against a plain store, interleaved,
  medians. Target: within 10%.

Both transports in one run: the same latency and throughput again with the two
nodes on NATS JetStream (a real `nats-server -js` on a free loopback port, started and killed
here): `send --to` publishes after its commit, `fed pull` reads through a durable consumer;
and the push latency of `gateway serve --push` on nb (no tick). Skipped, saying so, where
nats-server is not installed.

This script owns the section "## Federation" of docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from time import perf_counter
from typing import Any

from harness import DOC, machine, median, rotate, write_section

from acomm_cli import clock
from acomm_cli.engine.sending import send_direct
from acomm_cli.federation.pull import PAGE_SIZE as PAGE
from acomm_cli.model import SendRequest
from acomm_cli.store.connection import open_store, write

SECTION = "## Federation"
ACOMM = str(Path(sys.executable).parent / "acomm")
STARTUP_LIMIT = 1.10


def acomm(store: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(
        [ACOMM, "--store", str(store), *args], capture_output=True, text=True, timeout=120
    )
    if check and r.returncode != 0:
        raise RuntimeError(f"acomm {' '.join(args)}: {r.returncode} {r.stderr}")
    return r


NATS: str | None = None  # the url of the bench's nats-server while the NATS part runs


def pair(work: Path) -> tuple[Path, Path]:
    """Nodes na and nb, each the other's peer; bob owned by nb, seen by na. With NATS set,
    both nodes are on NATS JetStream: the room is set up over store: urls, then the peers'
    urls become the server's (a gateway would advertise it)."""
    work.mkdir(parents=True, exist_ok=True)
    a, b = work / "na.acomm", work / "nb.acomm"
    extra = ("--transport", NATS) if NATS else ()
    acomm(a, "node", "init", "--id", "na", *extra)
    acomm(b, "node", "init", "--id", "nb", *extra)
    acomm(a, "peers", "add", "nb", "--url", f"store:{b}")
    acomm(b, "peers", "add", "na", "--url", f"store:{a}")
    acomm(a, "agent", "register", "alice")  # a new store's directory is strict
    acomm(b, "agent", "register", "bob")
    acomm(b, "agent", "own", "bob")
    acomm(b, "fed", "pull")
    acomm(a, "fed", "pull")
    if NATS:
        acomm(a, "peers", "add", "nb", "--url", NATS)
        acomm(b, "peers", "add", "na", "--url", NATS)
    return a, b


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_nats(work: Path) -> subprocess.Popen[bytes] | None:
    """A nats-server -js for the NATS rows, or None (said) where it is not installed."""
    global NATS
    exe = shutil.which("nats-server") or shutil.which("nats-server", path="/usr/sbin")
    if exe is None:
        print("note: nats-server is not installed: the NATS rows are skipped", file=sys.stderr)
        return None
    port = free_port()
    proc = subprocess.Popen(
        [exe, "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", str(work / "nats-js")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import socket

    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError("nats-server did not start") from None
            time.sleep(0.05)
    NATS = f"nats://127.0.0.1:{port}"
    return proc


def plain(work: Path, name: str = "plain.acomm") -> Path:
    p = work / name
    acomm(p, "channel", "create", "team", "--as", "alice")
    acomm(p, "channel", "join", "team", "bob", "--as", "alice")
    return p


def delivered(store: Path, content: str) -> bool:
    c = sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True, timeout=5)
    try:
        return (
            c.execute(
                "SELECT 1 FROM messages m JOIN deliveries d ON d.message_id = m.id"
                " WHERE m.content = ? AND d.recipient = 'bob'",
                (content,),
            ).fetchone()
            is not None
        )
    finally:
        c.close()


# ---------------------------------------------------------------- latency


def bench_latency_pull(work: Path, rounds: int) -> dict[str, float]:
    a, b = pair(work / "pull")
    p = plain(work / "pull")
    counter = iter(range(10**9))

    def remote() -> float:
        text = f"ping {next(counter)}"
        acomm(a, "fed", "pull")  # untimed: keeps nb's lastSeenAt fresh on na (offline after 30 s)
        t = perf_counter()
        acomm(a, "send", "--to", "bob", text, "--as", "alice")
        acomm(b, "fed", "pull")
        took = perf_counter() - t
        assert delivered(b, text), text
        return took

    def local() -> float:
        t = perf_counter()
        acomm(p, "send", "team", "ping", "--as", "alice")
        acomm(p, "receive", "--as", "bob")
        return perf_counter() - t

    ours, base = rotate([remote, local], rounds)
    return {"remote": median(ours), "local": median(base)}


def bench_latency_tick(work: Path, rounds: int) -> dict[str, float]:
    a, b = pair(work / "tick")
    rng = random.Random(14)
    worker = subprocess.Popen(
        [ACOMM, "--store", str(b), "tick", "--every", "1s"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    took: list[float] = []
    try:
        time.sleep(1.5)
        for i in range(rounds):
            acomm(a, "fed", "pull")  # untimed: nb stays online in na's room copy
            time.sleep(rng.uniform(0, 1))  # a random phase of the tick
            text = f"tick ping {i}"
            t = perf_counter()
            acomm(a, "send", "--to", "bob", text, "--as", "alice")
            while not delivered(b, text):
                if perf_counter() - t > 10:
                    raise RuntimeError(f"{text!r} not delivered within 10 s")
                time.sleep(0.005)
            took.append(perf_counter() - t)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    return {"median": median(took), "max": max(took), "min": min(took)}


def bench_latency_push(work: Path, rounds: int) -> dict[str, float]:
    """NATS only: `gateway serve --push` on nb, no tick; a real `send --to bob` on na."""
    a, b = pair(work / "push")
    rng = random.Random(22)
    log = open(work / "push" / "gateway.log", "wb")
    gw = subprocess.Popen(
        [ACOMM, "--store", str(b), "gateway", "serve", "--listen", "127.0.0.1:0", "--push"],
        stdout=log,
        stderr=log,
    )
    took: list[float] = []
    try:
        time.sleep(2.0)
        for i in range(rounds):
            time.sleep(rng.uniform(0, 1))
            text = f"push ping {i}"
            t = perf_counter()
            acomm(a, "send", "--to", "bob", text, "--as", "alice")
            while not delivered(b, text):
                if perf_counter() - t > 10:
                    raise RuntimeError(f"{text!r} not delivered within 10 s")
                time.sleep(0.005)
            took.append(perf_counter() - t)
    finally:
        gw.terminate()
        gw.wait(timeout=30)
        log.close()
    return {"median": median(took), "max": max(took), "min": min(took)}


# ---------------------------------------------------------------- throughput


def gateway(store: Path, procs: list[subprocess.Popen[bytes]], *args: str) -> str:
    """`gateway serve` on a free loopback port for `store`; its http url once it listens."""
    log = open(str(store) + ".gateway.log", "wb")
    procs.append(
        subprocess.Popen(
            [ACOMM, "--store", str(store), "gateway", "serve", "--listen", "127.0.0.1:0", *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        r = acomm(store, "--json", "gateway", "status", check=False)
        if r.returncode == 0 and json.loads(r.stdout).get("listen"):
            return "http://" + json.loads(r.stdout)["listen"]
        time.sleep(0.2)
    raise RuntimeError(f"the gateway of {store} did not start")


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    import signal

    for p in procs:
        os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        p.wait(timeout=30)


def bench_throughput(work: Path, n: int, rounds: int, http: bool = False) -> dict[str, float]:
    """`fed pull` of n messages on nb against `send --batch` of as many on a plain store.
    `http`: nb reads na's outbox from na's gateway (`gateway serve`) instead of its file."""
    d = work / ("throughput-http" if http else "throughput")
    d.mkdir(parents=True)
    a, b = pair(d)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        if http:
            acomm(b, "peers", "add", "na", "--url", gateway(a, procs))
        return _throughput(d, a, b, n, rounds)
    finally:
        stop(procs)


def _throughput(d: Path, a: Path, b: Path, n: int, rounds: int) -> dict[str, float]:
    conn = open_store(a)
    try:
        now = clock.now_ms()
        with write(conn):
            for i in range(n):
                send_direct(conn, SendRequest(sender="alice", content=f"m{i}"), ["bob"], now)
    finally:
        conn.close()
    if NATS:  # na's outbox into its stream first (its pull publishes; nothing to read yet)
        acomm(a, "fed", "pull")
    base = plain(d, "base.acomm")
    batch = d / "batch.jsonl"
    batch.write_text(
        "".join(
            json.dumps({"to": "bob", "from": "alice", "content": f"m{i}"}) + "\n" for i in range(n)
        )
    )
    acomm(base, "send", "--to", "bob", "first", "--as", "alice")  # the _dm: channel exists
    masters = {"pull": b, "send": base}

    def fresh(kind: str) -> Path:
        copy = d / f"{kind}-copy.acomm"
        for suffix in ("", "-wal", "-shm"):
            Path(str(copy) + suffix).unlink(missing_ok=True)
        shutil.copy(masters[kind], copy)
        return copy

    cpu: dict[str, list[float]] = {"pull": [], "send": []}  # user + system of the process

    def timed(kind: str, store: Path, *args: str) -> tuple[float, str]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = perf_counter()
        out = acomm(store, *args).stdout
        took = perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu[kind].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        return took, out

    def pull() -> float:
        copy = fresh("pull")
        if NATS:  # (untimed) nb's stream as the master knew it: the pull publishes its acks
            drop_stream(NATS, "nb")
        took, out = timed("pull", copy, "--json", "fed", "pull", "--max-pages", "100000")
        doc = json.loads(out)
        assert doc["delivered"] == n, doc
        return took

    def send() -> float:
        return timed("send", fresh("send"), "send", "--batch", str(batch))[0]

    for kind in masters:  # checkpointed: a copy of the main file is the whole store
        c = sqlite3.connect(masters[kind])
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        c.close()
    ours, base_s = rotate([pull, send], rounds)
    return {
        "pull_rate": n / median(ours),
        "send_rate": n / median(base_s),
        # the timed rounds' (the warm-up round's are the first of each list)
        "pull_cpu": median(cpu["pull"][-rounds:]),
        "send_cpu": median(cpu["send"][-rounds:]),
    }


def drop_stream(url: str, node: str) -> None:
    """Delete `node`'s stream: a copy of a store whose events were published already (by
    an earlier round's copy) would otherwise find them there and publish nothing, where a
    real pull publishes the `ack accepted` events it appends."""
    import asyncio

    import nats
    from nats.js.errors import NotFoundError

    from acomm_cli.federation.nats_transport import stream_name

    async def drop() -> None:
        nc = await nats.connect(url)
        try:
            await nc.jetstream().delete_stream(stream_name(node))
        except NotFoundError:
            pass
        finally:
            await nc.close()

    asyncio.run(drop())


# ---------------------------------------------------------------- send -> receive --wait


def bench_wait_latency(work: Path, rounds: int) -> dict[str, dict[str, float]]:
    """Send on na -> `receive --wait` returns on nb, per hop (bench/fed_reqrep.py's round):
    over HTTP with both gateways' continuous pull, and on NATS with `gateway serve --push`
    on nb (when nats-server is installed); each beside a local send -> receive --wait on
    one plain store, the rounds interleaved."""
    import fed_reqrep as rr

    out: dict[str, dict[str, float]] = {}
    d = work / "wait-http"
    d.mkdir(parents=True)
    a, b, p = d / "a.acomm", d / "b.acomm", d / "plain.acomm"
    acomm(p, "init")
    acomm(a, "node", "init", "--id", "na")
    acomm(b, "node", "init", "--id", "nb")
    procs: list[subprocess.Popen[bytes]] = []
    try:
        url = rr.serve(a, procs, "--seed")
        token = json.loads(acomm(a, "--json", "invite", "create", "--expect", "nb").stdout)
        rr.serve(b, procs, "--join", url, "--invite", token["invite_token"])
        acomm(b, "agent", "own", "bob")
        deadline = time.monotonic() + 60
        while not rr._owned(a) or not rr.acomm(a, "peers")["peers"]:
            if time.monotonic() > deadline:
                raise RuntimeError("nb's claim on bob did not reach na")
            time.sleep(0.2)
        out["http"] = _wait_rounds(rr, a, b, p, rounds)
    finally:
        stop(procs)
    exe = shutil.which("nats-server") or shutil.which("nats-server", path="/usr/sbin")
    if exe is None:
        return out
    global NATS
    d = work / "wait-nats"
    d.mkdir()
    server = start_nats(d)
    procs = []
    try:
        a, b = pair(d)
        p = d / "plain.acomm"
        acomm(p, "init")
        # both nodes as in production: na's warm publisher puts a send out as it commits
        # (the send leaves it the publish), nb's reader takes it in as it is published
        gateway(a, procs, "--push")
        gateway(b, procs, "--push")
        out["nats"] = _wait_rounds(rr, a, b, p, rounds)
    finally:
        stop(procs)
        NATS = None
        if server is not None:
            server.kill()
            server.wait(timeout=30)
    return out


def _created(store: Path, content: str) -> float:
    """When the message was written into `store` (its created_at: the clock of the
    transaction that wrote it), in seconds."""
    c = sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True, timeout=5)
    try:
        row = c.execute(
            "SELECT created_at FROM messages WHERE content = ? ORDER BY id DESC LIMIT 1",
            (content,),
        ).fetchone()
    finally:
        c.close()
    return float(row[0]) / 1000


def _committed_at(store: Path, sql: str, content: str, out: list[float], ready: Any) -> None:
    """Append the time the row `sql` finds (for `content`) is committed in `store`: a
    read-only connection woken by the store's file-system events (store/notify.py, as
    `receive --wait` is) and looking every 2 ms besides, so the time is the commit's within
    a millisecond or two, at little cost to the machine."""
    from acomm_cli.store import notify

    c = sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True, timeout=5)
    w = notify.watch(str(store))
    ready.set()
    deadline = time.monotonic() + 60
    try:
        while c.execute(sql, (content,)).fetchone() is None and time.monotonic() < deadline:
            if w is None:
                time.sleep(0.002)
            else:
                notify.wait(w, 0.002)
        out.append(time.time())
    finally:
        c.close()
        if w is not None:
            w.close()


SENT_SQL = "SELECT 1 FROM messages WHERE content = ?"
DELIVERED_SQL = (
    "SELECT 1 FROM messages m JOIN deliveries d ON d.message_id = m.id"
    " WHERE m.content = ? AND d.recipient = 'bob'"
)


def _wait_round(rr: Any, sender: Path, reader: Path, content: str) -> dict[str, float]:
    """One message, timed from the send's transaction on `sender` (its `created_at`) and
    from its commit there: a NATS send is published after its commit and can be delivered
    before its own process has exited, so the process's end is no start line."""
    import threading

    rcv = subprocess.Popen(
        [ACOMM, "--store", str(reader), "--json", "receive", "--as", "bob", "--wait", "30s"],
        stdout=subprocess.PIPE,
        text=True,
        env=rr.ENV,
    )
    time.sleep(0.5)  # the reader is waiting
    sent: list[float] = []
    seen: list[float] = []
    watchers = []
    for store, sql, out in ((sender, SENT_SQL, sent), (reader, DELIVERED_SQL, seen)):
        ready = threading.Event()
        watchers.append(
            threading.Thread(target=_committed_at, args=(store, sql, content, out, ready))
        )
        watchers[-1].start()
        ready.wait(10)
    t0 = time.time()
    rr.acomm(sender, "send", "--to", "bob", content, "--as", "alice")
    t1 = time.time()
    out, _ = rcv.communicate(timeout=60)
    t2 = time.time()
    for watcher in watchers:
        watcher.join()
    assert [m["content"] for m in json.loads(out)["messages"]] == [content], out
    begun, committed, applied = _created(sender, content), sent[0], seen[0]
    return {
        "send": t1 - t0,
        "commit": committed - begun,  # inside the send: its transaction to its commit
        "hop": applied - committed,  # commit on A -> committed on B
        "applied": applied - begun,
        "woken": t2 - applied,
        "remote": t2 - begun,
    }


def _wait_rounds(rr: Any, a: Path, b: Path, p: Path, rounds: int) -> dict[str, float]:
    _wait_round(rr, a, b, "warm-up")  # the first round pays for consumers and caches
    fed, local = [], []
    for i in range(rounds):
        fed.append(_wait_round(rr, a, b, f"fed {i}"))
        local.append(_wait_round(rr, p, p, f"local {i}"))
    out = {k: median([r[k] for r in fed]) for k in fed[0]}
    out["local"] = median([r["remote"] for r in local])
    return out


# ---------------------------------------------------------------- start-up


def bench_startup(work: Path, rounds: int) -> dict[str, float]:
    d = work / "startup"
    d.mkdir()
    a, _ = pair(d)
    acomm(a, "channel", "create", "team", "--as", "alice")
    acomm(a, "channel", "join", "team", "carol", "--as", "alice")
    p = plain(d)

    def run(store: Path, *args: str) -> float:
        t = perf_counter()
        acomm(store, *args)
        return perf_counter() - t

    node_team, plain_team, node_to, plain_to = rotate(
        [
            lambda: run(a, "send", "team", "hi", "--as", "alice"),
            lambda: run(p, "send", "team", "hi", "--as", "alice"),
            lambda: run(a, "send", "--to", "bob", "hi", "--as", "alice"),
            lambda: run(p, "send", "--to", "bob", "hi", "--as", "alice"),
        ],
        rounds,
        warmup=2,
    )
    return {
        "node_team": median(node_team),
        "plain_team": median(plain_team),
        "node_to": median(node_to),
        "plain_to": median(plain_to),
    }


# ---------------------------------------------------------------- the section


def ms(x: float) -> str:
    return f"{x * 1000:.1f} ms"


def section(
    lat: dict[str, float],
    tick: dict[str, float],
    thr: dict[str, float],
    start: dict[str, float],
    args: argparse.Namespace,
    nats: dict[str, dict[str, float]] | None = None,
) -> str:
    m = machine()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    r_team = start["node_team"] / start["plain_team"]
    r_to = start["node_to"] / start["plain_to"]

    def verdict(r: float) -> str:
        return "PASS" if r <= STARTUP_LIMIT else "FAIL"

    return "\n".join(
        [
            SECTION,
            "",
            "Written by `bench/federation.py` (it replaces only this section). Two nodes on one "
            "machine: the peer's outbox is read with the StoreTransport (`peers add NODE --url "
            "store:PATH`), not over HTTP. Reproduce from the repository root:",
            "",
            "```sh",
            ".venv/bin/python bench/federation.py",
            "```",
            "",
            f"Run {when} on nproc {m['nproc']}, SQLite {m['sqlite']}, {m['os']}; load average at "
            f"start {m['load average at start']}.",
            "",
            "| Benchmark | Measured | Baseline | Ratio | Target | Result |",
            "|---|---|---|---|---|---|",
            f"| latency, `send --to` on A then `fed pull` on B | {ms(lat['remote'])} "
            f"| {ms(lat['local'])} local `send` then `receive` | "
            f"{lat['remote'] / lat['local']:.2f}x | - | - |",
            f"| latency, `tick --every 1s` on B | {ms(tick['median'])} median "
            f"({ms(tick['min'])} .. {ms(tick['max'])}) | - | - | - | - |",
            f"| `fed pull` of {args.messages} messages | {thr['pull_rate']:,.0f} msg/s "
            f"| {thr['send_rate']:,.0f} msg/s `send --batch` of as many, local | "
            f"{thr['pull_rate'] / thr['send_rate']:.0%} | - | - |",
            *_nats_rows(nats, lat, thr, args),
            f"| `acomm send` to a channel, on a node | {ms(start['node_team'])} "
            f"| {ms(start['plain_team'])} plain store | {r_team:.2f}x | <= {STARTUP_LIMIT:g}x "
            f"| {verdict(r_team)} |",
            f"| `acomm send --to` a remote agent, on a node | {ms(start['node_to'])} "
            f"| {ms(start['plain_to'])} `--to` a local agent, plain store | {r_to:.2f}x "
            f"| <= {STARTUP_LIMIT:g}x | {verdict(r_to)} |",
            "",
            f"- latency, explicit pull: medians of {args.rounds} rounds alternating with the "
            "baseline; each round is two real processes (send on na, pull on nb), checked "
            "delivered on nb (an untimed pull on na before each keeps nb online in na's room "
            "copy, as na's own tick would). The baseline is the same two processes' worth on "
            "one plain store (send, then receive).",
            f"- latency, tick: {args.tick_rounds} messages sent at random phases of a running "
            "`tick --every 1s` on nb; measured from the start of the `send` process on na until "
            "nb's store shows the delivery (polled read-only every 5 ms). Expect the send's "
            "process time plus half a tick period on average, one period at worst.",
            f"- throughput: medians of {max(3, args.rounds // 3)} real processes each way on "
            f"fresh copies of the stores. `fed pull` reads na's outbox in pages of {PAGE:,}, one "
            "transaction per page "
            "(cursor, inbound records, deliveries, `ack accepted` events); `send --batch` is one "
            "transaction for the whole batch of direct messages to a local agent.",
            f"- start-up: medians of {args.rounds} real `acomm send` processes per case, the four "
            "cases rotated in each round after two warm-up rounds. On a node a send to a channel "
            "never reads federation's tables; `send --to` an agent with no `_dm:` channel reads "
            "`fed_node` and the room copy, loads `engine/remote.py` (stdlib and the store only) "
            "and appends the outbox event in the send's transaction. Neither imports the "
            "federation package or its libraries.",
            "- NATS JetStream: the same two nodes with `node init --transport "
            "nats://...` on a local `nats-server -js` (2.9, file storage); `send --to` publishes "
            "its outbox row after the commit (one JetStream publish, acknowledged), `fed pull` "
            "reads through a durable pull consumer (AckAll after each page's commit). Push: "
            "`gateway serve --push` on nb, messages sent at random phases, measured as for the "
            "tick."
            if nats
            else "- NATS JetStream rows: not run (nats-server not installed).",
            "",
        ]
    )


def _nats_rows(
    nats: dict[str, dict[str, float]] | None,
    lat: dict[str, float],
    thr: dict[str, float],
    args: argparse.Namespace,
) -> list[str]:
    if not nats:
        return []
    nl, push, nt = nats["latency"], nats["push"], nats["throughput"]
    return [
        f"| NATS: latency, `send --to` on A then `fed pull` on B | {ms(nl['remote'])} "
        f"| {ms(lat['remote'])} the same over StoreTransport | "
        f"{nl['remote'] / lat['remote']:.2f}x | - | - |",
        f"| NATS: latency, `gateway serve --push` on B (no tick) | {ms(push['median'])} "
        f"median ({ms(push['min'])} .. {ms(push['max'])}) | - | - | < 1 s after the send "
        f"| {'PASS' if push['median'] < 1.0 + lat['local'] else 'FAIL'} |",
        f"| NATS: `fed pull` of {args.messages} messages | {nt['pull_rate']:,.0f} msg/s "
        f"| {thr['pull_rate']:,.0f} msg/s over StoreTransport | "
        f"{nt['pull_rate'] / thr['pull_rate']:.0%} | - | - |",
    ]


def bench_nats(work: Path, args: argparse.Namespace) -> dict[str, dict[str, float]] | None:
    """The NATS rows, each scenario on a fresh server (node ids repeat between them)."""
    global NATS
    if not (shutil.which("nats-server") or shutil.which("nats-server", path="/usr/sbin")):
        print("note: nats-server is not installed: the NATS rows are skipped", file=sys.stderr)
        return None
    out: dict[str, dict[str, float]] = {}
    for name, run in (
        ("latency", lambda d: bench_latency_pull(d, args.rounds)),
        ("push", lambda d: bench_latency_push(d, args.tick_rounds)),
        ("throughput", lambda d: bench_throughput(d, args.messages, max(3, args.rounds // 3))),
    ):
        d = work / f"nats-{name}"
        d.mkdir()
        server = start_nats(d)
        assert server is not None
        try:
            out[name] = run(d)
        finally:
            NATS = None
            server.kill()
            server.wait(timeout=30)
    return out


SPEED = "## Federation: pull throughput and cross-node wait"
PULL_TARGET = 0.70  # of a local `send --batch` of the same messages
# medians: HTTP, send on A -> `receive --wait` on B; NATS, the commit on A -> committed on B
WAIT_TARGETS = {"http": 0.300, "nats": 0.050}


def speed(args: argparse.Namespace) -> str:
    """The speed rows (`--part speed`): `fed pull` of the same N messages over each
    transport against a local `send --batch`, and send -> receive --wait across nodes."""
    work = Path(tempfile.mkdtemp(prefix="acomm-bench-fedspeed-"))
    m = machine()
    rounds = max(3, args.rounds // 3)
    rows: list[str] = []
    # bytecode cached, as an installed acomm has it: with PYTHONDONTWRITEBYTECODE (an
    # editable install) each process would compile every module it imports, and a pull
    # imports more of them than a send
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    want = set(args.transports.split(","))
    try:
        thr = {}
        if "file" in want:
            thr["store file"] = bench_throughput(work, args.messages, rounds)
        if "http" in want:
            thr["HTTP"] = bench_throughput(work, args.messages, rounds, http=True)
        nats = work / "nats-throughput"
        nats.mkdir()
        global NATS
        server = start_nats(nats) if "nats" in want else None
        if server is not None:
            try:
                thr["NATS"] = bench_throughput(nats, args.messages, rounds)
            finally:
                NATS = None
                server.kill()
                server.wait(timeout=30)
        for name, t in thr.items():
            r = t["pull_rate"] / t["send_rate"]
            rows.append(
                f"| `fed pull` of {args.messages:,} messages, {name} | {t['pull_rate']:,.0f} msg/s "
                f"| {t['send_rate']:,.0f} msg/s local `send --batch` of the same | {r:.0%} "
                f"| >= {PULL_TARGET:.0%} | {'PASS' if r >= PULL_TARGET else 'FAIL'} |"
            )
        cpu = "; ".join(
            f"{name}: `fed pull` {t['pull_cpu']:.3f} s, `send --batch` {t['send_cpu']:.3f} s "
            f"({t['send_cpu'] / t['pull_cpu']:.0%})"
            for name, t in thr.items()
        )
        wait = bench_wait_latency(work, args.rounds) if not args.no_wait else {}
        hops: list[str] = []
        for name, w in wait.items():
            label = (
                "HTTP, gateways' continuous pull" if name == "http" else "NATS, `--push` on A and B"
            )
            target = WAIT_TARGETS[name]
            if name == "nats":  # the target: the commit on A to the commit on B
                rows.append(
                    f"| commit on A -> committed on B, {label} | {ms(w['hop'])} "
                    f"| {ms(w['local'])} local send -> `receive --wait` | "
                    f"{w['hop'] / w['local']:.2f}x | <= {ms(target)} "
                    f"| {'PASS' if w['hop'] <= target else 'FAIL'} |"
                )
            rows.append(
                f"| send on A -> `receive --wait` on B, {label} | {ms(w['remote'])} "
                f"| {ms(w['local'])} local send -> `receive --wait` | "
                f"{w['remote'] / w['local']:.2f}x | "
                + (
                    f"<= {ms(target)} | {'PASS' if w['remote'] <= target else 'FAIL'} |"
                    if name == "http"
                    else "- | - |"
                )
            )
            hops.append(
                f"- {label}, per hop (medians): the `send` process on A {ms(w['send'])} "
                f"(start-up and exit included); inside it, from its transaction's start (the "
                f"message's `created_at`) to its commit {ms(w['commit'])}; from the commit on A "
                f"to the message committed on B {ms(w['hop'])}; from that to `receive --wait` "
                f"returning on B {ms(w['woken'])} (each store watched by a reader woken by its "
                "file-system events)."
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join(
        [
            SPEED,
            "",
            "Written by `bench/federation.py --part speed` (it replaces only this section). "
            "Reproduce from the repository root:",
            "",
            "```sh",
            ".venv/bin/python bench/federation.py --part speed --messages 2000",
            "```",
            "",
            f"Run {when} on nproc {m['nproc']}, SQLite {m['sqlite']}, {m['os']}; load average "
            f"(`uptime`) at start {m['load average at start']}.",
            "",
            "| Benchmark | Measured | Baseline | Ratio | Target | Result |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
            f"- throughput: medians of {rounds} real processes each way, alternating, on fresh "
            "copies of the stores: `acomm fed pull` on nb of the messages waiting in na's outbox "
            "(read from na's file, from `gateway serve` on na, or through a JetStream durable "
            "consumer on a local `nats-server -js`), against `acomm send --batch` of the same "
            "direct messages to a local agent on a plain store. A pull commits a page of "
            f"{PAGE:,} events per transaction: the page's stored texts parsed in one call, "
            "each event checked and planned as it comes (a sender's claim and a recipient's "
            "contact rule checked once per page and pair), then the page's inbound records, "
            "messages, deliveries and `ack accepted` events (their JSON written from a "
            "template) inserted one statement each, and the cursor. Over HTTP the pages of "
            "one pass share one kept-alive connection (the standard library's http.client) and the "
            "gateway serves the stored envelopes without parsing them again; on NATS a page "
            "is one request on the durable consumer (its messages taken by one callback, "
            "not one wait each), acknowledged by one ack after its commit (the consumer acks "
            "all), and the pull then publishes the page's `ack accepted` events to nb's own "
            "stream, their acks read together (nb's stream is emptied before each round, "
            "untimed: a copy of a store would otherwise find its events there from an earlier "
            "round and publish nothing). Figures are wall time of whole processes (start-up "
            "included: `fed pull` and `send` both run on the fast path, without Typer; on NATS "
            "the nats-py and asyncio imports add to it), with their bytecode cached as an "
            "installed acomm has it. CPU time (user + system) of the same processes, medians: "
            f"{cpu} (over HTTP the gateway serving the pages is another process, not counted).",
            f"- send -> receive --wait: {args.rounds} rounds after one warm-up, each "
            "interleaved with the local baseline (bench/fed_reqrep.py's round): "
            "`receive --as bob --wait 30s` is started on nb, then a real `send --to bob` on na; "
            "the measure runs from the send's transaction (the message's `created_at` on na) "
            "to `receive` returning on nb, the baseline's likewise on its one store (a NATS "
            "send is published after its commit, and nb can have it before the `send` process "
            "has exited). On NATS both nodes run `gateway serve --push`, as in production: "
            "na's warm publisher, woken by the send's commit, publishes it on its open "
            "connection (the send, seeing that publisher live, does not connect itself), and "
            "nb's reader, hinted by the publish, commits it; the target row times that, from "
            "the commit on na to the commit on nb.",
            *hops,
            "",
        ]
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument(
        "--part",
        choices=("all", "speed"),
        default="all",
        help="speed: only the pull throughput and cross-node wait rows (their own section)",
    )
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--tick-rounds", type=int, default=15)
    ap.add_argument("--messages", type=int, default=5000)
    ap.add_argument(
        "--transports",
        default="file,http,nats",
        help="speed: the pull throughput rows to run, of file,http,nats (comma-separated)",
    )
    ap.add_argument(
        "--no-wait",
        action="store_true",
        help="speed: skip the send -> receive --wait rows (the throughput rows only)",
    )
    args = ap.parse_args()
    # no gateway carries the room's heartbeats here (and NATS peers carry no room): on a
    # loaded machine a scenario can outlast the 30 s after which nb counts as offline
    os.environ["ACOMM_FED_OFFLINE_AFTER"] = "1h"
    os.environ["ACOMM_IDENTITY_DIRECTORY"] = "open"  # agents named without registering
    if args.part == "speed":
        text = speed(args)
        print(text)
        if not args.no_write:
            write_section(SPEED, text)
            print(f"wrote {DOC}")
        return 0
    work = Path(tempfile.mkdtemp(prefix="acomm-bench-fed-"))
    try:
        (work / "pull").mkdir()
        (work / "tick").mkdir()
        start = bench_startup(work, args.rounds)
        lat = bench_latency_pull(work, args.rounds)
        tick = bench_latency_tick(work, args.tick_rounds)
        thr = bench_throughput(work, args.messages, max(3, args.rounds // 3))
        nats = bench_nats(work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = section(lat, tick, thr, start, args, nats)
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
        print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
