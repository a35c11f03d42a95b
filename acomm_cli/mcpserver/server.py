"""The MCP server over a Toolbox, on the official SDK (`mcp` >= 2.3, the `mcp` extra).

Each tool is a thin async wrapper that runs the Toolbox method in a worker thread and
returns the command's JSON document as the tool's text and as its structured content, which
its declared output schema (schemas.py) describes. A CommError becomes a tool error whose
text is `{"error": {code, message, ...}}`, the document `--json` prints on stderr. Arguments
are checked against the tool's own input schema before the SDK sees them: an argument naming
an identity (`as`, `sender`...) is `forbidden`, an unknown one or one of the wrong type is
`validation_failed`, named by `field` (the SDK alone would ignore unknown arguments and
answer type errors in pydantic's words, without a code). An integer outside SQLite's 64-bit
range or a number that is not finite is `validation_failed` too, before the engine sees it;
a number that overflows later (a time past what the clock holds) is the same error, never
the SDK's generic one.

Notifications: the agent's inbox is watched (watch.py) and a change is announced as
`notifications/resources/updated` for `acomm://inbox`, to clients that subscribed with
`resources/subscribe` (protocol versions up to 2025-11-25: Claude Code today) and on the
SDK's `subscriptions/listen` bus (2026-07-28)."""

from __future__ import annotations

import hmac
import json
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import server as sdk_server
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.subscriptions import ResourceUpdated
from mcp_types import (
    CallToolResult,
    EmptyResult,
    SubscribeRequestParams,
    TextContent,
    ToolAnnotations,
    UnsubscribeRequestParams,
)

from acomm_cli import __version__
from acomm_cli.errors import CommError, Forbidden, StoreUnavailable, ValidationFailed
from acomm_cli.mcpserver.tools import Toolbox
from acomm_cli.mcpserver.watch import POLL_S, InboxWatch

INBOX = "acomm://inbox"
# arguments a caller might use to act as someone else: refused by name, never ignored
IDENTITY_KEYS = ("as", "as_", "sender", "from", "agent", "identity", "acting_as", "user")
INT_MAX = 2**63 - 1  # SQLite's INTEGER
INT_MIN = -(2**63)

log = logging.getLogger("acomm.mcp")


def _json(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False)


def ok(doc: Any, *, failed: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=_json(doc))],
        structured_content=doc if isinstance(doc, dict) else None,
        is_error=failed,
    )


def refused(exc: CommError) -> CallToolResult:
    """A tool error carrying acomm's error document, the one `--json` prints on stderr."""
    return ok({"error": exc.to_dict()}, failed=True)


async def _run(work: Callable[[], Any]) -> CallToolResult:
    """The work in a worker thread (the store blocks): its document, or its error."""
    try:
        result = await anyio.to_thread.run_sync(work)
    except CommError as exc:
        return refused(exc)
    except sqlite3.Error as exc:  # a lock held past the busy timeout, a damaged page
        return refused(StoreUnavailable(f"store: {exc}"))
    except OverflowError:  # within 64 bits, yet past what a time or a sum can hold
        return refused(ValidationFailed("arguments: a number is out of range", field="arguments"))
    if isinstance(result, tuple):  # send --to: (document, whether a recipient failed)
        return ok(result[0], failed=result[1])
    return ok(result)


# ---------------------------------------------------------------- checking arguments


def check_arguments(agent: str, schema: dict[str, Any], args: Any) -> CommError | None:
    """Why these arguments are refused, or None: identity first, then unknown names, then
    the schema (types, required, bounds), each error naming its field."""
    if not isinstance(args, dict):
        return ValidationFailed("arguments: must be an object", field="arguments")
    known = schema.get("properties", {})
    for key in args:
        if key in IDENTITY_KEYS and key not in known:
            return Forbidden(
                f"{key}: this server acts as {agent!r} only (fixed by `acomm mcp "
                f"--as`); run another server for another agent",
                field=key,
                value=args[key] if isinstance(args[key], str) else None,
            )
        if key not in known:
            return ValidationFailed(
                f"{key}: unknown argument (expected one of {', '.join(known) or 'none'})", field=key
            )
        if not _numbers_in_range(args[key]):
            return ValidationFailed(
                f"{key}: a number is outside the 64-bit integer range or not finite",
                field=key,
            )
    from jsonschema import Draft202012Validator

    for err in sorted(
        Draft202012Validator(schema).iter_errors(args), key=lambda e: (list(e.path), e.message)
    ):
        if err.validator == "required":
            missing = [n for n in err.validator_value if n not in args]
            field = missing[0] if missing else "arguments"
            return ValidationFailed(f"{field}: required", field=field)
        field = str(err.path[0]) if err.path else "arguments"
        value = err.instance if isinstance(err.instance, str | int | float | bool) else None
        return ValidationFailed(f"{field}: {_short(err)}", field=field, value=value)
    return None


def _numbers_in_range(value: Any) -> bool:
    """Every integer within SQLite's range and every float finite, lists and objects
    walked without recursion."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, bool):
            continue
        elif isinstance(v, int) and not INT_MIN <= v <= INT_MAX:
            return False
        elif isinstance(v, float) and v - v != 0.0:  # inf, -inf, nan
            return False
    return True


def _short(err: Any) -> str:
    """What is wrong, in JSON's words (no Python reprs): for an optional argument (`x |
    None`, an anyOf) the failure inside the branch that is not null, with its path inside
    the argument (`event_type: "poke" is not one of ...`)."""
    if err.validator == "anyOf":
        inner = [
            e
            for e in err.context or ()
            if not (e.validator == "type" and e.validator_value == "null")
        ]
        if inner and (inner[0].validator != "type" or inner[0].relative_path):
            first = inner[0]
            where = "".join(
                f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.relative_path
            )
            return (where.lstrip(".") + ": " if where else "") + _short(first)
        kinds = [s.get("type") for s in err.validator_value if s.get("type") != "null"]
        return f"{_shown(err.instance)} is not of type {' or '.join(map(str, kinds))}"
    if err.validator == "enum":
        allowed = ", ".join(_shown(v) for v in err.validator_value)
        return f"{_shown(err.instance)} is not one of {allowed}"
    if err.validator == "type":
        return f"{_shown(err.instance)} is not of type {err.validator_value}"
    if err.validator == "required" and isinstance(err.instance, dict):
        missing = [n for n in err.validator_value if n not in err.instance]
        return f"{', '.join(missing)} required"
    return str(err.message)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


class ArgumentCheck:
    """Server middleware: every tools/call's arguments against the tool's input schema."""

    def __init__(self, server: MCPServer, agent: str) -> None:
        self.server, self.agent = server, agent
        self.schemas: dict[str, dict[str, Any]] | None = None

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method != "tools/call" or not isinstance(ctx.params, Mapping):
            return await call_next(ctx)
        if self.schemas is None:
            self.schemas = {t.name: t.input_schema for t in await self.server.list_tools()}
        name = ctx.params.get("name")
        schema = self.schemas.get(name) if isinstance(name, str) else None
        if schema is None:  # an unknown tool: the SDK's own error
            return await call_next(ctx)
        problem = check_arguments(self.agent, schema, ctx.params.get("arguments") or {})
        if problem is not None:
            return refused(problem)
        return await call_next(ctx)


# ---------------------------------------------------------------- notifications


class Notifier:
    """Sessions that subscribed to the inbox (the handshake-era way) and the watch loop."""

    def __init__(self, box: Toolbox) -> None:
        self.box = box
        self.sessions: list[Any] = []
        self.server: MCPServer | None = None

    async def subscribe(self, ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
        if str(params.uri) == INBOX and ctx.session not in self.sessions:
            self.sessions.append(ctx.session)
        return EmptyResult()

    async def unsubscribe(self, ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        if str(params.uri) == INBOX and ctx.session in self.sessions:
            self.sessions.remove(ctx.session)
        return EmptyResult()

    async def announce(self) -> None:
        for session in list(self.sessions):
            try:
                with anyio.fail_after(5):  # a client that stopped reading: forget it
                    await session.send_resource_updated(INBOX)
            except Exception:  # gone away (or stuck): keep notifying the others
                self.sessions.remove(session)
        if self.server is not None:  # the 2026-07-28 listen streams (SDK's own bus)
            await self.server._subscriptions.publish(ResourceUpdated(uri=INBOX))

    async def watch(self) -> None:
        """The watch in a thread of its own, which owns its connection (SQLite's
        `data_version` is per connection) and may wait on a busy store without holding up
        the event loop; it ends with the server (`box.stop`)."""
        await anyio.to_thread.run_sync(self._watch, abandon_on_cancel=True)

    def _watch(self) -> None:
        from acomm_cli import clock
        from acomm_cli.engine import engagement, opening

        o = self.box.options
        conn = opening.connect(
            o.path, create=False, busy_timeout_ms=o.busy_timeout_ms, flush=o.flush
        )
        try:
            watch = InboxWatch(conn, self.box.agent, self.box.options.limits)
            while not self.box.stop.wait(POLL_S):
                try:
                    changed = watch.changed()
                except (CommError, sqlite3.Error) as exc:  # busy, or briefly unreadable
                    log.warning("acomm mcp: watching the inbox: %s", exc)
                    continue
                if changed:
                    anyio.from_thread.run(self.announce)
                    # the unread messages the client was told of: kept as their first notice
                    engagement.told(conn, self.box.agent, watch.signature[1], "mcp", clock.now_ms())
        except RuntimeError:  # the event loop ended while announcing (RunFinishedError)
            pass
        finally:
            conn.close()


# ---------------------------------------------------------------- the server


def _plain_logging(level: str) -> None:
    logging.basicConfig(level=level, format="%(message)s")


def build(box: Toolbox) -> MCPServer:
    """The server: tools, resources and the inbox watch, for `box.agent` only."""
    notifier = Notifier(box)
    # MCPServer's constructor sets up logging with rich's handler, importing rich for it
    # (about 20 ms of start-up); the standard library's handler writes the same warnings to
    # stderr
    if hasattr(sdk_server, "configure_logging"):
        sdk_server.configure_logging = _plain_logging

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(notifier.watch)
            try:
                yield {}
            finally:
                box.stop.set()  # waits inside tool calls end now
                tg.cancel_scope.cancel()

    server: MCPServer = MCPServer(
        "acomm",
        version=__version__,
        log_level="WARNING",
        lifespan=lifespan,
        instructions=f"acomm message store; you act as agent {box.agent!r}. Read your inbox "
        "with receive (or the acomm://inbox resource), answer queries with respond, "
        "acknowledge with ack.",
    )
    notifier.server = server
    low = server._lowlevel_server
    low.add_request_handler("resources/subscribe", SubscribeRequestParams, notifier.subscribe)
    low.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, notifier.unsubscribe)
    low.middleware.append(ArgumentCheck(server, box.agent))
    _tools(server, box)
    _resources(server, box)
    return server


def _tools(server: MCPServer, box: Toolbox) -> None:
    """Each tool with its output schema (schemas.py): the SDK publishes a schema set on the
    tool's metadata as its outputSchema; the tools build their own results, so the SDK
    validates nothing itself, and a client validates what it receives."""
    from acomm_cli.mcpserver import schemas, toolset

    for fn, read_only in toolset.tools(box, _run):
        server.add_tool(fn, annotations=ToolAnnotations(read_only_hint=read_only))
        tool = server._tool_manager.get_tool(fn.__name__)
        assert tool is not None
        tool.fn_metadata.output_schema = schemas.output_schema(fn.__name__)
        tool.__dict__.pop("output_schema", None)  # a cached read before this


def _resources(server: MCPServer, box: Toolbox) -> None:
    async def read(work: Callable[[], Any]) -> str:
        try:
            return _json(await anyio.to_thread.run_sync(work))
        except CommError as exc:
            raise ResourceError(_json({"error": exc.to_dict()})) from None

    @server.resource(
        INBOX,
        name="inbox",
        mime_type="application/json",
        description=f"{box.agent}'s unread messages (as receive with peek: nothing is marked read)",
    )
    async def inbox() -> str:
        return await read(box.inbox)

    @server.resource(
        "acomm://channel/{name}",
        name="channel",
        mime_type="application/json",
        description="The newest 100 messages on a channel",
    )
    async def channel(name: str) -> str:
        return await read(partial(box.channel_history, name))

    @server.resource(
        "acomm://thread/{correlation_id}",
        name="thread",
        mime_type="application/json",
        description="A query and everything correlated with it, in order",
    )
    async def thread(correlation_id: str) -> str:
        return await read(partial(box.thread, correlation_id=correlation_id))


# ---------------------------------------------------------------- transports


def serve_stdio(box: Toolbox) -> None:
    build(box).run()


def serve_http(
    box: Toolbox,
    host: str,
    port: int,
    token: str | None,
    ready: Callable[[int], None] | None = None,
) -> None:
    """Streamable HTTP at http://HOST:PORT/mcp; with a token, every request must carry
    `Authorization: Bearer TOKEN` (401 otherwise). The command refuses a host other than
    loopback without one."""
    import uvicorn

    server = build(box)
    app = server.streamable_http_app(host=host)
    guarded = app if token is None else _bearer(app, token)
    config = uvicorn.Config(guarded, host=host, port=port, log_level="warning", lifespan="on")
    uv = uvicorn.Server(config)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(uv.serve)
            while not uv.started:
                await anyio.sleep(0.05)
            if ready is not None:
                sockets = [s for srv in uv.servers for s in srv.sockets]
                ready(sockets[0].getsockname()[1] if sockets else port)

    anyio.run(main)


def _bearer(app: Any, token: str) -> Any:
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                body = _json(
                    {
                        "error": {
                            "code": "invalid_token",
                            "message": "this server "
                            "needs Authorization: Bearer TOKEN (acomm mcp "
                            "--token)",
                        }
                    }
                ).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded
