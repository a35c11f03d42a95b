"""Outboxes on NATS JetStream, on a real nats-server started and killed by PID.
The message loop, dedupe and dead letters run on both transports in test_federation_loop.py
and test_federation_crash.py; here what is NATS's own: the server killed and restarted in
the middle (nothing lost, no agent turn twice), a crash between a publish and its mark, a
node behind "NAT" (no listening socket at all) that sends and receives, `fed migrate --to`,
and the refusals."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import procs
import pytest
from conftest import ACOMM, run
from natsserver import NatsServer, nats_server, needs_nats
from test_dispatch import agent_script
from test_gateway import gateway_nodes, invite, wait_until, where

from acomm_cli import clock
from acomm_cli.federation import gwstate

pytestmark = [pytest.mark.federation, needs_nats]


def sql(path: Path, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as c:
        return c.execute(statement, params).fetchall()


def ok(path: Path, *args: str) -> Any:
    r = run("--store", str(path), "--json", *args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return json.loads(r.stdout) if r.stdout.strip() else None


@pytest.fixture
def server(tmp_path: Path) -> Iterator[NatsServer]:
    with nats_server(tmp_path / "nats") as s:
        yield s


def pair(tmp_path: Path, url: str) -> tuple[Path, Path]:
    """na and nb on NATS; carl (on nb) is a dispatch agent that notes each run and answers.
    The room is set up over store: urls (the gateways carry it in production), then the
    peers' urls become the NATS server's."""
    a, b = tmp_path / "na.acomm", tmp_path / "nb.acomm"
    ok(a, "node", "init", "--id", "na", "--transport", url)
    ok(b, "node", "init", "--id", "nb", "--transport", url)
    ok(a, "peers", "add", "nb", "--url", f"store:{b}")
    ok(b, "peers", "add", "na", "--url", f"store:{a}")
    ok(b, "agent", "own", "carl")
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


def runs(tmp_path: Path) -> list[str]:
    p = tmp_path / "carl.runs"
    return p.read_text().splitlines() if p.exists() else []


def ask(a: Path, i: int) -> subprocess.CompletedProcess[str]:
    return run(
        "--store",
        str(a),
        "--json",
        "send",
        "--to",
        "carl",
        f"q{i}",
        "--type",
        "query",
        "--correlation-id",
        f"c{i}",
        "--as",
        "alice",
    )


def test_a_server_killed_and_restarted_in_the_middle_loses_nothing(tmp_path, server, monkeypatch):
    monkeypatch.setenv("ACOMM_FED_OFFLINE_AFTER", "1h")  # no gateway heartbeats here
    a, b = pair(tmp_path, server.url)
    for i in range(5):  # published by the send itself, after its commit
        assert ask(a, i).returncode == 0
    assert sql(a, "SELECT published_seq FROM fed_nats") == [(5,)]
    assert ok(b, "tick")["dispatch"]["accepted"] == 5 and len(runs(tmp_path)) == 5
    server.stop(signal.SIGKILL)
    # the server is down: sends still succeed (the rows wait in the outbox), ticks carry on
    for i in range(5, 10):
        r = ask(a, i)
        assert r.returncode == 0 and "NATS" in r.stderr and "waits in the outbox" in r.stderr
    assert sql(a, "SELECT published_seq FROM fed_nats") == [(5,)]
    down = ok(b, "tick")
    pulled = run("--store", str(b), "--json", "fed", "pull")  # exit 7, naming na
    assert down["fed_pulled"] == 0 and pulled.returncode == 7
    assert json.loads(pulled.stdout)["unreachable"] == ["na"]
    assert len(runs(tmp_path)) == 5
    server.start()  # same port, same store directory
    assert ok(a, "tick")["fed_pulled"] >= 5  # publishes q5..q9, reads the first replies
    assert sql(a, "SELECT published_seq FROM fed_nats")[0][0] >= 10
    ok(b, "tick")
    ok(a, "tick")
    assert sorted(runs(tmp_path)) == sorted(set(runs(tmp_path))) and len(runs(tmp_path)) == 10
    assert sql(
        b, "SELECT count(*), count(DISTINCT message_id) FROM deliveries WHERE recipient = 'carl'"
    ) == [(10, 10)]
    assert sql(a, "SELECT state, count(*) FROM fed_sent GROUP BY state") == [("replied", 10)]
    answers = ok(a, "receive", "--as", "alice")["messages"]
    assert sorted(m["correlation_id"] for m in answers) == sorted(f"c{i}" for i in range(10))
    # a crash between a publish and its mark: the stream's last seq says what is there
    sql(a, "UPDATE fed_nats SET published_seq = 0")
    sql(b, "UPDATE fed_nats SET published_seq = 0")
    assert "published" not in ok(a, "fed", "pull")  # nothing new went out
    again = ok(b, "tick")
    assert again.get("dispatch", {}).get("accepted", 0) == 0 and len(runs(tmp_path)) == 10
    assert sql(a, "SELECT published_seq FROM fed_nats") == sql(a, "SELECT max(seq) FROM fed_outbox")


def test_a_node_behind_nat_sends_and_receives(tmp_path, server):
    """nb's gateway listens on nothing (`--listen none`): it joins the seed's room and reads
    and publishes on NATS, connecting out only; with --push a send is delivered without a
    tick."""
    with gateway_nodes(tmp_path, ("--transport", server.url)) as make:
        a = make("na")
        a.start("--seed", "--push")
        b = make("nb")
        log = open(str(b.path) + ".log", "ab")
        b.proc = procs.spawn(
            [
                ACOMM,
                "--store",
                str(b.path),
                "gateway",
                "serve",
                "--listen",
                "none",
                "--join",
                str(a.url),
                "--invite",
                invite(a, "--expect", "nb"),
                "--push",
            ],
            stdout=log,
            stderr=log,
        )
        log.close()
        status = wait_until(
            "nb in the room",
            lambda: _running(b),
        )
        assert status["listen"] is None
        b.ok("agent", "own", "bob")
        a.ok("agent", "own", "alice")
        wait_until("bob on na", lambda: where(a, "bob") == "nb")
        wait_until("alice on nb", lambda: where(b, "alice") == "na")
        assert [p["url"] for p in a.ok("peers")["peers"]] == [server.url]
        sent = a.ok("send", "--to", "bob", "through the NAT", "--as", "alice")["results"][0]
        got = wait_until(
            "bob's message", lambda: b.ok("receive", "--as", "bob", "--peek")["messages"]
        )
        assert [m["content"] for m in got] == ["through the NAT"]
        b.ok("ack", str(got[0]["id"]), "--status", "completed", "--as", "bob")
        wait_until(
            "processed on na",
            lambda: (
                sql(a.path, "SELECT state FROM fed_sent WHERE event_id = ?", sent["global_id"])
                == [("processed",)]
            ),
        )
        b.ok("send", "--to", "alice", "and back out", "--as", "bob")
        back = wait_until("alice's message", lambda: a.ok("receive", "--as", "alice")["messages"])
        assert [m["content"] for m in back] == ["and back out"]
        # NATS goes down under both gateways: they note it and carry on; na's state file
        # stops offering its publisher, so the send tries itself, and says its row waits in
        # the outbox; it arrives once the server is back
        server.stop(signal.SIGKILL)
        wait_until(
            "na's gateway to see NATS gone",
            lambda: not gwstate.publisher_live(str(a.path), clock.now_ms()),
        )
        r = a.run("send", "--to", "bob", "while NATS was down", "--as", "alice")
        assert r.returncode == 0 and "waits in the outbox" in r.stderr
        server.start()
        late = wait_until(
            "the message sent while NATS was down",
            lambda: [m["content"] for m in b.ok("receive", "--as", "bob")["messages"]],
        )
        assert late == ["while NATS was down"]
        assert a.proc is not None and a.proc.poll() is None
        assert b.stop() in (0, -signal.SIGTERM)  # stops promptly on SIGTERM
        assert "listening on nothing" in b.log()


def test_transport_refusals(tmp_path, server):
    s = tmp_path / "s.acomm"
    r = run("--store", str(s), "--json", "node", "init", "--id", "n1", "--transport", "http://x:1")
    assert r.returncode == 3, r.stderr
    assert json.loads(r.stderr.splitlines()[-1])["error"]["field"] == "transport"
    r = run(
        "--store",
        str(s),
        "--json",
        "node",
        "init",
        "--id",
        "n1",
        "--transport",
        server.url,
        "--nats-creds",
        str(tmp_path / "missing.creds"),
    )
    assert r.returncode == 3 and "missing.creds" in r.stderr
    assert not os.path.exists(s)  # nothing written, not even the store
    # a node whose outbox already went out over HTTP switches with `fed migrate --to`
    ok(s, "node", "init", "--id", "n1")
    ok(s, "peers", "add", "n2", "--url", "http://127.0.0.1:1")
    sql(
        s,
        "INSERT INTO fed_outbox (event_id, attempt, kind, envelope, created_at)"
        " VALUES ('e1', 1, 'message', '{}', 0)",
    )
    r = run("--store", str(s), "--json", "node", "init", "--id", "n1", "--transport", server.url)
    assert r.returncode == 5 and "fed migrate --to" in r.stderr
    assert sql(s, "SELECT count(*) FROM fed_nats") == [(0,)]
    # push and --listen none need a NATS node
    plain = tmp_path / "p.acomm"
    ok(plain, "node", "init", "--id", "p1")
    r = run(
        "--store",
        str(plain),
        "gateway",
        "serve",
        "--listen",
        "none",
        "--push",
        "--join",
        "http://127.0.0.1:1",
    )
    assert r.returncode == 5 and "NATS" in r.stderr


def test_a_local_send_on_a_nats_node_loads_no_nats(tmp_path):
    """tests/test_startup.py keeps nats-py out of a plain store's commands; on a NATS node a
    send to a channel (no outbox row) loads neither nats-py nor the federation package."""
    code = (
        "import json, sys, runpy; sys.argv = ['acomm', '--store', sys.argv[1], 'send', "
        "'g', 'hi', '--as', 'a']\ntry:\n    runpy.run_module('acomm_cli', "
        "run_name='__main__')\nexcept SystemExit:\n    pass\nprint(json.dumps(sorted("
        "m for m in sys.modules if m.split('.')[0] == 'nats' or "
        "m.startswith('acomm_cli.federation'))), file=sys.stderr)"
    )
    s = tmp_path / "s.acomm"
    ok(s, "node", "init", "--id", "n1", "--transport", "nats://127.0.0.1:4222")
    ok(s, "channel", "create", "g", "--as", "a")
    ok(s, "channel", "join", "g", "b", "--as", "a")
    venv_python = str(Path(ACOMM).parent / "python")
    r = subprocess.run(
        [venv_python, "-c", code, str(s)], capture_output=True, text=True, timeout=60
    )
    assert json.loads(r.stderr.strip().splitlines()[-1]) == [], r.stderr
    assert sql(s, "SELECT count(*) FROM messages WHERE content = 'hi'") == [(1,)]


def test_fed_migrate_moves_an_http_outbox_onto_nats_and_cursors_carry_over(
    tmp_path, server, monkeypatch
):
    monkeypatch.setenv("ACOMM_FED_OFFLINE_AFTER", "1h")
    a, b = tmp_path / "na.acomm", tmp_path / "nb.acomm"
    ok(a, "node", "init", "--id", "na")
    ok(b, "node", "init", "--id", "nb")
    ok(a, "peers", "add", "nb", "--url", f"store:{b}")
    ok(b, "peers", "add", "na", "--url", f"store:{a}")
    ok(b, "agent", "own", "bob")
    ok(b, "fed", "pull")
    ok(a, "fed", "pull")
    for i in range(3):
        ok(a, "send", "--to", "bob", f"before {i}", "--as", "alice")
    assert ok(b, "fed", "pull")["delivered"] == 3
    ok(a, "send", "--to", "bob", "in between", "--as", "alice")  # not yet read by nb
    head = sql(a, "SELECT max(seq) FROM fed_outbox")[0][0]
    # NATS down: exit 7, the node stays on HTTP
    r = run("--store", str(a), "--json", "fed", "migrate", "--to", "nats://127.0.0.1:1")
    assert r.returncode == 7, r.stderr
    assert sql(a, "SELECT count(*) FROM fed_nats") == [(0,)]
    doc = ok(a, "fed", "migrate", "--to", server.url)
    assert doc["published"] == head and doc["stream"] == "ACOMM_na"
    assert doc["cursor_map"] == {"outbox_seq": head, "stream_seq": head}
    assert sql(a, "SELECT url, published_seq, migrated_head FROM fed_nats") == [
        (server.url, head, head)
    ]
    r = run("--store", str(a), "--json", "fed", "migrate", "--to", server.url)
    assert r.returncode == 5  # already there
    ok(b, "peers", "add", "na", "--url", server.url)  # what the room says after the restart
    got = ok(b, "fed", "pull")
    assert (got["delivered"], got["duplicates"], got["unreachable"]) == (1, 0, [])
    ok(a, "send", "--to", "bob", "after", "--as", "alice")  # published by the send
    assert ok(b, "fed", "pull")["delivered"] == 1
    assert [m["content"] for m in ok(b, "receive", "--as", "bob")["messages"]] == [
        "before 0",
        "before 1",
        "before 2",
        "in between",
        "after",
    ]
    # the acks nb appended reach na over store: (nb stays on HTTP)
    assert ok(a, "fed", "pull")["acks"] >= 2


def test_federation_transport_in_config_is_what_node_init_records(tmp_path, server):
    s = tmp_path / "s.acomm"
    r = run(
        "--store",
        str(s),
        "--json",
        "node",
        "init",
        "--id",
        "n1",
        env={"ACOMM_FED_TRANSPORT": server.url},
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["transport"] == server.url
    assert sql(s, "SELECT url, published_seq FROM fed_nats") == [(server.url, 0)]
    bad = tmp_path / "b.acomm"
    r = run(
        "--store",
        str(bad),
        "--json",
        "node",
        "init",
        "--id",
        "n2",
        env={"ACOMM_FED_TRANSPORT": "http://x:1"},
    )
    assert r.returncode == 3 and "federation.transport" in r.stderr
    assert not bad.exists()


def _running(n: Any) -> Any:
    """`gateway status` once the gateway runs and its room is in sync (exit 7 before)."""
    r = n.run("gateway", "status")
    if r.returncode != 0:
        return None
    status = json.loads(r.stdout)
    return status if status["room_synced"] else None
