"""Federation's whole loop across real gateways: a seed A and a joiner B (and a
fallback C), each its own store and its own `gateway serve` subprocess on a free loopback
port, every wait bounded, every process killed by PID in teardown (also on failure). Join by
invite, ownership seen across nodes, message -> accepted -> agent turn (receive + ack, a query
answered with `respond`, a dispatch agent run by `tick`) -> processed / reply over HTTP;
exactly one delivery and one agent turn after a cursor rewind and after either gateway
restarts; no owner, owner offline -> the fallback node or a dead letter, and retries then a
`federation_max_attempts` dead letter with time moved by faketime. Each test runs on both
transports: HTTP, and NATS JetStream on a real nats-server."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ACOMM, VENV_BIN
from natsserver import nats_server, needs_nats
from test_dispatch import agent_script
from test_gateway import Node, free_port, gateway_nodes, invite, wait_until, where

pytestmark = pytest.mark.federation

needs_faketime = pytest.mark.skipif(
    shutil.which("faketime") is None, reason="faketime is not installed (make test installs it)"
)


def sql(n: Node, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(n.path) as c:
        return c.execute(statement, params).fetchall()


def run_env(
    n: Node, env: dict[str, str], *args: str, prefix: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, ACOMM, "--store", str(n.path), "--json", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )


def ok_env(n: Node, env: dict[str, str], *args: str, prefix: tuple[str, ...] = ()) -> Any:
    r = run_env(n, env, *args, prefix=prefix)
    assert r.returncode == 0, (args, r.stderr)
    return json.loads(r.stdout)


@pytest.fixture(params=["http", pytest.param("nats", marks=needs_nats)])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[str], Node]]:
    """Nodes on either transport: the gateway's HTTP outbox, or NATS JetStream
    on a real nats-server of the test's own (the gateways then carry only the room)."""
    if request.param == "http":
        with gateway_nodes(tmp_path) as maker:
            yield maker
        return
    with (
        nats_server(tmp_path / "nats") as server,
        gateway_nodes(tmp_path, ("--transport", server.url)) as maker,
    ):
        yield maker


def cluster(make: Callable[[str], Node], *joiners: str) -> tuple[Node, list[Node], int]:
    seed = make("na")
    port = free_port()
    seed.start("--seed", port=port)
    nodes = []
    for name in joiners:
        n = make(name)
        n.start("--join", str(seed.url), "--invite", invite(seed, "--expect", name))
        nodes.append(n)
    return seed, nodes, port


def with_carl(b: Node, tmp_path: Path) -> None:
    """carl on B is a dispatch agent: each run notes itself; its stdout answers the query."""
    script = agent_script(
        tmp_path,
        "carl.sh",
        """
cat > /dev/null
echo "$ACOMM_MESSAGE_ID" >> "$WORK/carl.runs"
echo "carl says 42"
""",
    )
    (b.path.parent / "config.yaml").write_text(json.dumps({"agents": {"carl": {"run": script}}}))


def runs(tmp_path: Path) -> int:
    p = tmp_path / "carl.runs"
    return len(p.read_text().splitlines()) if p.exists() else 0


def states(a: Node) -> dict[str, str]:
    return dict(sql(a, "SELECT event_id, state FROM fed_sent"))  # type: ignore[arg-type]


def test_join_ownership_and_the_full_loop(make, tmp_path):
    a, [b], _ = cluster(make, "nb")
    with_carl(b, tmp_path)
    b.ok("agent", "own", "bob")
    b.ok("agent", "own", "carl")
    wait_until(
        "bob and carl owned by nb, seen on na",
        lambda: where(a, "bob") == "nb" and where(a, "carl") == "nb",
    )
    seen = a.ok("agent", "where", "bob")
    assert (seen["owner_node"], seen["online"], seen["route"]) == ("nb", True, "owner")
    # (a) a message, received and acked `completed`
    m = a.ok("send", "--to", "bob", "do it", "--as", "alice")["results"][0]
    assert (m["status"], m["to_node"], m["route_decision"]) == ("emitted", "nb", "owner")
    # (b) a query answered with `respond`; (c) a query to a dispatch agent
    q = a.ok(
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
    )["results"][0]
    d = a.ok(
        "send",
        "--to",
        "carl",
        "the answer?",
        "--type",
        "query",
        "--correlation-id",
        "c-carl",
        "--as",
        "alice",
    )["results"][0]
    pulled = b.ok("fed", "pull")
    assert (pulled["delivered"], pulled["unreachable"]) == (3, [])
    assert a.ok("fed", "pull")["acks"] == 3
    assert set(states(a).values()) == {"accepted"}
    inbox = b.ok("receive", "--as", "bob")["messages"]
    assert [m["content"] for m in inbox] == ["do it", "why?"]
    b.ok("ack", str(inbox[0]["id"]), "--status", "completed", "--as", "bob")
    b.ok("respond", "c-bob", "because", "--as", "bob")
    ticked = b.ok("tick")
    assert ticked["dispatch"]["accepted"] == 1 and runs(tmp_path) == 1
    pulled = a.ok("fed", "pull")
    assert pulled["replies"] == 2 and pulled["unreachable"] == []
    assert states(a) == {
        m["global_id"]: "processed",
        q["global_id"]: "replied",
        d["global_id"]: "replied",
    }
    answers = a.ok("receive", "--as", "alice")["messages"]
    assert sorted((x["type"], x["content"], x["correlation_id"]) for x in answers) == [
        ("response", "because", "c-bob"),
        ("response", "carl says 42", "c-carl"),
    ]


def test_exactly_once_after_a_rewind_and_both_gateways_restarted(make, tmp_path):
    a, [b], port = cluster(make, "nb")
    with_carl(b, tmp_path)
    b_port = int(str(b.url).rsplit(":", 1)[1])
    b.ok("agent", "own", "bob")
    b.ok("agent", "own", "carl")
    wait_until("carl on na", lambda: where(a, "carl") == "nb")
    a.ok("send", "--to", "bob", "once", "--as", "alice")
    a.ok(
        "send",
        "--to",
        "carl",
        "once?",
        "--type",
        "query",
        "--correlation-id",
        "c1",
        "--as",
        "alice",
    )
    assert b.ok("tick")["fed_pulled"] >= 2 and runs(tmp_path) == 1
    assert a.ok("fed", "pull")["replies"] == 1

    def exactly_once() -> None:
        got = b.ok("tick")
        assert got.get("dispatch", {}).get("accepted", 0) == 0
        assert sql(b, "SELECT count(*) FROM deliveries WHERE recipient IN ('bob', 'carl')") == [
            (2,)
        ]
        assert runs(tmp_path) == 1
        assert len(b.ok("receipts", "--agent", "carl")["receipts"]) == 1
        assert [x["content"] for x in a.ok("receive", "--as", "alice", "--peek")["messages"]] == [
            "carl says 42"
        ]

    def rewind() -> None:
        sql(b, "UPDATE fed_cursors SET position = 0 WHERE source_node = 'na'")
        sql(a, "UPDATE fed_cursors SET position = 0 WHERE source_node = 'nb'")
        again = b.ok("fed", "pull")
        assert again["delivered"] == 0 and again["duplicates"] >= 2, again
        assert a.ok("fed", "pull")["replies"] == 0

    rewind()
    exactly_once()
    assert b.stop() in (0, -signal.SIGTERM)
    b.start("--join", str(a.url), port=b_port)  # rejoins by node proof
    rewind()
    exactly_once()
    assert a.stop() in (0, -signal.SIGTERM)
    a.start("--seed", port=port)
    wait_until("nb back in na's room", lambda: a.ok("peers")["peers"][0]["online"])
    rewind()
    exactly_once()
    # and the loop still carries new work, once
    a.ok("send", "--to", "bob", "after the restarts", "--as", "alice")
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["duplicates"], got["unreachable"]) == (1, 0, [])


def test_no_owner_and_owner_offline_go_to_the_fallback_or_dead_letter(make):
    a, [b, c], _ = cluster(make, "nb", "nc")
    r = a.run("send", "--to", "ghost", "anyone?", "--as", "alice")
    assert r.returncode == 5 and json.loads(r.stdout)["results"][0]["error"]["code"] == "no_owner"
    assert sql(a, "SELECT recipient, reason FROM dead_letters") == [("ghost", "no_owner")]
    b.ok("agent", "own", "bob", "--fallback", "nc")
    wait_until("bob on na", lambda: where(a, "bob") == "nb")
    # heartbeats come every 5 s: an owner silent for 8 s is offline, a live node never is
    fast = {"ACOMM_FED_OFFLINE_AFTER": "8s"}

    def route() -> str:
        return str(ok_env(a, fast, "agent", "where", "bob")["route"])

    assert route() == "owner"
    assert b.stop() in (0, -signal.SIGTERM)
    wait_until("nb offline on na", lambda: route() == "fallback", timeout=30)
    sent = ok_env(a, fast, "send", "--to", "bob", "to the fallback", "--as", "alice")
    assert (sent["results"][0]["route_decision"], sent["results"][0]["to_node"]) == (
        "fallback",
        "nc",
    )
    # over HTTP nb's gateway is down: exit 7 naming it, na pulled all the same (on NATS its
    # stream is still there to read)
    pulled = c.run("fed", "pull")
    got = json.loads(pulled.stdout)
    assert got["delivered"] == 1 and got["unreachable"] in ([], ["nb"])
    assert pulled.returncode == (7 if got["unreachable"] else 0), pulled.stderr
    assert [x["content"] for x in c.ok("receive", "--as", "bob")["messages"]] == ["to the fallback"]
    assert c.stop() in (0, -signal.SIGTERM)
    wait_until("nc offline on na", lambda: route() == "owner_offline", timeout=30)
    r = run_env(a, fast, "send", "--to", "bob", "nobody home", "--as", "alice")
    assert r.returncode == 5, r.stderr
    assert json.loads(r.stdout)["results"][0]["error"]["code"] == "owner_offline"
    assert sql(
        a,
        "SELECT d.recipient, d.reason, m.content FROM dead_letters d JOIN messages m"
        " ON m.id = d.message_id ORDER BY m.id",
    ) == [("ghost", "no_owner", "anyone?"), ("bob", "owner_offline", "nobody home")]


@needs_faketime
def test_unaccepted_retried_then_max_attempts_dead_letter(make):
    a, [b], _ = cluster(make, "nb")
    b.ok("agent", "own", "bob")
    wait_until("bob on na", lambda: where(a, "bob") == "nb")
    sent = a.ok("send", "--to", "bob", "never read", "--as", "alice")["results"][0]
    totals = {"fed_retried": 0, "fed_dead_lettered": 0}
    for minute in range(1, 12):  # nb never pulls: nothing is accepted
        doc = ok_env(a, {}, "tick", prefix=("faketime", "-f", f"+{60 * minute}s"))
        for k in totals:
            totals[k] += doc[k]
    assert totals == {"fed_retried": 4, "fed_dead_lettered": 1}
    assert sql(
        a, "SELECT attempt FROM fed_outbox WHERE event_id = ? ORDER BY seq", sent["global_id"]
    ) == [(1,), (2,), (3,), (4,), (5,)]
    assert sql(a, "SELECT state FROM fed_sent") == [("dead_letter",)]
    assert sql(a, "SELECT recipient, reason FROM dead_letters") == [
        ("bob", "federation_max_attempts")
    ]


def test_the_demo_federation_act_runs_and_cleans_up(tmp_path):
    """examples/federation.sh (part of `make demo`) checks its own outcome (alice gets
    oracle's answer with the query's correlation id) and exits non-zero otherwise; its
    gateways are stopped and its temporary directory removed."""
    script = Path(__file__).parent.parent / "examples" / "federation.sh"
    env = {
        **{k: v for k, v in os.environ.items() if k != "ACOMM_IDENTITY_DIRECTORY"},  # strict
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
        "TMPDIR": str(tmp_path),
    }
    p = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "node-b's gateway stopped" in p.stdout and "node-a's gateway stopped" in p.stdout
    assert "\tresponse\t" in p.stdout and "\t42" in p.stdout
    assert list(tmp_path.iterdir()) == []
