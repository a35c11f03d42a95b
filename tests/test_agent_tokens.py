"""External agents: `acomm token create|list|revoke` through the
command line, and the gateway's agent endpoints on real gateways (subprocesses on free
loopback ports, killed by PID in teardown even on failure): a session token sends and
receives as its agent only, cannot act as another agent, and opens neither the room nor the
outbox. Every wait is bounded."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ACOMM
from test_gateway import Node, gateway_nodes, upgrade

pytestmark = pytest.mark.federation

# ---------------------------------------------------------------- the command line


@pytest.fixture
def node(cli, isolated_env):
    """This test's store as node `na`, with a channel `team` of alice and bob."""
    cli.ok("node", "init", "--id", "na")
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "bob", "--as", "alice")
    return isolated_env


def _rows(store: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(store) as c:
        return c.execute("SELECT * FROM agent_tokens").fetchall()


def test_create_list_and_revoke(cli, node):
    made = cli.ok("--json", "token", "create", "--agent", "bob", "--ttl", "1h").json()
    assert set(made) == {"token_id", "token", "agent", "expires_at", "scopes"}
    assert made["agent"] == "bob" and made["scopes"] == ["send", "receive"]
    assert made["token_id"].startswith("tok-")
    # only the token's SHA-256 is stored, and the list never shows the token
    assert made["token"] not in json.dumps(_rows(node), default=str)
    listed = cli.ok("--json", "token", "list").json()["tokens"]
    assert [(t["token_id"], t["agent"], t["state"], t["scopes"]) for t in listed] == [
        (made["token_id"], "bob", "active", ["send", "receive"])
    ]
    assert made["token"] not in json.dumps(listed)
    only = cli.ok("--json", "token", "create", "--agent", "alice", "--scope", "receive").json()
    assert only["scopes"] == ["receive"]
    revoked = cli.ok("--json", "token", "revoke", made["token_id"]).json()
    assert (revoked["state"], revoked["changed"]) == ("revoked", True)
    again = cli.ok("--json", "token", "revoke", made["token_id"]).json()
    assert again["changed"] is False
    r = cli("--json", "token", "revoke", "tok-0000000000000000")
    assert (r.exit_code, r.error["code"], r.error["field"]) == (4, "not_found", "token")
    states = {t["agent"]: t["state"] for t in cli.ok("--json", "token", "list").json()["tokens"]}
    assert states == {"bob": "revoked", "alice": "active"}


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--agent", "bob", "--ttl", "0s"], "ttl"),
        (["--agent", "bob", "--ttl", "31d"], "ttl"),
        (["--agent", "bob", "--ttl", "soon"], "ttl"),
        (["--agent", "bob", "--scope", "send,admin"], "scope"),
        (["--agent", "bob", "--scope", ","], "scope"),
        (["--agent", "bad..id"], "agent"),
    ],
)
def test_bad_input_is_exit_3_naming_the_field_and_makes_nothing(cli, node, args, field):
    r = cli("--json", "token", "create", *args)
    assert (r.exit_code, r.error["code"], r.error["field"]) == (3, "validation_failed", field)
    assert _rows(node) == []


def test_only_an_agent_this_node_hosts_gets_a_token(cli, node, tmp_path):
    r = cli("--json", "token", "create", "--agent", "nobody")
    assert (r.exit_code, r.error["code"], r.error["field"]) == (4, "not_found", "agent")
    cli.ok("agent", "own", "dave")  # owned here, in no channel: hosted
    cli.ok("token", "create", "--agent", "dave")
    with sqlite3.connect(node) as c:  # what a pull writes when node nb owns carol
        c.execute(
            "INSERT INTO fed_room VALUES ('agents', 'carol', ?, 0)",
            (json.dumps({"ownerNodeId": "nb"}),),
        )
    r = cli("--json", "token", "create", "--agent", "carol")
    assert (r.exit_code, r.error["code"], r.error["field"]) == (5, "invalid_state", "agent")
    plain = tmp_path / "plain.acomm"
    cli.ok("--store", str(plain), "channel", "create", "team", "--as", "bob")
    r = cli("--json", "--store", str(plain), "token", "create", "--agent", "bob")
    assert (r.exit_code, r.error["code"]) == (5, "invalid_state")  # not a node
    assert len(_rows(node)) == 1


# ---------------------------------------------------------------- a real gateway


class Agent:
    """An external agent: HTTP to the gateway with its bearer token."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    def post(
        self, verb: str, body: Any = None, *, token: str | None = None, timeout: float = 40
    ) -> httpx.Response:
        return httpx.post(
            f"{self.url}/agent/v1/{verb}",
            json=body if body is not None else {},
            headers={"Authorization": f"Bearer {token or self.token}"},
            timeout=timeout,
        )

    def ok(self, verb: str, body: Any = None) -> Any:
        r = self.post(verb, body)
        assert r.status_code == 200, (verb, r.status_code, r.text)
        return r.json()


def refused(r: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert r.headers["content-type"].startswith("application/json"), r.content
    assert (r.status_code, r.json()["error"]["code"]) == (status, code), r.text
    assert set(r.json()) == {"error"}
    return dict(r.json()["error"])


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Callable[[str], Node]]:
    with gateway_nodes(tmp_path) as maker:
        yield maker


@pytest.fixture
def gw(make) -> tuple[Node, Agent]:
    """Node na serving its gateway; bob is an external agent with a token, alice a local
    agent of the shell, both in channel `team`."""
    na = make("na")
    na.ok("channel", "create", "team", "--as", "alice")
    na.ok("channel", "join", "team", "bob", "--as", "alice")
    token = na.ok("token", "create", "--agent", "bob", "--ttl", "1h")["token"]
    na.start()
    assert na.url is not None
    return na, Agent(na.url, token)


def inbox(n: Node, agent: str, *args: str) -> list[dict[str, Any]]:
    return list(n.ok("receive", "--as", agent, *args)["messages"])


def test_send_receive_and_ack_as_the_tokens_agent(gw):
    na, bob = gw
    sent = bob.ok(
        "send",
        {
            "channel": "team",
            "body": "hello from outside",
            "type": "command",
            "topic": "ops.deploy",
            "correlation_id": "c-1",
        },
    )
    assert sent["recipients"] == ["alice"] and sent["status"] == "delivered"
    got = inbox(na, "alice")
    assert [(m["sender"], m["content"], m["type"], m["correlation_id"]) for m in got] == [
        ("bob", "hello from outside", "command", "c-1")
    ]
    # a message from the shell reaches the external agent, read marks and all
    mid = na.ok("send", "team", "build it", "--as", "alice")["id"]
    first = bob.ok("receive", {"peek": True})
    assert [m["id"] for m in first["messages"]] == [mid]
    assert first["messages"][0]["delivery"]["state"] == "unread"
    got = bob.ok("receive", {"limit": 10})
    assert [m["content"] for m in got["messages"]] == ["build it"]
    assert got["messages"][0]["delivery"]["state"] == "read"
    assert bob.ok("receive")["messages"] == []
    acked = bob.ok("ack", {"message_id": mid, "status": "completed", "note": "done"})
    assert (acked["status"], acked["changed"]) == ("completed", True)
    shown = na.ok("show", str(mid))
    assert [(d["recipient"], d["ack_status"]) for d in shown["deliveries"]] == [
        ("bob", "completed")
    ]
    # a direct message and a query answered, as `send --to` and `respond`
    direct = bob.ok("send", {"to": "alice", "body": "psst"})["results"]
    assert direct[0]["channel"] == "_dm:alice:bob"
    corr = na.ok("query", "team", "status?", "--as", "alice")["correlation_id"]
    answer = bob.ok("respond", {"correlation_id": corr, "body": "all green"})
    assert answer["correlation_id"] == corr and answer["recipients"] == ["alice"]
    # alice also hears bob's ack of her message (its note), as from `acomm ack`
    assert {(m["type"], m["content"]) for m in inbox(na, "alice")} == {
        ("acknowledgment", "done"),
        ("text", "psst"),
        ("response", "all green"),
    }


def test_a_long_poll_returns_what_arrives_and_an_empty_one_returns_empty(gw):
    na, bob = gw
    empty = bob.post("receive", {"wait_seconds": 0.5})
    assert empty.status_code == 200 and empty.json()["messages"] == []
    with httpx.Client(timeout=40) as client:
        box: dict[str, Any] = {}

        def poll() -> None:
            box["r"] = client.post(
                f"{bob.url}/agent/v1/receive",
                json={"wait_seconds": 20},
                headers={"Authorization": f"Bearer {bob.token}"},
            )

        t = threading.Thread(target=poll)
        t.start()
        na.ok("send", "team", "late news", "--as", "alice")
        t.join(timeout=30)
        assert not t.is_alive()
    assert [m["content"] for m in box["r"].json()["messages"]] == ["late news"]


def test_a_client_that_gave_up_waiting_loses_nothing(gw):
    na, bob = gw
    with pytest.raises(httpx.ReadTimeout):
        bob.post("receive", {"wait_seconds": 10}, timeout=0.5)
    mid = na.ok("send", "team", "after the hang-up", "--as", "alice")["id"]
    # had the abandoned poll lived on (its wait was 10 s), it would take the message within
    # a poll (0.2 s): it stays unread, for the next receive
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        assert na.ok("show", str(mid))["deliveries"][0]["state"] == "unread"
        time.sleep(0.25)
    assert [m["id"] for m in bob.ok("receive")["messages"]] == [mid]


def test_a_token_cannot_act_as_another_agent(gw):
    na, bob = gw
    before = na.ok("messages")["total_count"]
    for body in (
        {"channel": "team", "body": "x", "from": "alice"},
        {"channel": "team", "body": "x", "sender": "alice"},
        {"to": "carol", "body": "x", "agent": "alice"},
    ):
        err = refused(bob.post("send", body), 403, "forbidden")
        assert "bob" in err["message"]
    refused(
        bob.post("respond", {"correlation_id": "q", "body": "x", "as": "alice"}), 403, "forbidden"
    )
    refused(bob.post("receive", {"agent": "alice"}), 403, "forbidden")
    refused(bob.post("ack", {"message_id": 1, "agent": "alice"}), 403, "forbidden")
    assert na.ok("messages")["total_count"] == before  # nothing was written
    # alice's inbox stays hers: bob's token never sees it, nor acks what is hers
    mine = na.ok("send", "--to", "alice", "for alice only", "--as", "carol")["results"][0]
    assert bob.ok("receive", {"peek": True})["messages"] == []
    refused(bob.post("ack", {"message_id": mine["id"]}), 403, "not_participant")
    assert [m["content"] for m in inbox(na, "alice", "--peek")] == ["for alice only"]
    # a token scoped to receive cannot send
    reader = na.ok("token", "create", "--agent", "bob", "--scope", "receive")["token"]
    err = refused(
        bob.post("send", {"channel": "team", "body": "x"}, token=reader), 403, "forbidden"
    )
    assert err["field"] == "scope"
    assert bob.post("receive", token=reader).status_code == 200


def test_an_agents_own_secret_is_a_bearer_token_too(gw):
    """`agent token` (identity.auth): the secret that proves bob on the command line
    proves him here, as bob only; revoked, it is 401 like any other."""
    na, bob = gw
    with sqlite3.connect(na.path) as c:  # bob in the directory, as `agent register` leaves him
        c.execute(
            "INSERT OR IGNORE INTO agents (name, registered_at, updated_at) VALUES ('bob', 0, 0)"
        )
    secret = na.ok("agent", "token", "bob")["token"]
    sent = bob.post("send", {"channel": "team", "body": "by secret"}, token=secret)
    assert sent.status_code == 200, sent.text
    assert [m["sender"] for m in inbox(na, "alice")] == ["bob"]
    refused(
        bob.post("send", {"channel": "team", "body": "x", "from": "alice"}, token=secret),
        403,
        "forbidden",
    )
    na.ok("agent", "token", "bob", "--revoke")
    refused(bob.post("receive", token=secret), 401, "invalid_token")


@pytest.mark.skipif(shutil.which("faketime") is None, reason="faketime is not installed")
def test_expired_revoked_unknown_and_missing_tokens_are_401(gw):
    na, bob = gw
    # made two hours ago with a one-hour life: expired now
    old = subprocess.run(
        [
            "faketime",
            "-f",
            "-2h",
            ACOMM,
            "--store",
            str(na.path),
            "--json",
            "token",
            "create",
            "--agent",
            "bob",
            "--ttl",
            "1h",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert old.returncode == 0, old.stderr
    expired = json.loads(old.stdout)
    states = {t["token_id"]: t["state"] for t in na.ok("token", "list")["tokens"]}
    assert states[expired["token_id"]] == "expired"
    for verb in ("send", "receive", "ack", "respond"):
        refused(
            bob.post(verb, {"channel": "team", "body": "x"}, token=expired["token"]),
            401,
            "invalid_token",
        )
    made = na.ok("token", "create", "--agent", "bob")
    assert bob.post("receive", token=made["token"]).status_code == 200
    na.ok("token", "revoke", made["token_id"])
    refused(bob.post("receive", token=made["token"]), 401, "invalid_token")
    refused(
        bob.post("send", {"channel": "team", "body": "x"}, token="acomm_at_forged"),
        401,
        "invalid_token",
    )
    r = httpx.post(f"{bob.url}/agent/v1/receive", json={}, timeout=10)  # no header
    refused(r, 401, "invalid_token")
    # the token is checked before the body: a bad body with a bad token is still 401
    r = httpx.post(
        f"{bob.url}/agent/v1/send",
        content=b"{not json",
        headers={"Authorization": "Bearer nope"},
        timeout=10,
    )
    refused(r, 401, "invalid_token")
    assert bob.ok("receive")["messages"] == []  # the fixture's token still works


def test_a_session_token_opens_neither_the_room_nor_the_outbox(gw):
    na, bob = gw
    assert na.url is not None
    r = upgrade(na.url, bob.token, "na")
    assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_ticket"
    assert r.status_code != 101
    r = upgrade(na.url, bob.token, None)
    assert r.status_code in (401, 403) and r.status_code != 101
    r = httpx.get(
        f"{na.url}/acomm/outbox?after=0&limit=10",
        headers={"Authorization": f"Bearer {bob.token}"},
        timeout=10,
    )
    assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_signature"
    assert "events" not in r.json()
    # nor the exchange: a session token is no invite
    r = httpx.post(
        f"{na.url}/ansible/auth/exchange",
        json={"inviteToken": bob.token, "nodeId": "nx", "nonce": "n" * 20},
        timeout=10,
    )
    assert r.status_code == 401 and "wsTicket" not in r.json()


def test_bad_requests_name_the_field(gw):
    na, bob = gw
    cases = [
        ("send", {"channel": "team"}, 400, "body"),
        ("send", {"channel": "team", "to": "alice", "body": "x"}, 400, "channel"),
        ("send", {"channel": "team", "body": "x", "colour": "red"}, 400, "colour"),
        ("send", {"channel": "team", "body": "x", "type": "shout"}, 400, "type"),
        ("send", {"channel": "nowhere", "body": "x"}, 404, "channel"),
        ("receive", {"wait_seconds": 31}, 400, "wait_seconds"),
        ("receive", {"limit": 0}, 400, "limit"),
        ("receive", {"peek": "yes"}, 400, "peek"),
        ("ack", {"message_id": "one"}, 400, "message_id"),
        ("ack", {"message_id": 999}, 404, "message"),
        ("respond", {"correlation_id": "none", "body": "x"}, 404, "correlation_id"),
    ]
    for verb, body, status, field in cases:
        r = bob.post(verb, body)
        assert (r.status_code, r.json()["error"].get("field")) == (status, field), (verb, r.text)
    auth = {"Authorization": f"Bearer {bob.token}"}
    r = httpx.post(f"{bob.url}/agent/v1/send", content=b"[1, 2", headers=auth, timeout=10)
    assert (r.status_code, r.json()["error"]["field"]) == (400, "body")
    # a lone surrogate (not UTF-8) is refused like on the command line, in valid JSON
    r = httpx.post(
        f"{bob.url}/agent/v1/send",
        headers=auth,
        timeout=10,
        content=b'{"channel": "team", "body": "\\ud800"}',
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "validation_failed"
    assert na.ok("messages")["total_count"] == 0


def test_a_locked_store_is_503_with_a_retry_hint_and_the_gateway_lives_on(gw):
    na, bob = gw
    holder = sqlite3.connect(na.path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # longer than the gateway's busy timeout (1 s)
        r = bob.post("send", {"channel": "team", "body": "while locked"})
        assert refused(r, 503, "store_unavailable")
        assert r.headers["retry-after"] == "1"
    finally:
        holder.rollback()
        holder.close()
    assert bob.ok("send", {"channel": "team", "body": "after"})["recipients"] == ["alice"]
    assert [m["content"] for m in inbox(na, "alice")] == ["after"]
    assert na.proc is not None and na.proc.poll() is None


def test_routing_to_a_remote_agent_works_as_from_the_command_line(make):
    """bob, external on na, writes to carol on node nb and gets her answer."""
    na, nb = make("na"), make("nb")
    na.ok("peers", "add", "nb", "--url", f"store:{nb.path}")
    nb.ok("peers", "add", "na", "--url", f"store:{na.path}")
    na.ok("agent", "own", "bob")
    nb.ok("agent", "own", "carol")
    nb.ok("fed", "pull")
    na.ok("fed", "pull")
    token = na.ok("token", "create", "--agent", "bob")["token"]
    na.start()
    assert na.url is not None
    bob = Agent(na.url, token)
    sent = bob.ok("send", {"to": "carol", "body": "hello over there"})["results"][0]
    assert (sent["status"], sent["to_node"], sent["route_decision"]) == ("emitted", "nb", "owner")
    nb.ok("fed", "pull")
    got = inbox(nb, "carol")
    assert [(m["sender"], m["content"]) for m in got] == [("bob", "hello over there")]
    nb.ok("send", "--to", "bob", "hello back", "--as", "carol")
    na.ok("fed", "pull")
    back = bob.ok("receive", {"wait_seconds": 5})["messages"]
    assert [(m["sender"], m["content"]) for m in back] == [("carol", "hello back")]
