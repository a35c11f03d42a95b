"""Request/reply across nodes as a person expects it, in process (store: peers, no
gateways): `query --to AGENT` here or on another node, `fed pull` exiting 7 naming a peer that
is down while it still pulls the others, `gateway status` exiting 7 when no gateway runs, and
the production profile's refusals (a join without a node proof, a plain-HTTP peer)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest
from test_federation_routing import Node, linked_pair

from acomm_cli import clock
from acomm_cli.engine import opening
from acomm_cli.federation import handshake, identity, nonces

pytestmark = pytest.mark.federation


def test_query_to_a_local_agent_is_a_query_on_the_direct_channel(cli, tmp_path):
    s = ("--store", str(tmp_path / "s.acomm"), "--json")
    cli(*s, "init", strict=True)
    sent = cli(*s, "query", "--to", "bob", "pool size?", "--as", "alice", strict=True).json()
    corr = sent["correlation_id"]
    assert corr and sent["recipients"] == ["bob"]
    got = cli(*s, "receive", "--as", "bob", strict=True).json()["messages"]
    assert [(m["type"], m["content"], m["correlation_id"]) for m in got] == [
        ("query", "pool size?", corr)
    ]
    cli(*s, "respond", corr, "20", "--as", "bob", strict=True)
    # --wait prints the answer, as for a query on a channel
    again = cli(*s, "query", "--to", "bob", "and now?", "--as", "alice", "--wait", "0s")
    assert again.exit_code == 124  # nobody answered within the wait
    thread = cli(*s, "thread", corr, strict=True).json()["messages"]
    assert [m["type"] for m in thread] == ["query", "response"]


def test_query_to_takes_the_body_only(cli, tmp_path):
    s = ("--store", str(tmp_path / "s.acomm"), "--json")
    cli(*s, "init", strict=True)
    both = cli(*s, "query", "team", "body", "--to", "bob", "--as", "alice")
    assert both.exit_code == 2 and both.error["field"] == "to"
    neither = cli(*s, "query", "--as", "alice")
    assert neither.exit_code == 2 and neither.error["field"] == "channel"


def test_query_to_an_agent_another_node_owns_and_its_reply(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    sent = a.ok("query", "--to", "bob", "how big is the pool?", "--as", "alice")
    assert (sent["status"], sent["to_node"]) == ("emitted", "nb")
    corr = sent["correlation_id"]
    assert b.ok("fed", "pull")["delivered"] == 1
    asked = b.ok("receive", "--as", "bob")["messages"]
    assert [(m["type"], m["correlation_id"]) for m in asked] == [("query", corr)]
    b.ok("respond", corr, "20 connections", "--as", "bob")
    assert a.ok("fed", "pull")["replies"] == 1
    got = a.ok("receive", "--as", "alice", "--type", "response")["messages"]
    assert [(m["content"], m["correlation_id"]) for m in got] == [("20 connections", corr)]


def test_task_create_to_and_query_to_route_alike(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    task = a.ok("task", "create", "--to", "bob", "rotate the keys", "--as", "alice")
    query = a.ok("query", "--to", "bob", "when?", "--as", "alice")
    assert task["global_id"] and query["to_node"] == "nb"
    assert b.ok("fed", "pull")["delivered"] == 2
    kinds = [m["type"] for m in b.ok("receive", "--as", "bob")["messages"]]
    assert kinds == ["command", "query"]


def test_fed_pull_with_a_peer_down_exits_7_naming_it_after_pulling_the_others(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    gone = tmp_path / "nc-gone.acomm"
    b.ok("peers", "add", "nc", "--url", f"store:{gone}")
    a.ok("send", "--to", "bob", "hello", "--as", "alice")
    r = b("fed", "pull")
    assert r.exit_code == 7, r.stderr
    doc = r.json()  # the counts are printed all the same
    assert (doc["delivered"], doc["unreachable"]) == (1, ["nc"])
    err = json.loads(r.stderr.strip().splitlines()[-1])["error"]
    assert (err["code"], err["field"], err["value"]) == ("peer_unreachable", "peer", "nc")
    assert str(gone) in err["message"]  # the reason
    assert [m["content"] for m in b.ok("receive", "--as", "bob")["messages"]] == ["hello"]
    # all peers up again: exit 0
    b.ok("peers", "add", "nc", "--url", f"store:{a.path}")
    assert b("fed", "pull", "--peer", "na").exit_code == 0


# ---------------------------------------------------------------- gateway status


def _node(cli, tmp_path) -> Node:
    n = Node(cli, tmp_path / "na.acomm", "na")
    n.ok("node", "init", "--id", "na")
    return n


def _state(n: Node, **state) -> None:
    """What a gateway would have written beside the store."""
    (n.path.parent / (n.path.name + ".gateway.json")).write_text(json.dumps(state))


def test_gateway_status_without_a_gateway_is_exit_7(cli, tmp_path):
    n = _node(cli, tmp_path)
    r = n("gateway", "status")
    assert r.exit_code == 7
    assert r.error["code"] == "gateway_not_running" and "no gateway" in r.error["message"]
    doc = r.json()
    assert (doc["running"], doc["listen"], doc["room_synced"]) == (False, None, False)


def test_gateway_status_tells_a_dead_pid_and_a_stale_heartbeat_from_a_live_gateway(cli, tmp_path):
    n = _node(cli, tmp_path)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    now = clock.now_ms()
    _state(n, pid=int(dead.stdout), listen="127.0.0.1:1", room_synced=True, heartbeat_ms=now)
    r = n("gateway", "status")
    assert r.exit_code == 7 and "is gone" in r.error["message"]
    assert r.json()["listen"] is None  # never the last state shown as live
    # a live process (this one) whose heartbeat stopped 40 s ago: hung, or another program
    _state(n, pid=os.getpid(), listen="127.0.0.1:1", room_synced=True, heartbeat_ms=now - 40_000)
    r = n("gateway", "status")
    assert r.exit_code == 7 and "heartbeat" in r.error["message"]
    _state(n, pid=os.getpid(), listen="127.0.0.1:1", room_synced=True, heartbeat_ms=now)
    doc = n.ok("gateway", "status")
    assert (doc["running"], doc["listen"], doc["room_synced"]) == (True, "127.0.0.1:1", True)


# ---------------------------------------------------------------- the production profile


def test_node_init_production_records_the_profile(cli, tmp_path):
    n = Node(cli, tmp_path / "na.acomm", "na")
    doc = n.ok("node", "init", "--id", "na", "--production")
    assert doc["profile"] == "production"
    assert n.sql("SELECT value FROM store_meta WHERE key = 'federation.profile'") == [
        ("production",)
    ]
    again = n.ok("node", "init", "--id", "na")  # the same id again changes nothing
    assert again["public_key"] == doc["public_key"]


def _exchange_by_invite(seed: Node, joiner: identity.Node, proof: bool) -> tuple[int, dict]:
    token = seed.ok("invite", "create", "--expect", joiner.node_id)["invite_token"]
    nonce = nonces.stamped_nonce(clock.now_ms())
    body = {"inviteToken": token, "nodeId": joiner.node_id, "nonce": nonce}
    if proof:
        body["nodeProof"] = identity.sign_proof(joiner.private_key, joiner.node_id, nonce)
        body["publicKey"] = joiner.public_paserk
    conn = opening.connect(seed.path, create=False)
    try:
        return handshake.exchange(conn, body, clock.now_ms())
    finally:
        conn.close()


def _key(cli, tmp_path, name: str) -> identity.Node:
    n = Node(cli, tmp_path / f"{name}.acomm", name)
    n.ok("node", "init", "--id", name)
    conn = opening.connect(n.path, create=False)
    try:
        return identity.require(conn)
    finally:
        conn.close()


def test_a_production_seed_admits_no_node_by_invite_alone(cli, tmp_path):
    seed = Node(cli, tmp_path / "seed.acomm", "seed")
    seed.ok("node", "init", "--id", "seed", "--production")
    nb, nc = _key(cli, tmp_path, "nb"), _key(cli, tmp_path, "nc")
    status, body = _exchange_by_invite(seed, nb, proof=False)
    assert (status, body["error"]["code"]) == (401, "invalid_proof")
    assert "production" in body["error"]["message"]
    status, body = _exchange_by_invite(seed, nc, proof=True)
    assert status == 200 and body["wsTicket"]


def test_a_standard_seed_still_admits_by_invite_alone(cli, tmp_path):
    seed = Node(cli, tmp_path / "seed.acomm", "seed")
    seed.ok("node", "init", "--id", "seed")
    status, _ = _exchange_by_invite(seed, _key(cli, tmp_path, "nb"), proof=False)
    assert status == 200


def test_production_refuses_a_plain_http_peer_naming_its_url(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    with sqlite3.connect(b.path) as c:
        c.execute("INSERT OR REPLACE INTO store_meta VALUES ('federation.profile', 'production')")
    url = "http://127.0.0.1:9"
    b.ok("peers", "add", "nc", "--url", url)
    a.ok("send", "--to", "bob", "hello", "--as", "alice")
    r = b("fed", "pull")
    assert r.exit_code == 5, r.stderr
    assert r.json()["delivered"] == 1  # the store: peer, pulled all the same
    err = json.loads(r.stderr.strip().splitlines()[-1])["error"]
    assert (err["code"], err["value"]) == ("insecure_peer", url)
    assert url in err["message"]
    one = b("fed", "pull", "--peer", "nc")
    assert one.exit_code == 5 and one.error["code"] == "insecure_peer"
    status = {p["node"]: p for p in b.ok("fed", "status")["peers"]}
    assert "plain HTTP" in status["nc"]["error"]


def test_the_production_profile_from_config_turns_it_on_for_the_process(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    b.ok("peers", "add", "nc", "--url", "http://127.0.0.1:9")
    r = b.cli(
        "--store",
        str(b.path),
        "--json",
        "fed",
        "pull",
        "--peer",
        "nc",
        env={"ACOMM_FED_PROFILE": "production"},
    )
    assert r.exit_code == 5 and r.error["code"] == "insecure_peer"
