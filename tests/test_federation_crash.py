"""Crash safety of `fed pull`: SIGKILL it at seeded moments while it reads a peer
outbox of several pages (before any page commits, between pages, after the last), then pull
again. Each page is one transaction (cursor, inbound records, deliveries, `ack accepted`), so
whatever the moment: the cursor and what was recorded agree, a page that committed is never
redone, one that did not is redone exactly once, every event ends delivered once, and
`doctor` is clean on both nodes. The peer is read with the StoreTransport (`store:PATH`),
and again on NATS JetStream (a real nats-server; the durable consumer may hold
unacked messages at the kill, and the next pull places it back at the cursor).

Each case is parametrized by its seed, so a failure names the moment that broke it. The delay
before a kill is the injected fault, not a synchronisation; every wait is bounded."""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import ACOMM, query, run
from natsserver import nats_server, needs_nats
from test_fault_injection import kill

from acomm_cli import clock
from acomm_cli.engine.sending import send_direct
from acomm_cli.federation.pull import PAGE_SIZE
from acomm_cli.model import SendRequest
from acomm_cli.store.connection import open_store, write

pytestmark = pytest.mark.federation

N = 2 * PAGE_SIZE + PAGE_SIZE // 2  # two whole pages and a part of one
SEEDS = range(6)


def acomm(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    r = run("--store", str(path), "--json", *args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


@pytest.fixture(params=["store", pytest.param("nats", marks=needs_nats)])
def loaded(request, tmp_path):
    """Nodes na and nb; bob is owned by nb; na's outbox holds N messages to bob (on NATS:
    published into na's stream; the room is set up over store: urls, then the peers' urls
    become the NATS server's)."""
    with contextlib.ExitStack() as stack:
        server = None
        if request.param == "nats":
            server = stack.enter_context(nats_server(tmp_path / "nats"))
        yield _loaded(tmp_path, server.url if server else None)


def _loaded(tmp_path: Path, nats_url: str | None) -> tuple[Path, Path]:
    a, b = tmp_path / "na.acomm", tmp_path / "nb.acomm"
    extra = ("--transport", nats_url) if nats_url else ()
    acomm(a, "node", "init", "--id", "na", *extra)
    acomm(b, "node", "init", "--id", "nb", *extra)
    acomm(a, "peers", "add", "nb", "--url", f"store:{b}")
    acomm(b, "peers", "add", "na", "--url", f"store:{a}")
    acomm(b, "agent", "own", "bob")
    acomm(a, "agent", "register", "alice")  # a new store is strict: the sends below name her
    acomm(b, "fed", "pull")
    acomm(a, "fed", "pull")
    if nats_url:
        acomm(a, "peers", "add", "nb", "--url", nats_url)
        acomm(b, "peers", "add", "na", "--url", nats_url)
    conn = open_store(a)
    try:
        now = clock.now_ms()
        with write(conn):  # N sends in one transaction: `send --to` N times, faster
            for i in range(N):
                [res] = send_direct(
                    conn, SendRequest(sender="alice", content=f"m{i}"), ["bob"], now
                )
                assert not isinstance(res, Exception), res
    finally:
        conn.close()
    assert query(a, "SELECT count(*), max(seq) FROM fed_outbox WHERE kind = 'message'") == [(N, N)]
    if nats_url:  # na publishes its outbox (its next pull does; it reads nothing yet)
        assert json.loads(acomm(a, "fed", "pull").stdout)["published"] == N
        assert query(a, "SELECT published_seq FROM fed_nats") == [(N,)]
    return a, b


def consistent(b: Path) -> int:
    """nb's view of na's outbox after any crash: everything up to the cursor recorded,
    delivered and accepted once, nothing beyond it. Returns the cursor."""
    [(position,)] = query(b, "SELECT position FROM fed_cursors WHERE source_node = 'na'")
    assert query(
        b,
        "SELECT count(*), count(DISTINCT event_id), coalesce(max(seq), 0)"
        " FROM fed_inbound WHERE source_node = 'na' AND kind = 'message'",
    ) == [(position, position, position)]
    assert query(
        b, "SELECT count(*), count(DISTINCT global_id) FROM messages WHERE origin_node = 'na'"
    ) == [(position, position)]
    assert query(
        b, "SELECT count(*), count(DISTINCT message_id) FROM deliveries WHERE recipient = 'bob'"
    ) == [(position, position)]
    assert query(
        b,
        "SELECT count(*), count(DISTINCT json_extract(envelope,"
        " '$.payload.ackOf')) FROM fed_outbox WHERE kind = 'ack'"
        " AND json_extract(envelope, '$.payload.status') = 'accepted'",
    ) == [(position, position)]
    assert not query(
        b,
        "SELECT 1 FROM messages m JOIN fed_inbound i ON i.message_id = m.id"
        " WHERE m.global_id != i.event_id",
    )
    return position


def doctor_clean(path: Path) -> None:
    r = run("--store", str(path), "doctor", "--json")
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("seed", SEEDS)
def test_fed_pull_killed_delivers_every_event_exactly_once(loaded, seed):
    a, b = loaded
    rng = random.Random(seed)
    p = subprocess.Popen(
        [ACOMM, "--store", str(b), "fed", "pull"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        kill(p, rng.uniform(0, 1.0))
    finally:
        p.kill()
        p.wait(timeout=30)
    before = consistent(b)
    assert before % PAGE_SIZE == 0 or before == N  # whole pages only
    doctor_clean(b)
    again = acomm(b, "fed", "pull")
    doc = json.loads(again.stdout)
    assert doc["delivered"] == N - before and doc["duplicates"] == 0  # not redone
    assert consistent(b) == N
    assert query(b, "SELECT head FROM fed_cursors WHERE source_node = 'na'") == [(N,)]
    doctor_clean(b)
    # the sender's node sees every event accepted, once
    pulled = json.loads(acomm(a, "fed", "pull").stdout)
    assert pulled["acks"] == N and pulled["duplicates"] == 0
    assert query(a, "SELECT state, count(*) FROM fed_sent GROUP BY state") == [("accepted", N)]
    doctor_clean(a)


def test_a_rewound_cursor_after_a_kill_redoes_nothing(loaded):
    """A pull killed, then the cursor put back to 0 (a restored backup of the cursors, say):
    the events are read again and all counted duplicates; nothing is delivered twice."""
    _, b = loaded
    p = subprocess.Popen(
        [ACOMM, "--store", str(b), "fed", "pull"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        kill(p, 0.5)
    finally:
        p.kill()
        p.wait(timeout=30)
    before = consistent(b)
    with sqlite3.connect(b) as c:
        c.execute("UPDATE fed_cursors SET position = 0 WHERE source_node = 'na'")
    doc = json.loads(acomm(b, "fed", "pull").stdout)
    assert (doc["read"], doc["duplicates"], doc["delivered"]) == (N, before, N - before)
    assert consistent(b) == N
    doctor_clean(b)
