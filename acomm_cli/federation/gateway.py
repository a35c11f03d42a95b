"""`acomm gateway serve`: the node's one long-running process. A Starlette
app served by uvicorn:

- `POST /ansible/auth/exchange`: handshake.exchange on this store, its status and body;
- `/ansible/yjs/control` (WebSocket): the state room (pycrdt-websocket's YRoom); the ticket
  (`Authorization: Bearer`) and the caller's node (`X-Acomm-Node`) are checked BEFORE the
  upgrade is accepted; a refusal is an HTTP error with a JSON body and no Yjs byte
  (Starlette's send_denial_response, uvicorn's "websocket.http.response" extension);
- `GET /acomm/outbox?after=SEQ&limit=N&wait=S`: this node's outbox, for signed reads by known
  members, long-polled up to 30 s;
- `GET /acomm/blob/SHA256`: a file's bytes, for a signed request from a member node that a
  message sent from here names the file for (federation/blobs.py fetches them);
- `/agent/v1/...` (agentapi.py): external agents with a session token, as their agent only;
  such a token opens neither the room (it is no ticket) nor the outbox (no node signature).

- `GET /ansible/node` and `POST /ansible/auth/redeem` (seeds.py): which node serves this url,
  and a fellow seed asking this one to redeem a ticket it minted.

A seed's room document persists with pycrdt-store (a SQLite file beside the store, loaded
into the document BEFORE the room starts); several seeds join each other (seeds.py). Every
gateway mirrors the room into `fed_room` and the queued changes into the room
(roomsync.Mirror) and heartbeats `nodes.<self>`; a joining gateway also connects its
document to a seed's room (roomsync.join), falling over along its `--join` list. SQLite calls
run on the event loop's thread with a short busy timeout: a locked store is noted and the
pass retried, never fatal. starlette, uvicorn and pycrdt are imported inside `serve`."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import socket
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from acomm_cli import clock, model
from acomm_cli.errors import CommError, InvalidState
from acomm_cli.federation import (
    agentapi,
    gwstate,
    handshake,
    httpbody,
    identity,
    nonces,
    roomsync,
    seeds,
)
from acomm_cli.federation.blobs import BLOB_PATH
from acomm_cli.federation.http_transport import MAX_WAIT_S, OUTBOX_PATH
from acomm_cli.store import federation as sql
from acomm_cli.store import stats

log = logging.getLogger("acomm.gateway")
SYNC_EVERY_S = 0.5
OUTBOX_POLL_S = 0.05  # a long poll's look at the store's data version
OUTBOX_REREAD_S = 0.25  # ...and its page read again at least this often
HEARTBEAT_EVERY_S = 5.0
SIGNATURE_SKEW_MS = nonces.WINDOW_MS


@dataclass(frozen=True)
class Options:
    store_path: Path
    host: str
    port: int
    seed: bool = False
    join: str | None = None
    invite: str | None = None
    public_url: str | None = None
    pull_every_ms: int | None = None
    push: bool = False  # a NATS node: publish and read as events come
    busy_timeout_ms: int = 1000
    sla_ms: int = 600_000
    pull_pages: int = 10
    peer_deadline_ms: int = 30_000  # `federation.peer_deadline`: each peer's exchange, a pass
    takeover_grace_ms: int = 600_000  # the room's rule for taking over another's entry
    limits: model.Limits | None = None  # the agent endpoints' sends, as `acomm send`'s
    encoders: agentapi.Encoders | None = None  # without them, no agent endpoints
    max_body: int = httpbody.DEFAULT_MAX_BODY  # `gateway.max_body`: the largest request
    pull: bool = False  # pull the peers continuously (puller.py); `gateway serve`'s default
    pull_wait_ms: int = 20_000  # `gateway.pull_wait`: each long poll's wait
    pull_interval_ms: int = 0  # `gateway.pull_interval`: a pause after each read of a peer
    tls_cert: str | None = None  # serve HTTPS with this certificate chain (PEM)...
    tls_key: str | None = None  # ...and its private key
    insecure_listen: bool = False  # plain HTTP beyond loopback, said explicitly
    profile_name: str | None = None  # `federation.profile` as this process's config says
    ca_file: str | None = None  # `federation.ca_file`: CAs trusted for https:// peers
    # GET /metrics: the store in Prometheus' format (monitoring.metrics.metrics_payload, handed
    # in by the command: monitoring sits above federation); None: no such route
    metrics: Callable[[Path], tuple[bytes, str]] | None = None


def parse_listen(value: str) -> tuple[str, int]:
    """HOST:PORT, or `none`: ("", 0), no listening socket at all (a node behind NAT on
    NATS JetStream: it only connects out)."""
    from acomm_cli.errors import ValidationFailed

    if value == "none":
        return "", 0
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValidationFailed(
            "listen: HOST:PORT, e.g. 127.0.0.1:8765 (port 0: any free port)",
            field="listen",
            value=value,
        )
    return host.strip("[]"), int(port)


def room_store_path(store_path: Path) -> Path:
    return Path(str(store_path) + ".room.db")


class Gateway:
    """The app's state: this node, its store connection, the room and the mirror."""

    def __init__(
        self, opts: Options, me: identity.Node, listen: str | None, public_url: str
    ) -> None:
        self.opts, self.me, self.listen, self.public_url = opts, me, listen, public_url
        self.conn: sqlite3.Connection | None = None
        self.room: Any = None
        self.mirror: roomsync.Mirror | None = None
        self.join_state = roomsync.JoinState(opts.invite)
        self.room_synced = False
        # several seeds (seeds.py): a seed serves the room from its own store, and trusts as
        # fellow seeds the ones its --join list names
        self.seed = opts.seed
        self.fellows = seeds.Fellows(seeds.parse_join(opts.join))
        self._noted: str | None = None
        self.puller: Any = None  # puller.Puller while the gateway pulls continuously
        self.stopping = False  # set at SIGINT/SIGTERM: open long polls answer at once
        self.production = False
        self._published = 0.0
        self.publisher: dict[str, Any] | None = None  # push.py's outbox publisher, when it runs

    def db(self) -> sqlite3.Connection:
        if self.conn is None:
            from acomm_cli.engine import opening

            self.conn = opening.connect(
                self.opts.store_path, create=False, busy_timeout_ms=self.opts.busy_timeout_ms
            )
        return self.conn

    def note(self, what: str, exc: BaseException) -> None:
        text = f"{what}: {exc}"
        if text != self._noted:  # once per distinct trouble, not every half second
            log.warning(text)
            self._noted = text

    def publish_state(self) -> None:
        gwstate.write_state(
            self.opts.store_path,
            {
                "pid": os.getpid(),
                "node_id": self.me.node_id,
                "listen": self.listen,
                "public_url": self.public_url,
                "seed": self.seed,
                "join": self.opts.join,
                "room_synced": self.room_synced,
                "updated_at": clock.iso(clock.now_ms()),
                "heartbeat_ms": clock.now_ms(),  # a stale one: no gateway (gwstate)
                "tls": self.opts.tls_cert is not None,
                "pull": (
                    self.puller.state()
                    if self.puller is not None
                    else {"mode": "every", "every_ms": self.opts.pull_every_ms}
                    if self.opts.pull_every_ms
                    else {"mode": "off"}
                ),
                **({"publisher": self.publisher} if self.publisher is not None else {}),
            },
        )
        self._published = time.monotonic()

    # ------------------------------------------------------------ the room mirror

    async def sync_loop(self) -> None:
        import anyio

        last_beat = 0.0
        while True:
            beat = time.monotonic() - last_beat >= HEARTBEAT_EVERY_S
            try:
                assert self.mirror is not None
                self.mirror.sync(self.db(), clock.now_ms(), heartbeat=beat)
                if beat:  # the read signatures' one writer is this process: pruned here
                    nonces.prune(self.db(), clock.now_ms())
                self._noted = None
                if beat:
                    last_beat = time.monotonic()
                synced = self.seed or self.opts.join is None or self.join_state.synced
                if synced != self.room_synced or beat:
                    self.room_synced = synced
                    self.publish_state()
            except (sqlite3.Error, CommError) as exc:
                self.note("the room could not be mirrored into the store now", exc)
            except Exception:  # a bug here must not take the room down: said, retried
                log.exception("mirroring the room")
            if time.monotonic() - self._published >= HEARTBEAT_EVERY_S:
                try:  # alive, if its store is not: `gateway status` tells the two apart
                    self.publish_state()
                except OSError as exc:
                    self.note("the gateway's state file could not be written", exc)
            await anyio.sleep(SYNC_EVERY_S)

    async def pull_loop(self) -> None:
        import anyio

        assert self.opts.pull_every_ms is not None
        while True:
            await anyio.sleep(self.opts.pull_every_ms / 1000)
            try:
                await anyio.to_thread.run_sync(self._pull_once)
            except (sqlite3.Error, CommError) as exc:
                self.note("pull", exc)

    def _pull_once(self) -> None:
        from acomm_cli.engine import opening
        from acomm_cli.federation import pull as fed_pull

        conn = opening.connect(
            self.opts.store_path, create=False, busy_timeout_ms=self.opts.busy_timeout_ms
        )
        try:
            result = fed_pull.pull(
                conn,
                clock.now_ms(),
                max_pages=self.opts.pull_pages,
                sla_ms=self.opts.sla_ms,
                deadline_s=self.opts.peer_deadline_ms / 1000,
            )
        finally:
            conn.close()
        if result.unreachable:
            log.warning("unreachable peers: %s", ", ".join(result.unreachable))

    # ------------------------------------------------------------ the routes

    async def exchange(self, request: Any) -> Any:
        """Needs no login: the body is capped before it is read and parsed within bounds,
        so a hostile one is a 4xx and never reaches the handshake."""
        from starlette.responses import JSONResponse

        try:
            doc = httpbody.parse(await httpbody.read_capped(request, self.opts.max_body))
        except httpbody._BodyTooLarge:
            return JSONResponse(
                *_swap(
                    handshake.refusal(
                        413,
                        "invalid_request",
                        f"the request is larger than {self.opts.max_body} bytes",
                    )
                )
            )
        except httpbody._BadJson as exc:
            return JSONResponse(*_swap(handshake.refusal(400, "invalid_request", str(exc))))
        if not isinstance(doc, dict):  # a JSON string would be parsed a second time
            doc = None
        try:  # an invite another seed minted is redeemed there
            forwarded = await seeds.forwarded_exchange(self, doc)
        except (sqlite3.Error, CommError) as exc:
            self.note("exchange", exc)
            forwarded = _unavailable()
        if forwarded is not None:
            return JSONResponse(forwarded[1], status_code=forwarded[0])
        try:
            status, reply = handshake.exchange(
                self.db(), doc or b"", clock.now_ms(), production=self.production
            )
        except (sqlite3.Error, CommError) as exc:
            self.note("exchange", exc)
            status, reply = _unavailable()
        return JSONResponse(reply, status_code=status)

    async def room_socket(self, websocket: Any) -> None:
        from starlette.responses import JSONResponse

        auth = websocket.headers.get("authorization") or ""
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        node_header = websocket.headers.get("x-acomm-node")
        try:  # a ticket another seed minted is redeemed there
            decided = await seeds.ticket_of_another_seed(self, token, node_header)
            status, claims = decided or handshake.authenticate_ticket(
                self.db(), token, node_header, clock.now_ms()
            )
        except (sqlite3.Error, CommError) as exc:
            self.note("room authentication", exc)
            status, claims = _unavailable()
        if status != 200:
            await websocket.send_denial_response(JSONResponse(claims, status_code=status))
            return
        await websocket.accept()
        # the connection knows whose ticket it holds: each update it sends is checked
        # against the room's write rule (its node's own entries only) before the room sees it
        guard = roomsync.RoomGuard(self.room.ydoc, self.opts.takeover_grace_ms)
        sender = str(claims["sub"])
        # a seed link (a fellow seed's, seeds.py) relays every node's entries; asked per
        # update, as a fellow's url may answer only after it connected
        await self.fellows.trusts(sender)
        await self._serve(
            _Channel(
                websocket,
                roomsync.ROOM_PATH,
                lambda m: self.fellows.trusted(sender) or guard.allows(sender, m),
            )
        )

    async def _serve(self, channel: _Channel) -> None:
        from starlette.websockets import WebSocketDisconnect

        try:
            await self.room.serve(channel)
        except* WebSocketDisconnect:
            pass  # the node went away while the room wrote to it: it reconnects

    async def outbox(self, request: Any) -> Any:
        import anyio
        from starlette.responses import JSONResponse, Response

        scope = request.scope
        target = scope["raw_path"].decode("latin-1")
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode("latin-1")
        refusal = self._check_signature(request.headers, target)
        params = _outbox_params(request.query_params) if refusal is None else None
        if params is None:
            refusal = refusal or handshake.refusal(
                400,
                "invalid_request",
                f"after >= 0, 1 <= limit <= 1000, 0 <= wait <= {MAX_WAIT_S:g} (seconds)",
            )
            return JSONResponse(refusal[1], status_code=refusal[0])
        after, limit, wait_s = params
        deadline = time.monotonic() + wait_s
        version, read_at = None, 0.0
        events: list[str] = []
        head = 0
        while True:
            try:
                # a long poll reads the page again when another connection committed (one
                # cheap pragma every OUTBOX_POLL_S), and every OUTBOX_REREAD_S regardless
                now_version = stats.data_version(self.db())
                if now_version != version or time.monotonic() - read_at >= OUTBOX_REREAD_S:
                    version, read_at = now_version, time.monotonic()
                    events, head = sql.outbox_page_texts(self.db(), after, limit)
            except (sqlite3.Error, CommError) as exc:
                self.note("outbox read", exc)
                return JSONResponse(_unavailable()[1], status_code=503)
            if events or time.monotonic() >= deadline or self.stopping:
                # the stored envelopes as they are, not parsed and dumped again
                body = (
                    f'{{"node":{json.dumps(self.me.node_id)},"events":[{",".join(events)}],'
                    f'"head":{head}}}'
                )
                return Response(body.encode(), media_type="application/json")
            await anyio.sleep(OUTBOX_POLL_S)

    async def blob(self, request: Any) -> Any:
        """A file's bytes for a member node that a message sent from here names them for
        (remoteblobs.servable); the same 404 for every other node and for a blob not here,
        so a peer learns nothing of what it is not owed."""
        from starlette.responses import JSONResponse, Response

        from acomm_cli.engine import remoteblobs

        scope = request.scope
        target = scope["raw_path"].decode("latin-1")
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode("latin-1")
        refusal = self._check_signature(request.headers, target)
        if refusal is not None:
            return JSONResponse(refusal[1], status_code=refusal[0])
        node = str(request.headers.get("x-acomm-node"))
        try:
            data = remoteblobs.servable(self.db(), node, request.path_params["sha256"])
        except (sqlite3.Error, CommError) as exc:
            self.note("blob read", exc)
            return JSONResponse(_unavailable()[1], status_code=503)
        if data is None:
            status, body = handshake.refusal(
                404, "not_found", "no message sent from this node to yours names this file"
            )
            return JSONResponse(body, status_code=status)
        return Response(data, media_type="application/octet-stream")

    async def metrics(self, request: Any) -> Any:
        """A scrape, on a thread of its own connection (the store's counts take a while on a
        big one; the loop keeps serving)."""
        import anyio
        from starlette.responses import JSONResponse, Response

        assert self.opts.metrics is not None
        try:
            body, ctype = await anyio.to_thread.run_sync(self.opts.metrics, self.opts.store_path)
        except (sqlite3.Error, CommError) as exc:
            self.note("metrics", exc)
            return JSONResponse(_unavailable()[1], status_code=503)
        return Response(body, media_type=ctype)

    def _check_signature(self, headers: Any, target: str) -> handshake.Reply | None:
        """None when a known member signed this request recently and it was not answered
        before; a refusal otherwise. An unknown node and a bad signature look alike (401
        invalid_signature); a replay within the window is 401 replayed_request; a store
        that cannot be read (locked past the busy timeout) is 503 store_unavailable."""
        bad = handshake.refusal(
            401, "invalid_signature", "the request is not signed by a member node"
        )
        node, ts, sig = (
            headers.get(h) for h in ("x-acomm-node", "x-acomm-timestamp", "x-acomm-signature")
        )
        try:
            identity.node_id(node)
            stamp = int(ts or "")
        except (CommError, ValueError):
            return bad
        if abs(int(time.time() * 1000) - stamp) > SIGNATURE_SKEW_MS:
            return handshake.refusal(
                401,
                "expired_signature",
                "the request's timestamp is too far from this gateway's clock",
            )
        try:  # the key is read from the store: busy is 503, as for the replay guard below
            key = self._member_key(str(node))
        except (sqlite3.Error, CommError) as exc:
            self.note("the read's signer key", exc)
            return _unavailable()
        if key is None or not identity.verify_request(key, str(node), target, stamp, sig):
            return bad
        try:  # accepted once: a replay carries the same signature (Ed25519 is deterministic)
            first = nonces.first_request(self.db(), identity.unb64url(str(sig)), str(node), stamp)
        except (sqlite3.Error, CommError) as exc:
            self.note("the read's replay guard", exc)
            return _unavailable()
        if not first:
            return handshake.refusal(
                401,
                "replayed_request",
                "this signed request was already answered; sign each request afresh",
            )
        return None

    def _member_key(self, node: str) -> bytes | None:
        """A node's key: recorded at its join (on the seed), else announced in the room,
        which only that node may write (roomsync.RoomGuard)."""
        conn = self.db()
        key = sql.member_key(conn, node)
        if key is not None:
            return key
        raw = sql.room_get(conn, "nodes", node)
        try:
            return identity.parse_public_key(json.loads(raw)["publicKey"]) if raw else None
        except (CommError, ValueError, KeyError, TypeError):
            return None


def _swap(reply: handshake.Reply) -> tuple[dict[str, Any], int]:
    return reply[1], reply[0]


def _unavailable() -> handshake.Reply:
    return handshake.refusal(503, "store_unavailable", "the node's store is busy; retry")


def _outbox_params(q: Any) -> tuple[int, int, float] | None:
    """(after, limit, wait_s), or None when one is out of bounds."""
    try:
        after = int(q.get("after", "0"))
        limit = int(q.get("limit", "200"))
        wait_s = float(q.get("wait", "0"))
    except ValueError:
        return None
    if (
        not 0 <= after <= httpbody.INT_MAX
        or not 1 <= limit <= 1000
        or not 0 <= wait_s <= MAX_WAIT_S
    ):
        return None
    return after, limit, wait_s


class _Channel:
    """A Starlette WebSocket as a pycrdt Channel (bytes in, bytes out); a message `allows`
    refuses is dropped here, before the room reads it."""

    def __init__(self, websocket: Any, path: str, allows: Callable[[bytes], bool]) -> None:
        self._ws, self._path, self._allows = websocket, path, allows

    @property
    def path(self) -> str:
        return self._path

    def __aiter__(self) -> _Channel:
        return self

    async def __anext__(self) -> bytes:
        while True:
            message = await self._ws.receive()
            if message["type"] == "websocket.disconnect":
                raise StopAsyncIteration
            data = bytes(message.get("bytes") or b"")
            if self._allows(data):
                return data

    async def send(self, message: bytes) -> None:
        await self._ws.send_bytes(message)

    async def recv(self) -> bytes:
        return await self.__anext__()


def serve(opts: Options) -> None:
    """Run the gateway until SIGINT/SIGTERM (uvicorn's handling), then close the room and
    its store and remove the state file."""
    from contextlib import asynccontextmanager

    import anyio
    import uvicorn
    from pycrdt import Doc
    from pycrdt.store import SQLiteYStore, YDocNotFound
    from pycrdt.websocket import YRoom
    from starlette.applications import Starlette
    from starlette.routing import Route, WebSocketRoute

    from acomm_cli.engine import opening
    from acomm_cli.federation import http_transport, profile

    join_urls = seeds.parse_join(opts.join)
    conn = opening.connect(opts.store_path, create=False)
    try:
        me = identity.require(conn)
        nats = sql.nats_config(conn)
        production = profile.production(conn, opts.profile_name)
        if opts.seed and not seeds.is_seed(conn):  # a seed for good: its invites are shared
            seeds.mark_seed(conn)
        opts = dataclasses.replace(opts, seed=seeds.is_seed(conn))
    finally:
        conn.close()
    http_transport.use_ca_file(opts.ca_file)
    profile.check_tls_files(opts.tls_cert, opts.tls_key)
    profile.check_listen(opts.host, opts.tls_cert is not None, opts.insecure_listen)
    if (opts.push or not opts.host) and nats is None:
        raise InvalidState(
            "push and --listen none need a node on NATS JetStream (acomm "
            "node init --transport nats://HOST:PORT)",
            field="push",
        )
    if not opts.host and (opts.seed or not join_urls):
        raise InvalidState(
            "listen none: only a joining node (--join URL) can go without "
            "listening; a seed hosts the room",
            field="listen",
        )
    scheme = "https" if opts.tls_cert is not None else "http"
    if production:  # no plain-HTTP seed, and none for the peers to read this node at
        for url in join_urls:
            profile.require_tls(url, "the seed", "join")
        if nats is None and opts.host:
            profile.require_tls(
                opts.public_url or f"{scheme}://{opts.host}", "this gateway's url", "public_url"
            )
    sock = None
    if opts.host:
        sock = socket.socket(socket.AF_INET6 if ":" in opts.host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((opts.host, opts.port))
        listen = f"{opts.host}:{sock.getsockname()[1]}"
    else:
        listen = None
    # a NATS node's outbox is read from its stream: the room advertises the NATS url
    gw = Gateway(
        opts,
        me,
        listen,
        str(nats[0]) if nats is not None else opts.public_url or f"{scheme}://{listen}",
    )
    gw.production = production

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        doc: Any = Doc()
        ystore = None
        async with anyio.create_task_group() as tg:
            if opts.seed:
                # pycrdt-store names its file by a class attribute; the argument is the
                # document's name within it
                ystore = type(
                    "RoomStore", (SQLiteYStore,), {"db_path": str(room_store_path(opts.store_path))}
                )("control", log=log)
                await tg.start(ystore.start)
                try:
                    await ystore.apply_updates(doc)  # BEFORE the room starts
                except YDocNotFound:
                    pass
            gw.mirror = roomsync.Mirror(doc, me, gw.public_url, seed=opts.seed)
            gw.room = YRoom(ready=True, ystore=ystore, ydoc=doc, log=log)
            await tg.start(gw.room.start)
            tg.start_soon(gw.sync_loop)
            tg.start_soon(gw.fellows.keep_asking)
            if join_urls and opts.seed:  # a seed joins every fellow seed (and they it)
                for url in join_urls:
                    state = roomsync.JoinState(opts.invite)
                    tg.start_soon(roomsync.join, url, me, doc, state, lambda: None)
            elif join_urls:  # a node joins one seed at a time: the list in order
                tg.start_soon(roomsync.join, join_urls, me, doc, gw.join_state, lambda: None)
            if opts.pull_every_ms:
                tg.start_soon(gw.pull_loop)
            elif opts.pull and nats is None:  # a NATS node reads its peers with --push
                from acomm_cli.federation import puller

                gw.puller = puller.Puller(
                    puller.Settings(
                        opts.store_path,
                        wait_s=opts.pull_wait_ms / 1000,
                        interval_s=opts.pull_interval_ms / 1000,
                        deadline_s=opts.peer_deadline_ms / 1000,
                        sla_ms=opts.sla_ms,
                        busy_timeout_ms=opts.busy_timeout_ms,
                        profile_name=opts.profile_name,
                    ),
                    me,
                )
                tg.start_soon(gw.puller.run)
            if opts.push:
                from acomm_cli.federation import push

                tg.start_soon(push.loop, gw)
            log.info(
                "gateway %s listening on %s (%s)",
                me.node_id,
                listen or "nothing",
                "seed"
                if opts.seed
                else f"joined to {opts.join}"
                if opts.join
                else "serving its outbox",
            )
            try:
                yield
            finally:
                with anyio.CancelScope(shield=True):
                    try:
                        gw.mirror.sync(gw.db(), clock.now_ms(), heartbeat=False)
                    except (sqlite3.Error, CommError) as exc:
                        gw.note("the last mirror pass", exc)
                    await anyio.sleep(0.2)  # let the room's last writes reach its store
                    await gw.room.stop()
                    if ystore is not None:
                        await ystore.stop()
                tg.cancel_scope.cancel()
        if gw.conn is not None:
            gw.conn.close()
        gwstate.clear_state(opts.store_path)

    agents = (
        []
        if opts.encoders is None
        else agentapi.AgentApi(
            opts.store_path,
            me.node_id,
            opts.busy_timeout_ms,
            opts.limits,
            opts.encoders,
            opts.max_body,
        ).routes()
    )
    app = Starlette(
        routes=[
            Route("/ansible/auth/exchange", gw.exchange, methods=["POST"]),
            Route(seeds.NODE_PATH, partial(seeds.node_route, gw), methods=["GET"]),
            Route(seeds.REDEEM_PATH, partial(seeds.redeem_route, gw), methods=["POST"]),
            WebSocketRoute(roomsync.ROOM_PATH, gw.room_socket),
            Route(OUTBOX_PATH, gw.outbox, methods=["GET"]),
            Route(BLOB_PATH + "{sha256}", gw.blob, methods=["GET"]),
            *agents,
            *([] if opts.metrics is None else [Route("/metrics", gw.metrics, methods=["GET"])]),
        ],
        exception_handlers=httpbody.exception_handlers(),
        lifespan=lifespan,
    )
    if sock is None:
        anyio.run(_without_listening, lifespan)
        return
    config = uvicorn.Config(
        app,
        http=httpbody.h11_protocol(),
        log_level="warning",
        log_config=None,
        lifespan="on",
        timeout_graceful_shutdown=5,
        ssl_certfile=opts.tls_cert,
        ssl_keyfile=opts.tls_key,
    )
    _server_class()(config, gw).run(sockets=[sock])


def _server_class() -> Any:
    from acomm_cli.federation import quietserver

    class Server(quietserver.server_class()):  # type: ignore[misc]
        """uvicorn's server on the once-a-second main loop (an idle gateway wakes rarely),
        telling the gateway at SIGINT/SIGTERM: the long polls its peers hold open answer at
        once, so that the shutdown does not wait for them."""

        def __init__(self, config: Any, gw: Gateway) -> None:
            super().__init__(config)
            self.gw = gw

        def handle_exit(self, sig: int, frame: Any) -> None:
            self.gw.stopping = True
            super().handle_exit(sig, frame)

    return Server


async def _without_listening(lifespan: Any) -> None:
    """`--listen none`: the room mirror, the join and the push loop, no socket; SIGINT or
    SIGTERM ends it as uvicorn's would (the lifespan's cleanup runs)."""
    import signal

    import anyio

    async with lifespan(None):
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                return
