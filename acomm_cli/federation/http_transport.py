"""`HttpTransport`: read a peer's outbox from its gateway, `GET /acomm/outbox?after=SEQ&
limit=N&wait=S`, signed with this node's Ed25519 key (identity.sign_request) in three
headers: X-Acomm-Node, X-Acomm-Timestamp (ms), X-Acomm-Signature; the gateway answers each
signature once (a replay is 401 replayed_request), and a random `nonce` in the query keeps
two reads of one page apart. The peer answers
{events, head}; anything else (a refusal, a timeout, a closed connection, a gateway killed in
the middle of a long poll) is `Unreachable`, and the cursor stays where it was.

`for_urls` picks the transport by each peer's url: `http(s)://` here, `store:` StoreTransport.
httpx is imported inside `read`: nothing here loads before a pull meets an http peer."""

from __future__ import annotations

import secrets
import time
from typing import Any

from acomm_cli.federation import identity
from acomm_cli.federation.transport import Page, StoreTransport, Transport, Unreachable

OUTBOX_PATH = "/acomm/outbox"
MAX_WAIT_S = 30.0


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
    ) -> None:
        self.urls, self.me = urls, me
        self.wait_s = min(max(wait_s, 0.0), MAX_WAIT_S)
        self.connect_timeout_s = connect_timeout_s

    def read(self, source_node: str, after_seq: int, limit: int) -> Page:
        import httpx

        base = (self.urls.get(source_node) or "").rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise Unreachable(f"node {source_node!r} has no http(s) url ({base or 'none'})")
        target = outbox_target(after_seq, limit, self.wait_s, secrets.token_urlsafe(12))
        timeout = httpx.Timeout(self.wait_s + 10.0, connect=self.connect_timeout_s)
        try:
            r = httpx.get(base + target, headers=signed_headers(self.me, target), timeout=timeout)
        except httpx.HTTPError as exc:
            raise Unreachable(
                f"node {source_node!r} at {base}: {type(exc).__name__}: {exc}"
            ) from None
        if r.status_code != 200:
            raise Unreachable(f"node {source_node!r} at {base}: HTTP {r.status_code} {_code(r)}")
        try:
            body = r.json()
            events, head = body["events"], int(body["head"])
            if not isinstance(events, list):  # each event is checked by the pull, alone
                raise ValueError("events")
        except (ValueError, KeyError, TypeError, RecursionError):
            raise Unreachable(f"node {source_node!r} at {base}: not an outbox page") from None
        return Page(events, head)


def _code(response: Any) -> str:
    try:
        return str(response.json()["error"]["code"])
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
    ) -> None:
        self.urls, self.own_link = urls, own_link
        self.store = StoreTransport(urls, busy_timeout_ms)
        self.http = HttpTransport(urls, me, wait_s)
        self.nats = nats  # a NatsTransport when a peer's url is nats://

    def _for(self, source_node: str) -> Any:
        url = self.urls.get(source_node) or ""
        if url.startswith(("nats://", "tls://")):
            if self.nats is None:
                raise Unreachable(f"node {source_node!r}: a NATS url and no NATS link")
            return self.nats
        return self.http if url.startswith(("http://", "https://")) else self.store

    def read(self, source_node: str, after_seq: int, limit: int) -> Page:
        tr: Transport = self._for(source_node)
        return tr.read(source_node, after_seq, limit)

    def committed(self, source_node: str, position: int) -> None:
        """The page is committed: a NATS peer's messages are acked now."""
        if self.nats is not None and self._for(source_node) is self.nats:
            self.nats.committed(source_node, position)

    def close(self) -> None:
        if self.nats is not None and self.own_link:
            self.nats.link.close()


def for_urls(
    urls: dict[str, str],
    me: identity.Node,
    wait_s: float = 0.0,
    nats: Any = None,
    own_link: bool = True,
) -> Transport:
    return ByUrl(urls, me, wait_s, nats=nats, own_link=own_link)
