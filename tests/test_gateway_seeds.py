"""Several seeds, with real gateways as subprocesses on free loopback ports: three seeds keep
one room between them; a node joins at any of them and falls over to the next; an invite or
a ticket one seed minted is honoured by another exactly once (`ticket_already_used`,
`token_already_used` from the second seed); with two seeds stopped the third still admits a
new node and the room still changes, and the stopped ones converge when they return. The
room carries each node's cursors and subscriptions and the seeds' invite registry, shown by
`peers --json` and `fed status --json`."""

from __future__ import annotations

import secrets
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_gateway import (
    Node,
    connect_ws,
    exchange,
    free_port,
    gateway_nodes,
    invite,
    refused,
    upgrade,
    wait_until,
    where,
)

from acomm_cli.federation import identity

pytestmark = pytest.mark.federation

WAIT_S = 40.0  # three gateways finding each other, on a loaded machine


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Callable[[str], Node]]:
    with gateway_nodes(tmp_path) as maker:
        yield maker


class Seeds:
    """Three seed nodes on ports chosen up front: each one's --join lists the other two."""

    def __init__(self, make: Callable[[str], Node]) -> None:
        self.nodes = [make(f"s{i}") for i in (1, 2, 3)]
        for n in self.nodes:
            assert n.ok("node", "init", "--id", n.id, "--seed")["seed"] is True
        self.ports = [free_port() for _ in self.nodes]
        self.urls = [f"http://127.0.0.1:{p}" for p in self.ports]

    def start(self, i: int, *extra: str) -> None:
        others = ",".join(u for j, u in enumerate(self.urls) if j != i)
        self.nodes[i].start("--join", others, *extra, port=self.ports[i])

    def all_urls(self) -> str:
        return ",".join(self.urls)


def room_of(n: Node) -> dict[str, Any]:
    return n.ok("peers")["room"]  # type: ignore[no-any-return]


def seeds_up(make: Callable[[str], Node]) -> Seeds:
    """s1 alone, then s2 and s3 joining it by invites s1 minted."""
    s = Seeds(make)
    s.start(0)
    s.start(1, "--invite", invite(s.nodes[0], "--expect", "s2"))
    s.start(2, "--invite", invite(s.nodes[0], "--expect", "s3"))
    for n in s.nodes:  # every seed knows every seed, as a seed
        wait_until(
            f"the seeds in {n.id}'s room",
            lambda n=n: room_of(n)["seeds"] == ["s1", "s2", "s3"],
            WAIT_S,
        )
    return s


def test_two_seeds_down_the_third_admits_and_they_converge(make):
    s = seeds_up(make)
    s1, s2, s3 = s.nodes
    # a node joins by an invite s2 minted, through s1 (first of its list): forwarded to s2
    n1 = make("n1")
    n1.start("--join", s.all_urls(), "--invite", invite(s2, "--expect", "n1"))
    n1.ok("agent", "own", "ann")
    n1.ok("channel", "create", "ci", "--type", "pubsub", "--as", "ann")
    n1.ok("subscribe", "ci", "build.*", "--as", "ann")
    for n in s.nodes:
        wait_until(f"ann's owner on {n.id}", lambda n=n: where(n, "ann") == "n1", WAIT_S)
    # the room's metadata: n1's subscriptions and the used invite, on every seed
    for n in s.nodes:
        wait_until(
            f"n1's subscription in {n.id}'s room",
            lambda n=n: (
                {"node": "n1", "agent": "ann", "channel": "ci", "pattern": "build.*"}
                in room_of(n)["subscriptions"]
            ),
            WAIT_S,
        )

    def used() -> list[tuple[str, str, str]]:
        invites = s3.ok("fed", "status")["room"]["invites"]
        return [(i["seed"], i["state"], i["expected_node"]) for i in invites if i["used_by"]]

    wait_until("n1's invite used, on s3", lambda: ("s2", "used", "n1") in used(), WAIT_S)

    # two of three seeds stopped: s3 admits a new node, and the room still changes
    assert s1.stop() in (0, -signal.SIGTERM)
    assert s2.stop() in (0, -signal.SIGTERM)
    n2 = make("n2")
    n2.start("--join", s.all_urls(), "--invite", invite(s3, "--expect", "n2"))
    n2.ok("agent", "own", "bea")
    wait_until("bea's owner on s3", lambda: where(s3, "bea") == "n2", WAIT_S)
    n1.ok("agent", "own", "cal")  # n1 fell over to s3
    wait_until("cal's owner on s3", lambda: where(s3, "cal") == "n1", WAIT_S)
    wait_until("bea's owner on n1", lambda: where(n1, "bea") == "n2", WAIT_S)

    # the stopped seeds return (no invite: they rejoin by proof) and catch up
    s.start(0)
    s.start(1)
    for n in (s1, s2):
        wait_until(f"bea's owner on {n.id}", lambda n=n: where(n, "bea") == "n2", WAIT_S)
        wait_until(f"cal's owner on {n.id}", lambda n=n: where(n, "cal") == "n1", WAIT_S)
    # and a change made at a returned seed's node reaches every seed
    s1.ok("agent", "own", "dan")
    for n in (s2, s3, n2):
        wait_until(f"dan's owner on {n.id}", lambda n=n: where(n, "dan") == "s1", WAIT_S)
    cursors = room_of(s3)["cursors"]
    assert set(cursors) >= {"s1", "s2", "s3", "n1", "n2"}
    # the seeds trust each other's links: no seed refused another's relayed entries
    for n in (*s.nodes, n1, n2):
        assert "Traceback" not in n.log(), n.log()
        assert "entries it does not own" not in n.log(), n.log()


def _ticket(url: str, token: str, node: str) -> str:
    status, body = exchange(url, nodeId=node, inviteToken=token)
    assert status == 200, body
    return str(body["wsTicket"])


def test_an_invite_and_a_ticket_are_used_once_across_seeds(make):
    s = Seeds(make)
    s1, s2, _ = s.nodes
    s.start(0)
    s.start(1, "--invite", invite(s1, "--expect", "s2"))
    wait_until("s2 in s1's room", lambda: "s2" in room_of(s1)["seeds"], WAIT_S)
    u1, u2 = s.urls[0], s.urls[1]

    # a ticket s1 minted, used at s1: s2 says it was used
    t1 = invite(s1)
    wait_until("s1's invite in s2's room", lambda: len(room_of(s2)["invites"]) == 2, WAIT_S)
    ticket = _ticket(u1, t1, "nx")
    connect_ws(u1, ticket, "nx")
    refused(upgrade(u2, ticket, "nx"), 409, "ticket_already_used")
    # ... and the invite behind it, presented at s2, is forwarded to s1: already used
    refused(exchange(u2, nodeId="ny", inviteToken=t1), 409, "token_already_used")

    # a ticket s1 minted, used at s2 (redeemed by s1): s1 says it was used
    t2 = invite(s1, "--expect", "nz")
    wait_until("the second invite in s2's room", lambda: len(room_of(s2)["invites"]) == 3)
    ticket = _ticket(u2, t2, "nz")  # the exchange at s2, forwarded to s1
    assert identity.node_id("nz") == "nz"
    connect_ws(u2, ticket, "nz")
    refused(upgrade(u1, ticket, "nz"), 409, "ticket_already_used")
    refused(upgrade(u2, ticket, "nz"), 409, "ticket_already_used")
    # the node a ticket names is checked before anything is asked of its seed
    refused(upgrade(u2, _ticket(u1, invite(s1), "nw"), "nv"), 403, "node_mismatch")
    # a forged ticket that claims s1 as its issuer
    forged = "v4.public." + identity.b64url(b'{"iss":"s1"}' + secrets.token_bytes(64))
    refused(upgrade(u2, forged, "nx"), 401, "invalid_ticket")

    # the minting seed down: its tickets cannot be redeemed elsewhere now (7-class, said)
    t3 = invite(s1)
    wait_until("the last invite in s2's room", lambda: len(room_of(s2)["invites"]) == 5)
    ticket = _ticket(u1, t3, "nq")
    s1.stop()
    got = upgrade(u2, ticket, "nq")
    assert (got.status_code, got.json()["error"]["code"]) == (503, "peer_unreachable")
    got_x = exchange(u2, nodeId="nq", inviteToken=t3)
    assert (got_x[0], got_x[1]["error"]["code"]) == (503, "peer_unreachable")
