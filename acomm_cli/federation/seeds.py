"""Several seeds: any node may serve the state room (`node init --seed`), and seeds keep
their copies of the room's document in step by joining each other (`gateway serve --seed
--join URL,URL`).

Who a seed trusts: the seeds its own `--join` list names (`Fellows`). A connection from one
of them to this seed's room is a seed link and relays every node's entries; any other
connection writes only its own node's entries (roomsync.RoomGuard). A url's node is asked
of the url itself (`GET /ansible/node`), so the trust is the operator's list, never what a
member says of itself in the room.

The single-use rules across seeds: an invite and a ticket are redeemed only by the seed that
minted them. Another seed that receives an invite finds its home in the room's invite
registry (`invites.<id>`, which only seeds write) and forwards the exchange there; one that
receives a ticket another seed signed verifies it with that seed's key and asks that seed to
redeem it (`POST /ansible/auth/redeem`, a signed node-to-node request). Two seeds handed the
same ticket at once both ask the same seed, whose one write transaction admits one of them
(docs/DECISIONS.md, "Single use across seeds"). httpx is imported inside."""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from acomm_cli import clock
from acomm_cli.errors import ValidationFailed
from acomm_cli.federation import handshake, identity
from acomm_cli.federation.invites import token_hash
from acomm_cli.store import federation as sql

NODE_PATH = "/ansible/node"
REDEEM_PATH = "/ansible/auth/redeem"
FORWARD_DEADLINE_S = 10.0  # a forwarded exchange or redemption, however slowly answered
log = logging.getLogger("acomm.gateway")


def parse_join(value: str | None) -> list[str]:
    """`--join URL[,URL...]` -> the urls in order, each http(s)://HOST:PORT (exit 3 naming
    the bad one)."""
    if value is None:
        return []
    urls = [u.strip().rstrip("/") for u in value.split(",") if u.strip()]
    if not urls:
        raise ValidationFailed("join: at least one url", field="join", value=value)
    for url in urls:
        if not url.startswith(("http://", "https://")):
            raise ValidationFailed(
                f"join: {url!r} is not a seed's url (http(s)://HOST:PORT)",
                field="join",
                value=url,
            )
    return list(dict.fromkeys(urls))


# ---------------------------------------------------------------- the seed flag


def mark_seed(conn: sqlite3.Connection) -> None:
    """`node init --seed`: this node serves the room (its gateway runs as a seed)."""
    from acomm_cli.store.connection import write

    with write(conn):
        sql.set_seed_flag(conn)


def is_seed(conn: sqlite3.Connection) -> bool:
    return sql.seed_flag(conn)


# ---------------------------------------------------------------- the invite registry


def invite_entry(row: tuple[Any, ...], seed: str) -> dict[str, Any]:
    """An invite as the room's registry holds it: metadata and the token's SHA-256 (which
    lets another seed find the invite's home; it never admits anyone)."""
    return {
        "ownerNodeId": seed,
        "tokenSha256": row[1],
        "expectedNodeId": row[2],
        "createdAt": clock.iso(row[4]),
        "expiresAt": clock.iso(row[5]),
        "usedAt": clock.iso(row[6]),
        "usedBy": row[7],
        "revokedAt": clock.iso(row[8]),
    }


def publish_invite(conn: sqlite3.Connection, invite_id: str, now_ms: int) -> None:
    """Queue the invite's registry entry for the room (inside the caller's transaction)."""
    row = sql.invite(conn, invite_id)
    me = sql.node_id(conn)
    if row is None or me is None:
        return
    value = json.dumps(invite_entry(row, me), separators=(",", ":"), sort_keys=True)
    sql.room_put(conn, "invites", invite_id, value, now_ms, queue=True)


def invite_home(conn: sqlite3.Connection, me: str, token: str) -> str | None:
    """The other seed that minted the invite carrying `token`, from the room's registry;
    None when it is this node's (or unknown: the local exchange refuses it)."""
    if sql.invite_by_hash(conn, token_hash(token)) is not None:
        return None
    wanted = token_hash(token)
    for _, raw in sql.room_map(conn, "invites"):
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("tokenSha256") == wanted:
            owner = entry.get("ownerNodeId")
            return owner if isinstance(owner, str) and owner != me else None
    return None


def node_url(conn: sqlite3.Connection, node: str) -> str | None:
    raw = sql.room_get(conn, "nodes", node)
    try:
        url = json.loads(raw).get("url") if raw else None
    except (ValueError, AttributeError):
        return None
    return url if isinstance(url, str) and url.startswith(("http://", "https://")) else None


def room_key(conn: sqlite3.Connection, node: str) -> bytes | None:
    """The key a node announces in the room (only that node writes its entry)."""
    raw = sql.room_get(conn, "nodes", node)
    try:
        return identity.parse_public_key(json.loads(raw)["publicKey"]) if raw else None
    except (ValidationFailed, ValueError, KeyError, TypeError):
        return None


# ---------------------------------------------------------------- fellow seeds


@dataclass
class Fellows:
    """The seeds this gateway's `--join` list names, and their node ids once asked."""

    urls: list[str]
    ids: dict[str, str] = field(default_factory=dict)  # url -> node id

    def trusted(self, node: str) -> bool:
        return node in self.ids.values()

    def url_of(self, node: str) -> str | None:
        return next((u for u, n in self.ids.items() if n == node), None)

    async def resolve(self, client: Any = None) -> None:
        """Ask each url not yet known which node serves it (a url that does not answer is
        asked again next time)."""
        import anyio
        import httpx

        todo = [u for u in self.urls if u not in self.ids]
        if not todo:
            return

        async def ask(client: Any, url: str) -> None:
            try:
                with anyio.fail_after(2.0):
                    r = await client.get(url + NODE_PATH)
                node = r.json().get("nodeId") if r.status_code == 200 else None
            except Exception:  # down or not a gateway: asked again later
                return
            if isinstance(node, str):
                self.ids[url] = node

        async with httpx.AsyncClient(timeout=2.0) as own:
            async with anyio.create_task_group() as tg:
                for url in todo:
                    tg.start_soon(ask, client or own, url)

    async def trusts(self, node: str) -> bool:
        """Whether `node` is a fellow seed; a node not known yet makes the urls not known
        yet be asked now (a seed that just came up connects before it is asked)."""
        if not self.trusted(node):
            await self.resolve()
        return self.trusted(node)

    async def keep_asking(self) -> None:
        """Ask the urls not known yet every 2 s until every one has answered."""
        import anyio

        while any(u not in self.ids for u in self.urls):
            await self.resolve()
            await anyio.sleep(2.0)


# ---------------------------------------------------------------- tickets of other seeds


def ticket_issuer(token: str | None) -> str | None:
    """The `iss` a v4.public ticket claims, read without verifying (to choose the key)."""
    if not isinstance(token, str) or not token.startswith("v4.public."):
        return None
    body = token[len("v4.public.") :].split(".")[0]
    try:
        raw = identity.unb64url(body)
        claims = json.loads(raw[:-64])
    except (ValueError, UnicodeDecodeError):
        return None
    iss = claims.get("iss") if isinstance(claims, dict) else None
    return iss if isinstance(iss, str) else None


def foreign_ticket(
    conn: sqlite3.Connection, token: str | None, node_header: str | None, now_ms: int
) -> handshake.Reply | None:
    """A ticket signed by another seed: None when it is not one (this gateway decides it
    itself); 200 and its issuer when it verifies with that seed's announced key, is live
    and names the caller; else the refusal the issuer would give."""
    import pyseto
    from pyseto import Key

    me = sql.node_id(conn)
    issuer = ticket_issuer(token)
    if issuer is None or issuer == me:
        return None
    key = room_key(conn, issuer)
    if key is None:
        return handshake.refusal(401, "invalid_ticket", "the ticket is not valid")
    try:
        payload = pyseto.decode(Key.from_asymmetric_key_params(4, x=key), str(token)).payload
        claims = json.loads(payload) if isinstance(payload, bytes) else None
    except (pyseto.PysetoError, ValueError, TypeError):
        return handshake.refusal(401, "invalid_ticket", "the ticket is not valid")
    if not isinstance(claims, dict) or claims.get("aud") != handshake.AUDIENCE:
        return handshake.refusal(401, "invalid_ticket", "the ticket is not valid")
    expires = handshake._ms(claims.get("exp"))
    if expires is None or expires <= now_ms:
        return handshake.refusal(401, "expired_ticket", "the ticket has expired")
    if node_header != claims.get("sub"):
        return handshake.refusal(403, "node_mismatch", "the ticket is for another node")
    return 200, {"issuer": issuer}


def redeem_here(conn: sqlite3.Connection, body: Any, now_ms: int) -> handshake.Reply:
    """`POST /ansible/auth/redeem` on the seed that minted a ticket: its one redemption
    (the same checks and transaction as a WebSocket upgrade here); 200 carries the claims
    and the node's key, for the asking seed to record."""
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("ticket"), str)
        or not isinstance(body.get("nodeId"), str)
    ):
        return handshake.refusal(400, "invalid_request", "ticket and nodeId are required")
    status, claims = handshake.authenticate_ticket(conn, body["ticket"], body["nodeId"], now_ms)
    if status != 200:
        return status, claims
    key = sql.member_key(conn, body["nodeId"])
    return 200, {
        "claims": claims,
        "publicKey": identity.paserk_public(key) if key is not None else None,
    }


def body_digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


async def redeem_at(url: str, me: identity.Node, token: str, node: str) -> handshake.Reply:
    """Ask the seed at `url` to redeem a ticket it minted: its answer, or 503
    peer_unreachable when it cannot be asked now."""
    import anyio
    import httpx

    from acomm_cli.federation.http_transport import signed_headers

    raw = json.dumps({"ticket": token, "nodeId": node}, separators=(",", ":")).encode()
    target = f"{REDEEM_PATH}?body={body_digest(raw)}&nonce={secrets.token_hex(8)}"
    try:
        with anyio.fail_after(FORWARD_DEADLINE_S):
            async with httpx.AsyncClient(timeout=FORWARD_DEADLINE_S) as client:
                r = await client.post(
                    url + target,
                    content=raw,
                    headers={**signed_headers(me, target), "Content-Type": "application/json"},
                )
        doc = r.json()
        return r.status_code, doc if isinstance(doc, dict) else {}
    except Exception as exc:  # down, refused, too slow, not JSON
        return _unreachable(url, exc)


async def forward_exchange(url: str, body: dict[str, Any]) -> handshake.Reply:
    """The exchange as the invite's home seed answers it (the joiner's request as it came:
    its nonce and proof are checked there)."""
    import anyio
    import httpx

    try:
        with anyio.fail_after(FORWARD_DEADLINE_S):
            async with httpx.AsyncClient(timeout=FORWARD_DEADLINE_S) as client:
                r = await client.post(url + "/ansible/auth/exchange", json=body)
        doc = r.json()
        return r.status_code, doc if isinstance(doc, dict) else {}
    except Exception as exc:
        return _unreachable(url, exc)


def _unreachable(url: str, exc: BaseException) -> handshake.Reply:
    return handshake.refusal(
        503,
        "peer_unreachable",
        f"the seed that minted this invite or ticket ({url}) cannot be reached now "
        f"({type(exc).__name__}); retry, here or at another seed",
    )


def record_member(conn: sqlite3.Connection, node: str, paserk: Any, now_ms: int) -> None:
    """A node another seed admitted: its key, for its rejoins here by proof."""
    from acomm_cli.store.connection import write

    try:
        key = identity.parse_public_key(paserk)
    except ValidationFailed:
        return
    with write(conn):
        sql.upsert_member(conn, node, key, now_ms)


# ---------------------------------------------------------------- the gateway's hooks


async def node_route(gw: Any, request: Any) -> Any:
    """`GET /ansible/node`: which node serves this url (public: a node id and its key)."""
    from starlette.responses import JSONResponse

    return JSONResponse(
        {"nodeId": gw.me.node_id, "publicKey": gw.me.public_paserk, "seed": gw.seed}
    )


async def forwarded_exchange(gw: Any, doc: Any) -> handshake.Reply | None:
    """The exchange of an invite another seed minted, as that seed answers it; None when
    this gateway answers it itself."""
    token = doc.get("inviteToken") if isinstance(doc, dict) else None
    if not isinstance(token, str):
        return None
    home = invite_home(gw.db(), gw.me.node_id, token)
    url = gw.fellows.url_of(home) if home is not None else None
    if url is None and home is not None and await gw.fellows.trusts(home):
        url = gw.fellows.url_of(home)
    if url is None:
        return None  # not a fellow seed's: the local exchange refuses it
    return await forward_exchange(url, doc)


async def ticket_of_another_seed(
    gw: Any, token: str | None, node_header: str | None
) -> handshake.Reply | None:
    """A ticket signed by a fellow seed, redeemed there: 200 and its claims (the node's key
    recorded here for its rejoins), or that seed's refusal; None when it is not another
    seed's ticket."""
    decided = foreign_ticket(gw.db(), token, node_header, clock.now_ms())
    if decided is None:
        return None
    if decided[0] != 200:
        return decided
    issuer = str(decided[1]["issuer"])
    url = gw.fellows.url_of(issuer)
    if url is None and await gw.fellows.trusts(issuer):
        url = gw.fellows.url_of(issuer)
    if url is None:
        return handshake.refusal(401, "invalid_ticket", "the ticket is not valid")
    status, reply = await redeem_at(url, gw.me, str(token), str(node_header))
    if status != 200:
        return status, reply
    claims = reply.get("claims")
    if not isinstance(claims, dict) or claims.get("sub") != node_header:
        return handshake.refusal(401, "invalid_ticket", "the ticket is not valid")
    if reply.get("publicKey"):
        record_member(gw.db(), str(node_header), reply["publicKey"], clock.now_ms())
    return 200, claims


async def redeem_route(gw: Any, request: Any) -> Any:
    """`POST /ansible/auth/redeem`: a fellow seed asks this one to redeem a ticket it
    minted; signed like an outbox read, the body's SHA-256 in the signed query."""
    from starlette.responses import JSONResponse

    from acomm_cli.errors import CommError
    from acomm_cli.federation import httpbody

    scope = request.scope
    target = scope["raw_path"].decode("latin-1")
    if scope.get("query_string"):
        target += "?" + scope["query_string"].decode("latin-1")
    refusal = gw._check_signature(request.headers, target)
    if refusal is not None:
        return JSONResponse(refusal[1], status_code=refusal[0])
    try:
        raw = await httpbody.read_capped(request, 64 * 1024)
    except httpbody._BodyTooLarge:
        status, body = handshake.refusal(413, "invalid_request", "the request is too large")
        return JSONResponse(body, status_code=status)
    if request.query_params.get("body") != body_digest(raw):
        status, body = handshake.refusal(
            401, "invalid_signature", "the body is not the one the request signed"
        )
        return JSONResponse(body, status_code=status)
    try:
        status, body = redeem_here(gw.db(), json.loads(raw), clock.now_ms())
    except ValueError:
        status, body = handshake.refusal(400, "invalid_request", "the body is not JSON")
    except (sqlite3.Error, CommError) as exc:
        gw.note("redeem", exc)
        status, body = handshake.refusal(
            503, "store_unavailable", "the node's store is busy; retry"
        )
    return JSONResponse(body, status_code=status)
