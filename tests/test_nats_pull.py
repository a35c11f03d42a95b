"""`fed pull` over NATS JetStream reads a page per request and acks it once, after the page's
commit: the durable consumer acks all, so the page's last message acks the page. A pull
killed between its commit and its ack loses nothing and applies nothing twice; a page
delivered again (a cursor behind what was applied) is deduplicated; a consumer of the
reader's name that does not ack all is made anew. A real nats-server, started and killed
by PID."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import pytest
from conftest import run
from natsserver import NatsServer, nats_server, needs_nats
from test_federation_nats import ok, sql
from test_nats_cluster import pair

from acomm_cli import clock
from acomm_cli.engine.sending import send_direct
from acomm_cli.federation import nats_transport as nt
from acomm_cli.federation.pull import pull
from acomm_cli.model import SendRequest
from acomm_cli.store.connection import open_store, write

pytestmark = [pytest.mark.federation]


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv("ACOMM_FED_OFFLINE_AFTER", "1h")  # no gateway heartbeats here
    with nats_server(tmp_path / "nats") as s:
        yield s


def consumer(server: NatsServer, config: Any = None) -> dict[str, Any]:
    """nb's consumer on na's stream, as the server has it (made first with `config`)."""

    async def info() -> dict[str, Any]:
        import nats

        nc = await nats.connect(server.url)
        try:
            js = nc.jetstream(timeout=5)
            if config is not None:
                await js.add_consumer(nt.stream_name("na"), config)
            got = await js.consumer_info(nt.stream_name("na"), nt.consumer_name("nb"))
            return {
                "delivered": got.delivered.stream_seq,
                "ack_floor": got.ack_floor.stream_seq,
                "ack_pending": got.num_ack_pending,
                "ack_policy": str(getattr(got.config.ack_policy, "value", got.config.ack_policy)),
            }
        finally:
            await nc.close()

    return asyncio.run(info())


def bobs(b: Path) -> list[str]:
    return [
        r[0]
        for r in sql(
            b,
            "SELECT m.content FROM messages m JOIN deliveries d ON d.message_id = m.id "
            "WHERE d.recipient = 'bob' ORDER BY m.id",
        )
    ]


def position(b: Path) -> int:
    return int(sql(b, "SELECT position FROM fed_cursors WHERE source_node = 'na'")[0][0])


def send(a: Path, *contents: str) -> None:
    for c in contents:
        ok(a, "send", "--to", "bob", c, "--as", "alice")


@needs_nats
def test_a_pull_killed_between_its_commit_and_its_ack_loses_nothing(tmp_path, server):
    a, b = pair(tmp_path, server.url, owned=("bob",))
    send(a, "one", "two", "three")
    r = run("--store", str(b), "fed", "pull", env={nt.ACK_FAULT_ENV: "1"})
    assert r.returncode == -signal.SIGKILL
    assert bobs(b) == ["one", "two", "three"] and position(b) == 3  # committed
    assert consumer(server)["ack_pending"] == 3  # and never acked
    send(a, "four")
    got = ok(b, "fed", "pull")
    assert (got["read"], got["delivered"], got["duplicates"]) == (1, 1, 0)
    assert bobs(b) == ["one", "two", "three", "four"] and position(b) == 4
    assert consumer(server) == {
        "delivered": 4,
        "ack_floor": 4,
        "ack_pending": 0,
        "ack_policy": "all",
    }


@needs_nats
def test_a_page_delivered_again_is_deduplicated(tmp_path, server):
    a, b = pair(tmp_path, server.url, owned=("bob",))
    send(a, "one", "two")
    assert ok(b, "fed", "pull")["delivered"] == 2
    # the cursor behind what was applied (a store put back, say): the consumer is placed
    # there again and the stream delivers both once more
    sql(b, "UPDATE fed_cursors SET position = 0 WHERE source_node = 'na'")
    again = ok(b, "fed", "pull")
    assert (again["read"], again["delivered"], again["duplicates"]) == (2, 0, 2)
    assert bobs(b) == ["one", "two"] and position(b) == 2
    assert consumer(server)["ack_floor"] == 2


@needs_nats
def test_each_page_is_acked_once_after_its_commit(tmp_path, server, monkeypatch):
    a, b = pair(tmp_path, server.url, owned=("bob",))
    ok(a, "agent", "register", "alice")  # (the engine asks the store's directory)
    conn = open_store(a)
    try:
        with write(conn):
            for i in range(25):
                send_direct(conn, SendRequest(sender="alice", content=f"m{i}"), ["bob"], 0)
    finally:
        conn.close()
    ok(a, "fed", "pull")  # (which publishes na's outbox)
    from nats.aio.msg import Msg

    acked: list[tuple[int, int]] = []  # (the acked message's stream seq, the cursor then)
    ack_sync = Msg.ack_sync

    async def spy(self: Msg, timeout: float = 1.0) -> Msg:
        acked.append((self.metadata.sequence.stream, position(b)))
        return await ack_sync(self, timeout)

    monkeypatch.setattr(Msg, "ack_sync", spy)
    conn = open_store(b)
    try:
        got = pull(conn, clock.now_ms(), page_size=10, max_pages=10)
    finally:
        conn.close()
    assert got.delivered == 25
    assert acked == [(10, 10), (20, 20), (25, 25)]  # one per page, each after its commit
    assert consumer(server)["ack_floor"] == 25


@needs_nats
def test_a_consumer_that_does_not_ack_all_is_made_anew(tmp_path, server):
    from nats.js import api

    a, b = pair(tmp_path, server.url, owned=("bob",))
    send(a, "one", "two")
    explicit = api.ConsumerConfig(
        durable_name=nt.consumer_name("nb"), ack_policy=api.AckPolicy.EXPLICIT
    )
    assert consumer(server, explicit)["ack_policy"] == "explicit"
    assert ok(b, "fed", "pull")["delivered"] == 2
    assert consumer(server)["ack_policy"] == "all"
    send(a, "three")
    assert ok(b, "fed", "pull")["delivered"] == 1
    assert bobs(b) == ["one", "two", "three"]


@needs_nats
def test_a_page_that_does_not_run_on_from_the_cursor_is_read_afresh(tmp_path, server, monkeypatch):
    """A delivery that comes late from a consumer made before (a repeat inside the page) is
    never taken for the next event: that read fails and applies or refuses nothing, and the
    next one, on a consumer placed afresh, takes the page whole."""
    a, b = pair(tmp_path, server.url, owned=("bob",))
    send(a, "one", "two", "three")
    fetch = nt._Inbox.fetch
    pages: list[list[int]] = []

    async def repeating(self: Any, limit: int, wait_s: float, wait: bool = False) -> Any:
        got = await fetch(self, limit, wait_s, wait)
        if not pages and got:
            got = got[:1] + got  # the first delivery once more, ahead of the rest
        pages.append([q for q, _, _ in got])
        return got

    monkeypatch.setattr(nt._Inbox, "fetch", repeating)
    conn = open_store(b)
    try:
        first = pull(conn, clock.now_ms())
        assert first.unreachable == ["na"] and "where 2 was due" in first.why["na"]
        assert (first.delivered, first.rejected) == (0, 0) and bobs(b) == []
        again = pull(conn, clock.now_ms())
    finally:
        conn.close()
    assert pages[0] == [1, 1, 2, 3]
    assert (again.delivered, again.rejected, again.unreachable) == (3, 0, [])
    assert bobs(b) == ["one", "two", "three"] and position(b) == 3
    assert sql(b, "SELECT count(*) FROM fed_rejected")[0][0] == 0


def test_a_deliverys_stream_seq_and_pending_come_from_its_ack_subject():
    assert nt._position("$JS.ACK.ACOMM_na.acomm_nb.1.42.40.1700000000000000000.7") == (42, 7)
    assert nt._position(
        "$JS.ACK.hub.ACCHASH.ACOMM_na.acomm_nb.1.42.40.1700000000000000000.7.rand"
    ) == (42, 7)
