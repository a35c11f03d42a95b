"""A dead letter on the receiving node reaches the sender's node on each transport as an ack
does: over HTTP from the receiving node's gateway; on NATS the command that dead-lettered (a
`nack`) publishes it right after its commit, with no tick or
pull on the receiving node. Real gateways and a real nats-server, on free loopback ports."""

from __future__ import annotations

import pytest
from natsserver import nats_server, needs_nats
from test_federation_nats import ok, sql
from test_gateway import gateway_nodes, joined, wait_until, where
from test_nats_cluster import pair

pytestmark = pytest.mark.federation


@pytest.fixture
def make(tmp_path):
    with gateway_nodes(tmp_path) as maker:
        yield maker


def test_over_http_the_senders_gateway_learns_of_a_nack(make):
    seed, b, _ = joined(make)
    b.ok("agent", "own", "bob")
    wait_until("bob on the seed", lambda: where(seed, "bob") == "nb")
    sent = seed.ok("send", "--as", "alice", "--to", "bob", "over http")["results"][0]

    def state() -> str:
        return str(seed.ok("show", str(sent["id"]))["federation"]["state"])

    b.ok("fed", "pull")  # over HTTP, from the seed's gateway
    [got] = b.ok("receive", "--as", "bob")["messages"]
    seed.ok("fed", "pull")
    assert state() == "accepted"
    b.ok("nack", str(got["id"]), "--as", "bob", "--reason", "no thanks")
    seed.ok("fed", "pull")  # nb's gateway serves its outbox: the dead letter in it
    assert state() == "dead_letter"
    view = seed.ok("show", str(sent["id"]))["federation"]
    assert view["dead_letter_reason"] == "nacked"
    assert view["dead_letter_detail"] == "dead-lettered on node nb: no thanks"


@needs_nats
def test_on_nats_a_nack_is_published_after_its_commit(tmp_path, monkeypatch):
    monkeypatch.setenv("ACOMM_FED_OFFLINE_AFTER", "1h")  # no gateway heartbeats here
    with nats_server(tmp_path / "nats") as server:
        a, b = pair(tmp_path, server.url, owned=("bob",))
        gid = ok(a, "send", "--to", "bob", "hi", "--as", "alice")["results"][0]["global_id"]
        ok(b, "fed", "pull")
        ok(a, "fed", "pull")
        [got] = ok(b, "receive", "--as", "bob")["messages"]
        ok(b, "nack", str(got["id"]), "--as", "bob")
        # b never ticks nor pulls again: the nack's command published its dead letter
        head = sql(b, "SELECT max(seq) FROM fed_outbox WHERE kind = 'dead_letter'")[0][0]
        assert head is not None
        assert sql(b, "SELECT published_seq FROM fed_nats")[0][0] >= head
        assert ok(a, "fed", "pull")["dead_lettered"] == 1
        assert sql(a, "SELECT state FROM fed_sent WHERE event_id = ?", gid) == [("dead_letter",)]
        assert sql(a, "SELECT recipient, reason FROM dead_letters") == [("bob", "nacked")]
