"""The join handshake: every outcome of the exchange and of the ticket check,
each with its HTTP status and code and nothing else in a refusal's body. Real stores in
tmp_path, time passed as `now`."""

from __future__ import annotations

import json
import secrets
from typing import Any

import pytest
from conftest import query

from acomm_cli.engine import opening
from acomm_cli.federation import handshake, identity, invites

pytestmark = pytest.mark.unit

T0 = 1_900_000_000_000  # ms
MIN = 60_000


@pytest.fixture
def seed(tmp_path):
    c = opening.connect(tmp_path / "seed" / "s.acomm", create=True)
    identity.init_node(c, "seed", T0)
    yield c
    c.close()


@pytest.fixture
def joiner(tmp_path) -> identity.Node:
    c = opening.connect(tmp_path / "b" / "b.acomm", create=True)
    node, _ = identity.init_node(c, "node-b", T0)
    c.close()
    return node


def invite(seed, **kw: Any) -> dict[str, Any]:
    args = {"expect": None, "ttl_ms": 10 * MIN, "pin_key": None, **kw}
    return invites.create(seed, now_ms=T0, **args)


def nonce() -> str:
    return secrets.token_urlsafe(18)


def request(
    token: str | None,
    node: str = "node-b",
    n: str | None = None,
    key: identity.Node | None = None,
    **extra: Any,
) -> dict[str, Any]:
    n = n or nonce()
    req: dict[str, Any] = {"nodeId": node, "nonce": n, **extra}
    if token is not None:
        req["inviteToken"] = token
    if key is not None:
        req["nodeProof"] = identity.sign_proof(key.private_key, node, n)
        req["publicKey"] = key.public_paserk
    return req


def refused(reply: tuple[int, dict[str, Any]], status: int, code: str, *secrets_: str) -> None:
    got_status, body = reply
    assert (got_status, body["error"]["code"]) == (status, code), body
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    for s in secrets_:
        assert s not in json.dumps(body)


def test_exchange_then_authenticate(seed):
    inv = invite(seed, expect="node-b")
    status, body = handshake.exchange(seed, json.dumps(request(inv["invite_token"])), T0 + 1)
    assert status == 200
    assert set(body) == {"wsTicket", "expiresAt", "rooms", "sessionId", "gatewayNodeId"}
    assert body["wsTicket"].startswith("v4.public.") and body["rooms"] == ["control"]
    status, claims = handshake.authenticate_ticket(seed, body["wsTicket"], "node-b", T0 + 2)
    assert status == 200
    assert {k: claims[k] for k in ("iss", "sub", "aud", "rooms", "inviteId")} == {
        "iss": "seed",
        "sub": "node-b",
        "aud": "ansible-yjs",
        "rooms": ["control"],
        "inviteId": inv["invite_id"],
    }
    assert 30_000 <= handshake._ms(claims["exp"]) - handshake._ms(claims["iat"]) <= 60_000
    # consumed at the first successful authentication, not at the exchange
    assert query_one(seed, "SELECT used_by FROM fed_invites") == "node-b"


def query_one(conn, sql: str) -> Any:
    return conn.execute(sql).fetchone()[0]


def test_the_invite_is_consumed_only_by_the_websocket_authentication(seed):
    inv = invite(seed)
    status, _ = handshake.exchange(seed, request(inv["invite_token"]), T0 + 1)
    assert status == 200 and query_one(seed, "SELECT used_at FROM fed_invites") is None


def test_step1_unknown_and_revoked_token(seed):
    refused(handshake.exchange(seed, request("no-such-token"), T0), 401, "invalid_token")
    inv = invite(seed)
    invites.revoke(seed, inv["invite_id"], T0)
    refused(
        handshake.exchange(seed, request(inv["invite_token"]), T0),
        401,
        "invalid_token",
        inv["invite_token"],
        inv["invite_id"],
    )


def test_step1_used_token_before_expiry_and_node(seed):
    inv = invite(seed, expect="node-b")
    _, body = handshake.exchange(seed, request(inv["invite_token"]), T0)
    assert handshake.authenticate_ticket(seed, body["wsTicket"], "node-b", T0)[0] == 200
    # used beats expired and mismatched: the order is strict
    refused(
        handshake.exchange(seed, request(inv["invite_token"], "node-x"), T0 + 60 * MIN),
        409,
        "token_already_used",
        inv["invite_token"],
    )


def test_step2_expired_before_node_mismatch(seed):
    inv = invite(seed, expect="node-b", ttl_ms=MIN)
    refused(
        handshake.exchange(seed, request(inv["invite_token"], "node-x"), T0 + MIN),
        401,
        "expired_token",
    )


def test_step3_node_mismatch(seed):
    inv = invite(seed, expect="node-b")
    refused(
        handshake.exchange(seed, request(inv["invite_token"], "node-x"), T0),
        403,
        "node_mismatch",
        "node-b",
    )


def test_step4_pinned_key_needs_a_valid_proof(seed, joiner, tmp_path):
    inv = invite(seed, pin_key=joiner.public_paserk)
    refused(handshake.exchange(seed, request(inv["invite_token"]), T0), 401, "invalid_proof")
    c = opening.connect(tmp_path / "x" / "x.acomm", create=True)
    impostor, _ = identity.init_node(c, "node-b", T0)
    c.close()
    refused(
        handshake.exchange(seed, request(inv["invite_token"], key=impostor), T0),
        401,
        "invalid_proof",
    )
    forged = request(inv["invite_token"], key=joiner)
    forged["nodeProof"] = identity.sign_proof(impostor.private_key, "node-b", forged["nonce"])
    refused(handshake.exchange(seed, forged, T0), 401, "invalid_proof")
    status, _ = handshake.exchange(seed, request(inv["invite_token"], key=joiner), T0)
    assert status == 200


def test_step4_replayed_nonce(seed):
    first, second = invite(seed), invite(seed)
    n = nonce()
    assert handshake.exchange(seed, request(first["invite_token"], n=n), T0)[0] == 200
    refused(
        handshake.exchange(seed, request(second["invite_token"], n=n), T0), 409, "replay_detected"
    )


def test_step4_invite_with_a_live_ticket(seed):
    inv = invite(seed)
    assert handshake.exchange(seed, request(inv["invite_token"]), T0)[0] == 200
    refused(handshake.exchange(seed, request(inv["invite_token"]), T0 + 1), 409, "replay_detected")
    # once that ticket expired unused, the invite may be exchanged again
    later = T0 + handshake.TICKET_TTL_MS
    assert handshake.exchange(seed, request(inv["invite_token"]), later)[0] == 200


@pytest.mark.parametrize(
    "req",
    [
        b"not json",
        "[]",
        {"nodeId": "node-b"},
        {"nodeId": "a@b", "nonce": "n" * 20, "inviteToken": "t"},
        {"nodeId": "node-b", "nonce": "short", "inviteToken": "t"},
        {"nodeId": "node-b", "nonce": "n" * 20, "inviteToken": 5},
        {"nodeId": "node-b", "nonce": "n" * 20, "inviteToken": "t", "requestedRooms": ["secret"]},
        {"nodeId": "node-b", "nonce": "n" * 20, "extra": 1},
    ],
)
def test_malformed_requests(seed, req):
    refused(handshake.exchange(seed, req, T0), 400, "invalid_request")


def mint(seed, node: str = "node-b") -> str:
    inv = invite(seed)
    status, body = handshake.exchange(seed, request(inv["invite_token"], node), T0)
    assert status == 200
    return str(body["wsTicket"])


def test_forged_ticket(seed, tmp_path):
    other = opening.connect(tmp_path / "o" / "o.acomm", create=True)
    identity.init_node(other, "seed", T0)  # the same name, another key
    forged = mint(other)
    other.close()
    refused(handshake.authenticate_ticket(seed, forged, "node-b", T0), 401, "invalid_ticket")
    refused(handshake.authenticate_ticket(seed, "garbage", "node-b", T0), 401, "invalid_ticket")
    refused(handshake.authenticate_ticket(seed, None, "node-b", T0), 401, "invalid_ticket")
    good = mint(seed)
    refused(
        handshake.authenticate_ticket(seed, good[:-4] + "AAAA", "node-b", T0), 401, "invalid_ticket"
    )


def test_expired_ticket(seed):
    ticket = mint(seed)
    refused(
        handshake.authenticate_ticket(seed, ticket, "node-b", T0 + handshake.TICKET_TTL_MS),
        401,
        "expired_ticket",
    )


def test_ticket_for_another_node(seed):
    ticket = mint(seed)
    refused(handshake.authenticate_ticket(seed, ticket, "node-x", T0), 403, "node_mismatch")
    refused(handshake.authenticate_ticket(seed, ticket, None, T0), 403, "node_mismatch")


def test_reused_ticket(seed):
    ticket = mint(seed)
    assert handshake.authenticate_ticket(seed, ticket, "node-b", T0)[0] == 200
    refused(
        handshake.authenticate_ticket(seed, ticket, "node-b", T0 + 1),
        409,
        "ticket_already_used",
        ticket,
    )


def test_a_revoked_invite_voids_its_ticket(seed):
    inv = invite(seed)
    _, body = handshake.exchange(seed, request(inv["invite_token"]), T0)
    invites.revoke(seed, inv["invite_id"], T0 + 1)
    refused(
        handshake.authenticate_ticket(seed, body["wsTicket"], "node-b", T0 + 2),
        401,
        "invalid_ticket",
    )
    assert query_one(seed, "SELECT used_at FROM fed_tickets") is None


def join(seed, joiner: identity.Node) -> None:
    inv = invite(seed)
    _, body = handshake.exchange(seed, request(inv["invite_token"], key=joiner), T0)
    assert handshake.authenticate_ticket(seed, body["wsTicket"], "node-b", T0)[0] == 200


def test_rejoin_by_node_proof(seed, joiner):
    join(seed, joiner)
    status, body = handshake.exchange(seed, request(None, key=joiner), T0 + MIN)
    assert status == 200
    status, claims = handshake.authenticate_ticket(seed, body["wsTicket"], "node-b", T0 + MIN)
    assert status == 200 and claims["inviteId"] is None


def test_rejoin_with_a_forged_proof(seed, joiner, tmp_path):
    join(seed, joiner)
    c = opening.connect(tmp_path / "x" / "x.acomm", create=True)
    impostor, _ = identity.init_node(c, "node-b", T0)
    c.close()
    req = request(None)
    req["nodeProof"] = identity.sign_proof(impostor.private_key, "node-b", req["nonce"])
    refused(handshake.exchange(seed, req, T0), 401, "invalid_proof")
    refused(handshake.exchange(seed, request(None, key=impostor), T0), 401, "invalid_proof")
    # a node that never joined looks the same as a bad signature
    refused(handshake.exchange(seed, request(None, "node-z", key=joiner), T0), 401, "invalid_proof")
    refused(handshake.exchange(seed, request(None), T0), 401, "invalid_token")


def test_rejoin_nonce_replayed(seed, joiner):
    join(seed, joiner)
    req = request(None, key=joiner)
    assert handshake.exchange(seed, req, T0)[0] == 200
    refused(handshake.exchange(seed, req, T0 + 1), 409, "replay_detected")


def test_a_node_joined_without_a_key_cannot_rejoin_by_proof(seed, joiner):
    inv = invite(seed)
    _, body = handshake.exchange(seed, request(inv["invite_token"]), T0)
    assert handshake.authenticate_ticket(seed, body["wsTicket"], "node-b", T0)[0] == 200
    refused(handshake.exchange(seed, request(None, key=joiner), T0), 401, "invalid_proof")


def test_the_seed_keeps_no_token(seed, tmp_path):
    inv = invite(seed)
    handshake.exchange(seed, request(inv["invite_token"]), T0)
    for path in (tmp_path / "seed").iterdir():
        assert inv["invite_token"].encode() not in path.read_bytes()
    assert query(tmp_path / "seed" / "s.acomm", "SELECT count(*) FROM fed_nonces") == [(1,)]
