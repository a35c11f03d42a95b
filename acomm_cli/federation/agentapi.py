"""The gateway's agent endpoints: an external agent, which is not a transport
peer, sends and receives as ITS agent only, with a scoped session token (tokens.py) in
`Authorization: Bearer`. Mounted by gateway.py under /agent/v1:

- `POST /agent/v1/send` {channel | to, body, type?, priority?, topic?, correlation_id?,
  dedupe_key?, metadata?, delay?, event?, format?, subject?, attachments? [{name,
  content_base64}]}: `acomm send` / `send --to` (scope `send`);
- `POST /agent/v1/respond` {correlation_id, body, priority?}: `acomm respond` (scope `send`);
- `POST /agent/v1/receive` {peek?, limit?, wait_seconds? (<= 30), channel?, type?, from?,
  topic?}: `acomm receive` (scope `receive`);
- `POST /agent/v1/ack` {message_id, status?, note?}: `acomm ack` (scope `receive`).

The same engine functions as the commands, so the same validation and routing (a `to` owned
by another node goes to this node's outbox). The token's agent is the identity: a body naming
another (`from`, `sender`, `agent`, `as`) is 403 forbidden, and so is a missing scope or an
agent another node owns now; an unknown, expired or revoked token is 401 invalid_token (the
token is checked before the body is looked at). Every refusal is {"error": {"code",
"message", ...}}; a CommError keeps its code, its HTTP status follows its exit status.

A body is read only after the token is accepted, and at most `gateway.max_body` bytes of it
(a send or respond: at least the largest channel's max_message_size, the base64 text of
`limits.max_message_attachment_bytes` of files, and 64 KiB for the rest):
413 validation_failed as soon as its Content-Length or the bytes received pass that. JSON is
parsed within bounds (httpbody.py): too deep, an integer outside SQLite's 64-bit range or a
lone surrogate is 400 validation_failed.

Store work runs in a worker thread with its own connection and the gateway's short busy
timeout: a locked store is 503 store_unavailable with `Retry-After`, never a crash.

Receive hands out messages at least once, as `acomm receive` does: the read marks commit only
after the response has been written to the connection; a client known to be gone by then
rolls them back (the messages stay unread), and one that drops after the write may get them
again only by a redelivery (tracked channels) -- so a client that must not lose one reads
with `peek`, handles, then acks."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acomm_cli import clock, model
from acomm_cli.errors import CommError, Forbidden, ValidationFailed
from acomm_cli.federation import httpbody, tokens
from acomm_cli.lite.records import asdict  # the engine's results are records
from acomm_cli.model import Message, MessageFilter, QueryResult, SendRequest, SendResult

PREFIX = "/agent/v1"
SEND_OVERHEAD = 64 * 1024  # a send's fields beside its content
MAX_WAIT_S = 30.0
MAX_LIMIT = 1000
POLL_S = 0.2
_IDENTITY_KEYS = ("from", "sender", "agent", "as")
_SEND_KEYS = {
    "channel",
    "to",
    "body",
    "content",
    "type",
    "priority",
    "topic",
    "correlation_id",
    "dedupe_key",
    "metadata",
    "delay",
    "event",
    "trace_id",
    "format",
    "subject",
    "attachments",
    *_IDENTITY_KEYS,
}
_FILE_KEYS = {"name", "content_base64"}
_RECEIVE_KEYS = {"peek", "limit", "wait_seconds", "channel", "type", "from", "topic", "agent", "as"}

Reply = tuple[int, dict[str, Any]]
Work = Callable[[sqlite3.Connection, str, dict[str, Any], int], Any]


@dataclass(frozen=True)
class Encoders:
    """The JSON documents of the command line's `--json` output, passed in by the
    command: rendering is not this layer's business (as dispatch's `encode`)."""

    message: Callable[[Message], dict[str, Any]]
    send: Callable[[SendResult], dict[str, Any]]


class _Dropped(Exception):
    """The client went away before its messages were written: roll their read marks back."""


def refusal(status: int, code: str, message: str, **extra: Any) -> Reply:
    return status, {"error": {"code": code, "message": message, **extra}}


def http_status(exc: CommError) -> int:
    if exc.code in ("forbidden", "not_participant"):
        return 403
    if exc.code == "attachment_too_large":  # the request's own size, not the store's
        return 413
    return {2: 400, 3: 400, 4: 404, 5: 409, 6: 507, 7: 503}.get(exc.exit_status, 500)


def json_bytes(doc: Any) -> bytes:
    """UTF-8 JSON; a lone surrogate (bytes that were not UTF-8 on the way in) escaped."""
    try:
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(doc, separators=(",", ":")).encode("ascii")


def _response(status: int, doc: Any) -> Any:
    from starlette.responses import Response

    headers = {"Retry-After": "1"} if status == 503 else None
    return Response(
        json_bytes(doc), status_code=status, headers=headers, media_type="application/json"
    )


def _bearer(request: Any) -> str | None:
    auth = request.headers.get("authorization") or ""
    return auth[7:].strip() if auth[:7].lower() == "bearer " else None


def _object(raw: bytes) -> dict[str, Any]:
    try:
        doc = httpbody.parse(raw) if raw.strip() else {}
    except httpbody._BadJson as exc:
        raise ValidationFailed(f"body: {exc}", field="body") from None
    if not isinstance(doc, dict):
        raise ValidationFailed("body: the request must be a JSON object", field="body")
    return doc


def _check_keys(doc: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(doc) - allowed)
    if unknown:
        raise ValidationFailed(f"{unknown[0]}: unknown field", field=unknown[0])


def _str(doc: dict[str, Any], key: str, default: str | None = None) -> str | None:
    value = doc.get(key, default)
    if value is not None and not isinstance(value, str):
        raise ValidationFailed(f"{key}: must be a string", field=key)
    return value


class AgentApi:
    """The endpoints over one store (the gateway's), each request in a worker thread."""

    def __init__(
        self,
        store_path: Path,
        node_id: str,
        busy_timeout_ms: int,
        limits: model.Limits | None,
        encoders: Encoders,
        max_body: int = httpbody.DEFAULT_MAX_BODY,
    ) -> None:
        self.store_path, self.node_id, self.max_body = store_path, node_id, max_body
        self.busy_timeout_ms, self.limits, self.encoders = busy_timeout_ms, limits, encoders

    def routes(self) -> list[Any]:
        from starlette.routing import Route

        return [
            Route(f"{PREFIX}/send", self.send, methods=["POST"]),
            Route(f"{PREFIX}/respond", self.respond, methods=["POST"]),
            Route(f"{PREFIX}/receive", self.receive, methods=["POST"]),
            Route(f"{PREFIX}/ack", self.ack, methods=["POST"]),
        ]

    # ------------------------------------------------------------ plumbing

    def _connect(self) -> sqlite3.Connection:
        from acomm_cli.engine import opening

        return opening.connect(self.store_path, create=False, busy_timeout_ms=self.busy_timeout_ms)

    def _session(
        self,
        conn: sqlite3.Connection,
        session: tokens.Session,
        scope: str,
        doc: dict[str, Any],
        identity_keys: tuple[str, ...],
    ) -> str:
        """The token's agent, once the request keeps within what the token grants."""
        if scope not in session.scopes:
            raise Forbidden(
                f"scope: this token does not allow {scope!r}", field="scope", value=scope
            )
        for key in identity_keys:
            named = doc.get(key)
            if named is not None and named != session.agent:
                raise Forbidden(
                    f"{key}: this token acts as {session.agent!r} only", field=key, value=named
                )
        other = tokens.owner_elsewhere(conn, self.node_id, session.agent)
        if other is not None:
            raise Forbidden(
                f"agent: {session.agent!r} is owned by node {other!r} now",
                field="agent",
                value=session.agent,
            )
        return session.agent

    def _call(
        self,
        token: str | None,
        scope: str,
        raw: bytes,
        work: Work,
        identity_keys: tuple[str, ...] = _IDENTITY_KEYS,
    ) -> Reply:
        """Authenticate (401 before the body is looked at), parse, check what the token
        grants, run `work` on a fresh connection: (status, document)."""
        try:
            conn = self._connect()
        except (sqlite3.Error, CommError) as exc:
            return _unavailable(str(exc))
        try:
            now = clock.now_ms()
            session = tokens.authenticate(conn, token, now)
            if session is None:
                return refusal(
                    401,
                    "invalid_token",
                    "the session token is not valid (unknown, expired or revoked)",
                )
            body = _object(raw)
            agent = self._session(conn, session, scope, body, identity_keys)
            result = work(conn, agent, body, now)
            if getattr(conn, "outbox_appended", False):  # a NATS node publishes it now
                _publish_now(conn)
        except CommError as exc:
            if http_status(exc) == 503:
                return _unavailable(exc.message)
            return http_status(exc), {"error": exc.to_dict()}
        except sqlite3.Error as exc:
            return _unavailable(str(exc))
        except OverflowError:  # a number past what the store or the clock holds
            return refusal(400, "validation_failed", "body: a number is out of range", field="body")
        finally:
            conn.close()
        return result if isinstance(result, tuple) else (200, result)

    def _admit(self, token: str | None, sends: bool) -> Reply | int:
        """Before the body is read: a refusal (401 for a bad token, 503 for a busy store),
        or how many bytes of body this request may have."""
        try:
            conn = self._connect()
        except (sqlite3.Error, CommError) as exc:
            return _unavailable(str(exc))
        try:
            if tokens.authenticate(conn, token, clock.now_ms()) is None:
                return refusal(
                    401,
                    "invalid_token",
                    "the session token is not valid (unknown, expired or revoked)",
                )
            if not sends:
                return self.max_body
            from acomm_cli.engine import channels

            largest = max(
                (ch.config.max_message_size for ch in channels.list_channels(conn)), default=0
            )
            files = (self.limits or model.Limits()).max_message_attachment_bytes
            return max(self.max_body, largest + SEND_OVERHEAD + (files + 2) // 3 * 4)
        except (sqlite3.Error, CommError) as exc:
            return _unavailable(str(exc))
        finally:
            conn.close()

    async def _read(self, request: Any, sends: bool) -> bytes | Reply:
        """The body, once the token is accepted and within its cap; or the refusal."""
        import anyio

        cap = await anyio.to_thread.run_sync(self._admit, _bearer(request), sends)
        if isinstance(cap, tuple):
            return cap
        try:
            return await httpbody.read_capped(request, cap)
        except httpbody._BodyTooLarge:
            return refusal(
                413,
                "validation_failed",
                f"body: the request is larger than {cap} bytes",
                field="body",
            )

    async def _handle(self, request: Any, scope: str, work: Work) -> Any:
        import anyio

        raw = await self._read(request, scope == "send")
        if isinstance(raw, tuple):
            return _response(*raw)
        status, doc = await anyio.to_thread.run_sync(self._call, _bearer(request), scope, raw, work)
        return _response(status, doc)

    # ------------------------------------------------------------ send, respond, ack

    async def send(self, request: Any) -> Any:
        return await self._handle(request, "send", self._send)

    def _send(self, conn: sqlite3.Connection, agent: str, doc: dict[str, Any], now: int) -> Any:
        from acomm_cli.engine import sending

        _check_keys(doc, _SEND_KEYS)
        req, to = send_request(doc, agent, self.limits or model.Limits())
        if to is None:
            return self.encoders.send(sending.send(conn, req, now, self.limits))
        results = sending.send_direct(conn, req, to, now, self.limits)
        if len(results) == 1 and isinstance(results[0], CommError):
            raise results[0]
        docs = [
            {"error": r.to_dict()} if isinstance(r, CommError) else self.encoders.send(r)
            for r in results
        ]
        failed = any(isinstance(r, CommError) for r in results)
        return (207 if failed else 200), {"results": docs}

    async def respond(self, request: Any) -> Any:
        return await self._handle(request, "send", self._respond)

    def _respond(self, conn: sqlite3.Connection, agent: str, doc: dict[str, Any], now: int) -> Any:
        from acomm_cli.engine import queries

        _check_keys(doc, {"correlation_id", "body", "priority", *_IDENTITY_KEYS})
        corr = _str(doc, "correlation_id")
        if corr is None:
            raise ValidationFailed("correlation_id: required", field="correlation_id")
        body = _str(doc, "body")
        if body is None:
            raise ValidationFailed("body: required", field="body")
        priority = doc.get("priority", "normal")
        if isinstance(priority, bool) or not isinstance(priority, (str, int)):
            raise ValidationFailed("priority: a name or 0-4", field="priority")
        return self.encoders.send(queries.respond(conn, corr, body, agent, now, priority))

    async def ack(self, request: Any) -> Any:
        return await self._handle(request, "receive", self._ack)

    def _ack(self, conn: sqlite3.Connection, agent: str, doc: dict[str, Any], now: int) -> Any:
        from acomm_cli.engine import acking

        _check_keys(doc, {"message_id", "status", "note", *_IDENTITY_KEYS})
        message_id = doc.get("message_id")
        if (
            isinstance(message_id, bool)
            or not isinstance(message_id, int)
            or not 1 <= message_id <= httpbody.INT_MAX
        ):
            raise ValidationFailed(
                f"message_id: an integer from 1 to {httpbody.INT_MAX} is required",
                field="message_id",
            )
        status = _str(doc, "status", "completed")
        assert status is not None
        result = acking.ack(conn, message_id, agent, status, _str(doc, "note"), now)
        return asdict(result)

    # ------------------------------------------------------------ receive

    async def receive(self, request: Any) -> Any:
        """Checks and parses first (a refusal is an ordinary JSON response), then hands the
        connection to _Inbox, which writes the messages inside their read transaction."""
        import anyio

        raw = await self._read(request, False)
        if isinstance(raw, tuple):
            return _response(*raw)
        parsed: dict[str, Any] = {}

        def check(conn: sqlite3.Connection, agent: str, doc: dict[str, Any], now: int) -> Any:
            parsed.update(receive_params(doc), agent=agent)
            return {}

        status, doc = await anyio.to_thread.run_sync(
            self._call, _bearer(request), "receive", raw, check, ("agent", "as")
        )
        if status != 200:
            return _response(status, doc)
        return _Inbox(self, request, parsed)

    def read_once(
        self,
        agent: str,
        f: MessageFilter,
        peek: bool,
        final: bool,
        deliver: Callable[[bytes], None],
    ) -> bool:
        """One read of the inbox; True when a response went out (`deliver`, inside the
        transaction that marks the messages read, or after it for a peek). Nothing is
        delivered for an empty inbox until the `final` read."""
        from acomm_cli.engine import timers

        sent = False

        def emit(result: QueryResult) -> None:
            nonlocal sent
            if result.messages or final:
                deliver(self._inbox_body(result))
                sent = True

        conn = self._connect()
        try:
            timers.receive_due(conn, agent, f, clock.now_ms(), peek=peek, emit=emit)
        finally:
            conn.close()
        return sent

    def _inbox_body(self, result: QueryResult) -> bytes:
        doc = {
            "messages": [self.encoders.message(m) for m in result.messages],
            "total_count": result.total_count,
            "has_more": result.has_more,
        }
        return json_bytes(doc)


def _publish_now(conn: sqlite3.Connection) -> None:
    """The request's work is committed: a NATS server that is down or refuses us changes
    nothing in the answer; the gateway's publisher catches up from the outbox."""
    from acomm_cli.federation import nats_transport

    try:
        nats_transport.publish_after_commit(conn)
    except (CommError, sqlite3.Error):
        pass


class _Inbox:
    """What the receive endpoint returns to Starlette, which awaits it with the connection's
    send: it polls the inbox until something is there or the wait is over."""

    def __init__(self, api: AgentApi, request: Any, params: dict[str, Any]) -> None:
        self.api, self.request, self.params = api, request, params

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        import anyio
        from anyio import from_thread

        p = self.params
        deadline = time.monotonic() + p["wait_seconds"]

        async def write(status: int, body: bytes, retry: bool = False) -> None:
            if await self.request.is_disconnected():
                raise _Dropped
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ]
            if retry:
                headers.append((b"retry-after", b"1"))
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        def deliver(body: bytes) -> None:  # in the worker thread, inside the transaction
            from_thread.run(write, 200, body)

        while True:
            final = time.monotonic() >= deadline
            try:
                if await anyio.to_thread.run_sync(
                    self.api.read_once, p["agent"], p["filter"], p["peek"], final, deliver
                ):
                    return
            except _Dropped:
                return  # rolled back: the messages stay unread
            except (CommError, sqlite3.Error) as exc:
                status, doc = (
                    _unavailable()
                    if isinstance(exc, sqlite3.Error) or http_status(exc) == 503
                    else (http_status(exc), {"error": exc.to_dict()})
                )
                try:
                    await write(status, json_bytes(doc), retry=status == 503)
                except _Dropped:
                    pass
                return
            if await self.request.is_disconnected():
                return
            await anyio.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))


def send_request(
    doc: dict[str, Any], agent: str, limits: model.Limits | None = None
) -> tuple[SendRequest, list[str] | None]:
    """A send's JSON -> (request as `agent`, direct recipients or None); the engine checks
    the rest as it does for `acomm send`. Files are decoded and checked against `limits`
    here, before the store is touched."""
    if ("channel" in doc) == ("to" in doc):
        raise ValidationFailed("channel: give exactly one of 'channel' and 'to'", field="channel")
    if "body" in doc and "content" in doc:
        raise ValidationFailed("body: give 'body' or 'content', not both", field="body")
    for key in (
        "channel",
        "to",
        "body",
        "content",
        "topic",
        "correlation_id",
        "dedupe_key",
        "type",
        "trace_id",
        "format",
        "subject",
    ):
        _str(doc, key)
    for key, kinds in (
        ("priority", (str, int)),
        ("delay", (str, int)),
        ("metadata", (dict,)),
        ("event", (dict,)),
    ):
        value = doc.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
            raise ValidationFailed(f"{key}: has the wrong type ({type(value).__name__})", field=key)
    body = doc.get("body", doc.get("content"))
    if body is None:
        raise ValidationFailed("body: required", field="body")
    delay = doc.get("delay")
    req = SendRequest(
        sender=agent,
        content=body,
        channel=doc.get("channel"),
        type=doc.get("type", "text"),
        priority=doc.get("priority", "normal"),
        topic=doc.get("topic"),
        correlation_id=doc.get("correlation_id"),
        dedupe_key=doc.get("dedupe_key"),
        metadata=doc.get("metadata"),
        delay_ms=clock.parse_duration(delay, "delay") if delay is not None else None,
        event=doc.get("event"),
        trace_id=doc.get("trace_id"),
        rich=_rich(doc, limits or model.Limits()),
    )
    to = doc.get("to")
    return req, None if to is None else [a.strip() for a in to.split(",")]


def _rich(doc: dict[str, Any], limits: model.Limits) -> model.RichParts | None:
    """A send's format, subject and files (`attachments`: [{name, content_base64}]), as
    `send --format --subject --attach` gives them; None when none is given."""
    files = doc.get("attachments")
    if "format" not in doc and "subject" not in doc and not files:
        return None
    pairs: list[tuple[str, str]] = []
    if files is not None:
        if not isinstance(files, list):
            raise ValidationFailed(
                "attachments: a list of {name, content_base64} objects", field="attachments"
            )
        for i, item in enumerate(files):
            if (
                not isinstance(item, dict)
                or set(item) != _FILE_KEYS
                or not all(isinstance(item[k], str) for k in _FILE_KEYS)
            ):
                raise ValidationFailed(
                    f"attachments: item {i} must be an object of two strings, name and "
                    "content_base64",
                    field="attachments",
                    index=i,
                )
            pairs.append((item["name"], item["content_base64"]))
    from acomm_cli.engine import attachments

    return model.RichParts(
        format=doc.get("format"),
        subject=doc.get("subject"),
        attachments=attachments.from_base64(pairs, limits),
    )


def receive_params(doc: dict[str, Any]) -> dict[str, Any]:
    """{filter, peek, wait_seconds} from a receive's JSON, each bound checked."""
    _check_keys(doc, _RECEIVE_KEYS)
    peek = doc.get("peek", False)
    if not isinstance(peek, bool):
        raise ValidationFailed("peek: true or false", field="peek")
    limit = doc.get("limit", 100)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ValidationFailed(
            f"limit: an integer from 1 to {MAX_LIMIT}", field="limit", value=limit
        )
    wait = doc.get("wait_seconds", 0)
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not 0 <= wait <= MAX_WAIT_S:
        raise ValidationFailed(
            f"wait_seconds: from 0 to {MAX_WAIT_S:g}", field="wait_seconds", value=wait
        )
    types = doc.get("type")
    if isinstance(types, str):
        types = [types]
    if types is not None and (
        not isinstance(types, list) or not all(isinstance(t, str) for t in types)
    ):
        raise ValidationFailed("type: a message type or a list of them", field="type")
    f = MessageFilter(
        channel=_str(doc, "channel"),
        types=tuple(model.message_type(t) for t in types or ()),
        sender=_str(doc, "from"),
        topic=_str(doc, "topic"),
        limit=limit,
    )
    from acomm_cli.engine import inbox

    inbox.check_filter(f)
    return {"filter": f, "peek": peek, "wait_seconds": float(wait)}


def _unavailable(detail: str | None = None) -> Reply:
    message = "the node's store is busy; retry"
    return refusal(503, "store_unavailable", f"{message} ({detail})" if detail else message)
