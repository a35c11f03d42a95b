"""`gateway serve`'s continuous pull: the gateway keeps one long poll open on each peer's
outbox (`GET /acomm/outbox?after=CURSOR&wait=S`, signed as `fed pull` signs it, on one
kept-alive connection per peer), so that an event a peer appends reaches this node within
about the peer's own poll of its store, with no `tick` or cron. Each page that comes back
is applied by `fed pull`'s own code (pull.py: one transaction per page, every event checked)
in a worker thread with a connection of its own, and the next poll starts from the cursor
that left.

- A peer is polled from the moment the room copy lists it (read again every REFRESH_S) until
  it leaves it or its url changes. http(s) peers are long-polled; `store:` peers (two
  nodes on one machine) are read every `interval` (at least IDLE_POLL_S) since a store file
  cannot hold a read open; NATS peers are left to `gateway serve --push`.
- A peer that is down, refuses or outlasts `federation.peer_deadline` is noted once (a
  warning naming it and the reason, and its last pull's error for `fed status`) and retried
  with back-off (1 s doubling to BACKOFF_MAX_S); its recovery is noted too. A locked store
  is noted and the page fetched again shortly: the cursor moved only if the page committed.
- Cancelled with the gateway's task group: an open long poll is dropped at once, a page
  being applied finishes its transaction first.
- On the production profile a plain-HTTP peer is never polled (noted once).

Every page's timing (time in the peer's long poll, time applying) is logged at DEBUG on
`acomm.gateway.pull`, and each peer's last outcome is in `gateway status --json`'s `pull`."""

from __future__ import annotations

import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acomm_cli import clock
from acomm_cli.errors import CommError
from acomm_cli.federation import http_transport, identity, profile
from acomm_cli.federation.transport import Page, Unreachable
from acomm_cli.store import federation as sql

log = logging.getLogger("acomm.gateway.pull")
REFRESH_S = 2.0  # how often the peer list is read again from the room copy
BACKOFF_MAX_S = 30.0
IDLE_POLL_S = 0.5  # the least pause between two reads of a peer that cannot long-poll
LOCKED_RETRY_S = 0.5


@dataclass(frozen=True)
class Settings:
    store_path: Path
    wait_s: float = 20.0  # `gateway.pull_wait`: each long poll's wait (at most 30 s)
    interval_s: float = 0.0  # `gateway.pull_interval`: a pause after each read of a peer
    deadline_s: float = 30.0  # `federation.peer_deadline`, beyond the wait
    sla_ms: int = 600_000
    page_size: int = 200
    busy_timeout_ms: int = 1000
    profile_name: str | None = None  # `federation.profile` as this process reads it


class Puller:
    """The loop and what it last saw of each peer (for the gateway's state file)."""

    def __init__(self, cfg: Settings, me: identity.Node) -> None:
        self.cfg, self.me = cfg, me
        self.peers: dict[str, dict[str, Any]] = {}  # node -> {state, error, at, events}
        self._said: dict[str, str] = {}  # node -> the last trouble noted (said once)

    def state(self) -> dict[str, Any]:
        return {"mode": "continuous", "wait_s": self.cfg.wait_s, "peers": dict(self.peers)}

    # ------------------------------------------------------------ the supervisor

    async def run(self) -> None:
        """Forever: one task per pullable peer of the room copy, started and stopped as
        the room changes."""
        import anyio
        import httpx

        running: dict[str, tuple[str, Any]] = {}  # node -> (url, its cancel scope)
        timeout = httpx.Timeout(self.cfg.wait_s + self.cfg.deadline_s, connect=5.0)
        async with (
            httpx.AsyncClient(timeout=timeout, verify=http_transport.tls_verify()) as client,
            anyio.create_task_group() as tg,
        ):
            while True:
                try:
                    urls = await anyio.to_thread.run_sync(self._peer_urls)
                except (sqlite3.Error, CommError) as exc:
                    self._note("*", f"the peer list could not be read now: {exc}")
                    urls = {n: u for n, (u, _) in running.items()}
                for node, (url, scope) in list(running.items()):
                    if urls.get(node) != url:
                        scope.cancel()
                        del running[node]
                        self.peers.pop(node, None)
                for node, url in urls.items():
                    if node not in running and self._pullable(node, url):
                        scope = anyio.CancelScope()
                        running[node] = (url, scope)
                        tg.start_soon(self._peer, client, node, url, scope)
                await anyio.sleep(REFRESH_S)

    def _peer_urls(self) -> dict[str, str]:
        from acomm_cli.federation import room

        conn = self._connect()
        try:
            return {n: room.url_of(conn, n) for n in room.peer_ids(conn, self.me.node_id)}
        finally:
            conn.close()

    def _pullable(self, node: str, url: str) -> bool:
        if url.startswith(("nats://", "tls://")) or not url:
            return False  # a NATS peer: `--push` reads it; no url: nothing to read yet
        if profile.insecure(url) and self._production():
            self._note(node, f"refused: {url} is plain HTTP (the production profile)")
            return False
        return True

    def _production(self) -> bool:
        conn = self._connect()
        try:
            return profile.production(conn, self.cfg.profile_name)
        finally:
            conn.close()

    # ------------------------------------------------------------ one peer

    async def _peer(self, client: Any, node: str, url: str, scope: Any) -> None:
        import anyio

        base = url.rstrip("/")
        http = base.startswith(("http://", "https://"))
        backoff = 0.0
        position: int | None = None
        with scope:
            while True:
                try:
                    if http:
                        if position is None:
                            position = await anyio.to_thread.run_sync(self._cursor, node)
                        started = time.monotonic()
                        with anyio.fail_after(self.cfg.wait_s + self.cfg.deadline_s):
                            page = await http_transport.fetch_page(
                                client,
                                self.me,
                                node,
                                base,
                                position,
                                self.cfg.page_size,
                                self.cfg.wait_s,
                            )
                        fetched = time.monotonic()
                        position, read = await anyio.to_thread.run_sync(
                            self._apply, node, position, page
                        )
                        self._traced(node, read, fetched - started, time.monotonic() - fetched)
                    else:
                        _, read = await anyio.to_thread.run_sync(self._apply, node, None, None)
                    self._ok(node, read)
                    backoff = 0.0
                    pause = self.cfg.interval_s if http else max(self.cfg.interval_s, IDLE_POLL_S)
                    if pause and not (http and read):
                        await anyio.sleep(pause)
                except (Unreachable, TimeoutError) as exc:
                    why = str(exc) or (
                        f"node {node} at {base}: no complete answer within "
                        f"{self.cfg.wait_s + self.cfg.deadline_s:g}s (federation.peer_deadline)"
                    )
                    backoff = min(max(backoff * 2, 1.0), BACKOFF_MAX_S)
                    self._down(node, why, backoff)
                    await anyio.to_thread.run_sync(self._record_error, node, why)
                    position = None  # read again: a `fed pull` may have moved it meanwhile
                    await anyio.sleep(backoff)
                except (sqlite3.Error, CommError) as exc:  # a locked store, a peer gone
                    self._note(node, f"pulling node {node}: {exc}; retrying")
                    position = None
                    await anyio.sleep(LOCKED_RETRY_S)

    def _cursor(self, node: str) -> int:
        conn = self._connect()
        try:
            return sql.cursor(conn, node)[0]
        finally:
            conn.close()

    def _apply(self, node: str, position: int | None, page: Page | None) -> tuple[int, int]:
        """Apply a fetched page (None: read the peer's store file now) through `fed pull`;
        (the cursor now, the events read)."""
        from acomm_cli.federation import pull as fed_pull

        conn = self._connect()
        try:
            result = fed_pull.pull(
                conn,
                clock.now_ms(),
                peer=node,
                max_pages=1 if page is not None else 10,
                sla_ms=self.cfg.sla_ms,
                transport=None if page is None else _Fetched(node, position, page),
                page_size=self.cfg.page_size,
                deadline_s=self.cfg.deadline_s,
                profile_name=self.cfg.profile_name,
                beat=False,  # the gateway heartbeats; a room change per page would flood it
            )
            return sql.cursor(conn, node)[0], result.read
        finally:
            conn.close()

    def _record_error(self, node: str, why: str) -> None:
        """The peer's last pull failed: `fed status` says so (never fatal if busy)."""
        from acomm_cli.store.connection import write

        try:
            conn = self._connect()
            try:
                with write(conn):
                    sql.cursor_error(conn, node, why, clock.now_ms())
            finally:
                conn.close()
        except (sqlite3.Error, CommError):
            pass

    def _connect(self) -> sqlite3.Connection:
        from acomm_cli.engine import opening

        return opening.connect(
            self.cfg.store_path, create=False, busy_timeout_ms=self.cfg.busy_timeout_ms
        )

    # ------------------------------------------------------------ what is said

    def _note(self, node: str, text: str) -> None:
        if self._said.get(node) != text:
            log.warning(text)
            self._said[node] = text

    def _down(self, node: str, why: str, retry_s: float) -> None:
        self.peers[node] = {"state": "peer_unreachable", "error": why, "at": _now()}
        self._note(node, f"peer_unreachable: {why}; retrying every {retry_s:g}s at most")

    def _ok(self, node: str, read: int) -> None:
        last = self.peers.get(node) or {}
        if node in self._said:
            log.info("pulling node %s again", node)
            del self._said[node]
        self.peers[node] = {
            "state": "ok",
            "error": None,
            "at": _now(),
            "events": int(last.get("events") or 0) + read,
        }

    def _traced(self, node: str, read: int, polled_s: float, applied_s: float) -> None:
        if read and log.isEnabledFor(logging.DEBUG):
            log.debug(
                "node %s: %d events; long poll %.3fs, applied in %.3fs",
                node,
                read,
                polled_s,
                applied_s,
            )


class _Fetched:
    """A Transport over the one page the long poll brought: it serves it only from the
    cursor it was asked after (a `fed pull` that moved the cursor meanwhile gets an empty
    page, and the next poll starts from where that left)."""

    def __init__(self, node: str, after: int | None, page: Page) -> None:
        self.node, self.after, self.page = node, after, page

    def read(self, source_node: str, after_seq: int, limit: int) -> Page:
        if source_node != self.node or after_seq != self.after:
            return Page([], self.page.head)
        return self.page


def _now() -> str:
    return clock.iso(clock.now_ms()) or ""
