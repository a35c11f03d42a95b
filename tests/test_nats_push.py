"""`gateway serve --push` on both NATS nodes: the sender's gateway publishes a command's outbox
rows as they are committed (the command, seeing that publisher live, does not connect
itself), the reader's takes them in as they are published. A gateway killed with SIGKILL
leaves the publish to the next command again, and publishers racing on one outbox never lose,
repeat or reorder an event in the stream or on the other node. A real nats-server and real
gateways, started and killed by PID."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import procs
import pytest
from conftest import ACOMM, run
from natsserver import nats_server, needs_nats
from test_federation_nats import ok, sql
from test_gateway import wait_until
from test_nats_cluster import pair

from acomm_cli import clock
from acomm_cli.engine.sending import send_direct
from acomm_cli.federation import gwstate
from acomm_cli.federation import nats_transport as nt
from acomm_cli.model import SendRequest
from acomm_cli.store.connection import open_store

pytestmark = [pytest.mark.federation, needs_nats]

FAULT = {nt.FAULT_ENV: "1"}  # a command that publishes itself is killed right before it


@pytest.fixture
def nodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path, str]]:
    monkeypatch.setenv("ACOMM_FED_OFFLINE_AFTER", "1h")  # no room heartbeats between them
    with nats_server(tmp_path / "nats") as server:
        a, b = pair(tmp_path, server.url, owned=("bob",))
        yield a, b, server.url


@pytest.fixture
def gateways() -> Iterator[dict[Path, subprocess.Popen[bytes]]]:
    started: dict[Path, subprocess.Popen[bytes]] = {}
    yield started
    for proc in started.values():
        procs.stop(proc)


def push(started: dict[Path, subprocess.Popen[bytes]], store: Path) -> None:
    """`gateway serve --push` on `store`, once its publisher says it is live."""
    log = open(str(store) + ".log", "ab")  # the child holds it open
    started[store] = procs.spawn(
        [ACOMM, "--store", str(store), "gateway", "serve", "--listen", "127.0.0.1:0", "--push"],
        stdout=log,
        stderr=log,
    )
    log.close()
    wait_until(f"the publisher of {store.name}", lambda: gwstate.publisher_live(str(store), now()))


def now() -> int:
    return clock.now_ms()


def head(path: Path) -> int:
    return int(sql(path, "SELECT coalesce(max(seq), 0) FROM fed_outbox")[0][0])


def published(path: Path) -> int:
    return int(sql(path, "SELECT published_seq FROM fed_nats")[0][0])


def bobs(b: Path) -> list[str]:
    return [
        str(r[0])
        for r in sql(
            b,
            "SELECT m.content FROM messages m JOIN deliveries d ON d.message_id = m.id"
            " WHERE d.recipient = 'bob' ORDER BY m.id",
        )
    ]


def send(a: Path, text: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run(
        "--store", str(a), "--json", "send", "--to", "bob", text, "--as", "alice", env=env or {}
    )


def test_a_send_leaves_the_publish_to_a_live_publisher_and_arrives(nodes, gateways):
    a, b, _ = nodes
    push(gateways, a)
    push(gateways, b)
    # the send would be killed right before publishing itself: it exits 0, so it did not
    r = send(a, "via the warm publisher", FAULT)
    assert r.returncode == 0, r.stderr
    assert "waits in the outbox" not in r.stderr
    wait_until("published by na's gateway", lambda: published(a) == head(a))
    assert wait_until("bob's message on nb", lambda: bobs(b)) == ["via the warm publisher"]
    # an ack on nb goes back the same way: na sees it processed with no tick anywhere
    got = ok(b, "receive", "--as", "bob")["messages"]
    r = run(
        "--store",
        str(b),
        "ack",
        str(got[0]["id"]),
        "--status",
        "completed",
        "--as",
        "bob",
        env=FAULT,
    )
    assert r.returncode == 0, r.stderr
    wait_until(
        "processed on na",
        lambda: sql(a, "SELECT state FROM fed_sent") == [("processed",)],
    )
    assert "long-polled in turn" not in Path(str(b) + ".log").read_text()  # hinted


def test_without_a_file_system_watch_the_publisher_polls(nodes, gateways, monkeypatch):
    a, b, _ = nodes
    monkeypatch.setenv("ACOMM_NO_INOTIFY", "1")  # as where the platform has no inotify
    push(gateways, a)
    push(gateways, b)
    r = send(a, "found by the poll", FAULT)
    assert r.returncode == 0, r.stderr
    assert wait_until("bob's message on nb", lambda: bobs(b)) == ["found by the poll"]


def test_with_the_gateway_killed_the_next_send_publishes_itself(nodes, gateways):
    a, b, _ = nodes
    push(gateways, a)
    push(gateways, b)
    procs.stop(gateways.pop(a), signal.SIGKILL)
    assert not gwstate.publisher_live(str(a), now())  # its state file is left, its pid gone
    r = send(a, "no gateway on na now", FAULT)
    assert r.returncode == -signal.SIGKILL  # it went to publish itself
    r = send(a, "published by the send")
    assert r.returncode == 0, r.stderr
    assert published(a) == head(a)  # before it exited: nobody else publishes na's outbox
    assert wait_until("both on nb", lambda: len(bobs(b)) == 2 and bobs(b)) == [
        "no gateway on na now",  # the first send's row went out with the second's
        "published by the send",
    ]


def test_a_gateway_stopped_hands_the_publish_back_to_the_commands(nodes, gateways):
    a, _, _ = nodes
    push(gateways, a)
    assert procs.stop(gateways.pop(a)) in (0, -signal.SIGTERM)
    assert not gwstate.publisher_live(str(a), now())
    r = send(a, "after the gateway stopped")
    assert r.returncode == 0, r.stderr
    assert published(a) == head(a)


def test_publishers_racing_lose_nothing_and_repeat_nothing(nodes, gateways):
    """na's gateway publishes while two more publishers drain the same outbox, rows still
    being appended: the stream holds each event once, in outbox order, and nb delivers each
    once, in order."""
    a, b, url = nodes
    push(gateways, a)
    push(gateways, b)
    ok(a, "agent", "register", "alice")  # the in-process sends below meet a strict directory
    total = 120
    go = threading.Event()
    errors: list[BaseException] = []

    def publisher() -> None:
        conn = open_store(a)
        link = nt.link_for(conn)
        try:
            go.wait(10)
            for _ in range(20):
                nt.publish(conn, link, "na")
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            link.close()
            conn.close()

    racers = [threading.Thread(target=publisher) for _ in range(2)]
    for t in racers:
        t.start()
    conn = open_store(a)
    try:
        go.set()
        for i in range(total):  # in process: nothing here publishes after its commit
            send_direct(conn, SendRequest(sender="alice", content=f"race {i}"), ["bob"], now())
    finally:
        conn.close()
    for t in racers:
        t.join(60)
    assert errors == []
    expected = [f"race {i}" for i in range(total)]
    assert wait_until("every message on nb", lambda: bobs(b) == expected and bobs(b))
    # the stream: one event per outbox row, in seq order
    assert stream_ids(url) == [
        f"{r[0]}:{r[1]}" for r in sql(a, "SELECT event_id, attempt FROM fed_outbox ORDER BY seq")
    ]


def test_a_stale_publisher_past_the_duplicate_window_appends_nothing(nodes):
    """Rows already in the stream, published again under ids the duplicate window no longer
    knows (as after a publisher stalled for minutes): the server refuses them as out of
    sequence, and the publisher reads the stream's last seq again."""
    a, _, url = nodes
    ok(a, "send", "--to", "bob", "one", "--as", "alice")
    ok(a, "send", "--to", "bob", "two", "--as", "alice")
    before = stream_ids(url)
    assert len(before) == 2
    conn = open_store(a)
    link = nt.link_for(conn)
    try:
        rows = [
            (seq, event_id + "-again", attempt, envelope)
            for seq, event_id, attempt, envelope in nt.sql.unpublished(conn, 0, 10)
        ]
        assert link.call(nt._publish_rows(link, "na", rows, 0)) == 0
        assert nt.publish(conn, link, "na") == 0  # nothing left to publish
    finally:
        link.close()
        conn.close()
    assert stream_ids(url) == before


def stream_ids(url: str) -> list[str]:
    """The Nats-Msg-Id of every message in na's stream, in stream order."""
    import asyncio

    async def read() -> list[str]:
        import nats

        nc = await nats.connect(url)
        try:
            js = nc.jetstream()
            last = (await js.stream_info(nt.stream_name("na"))).state.last_seq
            ids = []
            for seq in range(1, last + 1):
                msg = await js.get_msg(nt.stream_name("na"), seq)
                ids.append((msg.headers or {}).get("Nats-Msg-Id", ""))
            return ids
        finally:
            await nc.close()

    return asyncio.run(read())


def test_the_state_file_says_a_publisher_only_while_it_is_connected(tmp_path):
    """A state without `publisher` (a gateway without --push), with it not connected, or
    with a stale heartbeat: the command publishes itself."""
    store = tmp_path / "s.acomm"
    import os

    base = {"pid": os.getpid(), "heartbeat_ms": now()}
    for state, live in [
        (base, False),
        ({**base, "publisher": {"connected": False}}, False),
        ({**base, "publisher": {"connected": True}}, True),
        (
            {
                **base,
                "publisher": {"connected": True},
                "heartbeat_ms": now() - gwstate.PUBLISHER_STALE_MS - 1000,
            },
            False,
        ),
    ]:
        gwstate.write_state(store, state)
        assert gwstate.publisher_live(str(store), now()) is live, state
    assert json.loads(gwstate.state_path(store).read_text())["publisher"]["connected"]


def test_where_the_server_refuses_the_hints_the_reader_long_polls(tmp_path, monkeypatch, gateways):
    """Under per-node permissions that allow no subscription to the peers' subjects, nb's
    gateway says so and reads by long polls: the message still arrives with no tick."""
    from test_federation_nats_perms import config, nats_pair

    monkeypatch.setenv("ACOMM_FED_OFFLINE_AFTER", "1h")
    with nats_server(tmp_path / "nats", config(tmp_path / "nats.conf", ["na", "nb"])) as server:
        a, b = nats_pair(tmp_path, server)
        push(gateways, a)
        push(gateways, b)
        r = send(a, "read by a long poll", FAULT)
        assert r.returncode == 0, r.stderr
        assert wait_until("bob's message on nb", lambda: bobs(b)) == ["read by a long poll"]
        # the server refuses a subscription asynchronously: the note may follow the message
        wait_until(
            "nb's note that it long-polls",
            lambda: "each peer is long-polled in turn instead" in Path(str(b) + ".log").read_text(),
        )
        for proc in gateways.values():  # before the server goes
            procs.stop(proc)
        gateways.clear()
