"""The console's Starlette application: its pages, the event stream, the confirmed actions,
the login and the headers every response carries. Every page runs its engine calls on a
connection of its own, in a worker thread; the live updates share one poll (`live.py`)."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, ExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from acomm_cli import clock, model
from acomm_cli.engine import credentials, directory
from acomm_cli.engine.operator_actions import Action, Actions
from acomm_cli.errors import CommError, Forbidden, UsageError
from acomm_cli.web import access, charts, data
from acomm_cli.web.live import Live

HERE = Path(__file__).parent
Connect = Callable[[], AbstractContextManager[sqlite3.Connection]]

# Scripts and styles from this origin only, no inline script, no plugin, no frame: a message
# body that got past the escaping still could not run.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # same-origin: with no-referrer a browser sends `Origin: null` on the forms' posts
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]

PAGES = [
    ("/", "agents"),
    ("/channels", "channels"),
    ("/feed", "feed"),
    ("/deadletters", "dead letters"),
    ("/tasks", "tasks"),
    ("/federation", "federation"),
    ("/charts", "charts"),
]
CACHE_S = 1.0  # how long a page's read serves other browsers while the store is unchanged
CACHE_ENTRIES = 64
ACTIONS = ("send", "broadcast", "ack", "replay", "discard", "pause", "resume")


@dataclass
class Config:
    """What `commands/web_run.py` resolved: how to open the store and the console's settings."""

    connect: Connect
    title: str
    read_only: bool
    acting: str | None  # --as: who sends, acks, pauses on a console without login
    login: bool  # any address but loopback: a login, TLS and admins only for actions
    limits: model.Limits
    offline_after_ms: int
    stale_after_ms: int
    after_write: Callable[[sqlite3.Connection], str | None] = lambda conn: None
    poll_s: float = 0.3
    now: Callable[[], int] = clock.now_ms
    # GET /metrics: one scrape of the store in Prometheus' format, (body, Content-Type); the
    # command hands it in (the metrics module is a sibling layer); None: no such route
    metrics: Callable[[], tuple[bytes, str]] | None = None


@dataclass(frozen=True)
class Viewer:
    """Who is looking: the acting agent (None: nobody may send or ack), whether they may
    act at all, and what their CSRF token is bound to."""

    agent: str | None
    may_act: bool
    bound_to: str


class _Redirect(Exception):
    def __init__(self, to: str) -> None:
        self.to = to


def _status(exc: CommError) -> int:
    return {3: 400, 4: 404, 5: 403}.get(exc.exit_status, 409)


class SecurityHeaders:
    """The Content-Security-Policy and its companions on every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


def _markdown(text: str) -> Markup:
    """A markdown body as HTML with raw HTML disabled: a `<script>` in it stays text, and
    markdown-it refuses javascript: and data: links."""
    from markdown_it import MarkdownIt

    return Markup(MarkdownIt("commonmark", {"html": False}).render(text))


def _env() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = lambda ms: "" if ms is None else clock.iso(ms)
    env.filters["age"] = _age
    env.filters["markdown"] = _markdown
    return env


def _same_site_path(request: Request) -> str:
    """Where `cancel` goes back to: the page the form was on, as a path of this console
    (never another site's address, nor a `javascript:` one)."""
    ref = urlsplit(request.headers.get("referer", ""))
    if ref.scheme in ("http", "https") and ref.netloc == request.headers.get("host"):
        return ref.path + (f"?{ref.query}" if ref.query else "")
    return "/"


def _age(seconds: int | None) -> str:
    if seconds is None:
        return ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def build(cfg: Config) -> Starlette:
    """The application for one console."""
    env = _env()
    live = Live(data.version, cfg.poll_s)
    acc = access.Access(login=cfg.login, acting=cfg.acting)

    def viewer(request: Request) -> Viewer:
        if not cfg.login:
            host = urlsplit("//" + request.headers.get("host", "")).hostname or ""
            if not access.is_loopback(host):  # a DNS rebinding page reading the console
                raise Forbidden(f"host: {host!r} is not a loopback name", field="host", value=host)
            return Viewer(cfg.acting, not cfg.read_only, "loopback")
        sid = request.cookies.get(access.COOKIE)
        s = acc.session(sid, cfg.now())
        if s is None or sid is None:
            raise _Redirect("/login")
        return Viewer(s.agent, s.admin and not cfg.read_only, sid)

    def render(
        request: Request, name: str, status: int = 200, who: Viewer | None = None, **ctx: Any
    ) -> HTMLResponse:
        tmpl = env.get_template(name)
        ctx.update(
            pages=PAGES,
            path=request.url.path,
            title=cfg.title,
            read_only=cfg.read_only,
            login=cfg.login,
            who=who,
            csrf=acc.csrf(who.bound_to) if who else "",
        )
        if request.headers.get("x-fragment") == "1" and "live" in tmpl.blocks:
            body = "".join(tmpl.blocks["live"](tmpl.new_context(ctx)))
        else:
            body = tmpl.render(ctx)
        return HTMLResponse(body, status_code=status)

    def failure(request: Request, exc: Exception, who: Viewer | None = None) -> Response:
        if isinstance(exc, _Redirect):
            return RedirectResponse(exc.to, status_code=303)
        if isinstance(exc, CommError):
            return render(request, "error.html", _status(exc), who, error=str(exc), code=exc.code)
        raise exc

    # What a page read, kept per page and query while the store has not changed (the same
    # generation of the live poll) and for CACHE_S at most (ages move): every browser
    # refreshing on one change costs one read of the store, not one each.
    cache: dict[tuple[str, str], tuple[int, float, dict[str, Any]]] = {}
    locks: dict[tuple[str, str], threading.Lock] = {}
    guard = threading.Lock()

    def cached(
        request: Request, load: Callable[[sqlite3.Connection, Request], dict[str, Any]]
    ) -> dict[str, Any]:
        key = (request.url.path, request.url.query)
        with guard:
            if len(locks) > CACHE_ENTRIES:
                cache.clear()
                locks.clear()
            lock = locks.setdefault(key, threading.Lock())
        with lock:  # a second browser waits for the first one's read
            gen = live.generation
            hit = cache.get(key)
            if hit and hit[0] == gen and time.monotonic() - hit[1] < CACHE_S:
                return hit[2]
            with cfg.connect() as conn:
                ctx = load(conn, request)
            cache[key] = (gen, time.monotonic(), ctx)
            return ctx

    def page(
        name: str, load: Callable[[sqlite3.Connection, Request], dict[str, Any]]
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            who = None
            try:
                who = viewer(request)

                def read() -> dict[str, Any]:
                    return cached(request, load)

                ctx = await run_in_threadpool(read)
            except (CommError, _Redirect) as exc:
                return failure(request, exc, who)
            return render(request, name, 200, who, **ctx)

        return endpoint

    # ---------------------------------------------------------------- the pages

    def agents(conn: sqlite3.Connection, request: Request) -> dict[str, Any]:
        ov = data.overview(conn, cfg.now(), stale_after_ms=cfg.stale_after_ms)
        return {"overview": ov, "stale_after": clock.format_duration(cfg.stale_after_ms)}

    def channels(conn: sqlite3.Connection, request: Request) -> dict[str, Any]:
        return {"overview": data.overview(conn, cfg.now(), stale_after_ms=cfg.stale_after_ms)}

    def feed(conn: sqlite3.Connection, request: Request) -> dict[str, Any]:
        q = request.query_params
        f = data.FeedFilter(
            **{k: q.get(k, "").strip() for k in ("channel", "agent", "type", "topic", "status")}
        )
        return {"filter": f, "messages": data.feed(conn, f), "limit": data.FEED_LIMIT}

    def message(conn: sqlite3.Connection, request: Request) -> dict[str, Any]:
        return {"d": data.detail(conn, request.path_params["id"])}

    def dead(conn: sqlite3.Connection, request: Request) -> dict[str, Any]:
        rows, total = data.dead_letters(conn)
        return {"rows": rows, "total": total}

    def work(conn: sqlite3.Connection, request: Request) -> dict[str, Any]:
        found, total, incs = data.work(conn, cfg.now())
        return {"tasks": found, "total": total, "incidents": incs}

    def federation(conn: sqlite3.Connection, request: Request) -> dict[str, Any]:
        return {"node": data.node(conn, cfg.now(), cfg.offline_after_ms)}

    def chart_page(conn: sqlite3.Connection, request: Request) -> dict[str, Any]:
        drawn = charts.all_charts(data.charts(conn, cfg.now()))
        return {"charts": {k: Markup(v) for k, v in drawn.items()}}  # escaped inside

    async def attachment(request: Request) -> Response:
        """A message's file, as `attachment get` gives it: always a download."""
        try:
            viewer(request)
            mid, name = request.path_params["id"], request.path_params["name"]

            def read() -> bytes:
                from acomm_cli.engine import attachments, inbox

                with cfg.connect() as conn:
                    msg = inbox.show(conn, mid)
                    for a in msg.rich.attachments if msg.rich else ():
                        if a.name == name:
                            return attachments.data_of(conn, a)
                from acomm_cli.errors import NotFound

                raise NotFound(
                    f"attachment: message {mid} has no file {name!r}",
                    field="attachment",
                    value=name,
                )

            blob = await run_in_threadpool(read)
        except (CommError, _Redirect) as exc:
            return failure(request, exc)
        return Response(
            blob,
            media_type="application/octet-stream",
            headers={"content-disposition": "attachment"},
        )

    async def events(request: Request) -> Response:
        try:
            viewer(request)
        except _Redirect:  # no session: 204 tells EventSource to stop, not to follow
            return Response(status_code=204)
        except CommError as exc:
            return failure(request, exc)
        return StreamingResponse(
            live.stream(),
            media_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
        )

    # ---------------------------------------------------------------- actions

    def check_post(request: Request, who: Viewer, token: str | None) -> None:
        origin = request.headers.get("origin")
        if origin and urlsplit(origin).netloc != request.headers.get("host"):
            raise Forbidden(
                f"origin: {origin!r} is another site's page", field="origin", value=origin
            )
        if not acc.csrf_ok(who.bound_to, token):
            raise Forbidden(
                "csrf: the form's token is missing or stale: reload the page and try again",
                field="csrf",
            )
        if cfg.read_only:
            raise Forbidden(
                "read-only: actions are refused (the console was started with --read-only, "
                "or the store cannot be written)",
                field="action",
            )
        if not who.may_act:
            raise Forbidden(
                f"agent {who.agent!r}: actions need an agent with the admin role",
                field="admin",
                value=who.agent,
            )

    def build_action(acts: Actions, form: dict[str, str], who: Viewer) -> Action:
        kind = form.get("action", "")
        if kind not in ACTIONS:
            raise UsageError(
                f"action: {kind!r} is not one of {', '.join(ACTIONS)}", field="action", value=kind
            )
        if kind == "send":
            return acts.send(
                form.get("to", ""),
                form.get("body", ""),
                agent=who.agent,
                topic=form.get("topic", ""),
            )
        if kind == "broadcast":
            return acts.broadcast(form.get("channel", ""), form.get("body", ""), agent=who.agent)
        if kind in ("pause", "resume"):
            return acts.channel_state(form.get("channel", ""), kind, agent=who.agent)
        raw = form.get("message", "")
        if not raw.isdigit():
            raise UsageError(f"message: {raw!r} is not a message id", field="message", value=raw)
        if kind == "ack":
            return acts.ack(
                int(raw),
                agent=who.agent,
                status=form.get("status", "completed"),
                note=form.get("note", ""),
            )
        recipient = form.get("recipient") or None
        return (acts.replay if kind == "replay" else acts.discard)(int(raw), recipient)

    def action(run: bool) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            who = None
            try:
                who = viewer(request)
                form = {k: str(v) for k, v in (await request.form()).items()}
                check_post(request, who, form.pop("csrf", None))
                fields = {k: v for k, v in form.items() if k in FORM_FIELDS}
                viewing = who

                def act() -> tuple[str, str]:
                    with cfg.connect() as conn:
                        acts = Actions(
                            conn,
                            limits=cfg.limits,
                            read_only=cfg.read_only,
                            now=cfg.now,
                            after_write=lambda: cfg.after_write(conn),
                            surface="web",
                        )
                        built = build_action(acts, fields, viewing)
                        if not run:
                            return built.command, ""
                        done = built.run()
                        cache.clear()  # the next page shows the change, before the poll does
                        return built.command, done

                command, done = await run_in_threadpool(act)
            except (CommError, _Redirect) as exc:
                return failure(request, exc, who)
            name = "done.html" if run else "confirm.html"
            back = _same_site_path(request)
            return render(
                request, name, 200, who, command=command, done=done, fields=fields, back=back
            )

        return endpoint

    # ---------------------------------------------------------------- login

    async def login_form(request: Request, error: str = "", status: int = 200) -> Response:
        import secrets

        token = secrets.token_urlsafe(24)
        resp = render(request, "login.html", status, None, error=error, login_csrf=token)
        resp.set_cookie(
            access.LOGIN_COOKIE, token, httponly=True, secure=True, samesite="strict", path="/"
        )
        return resp

    async def login(request: Request) -> Response:
        if not cfg.login:
            return RedirectResponse("/", status_code=303)
        if request.method == "GET":
            return await login_form(request)
        form = await request.form()
        pair = request.cookies.get(access.LOGIN_COOKIE)
        if not pair or form.get("csrf") != pair:
            return await login_form(request, "csrf: the login form is stale: try again", 403)
        secret = str(form.get("token", "")).strip()

        def check() -> tuple[str, bool] | None:
            with cfg.connect() as conn:
                agent = credentials.holder(conn, secret, cfg.now())
                if agent is None:
                    return None
                return agent, directory.get(conn, agent).admin

        found = await run_in_threadpool(check)
        if found is None:
            return await login_form(
                request, "not proven: a wrong, revoked or expired secret is refused", 403
            )
        sid = acc.open_session(found[0], found[1], cfg.now())
        resp = RedirectResponse("/", status_code=303)
        resp.set_cookie(
            access.COOKIE,
            sid,
            max_age=access.SESSION_MS // 1000,
            httponly=True,
            secure=True,
            samesite="strict",
            path="/",
        )
        resp.delete_cookie(access.LOGIN_COOKIE, path="/")
        return resp

    async def logout(request: Request) -> Response:
        try:
            who = viewer(request)
            form = await request.form()
            if not acc.csrf_ok(who.bound_to, str(form.get("csrf", ""))):
                raise Forbidden("csrf: the form's token is missing or stale", field="csrf")
        except (CommError, _Redirect) as exc:
            return failure(request, exc)
        acc.close_session(request.cookies.get(access.COOKIE))
        resp = RedirectResponse("/login", status_code=303)
        resp.delete_cookie(access.COOKIE, path="/")
        return resp

    # ---------------------------------------------------------------- the application

    routes = [
        Route("/", page("agents.html", agents)),
        Route("/channels", page("channels.html", channels)),
        Route("/feed", page("feed.html", feed)),
        Route("/messages/{id:int}", page("message.html", message)),
        Route("/messages/{id:int}/files/{name:path}", attachment),
        Route("/deadletters", page("deadletters.html", dead)),
        Route("/tasks", page("tasks.html", work)),
        Route("/federation", page("federation.html", federation)),
        Route("/charts", page("charts.html", chart_page)),
        Route("/events", events),
        Route("/confirm", action(run=False), methods=["POST"]),
        Route("/do", action(run=True), methods=["POST"]),
        Route("/login", login, methods=["GET", "POST"]),
        Route("/logout", logout, methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    # GET /metrics, behind the same access rules as the pages: a scrape runs on a thread (the
    # store's counts take a while on a big one; the loop keeps serving the pages)
    scrape = cfg.metrics
    if scrape is not None:

        async def metrics(request: Request) -> Response:
            import anyio

            bearer = request.headers.get("authorization", "")
            if cfg.login and bearer.lower().startswith("bearer "):
                # a scraper cannot log in: it presents an agent's secret on each request
                secret = bearer[7:].strip()

                def proven() -> str | None:
                    with cfg.connect() as conn:
                        return credentials.holder(conn, secret, cfg.now())

                if await run_in_threadpool(proven) is None:
                    return PlainTextResponse("token: not proven\n", status_code=401)
            else:
                try:
                    viewer(request)
                except (CommError, _Redirect) as exc:
                    return failure(request, exc, None)
            try:
                body, ctype = await anyio.to_thread.run_sync(scrape)
            except (sqlite3.Error, CommError) as exc:
                return PlainTextResponse(f"store unavailable: {exc}\n", status_code=503)
            return Response(body, media_type=ctype)

        routes.insert(0, Route("/metrics", metrics))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        import asyncio

        with ExitStack() as stack:
            conn = stack.enter_context(cfg.connect())
            task = asyncio.create_task(live.run(conn))
            try:
                yield
            finally:
                task.cancel()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.live = live
    app.state.access = acc
    app.add_middleware(SecurityHeaders)
    return app


FORM_FIELDS = ("action", "to", "body", "topic", "channel", "message", "status", "note", "recipient")
