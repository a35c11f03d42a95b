"""The replay guards forget what can no longer be replayed. A handshake nonce that
carries its time is kept while its request could still be accepted (a replay is refused as
seen), pruned after its window, and an old request replayed after that is refused by the time
check; an older node's nonce (no time) is kept. A signed read's signature is accepted once and
pruned the same way. Real stores in tmp_path; time frozen with freezegun."""

from __future__ import annotations

import json
from typing import Any

import pytest
from freezegun import freeze_time

from acomm_cli import clock
from acomm_cli.engine import opening
from acomm_cli.federation import handshake, identity, invites, nonces

pytestmark = pytest.mark.unit

DAY = "2030-03-17T10:00:00+00:00"
W = nonces.WINDOW_MS


@pytest.fixture
def seed(tmp_path):
    c = opening.connect(tmp_path / "seed" / "s.acomm", create=True)
    identity.init_node(c, "seed", clock.now_ms())
    yield c
    c.close()


@pytest.fixture
def joiner(tmp_path) -> identity.Node:
    c = opening.connect(tmp_path / "b" / "b.acomm", create=True)
    node, _ = identity.init_node(c, "node-b", clock.now_ms())
    c.close()
    return node


def rejoin_request(node: identity.Node, nonce: str) -> dict[str, Any]:
    return {
        "nodeId": node.node_id,
        "nonce": nonce,
        "publicKey": node.public_paserk,
        "nodeProof": identity.sign_proof(node.private_key, node.node_id, nonce),
    }


def joined(seed, node: identity.Node) -> None:
    """node-b joins by invite with its key, so that it can rejoin by proof."""
    now = clock.now_ms()
    inv = invites.create(seed, expect=None, ttl_ms=600_000, pin_key=None, now_ms=now)
    req = {**rejoin_request(node, nonces.stamped_nonce(now)), "inviteToken": inv["invite_token"]}
    status, body = handshake.exchange(seed, req, now)
    assert status == 200, body
    assert handshake.authenticate_ticket(seed, body["wsTicket"], node.node_id, now)[0] == 200


def kept(conn, nonce: str) -> bool:
    return conn.execute("SELECT 1 FROM fed_nonces WHERE nonce = ?", (nonce,)).fetchone() is not None


def refused(reply: tuple[int, dict[str, Any]], status: int, code: str) -> str:
    assert (reply[0], reply[1]["error"]["code"]) == (status, code), reply
    return str(reply[1]["error"]["message"])


def test_a_stamped_nonce_is_kept_in_its_window_then_pruned_and_its_replay_still_refused(
    seed, joiner
):
    with freeze_time(DAY) as frozen:
        joined(seed, joiner)
        old = rejoin_request(joiner, nonces.stamped_nonce(clock.now_ms()))
        assert nonces.nonce_time(old["nonce"]) == clock.now_ms()
        assert handshake.exchange(seed, json.dumps(old), clock.now_ms())[0] == 200
        frozen.tick(W / 1000 - 1)  # inside the window: kept, and a replay is seen
        other = rejoin_request(joiner, nonces.stamped_nonce(clock.now_ms()))
        assert handshake.exchange(seed, other, clock.now_ms())[0] == 200
        assert kept(seed, old["nonce"])
        assert "seen before" in refused(
            handshake.exchange(seed, old, clock.now_ms()), 409, "replay_detected"
        )
        frozen.tick(2)  # past it: the next exchange forgets the old nonce
        fresh = rejoin_request(joiner, nonces.stamped_nonce(clock.now_ms()))
        assert handshake.exchange(seed, fresh, clock.now_ms())[0] == 200
        assert not kept(seed, old["nonce"]) and kept(seed, other["nonce"])
        # the old request, replayed: refused by its time, row or no row
        why = refused(handshake.exchange(seed, old, clock.now_ms()), 409, "replay_detected")
        assert "60 s" in why and not kept(seed, old["nonce"])
        frozen.tick(W / 1000 + 1)
        assert nonces.prune(seed, clock.now_ms()) == 2  # `other` and `fresh`
        assert (
            seed.execute("SELECT count(*) FROM fed_nonces WHERE expires_at IS NOT NULL").fetchone()[
                0
            ]
            == 0
        )


def test_a_nonce_stamped_too_far_ahead_is_refused_and_not_recorded(seed, joiner):
    with freeze_time(DAY):
        joined(seed, joiner)
        ahead = rejoin_request(joiner, nonces.stamped_nonce(clock.now_ms() + W + 1))
        refused(handshake.exchange(seed, ahead, clock.now_ms()), 409, "replay_detected")
        assert not kept(seed, ahead["nonce"])


def test_an_older_nodes_nonce_carries_no_time_and_is_kept(seed, joiner):
    """Its proof signs no time: forgetting its nonce would let the request be replayed."""
    with freeze_time(DAY) as frozen:
        joined(seed, joiner)
        legacy = rejoin_request(joiner, "opaque-nonce-0123456789abcdef")
        assert nonces.nonce_time(legacy["nonce"]) is None
        assert handshake.exchange(seed, legacy, clock.now_ms())[0] == 200
        frozen.tick(30 * 24 * 3600)
        nonces.prune(seed, clock.now_ms())
        assert (
            handshake.exchange(
                seed, rejoin_request(joiner, nonces.stamped_nonce(clock.now_ms())), clock.now_ms()
            )[0]
            == 200
        )
        assert kept(seed, legacy["nonce"])
        refused(handshake.exchange(seed, legacy, clock.now_ms()), 409, "replay_detected")


def test_a_read_signature_is_accepted_once_and_pruned_after_its_window(seed):
    sig = bytes(range(64))
    with freeze_time(DAY) as frozen:
        stamp = clock.now_ms()
        assert nonces.first_request(seed, sig, "node-b", stamp)
        assert not nonces.first_request(seed, sig, "node-b", stamp)
        frozen.tick(W / 1000)
        assert nonces.prune(seed, clock.now_ms()) == 0  # at the window's edge: still kept
        assert not nonces.first_request(seed, sig, "node-b", stamp)
        frozen.tick(1)
        assert nonces.prune(seed, clock.now_ms()) == 1
        assert seed.execute("SELECT count(*) FROM fed_request_nonces").fetchone()[0] == 0
