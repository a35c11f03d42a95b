"""One owner per agent, on stores in tmp_path that read each other's files
(StoreTransport): `agent own` of an agent a live node owns is refused until it is disowned
or its owner is silent past the takeover grace, and a peer's claim on an agent another live
node owns is not taken when its entries are pulled. Over real gateways:
tests/test_room_trust.py."""

from __future__ import annotations

import json

import pytest
from freezegun import freeze_time
from test_federation_routing import linked_pair

pytestmark = pytest.mark.cli

T0 = "2026-03-01T10:00:00+00:00"


def at(minutes: int) -> str:
    return f"2026-03-01T{10 + minutes // 60:02d}:{minutes % 60:02d}:00+00:00"


def test_agent_own_waits_for_a_disown_or_the_owners_silence(cli, tmp_path):
    with freeze_time(at(0)):
        a, b = linked_pair(cli, tmp_path)  # nb owns bob; na has seen nb now
        r = a("agent", "own", "bob")
        assert r.exit_code == 5 and r.error["code"] == "invalid_state"
        assert "'nb'" in r.error["message"]
        assert a.ok("agent", "where", "bob")["owner_node"] == "nb"
    with freeze_time(at(9)):  # within the 10 minute default
        assert a("agent", "own", "bob").exit_code == 5
    with freeze_time(at(11)):  # nb silent past the grace: na takes bob over
        assert a.ok("agent", "own", "bob")["owner_node"] == "na"
        a.ok("fed", "pull")  # na's heartbeat: live from here on
    with freeze_time(at(12)):
        # nb's store still says it owns bob: na's copy keeps na's claim
        assert a.ok("agent", "where", "bob")["owner_node"] == "na"
        b.ok("agent", "own", "carl")
        b.ok("agent", "own", "dave")
        b.ok("fed", "pull")  # nb's heartbeat
        a.ok("fed", "pull")
        assert a("agent", "own", "carl").exit_code == 5
        # given up by its owner: free at once
        b.ok("agent", "disown", "dave")
        a.ok("fed", "pull")
        assert a.ok("agent", "own", "dave")["owner_node"] == "na"
    with freeze_time(at(13)):  # a shorter grace, configured
        assert a("agent", "own", "carl").exit_code == 5
        r = a.cli(
            "--store",
            str(a.path),
            "--json",
            "agent",
            "own",
            "carl",
            env={"ACOMM_FED_TAKEOVER_GRACE": "30s"},
        )
        assert r.exit_code == 0 and r.json()["owner_node"] == "na"


def test_a_peers_claim_on_a_third_live_nodes_agent_is_not_taken(cli, tmp_path):
    from test_federation_routing import Node

    with freeze_time(at(0)):
        a, b = linked_pair(cli, tmp_path)
        c = Node(cli, tmp_path / "nc.acomm", "nc")
        c.ok("node", "init", "--id", "nc")
        for x, y in ((a, c), (c, a), (b, c), (c, b)):
            x.ok("peers", "add", y.id, "--url", f"store:{y.path}")
        c.ok("agent", "own", "carol")
        c.ok("fed", "pull")  # nc's heartbeat: live
        for n in (a, b):
            n.ok("fed", "pull")
            assert n.ok("agent", "where", "carol")["owner_node"] == "nc"
        # nb, compromised, writes its own copy past `agent own`'s rule
        b.sql(
            "UPDATE fed_room SET value = ? WHERE map = 'agents' AND key = 'carol'",
            json.dumps({"ownerNodeId": "nb"}),
        )
        a.ok("fed", "pull")
        assert a.ok("agent", "where", "carol")["owner_node"] == "nc"
        assert a.ok("agent", "where", "bob")["owner_node"] == "nb"  # nb's own still counts
