"""The join handshake's logic (docs/FEDERATION.md), as pure functions over the store, for the
gateway to serve: `exchange` answers `POST /ansible/auth/exchange`; `authenticate_ticket`
decides a WebSocket upgrade to the room BEFORE it is accepted.

Both return (http_status, body). Every refusal's body is {"error": {"code", "message"}} and
nothing else: no room data, no token, no hint whether a node is known (but to the holder of
a valid invite, told that the node id it names is taken). The order of checks is the
contract's and strict:

exchange with an invite: 1 the invite exists and is not revoked (401 invalid_token) and is
unused (409 token_already_used) -> 2 not expired (401 expired_token) -> 3 its expected node
matches (403 node_mismatch) -> 3b the node is new to the room: an invite admits a new node
and never re-keys one (409 node_already_joined, naming it) -> 4 the node proof verifies
when the invite pins a key or the node offers one (401 invalid_proof); the replay guard: a
nonce seen before or, when it carries its time (nonces.py), outside the 60 s window, an
invite with a ticket still live (409 replay_detected) -> 5 mint a single-use, room-scoped
ticket (PASETO v4.public signed by this node's key). Without an invite, a node that joined
once with a key rejoins by a node proof alone (401 invalid_proof for an unknown node or a
bad signature).

authenticate_ticket: signature, audience, issuer (401 invalid_ticket) -> expiry (401
expired_ticket) -> the caller's node header against `sub` (403 node_mismatch) -> unused (409
ticket_already_used) -> an invite's ticket for a node that joined meanwhile (409
node_already_joined); on success it consumes the ticket and the invite behind it and records
the node's key for its rejoins, in one transaction."""

from __future__ import annotations

import json
import re
import sqlite3
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from acomm_cli import clock
from acomm_cli.errors import ValidationFailed
from acomm_cli.federation import identity, nonces, profile
from acomm_cli.federation.invites import token_hash
from acomm_cli.store import federation as sql
from acomm_cli.store.connection import write

AUDIENCE = "ansible-yjs"
ROOMS = ("control",)
TICKET_TTL_MS = 60_000  # a ticket lives 30-60 s: long enough to open the socket
_NONCE = re.compile(r"[A-Za-z0-9_-]{16,128}", re.ASCII)
_FIELDS = {"inviteToken", "nodeId", "nonce", "nodeProof", "publicKey", "requestedRooms"}

Reply = tuple[int, dict[str, Any]]


@dataclass(frozen=True)
class _Grant:
    """Steps 1-4 passed: the invite to consume (None on a rejoin), the key to record."""

    invite_id: str | None
    key: bytes | None


def refusal(status: int, code: str, message: str) -> Reply:
    return status, {"error": {"code": code, "message": message}}


def exchange(
    conn: sqlite3.Connection,
    request: str | bytes | dict[str, Any],
    now_ms: int,
    *,
    production: bool = False,
) -> Reply:
    """Trade an invite token (or, for a node that joined before, a node proof) for a
    ticket: 200 {wsTicket, expiresAt, rooms, sessionId, gatewayNodeId} or a refusal. On the
    production profile (`production`, or the store's own setting) an invite needs the
    node's key and proof too (401 invalid_proof without them)."""
    req = _parse(request)
    if isinstance(req, tuple):
        return req
    gateway = identity.require(conn)
    with write(conn):
        if req.get("inviteToken") is None:
            result = _rejoin(conn, req, now_ms)
        else:
            strict = profile.production(conn, profile.PRODUCTION if production else None)
            result = _by_invite(conn, gateway.node_id, req, now_ms, strict)
        if isinstance(result, _Grant):
            return _mint(conn, gateway, req, result, now_ms)
        return result


def _parse(request: str | bytes | dict[str, Any]) -> dict[str, Any] | Reply:
    """The request's shape (400 invalid_request), before the contract's checks."""
    bad = refusal(
        400,
        "invalid_request",
        "the request must be a JSON object with nodeId, nonce and inviteToken or nodeProof",
    )
    try:
        req = json.loads(request) if isinstance(request, (str, bytes)) else request
    except (ValueError, UnicodeDecodeError):
        return bad
    if not isinstance(req, dict) or not set(req) <= _FIELDS:
        return bad
    try:
        identity.node_id(req.get("nodeId"))
    except ValidationFailed:
        return bad
    if not isinstance(req.get("nonce"), str) or not _NONCE.fullmatch(req["nonce"]):
        return refusal(
            400,
            "invalid_request",
            "nonce: 16-128 characters of A-Z a-z 0-9 _ - (fresh for each request)",
        )
    for name in ("inviteToken", "nodeProof", "publicKey"):
        if req.get(name) is not None and not isinstance(req[name], str):
            return bad
    rooms = req.get("requestedRooms")
    if rooms is not None and (
        not isinstance(rooms, list)
        or not rooms
        or not all(isinstance(r, str) and r in ROOMS for r in rooms)
    ):
        return refusal(400, "invalid_request", f"requestedRooms: only {', '.join(ROOMS)} exist")
    return req


def _by_invite(
    conn: sqlite3.Connection,
    gateway_node: str,
    req: dict[str, Any],
    now_ms: int,
    proof_required: bool = False,
) -> _Grant | Reply:
    """Steps 1-4 for a join by invite: (invite id, the key to record) or a refusal."""
    row = sql.invite_by_hash(conn, token_hash(req["inviteToken"]))
    # 1: exists (a revoked invite is as good as none) and unused
    if row is None or row[8] is not None:
        return refusal(401, "invalid_token", "the invite token is not valid")
    if row[6] is not None:
        return refusal(409, "token_already_used", "the invite token was already used")
    # 2: not expired
    if row[5] <= now_ms:
        return refusal(401, "expired_token", "the invite token has expired")
    # 3: the expected node
    if row[2] is not None and row[2] != req["nodeId"]:
        return refusal(403, "node_mismatch", "the invite is for another node")
    # 3b: an invite admits a new node; a member rejoins by its proof with the key it joined
    # with, so that an invite's holder can never take over (re-key) a member's node id
    if known_node(conn, gateway_node, req["nodeId"]):
        return _already_joined(req["nodeId"])
    # 4: the node proof, when the invite pins a key or the node offers one to register (on
    # the production profile, always: an invite alone never admits a node)
    if proof_required and (
        req.get("publicKey") is None and row[3] is None or not req.get("nodeProof")
    ):
        return refusal(
            401,
            "invalid_proof",
            "this seed runs the production profile: a join needs the node's key and its "
            "node proof with the invite",
        )
    pinned = bytes(row[3]) if row[3] is not None else None
    key = pinned
    if req.get("publicKey") is not None:
        offered = _key(req["publicKey"])
        if offered is None or (pinned is not None and offered != pinned):
            return _bad_proof()
        key = offered
    if key is not None or req.get("nodeProof") is not None:
        if key is None or not identity.verify_proof(
            key, req["nodeId"], req["nonce"], req.get("nodeProof")
        ):
            return _bad_proof()
    # 4: the replay guard (the jti's is at minting)
    why = nonces.handshake_replay(conn, req["nonce"], now_ms)
    if why is not None:
        return _replay(why)
    if sql.live_ticket_for_invite(conn, row[0], now_ms):
        return _replay()
    return _Grant(row[0], key)


def _rejoin(conn: sqlite3.Connection, req: dict[str, Any], now_ms: int) -> _Grant | Reply:
    """A node that joined once with a key: its proof instead of an invite."""
    if req.get("nodeProof") is None:
        return refusal(
            401, "invalid_token", "an invite token (or, to rejoin, a node proof) is required"
        )
    # a node that joined at another seed: the key it announces in the room, which only
    # that node writes
    key = sql.member_key(conn, req["nodeId"]) or _room_key(conn, req["nodeId"])
    offered = _key(req["publicKey"]) if req.get("publicKey") is not None else key
    if (
        key is None
        or offered != key
        or not identity.verify_proof(key, req["nodeId"], req["nonce"], req["nodeProof"])
    ):
        return _bad_proof()  # an unknown node and a bad signature look alike
    why = nonces.handshake_replay(conn, req["nonce"], now_ms)
    if why is not None:
        return _replay(why)
    return _Grant(None, None)


def _mint(
    conn: sqlite3.Connection,
    gateway: identity.Node,
    req: dict[str, Any],
    grant: _Grant,
    now_ms: int,
) -> Reply:
    """Step 5: a single-use ticket for the requested rooms, recorded with the nonce."""
    jti = str(uuid.uuid4())
    if sql.ticket_exists(conn, jti):
        return _replay()
    rooms = list(req.get("requestedRooms") or ROOMS)
    expires_at = now_ms + TICKET_TTL_MS
    claims = {
        "iss": gateway.node_id,
        "sub": req["nodeId"],
        "aud": AUDIENCE,
        "rooms": rooms,
        "inviteId": grant.invite_id,
        "jti": jti,
        "iat": clock.iso(now_ms),
        "exp": clock.iso(expires_at),
    }
    nonces.record_handshake(conn, req["nonce"], req["nodeId"], now_ms)
    # a ticket past its expiry is refused by its signed `exp` before its row is read, and no
    # longer counts as an invite's live ticket: forget those here, where the table grows
    sql.prune_tickets(conn, now_ms)
    sql.insert_ticket(conn, jti, grant.invite_id, req["nodeId"], grant.key, now_ms, expires_at)
    return 200, {
        "wsTicket": _sign(gateway.private_key, claims),
        "expiresAt": clock.iso(expires_at),
        "rooms": rooms,
        "sessionId": jti,
        "gatewayNodeId": gateway.node_id,
    }


def authenticate_ticket(
    conn: sqlite3.Connection, token: str | None, node_header: str | None, now_ms: int
) -> Reply:
    """Decide a WebSocket upgrade: 200 and the ticket's claims, the ticket and its invite
    consumed; or a refusal (the upgrade is then answered as that HTTP error)."""
    gateway = identity.require(conn)
    claims = _verified(gateway, token)
    if claims is None:
        return refusal(401, "invalid_ticket", "the ticket is not valid")
    expires = _ms(claims["exp"])
    if expires is None or expires <= now_ms:
        return refusal(401, "expired_ticket", "the ticket has expired")
    if node_header != claims["sub"]:
        return refusal(403, "node_mismatch", "the ticket is for another node")
    with write(conn):
        row = sql.ticket(conn, claims["jti"])
        if row is None or row[2] != claims["sub"]:
            return refusal(401, "invalid_ticket", "the ticket is not valid")
        if row[6] is not None:
            return refusal(409, "ticket_already_used", "the ticket was already used")
        invite_id, key = row[1], row[3]
        if invite_id is not None:
            if known_node(conn, gateway.node_id, claims["sub"]):
                return _already_joined(claims["sub"])  # two invites raced for one node id
            invite = sql.invite(conn, invite_id)
            if invite is None or invite[8] is not None or invite[6] is not None:
                # revoked (or, impossibly, used) since the exchange
                return refusal(401, "invalid_ticket", "the ticket is not valid")
            sql.use_invite(conn, invite_id, claims["sub"], now_ms)
            from acomm_cli.federation.invites import publish

            publish(conn, invite_id, now_ms)
        sql.use_ticket(conn, claims["jti"], now_ms)
        if key is not None:
            sql.upsert_member(conn, claims["sub"], bytes(key), now_ms)
        else:
            sql.touch_member(conn, claims["sub"], now_ms)
    return 200, claims


def _verified(gateway: identity.Node, token: str | None) -> dict[str, Any] | None:
    """The claims of a ticket this gateway signed for the room's audience, or None."""
    import pyseto
    from pyseto import Key

    if not isinstance(token, str) or not token.startswith("v4.public."):
        return None
    try:
        public = Key.from_asymmetric_key_params(4, x=gateway.public_key)
        payload = pyseto.decode(public, token).payload
        claims = json.loads(payload) if isinstance(payload, bytes) else None
    except (pyseto.PysetoError, ValueError, TypeError):
        return None
    if not isinstance(claims, dict):
        return None
    ok = (
        claims.get("aud") == AUDIENCE
        and claims.get("iss") == gateway.node_id
        and all(isinstance(claims.get(k), str) for k in ("sub", "jti", "exp"))
        and _ms(claims["exp"]) is not None
    )
    return claims if ok else None


def _sign(private_key: bytes, claims: dict[str, Any]) -> str:
    import pyseto
    from pyseto import Key

    secret = Key.from_asymmetric_key_params(4, d=private_key)
    # the claims serialised here, not by pyseto, which would add its own exp/iat
    return pyseto.encode(secret, json.dumps(claims, separators=(",", ":")).encode()).decode()


def _ms(value: Any) -> int | None:
    try:
        return round(datetime.fromisoformat(value).timestamp() * 1000)
    except (ValueError, TypeError):
        return None


def _key(text: str) -> bytes | None:
    try:
        return identity.parse_public_key(text)
    except ValidationFailed:
        return None


def known_node(conn: sqlite3.Connection, gateway_node: str, node: str) -> bool:
    """The node is in the room: this gateway itself, a member that joined here with a key,
    or a node whose entry in the room announces its key."""
    if node == gateway_node or sql.member_key(conn, node) is not None:
        return True
    raw = sql.room_get(conn, "nodes", node)
    try:
        return raw is not None and isinstance(json.loads(raw).get("publicKey"), str)
    except (ValueError, AttributeError):
        return False


def _room_key(conn: sqlite3.Connection, node: str) -> bytes | None:
    from acomm_cli.federation import seeds

    return seeds.room_key(conn, node)


def _already_joined(node: str) -> Reply:
    return refusal(
        409,
        "node_already_joined",
        f"node {node!r} is already in the room: it rejoins by a node proof with its "
        "registered key, and an invite never re-keys it",
    )


def _bad_proof() -> Reply:
    return refusal(401, "invalid_proof", "the node proof does not verify")


def _replay(why: str = "this request was seen before") -> Reply:
    return refusal(409, "replay_detected", why)
