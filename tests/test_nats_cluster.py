"""Outboxes on a three-server NATS JetStream cluster (real nats-server processes on
loopback, started and killed by PID): streams with three replicas; one server killed in the
middle of the traffic, then its replacement (a fresh server under the same name, its store
empty) killed too; nothing lost, no agent turn twice, every cursor where the outboxes end.
A long-lived link (the gateway's) fails over to another member when its server dies, and a
server list with a member that does not answer still works and names that member."""

from __future__ import annotations

import json
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run
from natsserver import NatsServer, cluster_url, nats_cluster, needs_nats, wait_healthy
from test_dispatch import agent_script
from test_federation_nats import ask, ok, runs, sql
from test_gateway import gateway_nodes, invite, wait_until, where

from acomm_cli import clock
from acomm_cli.federation import nats_transport as nt
from acomm_cli.federation import pull as fed_pull
from acomm_cli.store.connection import open_store

pytestmark = [pytest.mark.federation, needs_nats]

FAULT = {nt.FAULT_ENV: "1"}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[list[NatsServer]]:
    with nats_cluster(tmp_path / "nats") as members:
        yield members


def pair(tmp_path: Path, url: str, *init: str, owned: tuple[str, ...] = ()) -> tuple[Path, Path]:
    """na and nb on NATS; carl (on nb, as are the `owned`) is a dispatch agent that notes
    each run and answers. The room is set up over store: urls, then the peers' urls become
    the NATS servers'."""
    a, b = tmp_path / "na.acomm", tmp_path / "nb.acomm"
    ok(a, "node", "init", "--id", "na", "--transport", url, *init)
    ok(b, "node", "init", "--id", "nb", "--transport", url, *init)
    ok(a, "peers", "add", "nb", "--url", f"store:{b}")
    ok(b, "peers", "add", "na", "--url", f"store:{a}")
    for agent in ("carl", *owned):
        ok(b, "agent", "own", agent)
    ok(b, "fed", "pull")
    ok(a, "fed", "pull")
    ok(a, "peers", "add", "nb", "--url", url)
    ok(b, "peers", "add", "na", "--url", url)
    script = agent_script(
        tmp_path,
        "carl.sh",
        """
cat > /dev/null
echo "$ACOMM_MESSAGE_ID" >> "$WORK/carl.runs"
echo "carl says 42"
""",
    )
    (b.parent / "config.yaml").write_text(json.dumps({"agents": {"carl": {"run": script}}}))
    return a, b


def replicas_of(server: NatsServer, stream: str) -> int:
    doc = server.monitor("jsz?streams=true")
    for account in doc.get("account_details") or []:
        for s in account.get("stream_detail") or []:
            if s["name"] == stream:
                return 1 + len((s.get("cluster") or {}).get("replicas") or [])
    raise AssertionError(f"no stream {stream} on {server.name}")


def replied(a: Path) -> int:
    return int(sql(a, "SELECT count(*) FROM fed_sent WHERE state = 'replied'")[0][0])


def settle(a: Path, b: Path, n: int) -> None:
    """Ticks on both nodes until every question has its answer (bounded): while the cluster
    elects new leaders a tick may find NATS unreachable; the next one carries on."""

    def once() -> bool:
        run("--store", str(b), "--json", "tick")
        run("--store", str(a), "--json", "tick")
        return replied(a) == n

    wait_until(f"{n} questions answered", once, timeout=120)


def test_the_cluster_loses_a_server_then_its_replacement_and_nothing_is_lost(
    tmp_path, cluster, monkeypatch
):
    monkeypatch.setenv("ACOMM_FED_OFFLINE_AFTER", "1h")  # no gateway heartbeats here
    n1 = cluster[0]
    a, b = pair(tmp_path, cluster_url(cluster), "--replicas", "3")
    for i in range(5):  # published by the send itself, after its commit
        assert ask(a, i).returncode == 0
    assert replicas_of(cluster[1], "ACOMM_na") == 3
    ok(b, "tick")  # carl runs q0..q4; his answers go out after the tick's commit
    # one server dies in the middle of the traffic: the others carry on
    n1.stop(signal.SIGKILL)
    for i in range(5, 10):
        assert ask(a, i).returncode == 0  # a send never fails for NATS (the row waits)
    ok(b, "tick")
    # its replacement: a new machine under the same name, its store empty; it catches up
    shutil.rmtree(n1.dir / "js")
    n1.start()
    wait_healthy(cluster)
    for i in range(10, 15):
        assert ask(a, i).returncode == 0
    ok(b, "tick")
    n1.stop(signal.SIGKILL)  # and then the replacement dies too
    for i in range(15, 20):
        assert ask(a, i).returncode == 0
    settle(a, b, 20)
    # nothing lost, nothing run twice
    assert sorted(runs(tmp_path)) == sorted(set(runs(tmp_path))) and len(runs(tmp_path)) == 20
    assert sql(
        b, "SELECT count(*), count(DISTINCT message_id) FROM deliveries WHERE recipient = 'carl'"
    ) == [(20, 20)]
    answers = ok(a, "receive", "--as", "alice")["messages"]
    assert sorted(m["correlation_id"] for m in answers) == sorted(f"c{i}" for i in range(20))
    # cursors intact: each node read the other's outbox to its end, exactly
    for reader, source, name in ((b, a, "na"), (a, b, "nb")):
        ok(reader, "fed", "pull")
        head = sql(source, "SELECT max(seq) FROM fed_outbox")[0][0]
        assert sql(reader, "SELECT position FROM fed_cursors WHERE source_node = ?", name) == [
            (head,)
        ]
        assert sql(source, "SELECT published_seq FROM fed_nats") == [(head,)]
        assert sql(reader, "SELECT count(*) FROM fed_rejected") == [(0,)]


def test_a_long_lived_link_fails_over_to_another_member(tmp_path, cluster, monkeypatch):
    """The gateway's publisher and its pull consumers keep one link: when the server it is
    connected to dies, the link carries on through another member."""
    monkeypatch.setenv("ACOMM_FED_OFFLINE_AFTER", "1h")
    url = cluster_url(cluster)
    a, b = pair(tmp_path, url, "--replicas", "3")
    for i in range(3):  # committed, then killed before the publish: the rows wait
        assert (
            run(
                "--store", str(a), "send", "--to", "carl", f"m{i}", "--as", "alice", env=FAULT
            ).returncode
            == -signal.SIGKILL
        )
    conn_a, conn_b = open_store(a), open_store(b)
    link_a, link_b = nt.link_for(conn_a), nt.link_for(conn_b)
    try:
        assert nt.publish(conn_a, link_a, "na") == 3
        assert fed_pull.pull(conn_b, clock.now_ms(), nats_link=link_b).delivered == 3
        by_port = {m.port: m for m in cluster}
        # the publisher's server dies (one at a time: two of three keep the majority)
        lost = by_port[link_a.nc.connected_url.port]
        lost.stop(signal.SIGKILL)
        for i in range(3, 6):
            r = run("--store", str(a), "send", "--to", "carl", f"m{i}", "--as", "alice", env=FAULT)
            assert r.returncode == -signal.SIGKILL
        # while the cluster elects new leaders a call may fail; the same link goes on
        published = wait_until(
            "the rows published through another member",
            lambda: _try(nt.publish, conn_a, link_a, "na") or None,
        )
        assert published == 3 and link_a.nc.connected_url.port != lost.port
        if link_b.nc.connected_url.port != lost.port:  # the reader's server dies next
            lost.start()
            wait_healthy(cluster)
            lost = by_port[link_b.nc.connected_url.port]
            lost.stop(signal.SIGKILL)
        delivered = wait_until(
            "the rows read through another member",
            lambda: (
                getattr(
                    _try(fed_pull.pull, conn_b, clock.now_ms(), nats_link=link_b), "delivered", 0
                )
                or None
            ),
        )
        # (the pull then publishes its acks: a call that meets the cluster still electing
        # times out and drops the connection, and the link's next call connects again)
        wait_until(
            "the reader's link answering again",
            lambda: _try(nt.publish, conn_b, link_b, "nb") is not None or None,
        )
        assert delivered == 3 and link_b.nc.connected_url.port != lost.port
    finally:
        link_a.close()
        link_b.close()
        conn_a.close()
        conn_b.close()
    got = ok(b, "receive", "--as", "carl")["messages"]
    assert sorted(m["content"] for m in got) == [f"m{i}" for i in range(6)]


def _try(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except nt.Unreachable:
        return None


def test_a_member_that_does_not_answer_is_named_and_the_rest_serve(tmp_path, cluster):
    dead = f"nats://127.0.0.1:{cluster[0].port}"
    cluster[0].stop(signal.SIGKILL)
    wait_healthy(cluster[1:])
    url = cluster_url(cluster)
    notes: list[str] = []
    link = nt.Link(url, note=notes.append, probe_always=True)
    try:
        assert link.call(link.js()) is not None  # two of three answer: connected
    finally:
        link.close()
    assert len(notes) == 1 and f"NATS member {dead} is down (connection refused)" in notes[0]
    assert "2 of 3 answer" in notes[0] and "no majority" not in notes[0]
    # with two members down there is no majority: said, not fatal
    cluster[1].stop(signal.SIGKILL)
    notes.clear()
    link = nt.Link(url, note=notes.append, probe_always=True)
    try:
        link.call(link.js())
    finally:
        link.close()
    assert "1 of 3 answer: no majority" in notes[0]
    # all down: the error names every member and why
    cluster[2].stop(signal.SIGKILL)
    link = nt.Link(url)
    try:
        with pytest.raises(nt.Unreachable) as caught:
            link.call(link.js())
    finally:
        link.close()
    assert all(f"{m.url}: connection refused" in str(caught.value) for m in cluster)


def test_replicas_are_checked_before_anything_is_written(tmp_path):
    s = tmp_path / "s.acomm"
    three = "nats://127.0.0.1:1,nats://127.0.0.1:2,nats://127.0.0.1:3"
    for url, replicas in ((three, "0"), (three, "4"), ("nats://127.0.0.1:1", "3"), (three, "6")):
        r = run(
            "--store",
            str(s),
            "--json",
            "node",
            "init",
            "--id",
            "n1",
            "--transport",
            url,
            "--replicas",
            replicas,
        )
        assert r.returncode == 3, r.stderr
        err = json.loads(r.stderr.splitlines()[-1])["error"]
        assert err["field"] == "replicas" and err["value"] == replicas
    r = run(
        "--store",
        str(s),
        "--json",
        "node",
        "init",
        "--id",
        "n1",
        "--transport",
        "nats://127.0.0.1:1,http://127.0.0.1:2",
    )
    assert r.returncode == 3 and "http://127.0.0.1:2" in r.stderr
    r = run("--store", str(s), "node", "init", "--id", "n1", "--replicas", "3")
    assert r.returncode == 3 and "replicas" in r.stderr
    assert not s.exists()
    doc = ok(s, "node", "init", "--id", "n1", "--transport", three, "--replicas", "3")
    assert doc["transport"] == three and doc["replicas"] == 3
    assert sql(s, "SELECT url, replicas FROM fed_nats") == [(three, 3)]


def test_gateways_start_with_a_member_down_name_it_and_ride_over_another_loss(tmp_path, cluster):
    """`gateway serve --push` on both nodes, one cluster member down from the start: both
    start, each names the member that is down; a send is delivered with no tick. The member
    returns, then another one dies under the running gateways: their links fail over and
    the next sends arrive too."""
    n1, n2 = cluster[0], cluster[1]
    url = cluster_url(cluster)
    n1.stop(signal.SIGKILL)
    wait_healthy(cluster[1:])
    with gateway_nodes(tmp_path, ("--transport", url, "--replicas", "3")) as make:
        a = make("na")
        a.start("--seed", "--push")
        b = make("nb")
        b.start("--join", str(a.url), "--invite", invite(a, "--expect", "nb"), "--push")
        b.ok("agent", "own", "bob")
        wait_until("bob on na", lambda: where(a, "bob") == "nb")
        down = f"NATS member {n1.url} is down (connection refused); 2 of 3 answer"
        wait_until("the member named", lambda: down in a.log() and down in b.log())

        def inbox() -> list[str]:
            return [m["content"] for m in b.ok("receive", "--as", "bob", "--peek")["messages"]]

        a.ok("send", "--to", "bob", "one", "--as", "alice")
        wait_until("the first message", lambda: inbox() == ["one"])
        n1.start()
        wait_healthy(cluster)
        n2.stop(signal.SIGKILL)  # under the running gateways
        a.ok("send", "--to", "bob", "two", "--as", "alice")
        wait_until("the second message", lambda: inbox() == ["one", "two"])
        assert a.proc is not None and a.proc.poll() is None
        assert b.proc is not None and b.proc.poll() is None
