"""On a NATS node every outbox append goes out right after its command's commit, as it is
readable at once over HTTP: an `ack`, a `respond`, a `nack`, a task event, not only a `send
--to`. The sender's node sees `processed` and the reply with no tick on the receiver's node.
A command killed between its commit and its publish loses nothing: the next publisher (any
command that appends, `tick`, `fed pull`) catches up from the outbox. `peers` shows each NATS
peer's head and lag as over HTTP. A real nats-server, started and killed by PID."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from conftest import run
from natsserver import nats_server, needs_nats
from test_federation_nats import ok, sql
from test_nats_cluster import pair

from acomm_cli.federation import nats_transport as nt

pytestmark = [pytest.mark.federation, needs_nats]

FAULT = {nt.FAULT_ENV: "1"}


@pytest.fixture
def nodes(tmp_path, monkeypatch):
    monkeypatch.setenv("ACOMM_FED_OFFLINE_AFTER", "1h")  # no gateway heartbeats here
    with nats_server(tmp_path / "nats") as server:
        yield pair(tmp_path, server.url, owned=("bob",))


def head(path: Path) -> int:
    return int(sql(path, "SELECT coalesce(max(seq), 0) FROM fed_outbox")[0][0])


def published(path: Path) -> int:
    return int(sql(path, "SELECT published_seq FROM fed_nats")[0][0])


def state(a: Path, gid: str) -> str:
    return str(sql(a, "SELECT state FROM fed_sent WHERE event_id = ?", gid)[0][0])


def appends(b: Path, *args: str) -> None:
    """Run one command on b: it appends to the outbox and has published it when it exits."""
    before = head(b)
    ok(b, *args)
    assert head(b) > before, args
    assert published(b) == head(b), args


def test_every_outbox_append_is_published_after_its_commit(nodes):
    a, b = nodes
    m = ok(a, "send", "--to", "bob", "do it", "--as", "alice")["results"][0]["global_id"]
    q = ok(
        a,
        "send",
        "--to",
        "bob",
        "why?",
        "--type",
        "query",
        "--correlation-id",
        "c-bob",
        "--as",
        "alice",
    )["results"][0]["global_id"]
    n = ok(a, "send", "--to", "bob", "not mine", "--as", "alice")["results"][0]["global_id"]
    t = ok(a, "task", "create", "--to", "bob", "run the tests", "--as", "alice")["global_id"]
    assert published(a) == head(a)
    assert ok(b, "fed", "pull")["delivered"] == 4  # three messages and the task's command
    ok(a, "fed", "pull")
    assert {state(a, g) for g in (m, q, n, t)} == {"accepted"}
    inbox = {x["content"]: x["id"] for x in ok(b, "receive", "--as", "bob")["messages"]}
    # b never ticks nor pulls from here on: each command publishes its own appends
    appends(b, "ack", str(inbox["do it"]), "--status", "completed", "--as", "bob")
    appends(b, "respond", "c-bob", "because", "--as", "bob")
    appends(b, "nack", str(inbox["not mine"]), "--reason", "wrong desk", "--as", "bob")
    appends(b, "task", "accept", t, "--eta", "10m", "--as", "bob")
    appends(b, "task", "complete", t, "all pass", "--as", "bob")
    pulled = ok(a, "fed", "pull")
    assert pulled["unreachable"] == []
    assert (state(a, m), state(a, q), state(a, t)) == ("processed", "replied", "processed")
    assert state(a, n) == "dead_letter"  # the nack without requeue: dead on nb
    answers = ok(a, "receive", "--as", "alice")["messages"]
    assert ("response", "because") in {(x["type"], x["content"]) for x in answers}
    assert ok(a, "task", "show", t)["state"] == "completed"


def test_a_command_killed_between_commit_and_publish_loses_nothing(nodes):
    a, b = nodes
    q = ok(
        a,
        "send",
        "--to",
        "bob",
        "why?",
        "--type",
        "query",
        "--correlation-id",
        "c-1",
        "--as",
        "alice",
    )["results"][0]["global_id"]
    # the sender killed after its commit: the row waits, the next command carries it
    r = run("--store", str(a), "send", "--to", "bob", "and this", "--as", "alice", env=FAULT)
    assert r.returncode == -signal.SIGKILL
    assert published(a) == head(a) - 1
    appends(a, "send", "--to", "bob", "and that", "--as", "alice")  # publishes both
    assert ok(b, "fed", "pull")["delivered"] == 3
    # the receiver killed after its reply's commit: nothing went out yet
    r = run("--store", str(b), "respond", "c-1", "42", "--as", "bob", env=FAULT)
    assert r.returncode == -signal.SIGKILL
    assert published(b) < head(b)
    ok(a, "fed", "pull")
    assert state(a, q) == "accepted"
    ok(b, "tick")  # a tick catches up from the outbox
    assert published(b) == head(b)
    ok(a, "fed", "pull")
    assert state(a, q) == "replied"
    answers = ok(a, "receive", "--as", "alice")["messages"]
    assert [(x["content"], x["correlation_id"]) for x in answers] == [("42", "c-1")]
    # the reply went out once: the stream holds no more than the outbox
    again = ok(a, "fed", "pull")
    assert (again["replies"], again["duplicates"]) == (0, 0)


def test_peers_shows_a_nats_peers_head_and_lag(nodes):
    a, b = nodes
    for i in range(3):
        ok(a, "send", "--to", "bob", f"m{i}", "--as", "alice")
    ok(b, "fed", "pull", "--max-pages", "1")
    peer = {p["node"]: p for p in ok(b, "peers")["peers"]}["na"]
    assert (peer["head"], peer["cursor"], peer["lag"]) == (head(a), head(a), 0)
    assert ok(b, "fed", "status")["peers"][0]["head"] == head(a)


def test_an_mcp_agents_ack_and_reply_go_out_at_once(nodes):
    """`acomm mcp` runs each tool call on its own connection: its outbox appends are
    published after the call, as a command's are."""
    from acomm_cli.cli.commands.mcp_run import _encoders
    from acomm_cli.cli.invocation import publish_after_commit
    from acomm_cli.mcpserver.tools import StoreOptions, Toolbox

    a, b = nodes
    m = ok(a, "send", "--to", "bob", "do it", "--as", "alice")["results"][0]["global_id"]
    q = ok(
        a,
        "send",
        "--to",
        "bob",
        "why?",
        "--type",
        "query",
        "--correlation-id",
        "c-mcp",
        "--as",
        "alice",
    )["results"][0]["global_id"]
    ok(b, "fed", "pull")
    inbox = {x["content"]: x["id"] for x in ok(b, "receive", "--as", "bob")["messages"]}
    box = Toolbox(StoreOptions(path=b, after_outbox=publish_after_commit), "bob", _encoders())
    before = head(b)
    box.ack(message_id=inbox["do it"], status="completed")
    box.respond(correlation_id="c-mcp", body="via MCP")
    assert head(b) > before and published(b) == head(b)
    ok(a, "fed", "pull")
    assert (state(a, m), state(a, q)) == ("processed", "replied")
