"""`HttpTransport`: read a peer's outbox from its gateway, `GET /acomm/outbox?after=SEQ&
limit=N&wait=S`, signed with this node's Ed25519 key (identity.sign_request) in three
headers: X-Acomm-Node, X-Acomm-Timestamp (ms), X-Acomm-Signature; the gateway answers each
signature once (a replay is 401 replayed_request), and a random `nonce` in the query keeps
two reads of one page apart. The peer answers
{events, head}; anything else (a refusal, a timeout, a closed connection, a gateway killed in
the middle of a long poll) is `Unreachable`, and the cursor stays where it was.

Socket timeouts bound each read, not the exchange: a peer that sends one byte every 2 s
never trips them. So each peer gets one overall deadline per pass (`deadline_s`, plus the
long-poll wait it was asked for), counted on the monotonic clock from `begin_peer` and
enforced by a watchdog that shuts the socket mid-read. Past it the peer is `Unreachable` for
this pass. `fed pull` reads with the standard library's http.client on one kept-alive
connection per peer and pass (importing httpx and asyncio cost a pull more than reading
its pages), reading a page that leaves more behind it while the pull applies the one
before; the gateway's continuous pull (`fetch_page`) uses its own httpx client.

`for_urls` picks the transport by each peer's url: `http(s)://` here, `store:` StoreTransport.

An https:// peer is verified against the usual CAs plus the PEM bundle named by
`federation.ca_file` (`use_ca_file`, set by the commands that read the config) or
$ACOMM_FED_CA_FILE: `tls_verify()` is what every federation HTTP client here passes httpx."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from acomm_cli.federation import identity
from acomm_cli.federation.transport import Page, StoreTransport, Transport, Unreachable

T = TypeVar("T")

OUTBOX_PATH = "/acomm/outbox"
MAX_WAIT_S = 30.0
DEADLINE_S = 30.0  # `federation.peer_deadline`'s default
CA_ENV = "ACOMM_FED_CA_FILE"

_ca_file: str | None = None  # `federation.ca_file` of the command running (use_ca_file)
_contexts: dict[str, Any] = {}


def use_ca_file(path: str | None) -> None:
    """This process trusts the CAs in `path` (PEM) for https:// peers too; None: only the
    usual ones (and $ACOMM_FED_CA_FILE's)."""
    global _ca_file
    _ca_file = path


def tls_verify() -> Any:
    """httpx's `verify=`: True (the usual CAs), or an SSL context that also trusts the
    configured CA bundle. A bundle that cannot be read is exit 3, naming it."""
    path = _ca_file or os.environ.get(CA_ENV) or None
    if path is None:
        return True
    ctx = _contexts.get(path)
    if ctx is None:
        import ssl

        import certifi

        from acomm_cli.errors import ValidationFailed

        ctx = ssl.create_default_context(cafile=certifi.where())
        try:
            ctx.load_verify_locations(cafile=path)
        except (OSError, ssl.SSLError) as exc:
            raise ValidationFailed(
                f"federation.ca_file: {path}: not a readable PEM file of CA certificates ({exc})",
                field="federation.ca_file",
                value=path,
            ) from None
        _contexts[path] = ctx
    return ctx


def outbox_target(after_seq: int, limit: int, wait_s: float, nonce: str | None = None) -> str:
    """The path and query a read sends and signs, exactly. The nonce makes two reads of the
    same page in the same millisecond two requests (a gateway answers a signature once);
    an older gateway ignores it."""
    target = f"{OUTBOX_PATH}?after={int(after_seq)}&limit={int(limit)}&wait={wait_s:g}"
    return target if nonce is None else f"{target}&nonce={nonce}"


def signed_headers(me: identity.Node, target: str) -> dict[str, str]:
    ts = int(time.time() * 1000)
    return {
        "X-Acomm-Node": me.node_id,
        "X-Acomm-Timestamp": str(ts),
        "X-Acomm-Signature": identity.sign_request(me.private_key, me.node_id, target, ts),
    }


class HttpTransport:
    """Signed reads of peers' outboxes; `urls` maps node -> `http(s)://host:port`."""

    def __init__(
        self,
        urls: dict[str, str],
        me: identity.Node,
        wait_s: float = 0.0,
        connect_timeout_s: float = 5.0,
        deadline_s: float = DEADLINE_S,
    ) -> None:
        self.urls, self.me = urls, me
        self.wait_s = min(max(wait_s, 0.0), MAX_WAIT_S)
        self.connect_timeout_s = connect_timeout_s
        self.deadline_s = deadline_s
        self.until: dict[str, float] = {}  # node -> monotonic time its exchange must end by
        # one keep-alive connection per peer for the pages of its pass (end_peer closes it)
        self.conns: dict[str, Any] = {}
        self.ahead: dict[str, _Ahead] = {}  # node -> the next page, being read meanwhile

    def begin_peer(self, source_node: str) -> None:
        """This pass's exchange with the peer starts now: its deadline is counted from here."""
        self.until[source_node] = time.monotonic() + self.deadline_s + self.wait_s

    def end_peer(self, source_node: str) -> None:
        """The pass is done with the peer: a read ahead ends, its connection is closed."""
        ahead = self.ahead.pop(source_node, None)
        if ahead is not None:
            ahead.join()
        self._close(source_node)

    def _close(self, source_node: str) -> None:
        conn = self.conns.pop(source_node, None)
        if conn is not None:
            conn.close()

    def read(self, source_node: str, after_seq: int, limit: int) -> Page:
        """The page after `after_seq`. A page that leaves more behind it (its last seq
        before the head) starts the read of the next one, on the same connection, while
        the caller applies this one; the next read takes it when it asks for that very
        page (else it waits for it to end and reads afresh). Reading changes nothing on
        the peer, so a page read ahead and never taken is only work lost."""
        ahead = self.ahead.pop(source_node, None)
        page = None
        if ahead is not None:
            ahead.join()  # (the one connection: its exchange ends before another starts)
            if (ahead.after_seq, ahead.limit) == (after_seq, limit):
                if ahead.error is not None:
                    raise ahead.error
                page = ahead.page
        if page is None:
            page = self._read(source_node, after_seq, limit)
        tail = page.events[-1] if page.events else None
        last = tail.get("seq") if isinstance(tail, dict) else None
        if type(last) is int and after_seq < last < page.head:
            self.ahead[source_node] = _Ahead(self._read, source_node, last, limit)
        return page

    def _read(self, source_node: str, after_seq: int, limit: int) -> Page:
        base = (self.urls.get(source_node) or "").rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise Unreachable(f"node {source_node} has no http(s) url ({base or 'none'})")
        until = self.until.get(source_node) or time.monotonic() + self.deadline_s + self.wait_s
        budget = until - time.monotonic()
        late = Unreachable(
            f"node {source_node} at {base}: no complete answer within "
            f"{self.deadline_s + self.wait_s:g}s (federation.peer_deadline)"
        )
        if budget <= 0:
            raise late
        from http.client import HTTPException

        # a kept connection the peer closed meanwhile fails at once: asked again, signed
        # afresh (a gateway answers a signature once), on a new connection
        for again in (source_node in self.conns, False):
            # secrets.token_urlsafe(12)'s nonce, without loading secrets (hmac, hashlib)
            nonce = identity.b64url(os.urandom(12))
            target = outbox_target(after_seq, limit, self.wait_s, nonce)
            try:
                status, content = self._exchange(source_node, base, target, until)
            except TimeoutError:
                raise late from None
            except (OSError, ValueError, HTTPException) as exc:
                if again and time.monotonic() < until:
                    continue
                raise Unreachable(
                    f"node {source_node} at {base}: {type(exc).__name__}: {exc}".rstrip(": ")
                ) from None
            return page_of(source_node, base, status, content)
        raise late  # (not reached: the last attempt returns or raises)

    def _exchange(self, node: str, base: str, target: str, until: float) -> tuple[int, bytes]:
        """One signed GET on the peer's kept connection (http.client: this process loads
        no async stack for it), ended by a watchdog at `until` (monotonic): the watchdog
        shuts the socket, so a connect, handshake or read blocked on a peer that drips
        bytes fails at once (TimeoutError). Any failure closes the connection; the next
        read opens another."""
        import socket
        import threading

        budget = until - time.monotonic()
        if budget <= 0:
            raise TimeoutError
        conn = self.conns.get(node)
        fresh = conn is None
        if conn is None:
            conn = self.conns[node] = _connection(base, min(self.connect_timeout_s, budget))
        cut = threading.Event()

        def watchdog() -> None:
            cut.set()
            if conn.sock is not None:
                try:
                    conn.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        timer = threading.Timer(budget, watchdog)
        timer.daemon = True
        timer.start()
        try:
            if fresh:
                conn.connect()
                conn.sock.settimeout(self.wait_s + 10.0)  # each read after the connect
            conn.request("GET", conn.prefix + target, headers=signed_headers(self.me, target))
            with conn.getresponse() as r:
                status, content = r.status, r.read()
        except BaseException:
            self._close(node)
            if cut.is_set():
                raise TimeoutError from None
            raise
        finally:
            timer.cancel()
        if cut.is_set():
            self._close(node)
            raise TimeoutError
        return status, content


class _Ahead:
    """A page read in a thread of its own: `page`, or the `error` the read raised."""

    def __init__(
        self, read: Callable[[str, int, int], Page], node: str, after_seq: int, limit: int
    ) -> None:
        import threading

        self.after_seq, self.limit = after_seq, limit
        self.page: Page | None = None
        self.error: Exception | None = None
        self.thread = threading.Thread(target=self._run, args=(read, node), daemon=True)
        self.thread.start()

    def _run(self, read: Callable[[str, int, int], Page], node: str) -> None:
        try:
            self.page = read(node, self.after_seq, self.limit)
        except Exception as exc:  # raised by the read that takes it
            self.error = exc

    def join(self) -> None:
        self.thread.join()


def _connection(base: str, connect_timeout_s: float) -> Any:
    """An http.client connection to `base`, not yet connected (its path, if any, kept as
    `prefix`); its connect is bounded by `connect_timeout_s`."""
    from http.client import HTTPConnection, HTTPSConnection
    from urllib.parse import urlsplit

    u = urlsplit(base)
    conn: Any
    if u.scheme == "https":
        conn = HTTPSConnection(
            u.hostname or "", u.port, timeout=connect_timeout_s, context=_ssl_context()
        )
    else:
        conn = HTTPConnection(u.hostname or "", u.port, timeout=connect_timeout_s)
    conn.prefix = u.path.rstrip("/")
    return conn


def _ssl_context() -> Any:
    """The context an https:// read verifies the peer with: the usual CAs (certifi's, as
    httpx's default) plus the configured bundle (tls_verify)."""
    ctx = tls_verify()
    if ctx is not True:
        return ctx
    ctx = _contexts.get("")
    if ctx is None:
        import ssl

        import certifi

        ctx = _contexts[""] = ssl.create_default_context(cafile=certifi.where())
    return ctx


def page_of(source_node: str, base: str, status: int, content: bytes) -> Page:
    """A peer's answer as an outbox page, or Unreachable saying what it was instead."""
    if status != 200:
        raise Unreachable(f"node {source_node} at {base}: HTTP {status} {_code(content)}")
    try:
        body = json.loads(content)
        events, head = body["events"], int(body["head"])
        if not isinstance(events, list):  # each event is checked by the pull, alone
            raise ValueError("events")
    except (ValueError, KeyError, TypeError, RecursionError):
        raise Unreachable(f"node {source_node} at {base}: not an outbox page") from None
    return Page(events, head)


async def fetch_page(
    client: Any,
    me: identity.Node,
    source_node: str,
    base: str,
    after_seq: int,
    limit: int,
    wait_s: float,
) -> Page:
    """One signed long poll on a client the caller keeps open (the gateway's continuous
    pull: one connection per peer, kept alive). Unreachable for anything but a page; the
    caller bounds it in time."""
    import secrets

    import httpx

    target = outbox_target(after_seq, limit, wait_s, secrets.token_urlsafe(12))
    try:
        r = await client.get(base + target, headers=signed_headers(me, target))
    except httpx.HTTPError as exc:
        raise Unreachable(
            f"node {source_node} at {base}: {type(exc).__name__}: {exc}".rstrip(": ")
        ) from None
    return page_of(source_node, base, r.status_code, r.content)


async def _get(url: str, headers: dict[str, str], timeout: Any) -> tuple[int, bytes]:
    import httpx

    async with httpx.AsyncClient(timeout=timeout, verify=tls_verify()) as client:
        r = await client.get(url, headers=headers)
        return r.status_code, r.content


def within(budget_s: float, coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to its end or for `budget_s` seconds at most (TimeoutError), however slowly
    its peer answers: on its own event loop, in a thread of its own when the calling thread
    already runs one (a gateway's loop)."""
    import asyncio

    async def bounded() -> T:
        return await asyncio.wait_for(coro, budget_s)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(bounded())
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, bounded()).result()


def _code(content: bytes) -> str:
    try:
        return str(json.loads(content)["error"]["code"])
    except Exception:  # not JSON
        return ""


class ByUrl:
    """One transport per peer, chosen by the scheme of its url."""

    def __init__(
        self,
        urls: dict[str, str],
        me: identity.Node,
        wait_s: float = 0.0,
        busy_timeout_ms: int = 2000,
        nats: Any = None,
        own_link: bool = True,
        deadline_s: float = DEADLINE_S,
    ) -> None:
        self.urls, self.own_link = urls, own_link
        self.store = StoreTransport(urls, busy_timeout_ms)
        self.http = HttpTransport(urls, me, wait_s, deadline_s=deadline_s)
        self.nats = nats  # a NatsTransport when a peer's url is nats://

    def _for(self, source_node: str) -> Any:
        url = self.urls.get(source_node) or ""
        if url.startswith(("nats://", "tls://")):
            if self.nats is None:
                raise Unreachable(f"node {source_node}: a NATS url and no NATS link")
            return self.nats
        return self.http if url.startswith(("http://", "https://")) else self.store

    def begin_peer(self, source_node: str) -> None:
        """The pass reaches this peer: its overall deadline starts (http and NATS)."""
        begin = getattr(self._for(source_node), "begin_peer", None)
        if begin is not None:
            begin(source_node)

    def read(self, source_node: str, after_seq: int, limit: int) -> Page:
        tr: Transport = self._for(source_node)
        return tr.read(source_node, after_seq, limit)

    def end_peer(self, source_node: str) -> None:
        """The pass is done with the peer (an http peer's connection is closed)."""
        self.http.end_peer(source_node)

    def committed(self, source_node: str, position: int) -> None:
        """The page is committed: a NATS peer's messages are acked now."""
        if self.nats is not None and self._for(source_node) is self.nats:
            self.nats.committed(source_node, position)

    def close(self) -> None:
        for node in {*self.http.conns, *self.http.ahead}:
            self.http.end_peer(node)
        if self.nats is not None and self.own_link:
            self.nats.link.close()


def for_urls(
    urls: dict[str, str],
    me: identity.Node,
    wait_s: float = 0.0,
    nats: Any = None,
    own_link: bool = True,
    deadline_s: float = DEADLINE_S,
) -> Transport:
    return ByUrl(urls, me, wait_s, nats=nats, own_link=own_link, deadline_s=deadline_s)
