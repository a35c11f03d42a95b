"""Fetching a file another node holds (`acomm attachment get` on a message that came from
another node): `GET /acomm/blob/SHA256` on the origin node's gateway, signed with this
node's key as an outbox read is (identity.sign_request: X-Acomm-Node, X-Acomm-Timestamp,
X-Acomm-Signature; a `nonce` in the query makes each request new). The gateway answers the
bytes only to a node that a message it sent names them for (engine/remoteblobs.servable);
to anyone else, and for a blob it does not hold, 404, the same answer.

The exchange is bounded: it reads at most one file's limit plus one byte and ends within
`federation.peer_deadline` whatever the peer sends. What came is stored only when it has the
size and the sha256 the message names; anything else is refused (exit 7), recorded among
the events refused from that node, and leaves nothing stored. A peer that cannot be reached
(down, no gateway url, a refusal, too slow) is `peer_unreachable`, exit 7, naming it and why.
The message itself was delivered when it arrived: only its file waits.

A `store:PATH` peer (nodes on one machine, the tests) is read from its store file with the
same entitlement check. A node reached over NATS JetStream has no gateway url in the room
(its url is the NATS server's): its files cannot be fetched, said as such."""

from __future__ import annotations

import secrets
import sqlite3
from pathlib import Path

from acomm_cli import clock
from acomm_cli.engine import attachments, remoteblobs
from acomm_cli.errors import AttachmentCorrupt, NotFound, PeerUnreachable
from acomm_cli.federation import identity, room
from acomm_cli.model import Attachment, Limits
from acomm_cli.store.connection import write

BLOB_PATH = "/acomm/blob/"


def get(
    conn: sqlite3.Connection,
    message_id: int,
    name: str,
    agent: str,
    limits: Limits,
    deadline_s: float,
) -> Attachment:
    """One file of a message with its bytes, as `attachments.fetch` gives it, fetched first
    from the node holding it when it came from another node and is not here yet."""
    want = remoteblobs.wanted(conn, message_id, name, agent)
    if want is not None:
        remoteblobs.too_large(want, limits)
        data = fetch_bytes(conn, want, remoteblobs.cap(limits), deadline_s)
        now = clock.now_ms()
        try:
            with write(conn):
                remoteblobs.accept(conn, want, data, now)
        except AttachmentCorrupt as exc:
            with write(conn):
                remoteblobs.record_refused(conn, want, exc.message, now)
            raise
    return attachments.fetch(conn, message_id, name, agent)


def fetch_bytes(
    conn: sqlite3.Connection, want: remoteblobs.Wanted, cap: int, deadline_s: float
) -> bytes:
    """The bytes the origin node answers (at most cap + 1 of them), or PeerUnreachable."""
    me = identity.require(conn)
    origin = want.origin
    try:
        url = room.url_of(conn, origin)
    except NotFound:
        raise _unreachable(origin, "it is not in this node's copy of the room") from None
    if url.startswith(("http://", "https://")):
        from acomm_cli.federation import profile

        if profile.production(conn):  # the store's profile: no plain-HTTP peer
            profile.require_tls(url, f"node {origin}'s gateway", "peer")
        return _http(url.rstrip("/"), me, want, cap, deadline_s)
    if url.startswith("store:"):
        return _store(Path(url[len("store:") :]), me.node_id, want, cap, deadline_s)
    if url.startswith(("nats://", "tls://")):
        why = f"it is reached over NATS ({url}) and has no gateway url to fetch files from"
    else:
        why = f"it has no gateway url ({url or 'none'})"
    raise _unreachable(origin, why)


def _unreachable(node: str, why: str) -> PeerUnreachable:
    return PeerUnreachable(
        f"cannot fetch the file from node {node!r}: {why}", field="peer", value=node
    )


def target_of(sha256: str, nonce: str) -> str:
    """The path and query a fetch sends and signs, exactly."""
    return f"{BLOB_PATH}{sha256}?nonce={nonce}"


def _http(
    base: str, me: identity.Node, want: remoteblobs.Wanted, cap: int, deadline_s: float
) -> bytes:
    import httpx

    from acomm_cli.federation.http_transport import signed_headers, within

    target = target_of(want.file.sha256, secrets.token_urlsafe(12))
    timeout = httpx.Timeout(deadline_s, connect=min(5.0, deadline_s))
    try:
        status, body = within(
            deadline_s, _get(base + target, signed_headers(me, target), timeout, cap)
        )
    except TimeoutError:
        raise _unreachable(
            want.origin,
            f"no complete answer from {base} within {deadline_s:g}s (federation.peer_deadline)",
        ) from None
    except httpx.HTTPError as exc:
        raise _unreachable(want.origin, f"{base}: {type(exc).__name__}: {exc}") from None
    if status != 200:
        from acomm_cli.federation.http_transport import _code

        code = _code(body)
        raise _unreachable(want.origin, f"{base} answered HTTP {status} {code}".rstrip())
    return body


async def _get(url: str, headers: dict[str, str], timeout: object, cap: int) -> tuple[int, bytes]:
    """The status and at most cap + 1 bytes of the body (enough to tell it is too long)."""
    import httpx

    from acomm_cli.federation.http_transport import tls_verify

    async with httpx.AsyncClient(timeout=timeout, verify=tls_verify()) as client:  # type: ignore[arg-type]
        async with client.stream("GET", url, headers=headers) as r:
            chunks: list[bytes] = []
            got = 0
            async for chunk in r.aiter_bytes():
                chunks.append(chunk)
                got += len(chunk)
                if got > cap:
                    break
            return r.status_code, b"".join(chunks)[: cap + 1]


def _store(path: Path, me: str, want: remoteblobs.Wanted, cap: int, deadline_s: float) -> bytes:
    """A peer on this machine: its store file, read-only, with the gateway's check."""
    if not path.is_file():
        raise _unreachable(want.origin, f"no store at {path}")
    try:
        peer = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=deadline_s)
    except sqlite3.Error as exc:
        raise _unreachable(want.origin, str(exc)) from None
    try:
        from acomm_cli.store import federation as fed_sql

        if fed_sql.node_id(peer) != want.origin:
            raise _unreachable(want.origin, f"the store at {path} is another node")
        data = remoteblobs.servable(peer, me, want.file.sha256)
    except sqlite3.Error as exc:
        raise _unreachable(want.origin, str(exc)) from None
    finally:
        peer.close()
    if data is None:
        raise _unreachable(want.origin, "it holds no such file for this node (not_found)")
    return data[: cap + 1]
