"""`gateway serve --push` on a node whose outbox travels on NATS JetStream: a warm publisher
puts this node's outbox rows out as they are committed, and the peers' streams are read as
their events are published. Runs inside the gateway's task group; a NATS server that is down
is noted and retried every second, never fatal.

- The publisher keeps one NATS connection open and is woken by the store's change (the
  waiters' wait, engine/waiting.py: a Linux inotify watch where there is one, a look every
  PUBLISH_SAFETY_S underneath; a 50 ms poll where the platform gives no watch). While it
  runs connected, the gateway's state file says so (gwstate `publisher`), and a short
  command that appended to the outbox leaves the publish to it instead of connecting
  itself. A publisher killed before publishing loses nothing: the rows wait in the outbox
  for the next publisher (itself restarted, any command, tick, fed pull).
- The reader subscribes (plain NATS, no JetStream) to each NATS peer's subject: a peer's
  publish reaches it at once, for all peers together, and is only a hint: a pass then reads
  every peer through its durable consumer with no wait, the SQLite cursor staying the truth.
  A pass runs at least every READ_SAFETY_S without a hint (a hint lost over a reconnect).
  Where the server refuses the subscription (the user's permissions), or a peer is not on
  NATS, it long-polls every peer in turn instead, up to a second each."""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import Any

from acomm_cli import clock
from acomm_cli.errors import CommError, PeerUnreachable
from acomm_cli.federation import identity
from acomm_cli.federation.gateway import Gateway
from acomm_cli.store import federation as sql

PUBLISH_SAFETY_S = 1.0  # the publisher's look at the outbox when no commit woke it
READ_SAFETY_S = 1.0  # a read pass at least this often with no hint
PROBE_S = 2.0  # how long the server may take to refuse a subscription


async def loop(gw: Gateway) -> None:
    """`--push` on a NATS node: the publisher and the reader, each on its own store
    connection and NATS link."""
    import anyio

    async with anyio.create_task_group() as tg:
        tg.start_soon(_publisher, gw)
        tg.start_soon(_forever, gw, "push", _push_once)


def _open(gw: Gateway) -> tuple[sqlite3.Connection, Any]:
    from acomm_cli.engine import opening
    from acomm_cli.federation import nats_transport as nt

    conn = opening.connect(
        gw.opts.store_path, create=False, busy_timeout_ms=gw.opts.busy_timeout_ms
    )
    link = nt.link_for(
        conn,
        note=lambda text: gw.note("NATS cluster", PeerUnreachable(text)),
        probe_always=True,
    )
    return conn, link


# ---------------------------------------------------------------- the publisher


async def _publisher(gw: Gateway) -> None:
    import anyio

    conn = link = None
    try:
        while True:
            try:
                if conn is None:
                    conn, link = _open(gw)
                version = await anyio.to_thread.run_sync(_version, conn)
                connected = await anyio.to_thread.run_sync(_publish_once, gw, conn, link)
                _say(gw, connected)  # before the wait: a command may rely on it at once
                if connected:
                    await anyio.to_thread.run_sync(_wait_commit, conn, version)
            except (sqlite3.Error, CommError) as exc:
                gw.note("publishing the outbox on NATS", exc)
                connected = False
                _say(gw, connected)
            if not connected:
                await anyio.sleep(1.0)
    finally:
        with anyio.CancelScope(shield=True):
            _say(gw, False)  # from now on a command publishes itself...
            if conn is not None:  # ...and what one left to us before goes out now
                try:
                    await anyio.to_thread.run_sync(_publish_once, gw, conn, link)
                except (sqlite3.Error, CommError) as exc:
                    gw.note("the last publish of the outbox", exc)
        if link is not None:
            link.close()
        if conn is not None:
            conn.close()  # and the watch its waits made


def _say(gw: Gateway, connected: bool) -> None:
    """The state file says at once when the publisher starts or stops being of use."""
    state = {"connected": connected}
    if gw.publisher != state:
        gw.publisher = state
        try:
            gw.publish_state()
        except OSError as exc:
            gw.note("the gateway's state file could not be written", exc)


def _version(conn: sqlite3.Connection) -> int:
    """Read before the look at the outbox: a commit after it wakes the wait that follows."""
    from acomm_cli.store import stats

    return stats.data_version(conn)


def _publish_once(gw: Gateway, conn: sqlite3.Connection, link: Any) -> bool:
    """Publish the rows past the stream's last seq; True when NATS is connected after it."""
    from acomm_cli.federation import nats_transport as nt

    cfg = sql.nats_config(conn)
    if cfg is None:
        return False
    nc = link.nc
    if int(cfg[2]) < sql.outbox_head(conn) or nc is None or not nc.is_connected:
        try:
            nt.publish(conn, link, gw.me.node_id)
        except PeerUnreachable as exc:
            gw.note("publishing the outbox on NATS", exc)
            return False
    return True


def _wait_commit(conn: sqlite3.Connection, version: int) -> None:
    """Until another connection's commit is visible, or PUBLISH_SAFETY_S."""
    from acomm_cli.engine import waiting

    until = time.monotonic() + PUBLISH_SAFETY_S
    waiting.wait_change(conn, version, until, None, _never, watched_poll_s=PUBLISH_SAFETY_S)


def _never() -> bool:
    return False


# ---------------------------------------------------------------- the reader


class Hints:
    """Plain NATS subscriptions on the peers' subjects: JetStream's publish of a peer's
    event is delivered here too, at once; it sets `event`: read now."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.subs: dict[str, Any] = {}
        self.nc: Any = None
        self.refused: str | None = None  # the server's answer to a subscription it refused

    def follow(self, link: Any, subjects: set[str]) -> None:
        link.call(self._follow(link, subjects))

    async def _follow(self, link: Any, subjects: set[str]) -> None:
        await link.js()  # connected (again, after a failure: a new client, no subscriptions)
        if link.nc is not self.nc:
            self.nc, self.subs = link.nc, {}
        for name in set(self.subs) - subjects:
            await self.subs.pop(name).unsubscribe()
        new = subjects - set(self.subs)
        before = self.nc.last_error
        for name in new:
            self.subs[name] = await self.nc.subscribe(name, cb=self._hint)
            self.event.set()  # what came before the subscription: read it now
        if new:  # a refusal (the user's permissions) comes back before the flush's answer
            await self.nc.flush(timeout=PROBE_S)
            err = self.nc.last_error
            if err is before:  # not seen yet at times: one more round trip to the server
                await self.nc.flush(timeout=PROBE_S)
                err = self.nc.last_error
            if err is not before and "permissions violation" in str(err).lower():
                self.refused = str(err)

    async def _hint(self, _msg: Any) -> None:
        self.event.set()


async def _forever(gw: Gateway, what: str, once: Any) -> None:
    import anyio

    conn = link = None
    hints = Hints()
    try:
        while True:
            try:
                if conn is None:
                    conn, link = _open(gw)
                pause = await anyio.to_thread.run_sync(once, gw, conn, link, hints)
            except (sqlite3.Error, CommError) as exc:
                gw.note(what, exc)
                pause = 1.0
            await anyio.sleep(pause)
    finally:
        if link is not None:
            link.close()
        if conn is not None:
            conn.close()


def _push_once(
    gw: Gateway, conn: sqlite3.Connection, link: Any, hints: Hints | None = None
) -> float:
    """One read pass of every peer: on NATS only, after a hint (or READ_SAFETY_S), with no
    wait; with a peer elsewhere, long-polling each up to a second."""
    from acomm_cli.federation import nats_transport as nt
    from acomm_cli.federation import pull as fed_pull
    from acomm_cli.federation import room

    me = identity.require(conn)
    peers = room.peer_ids(conn, me.node_id)
    urls = {p: room.url_of(conn, p) for p in peers}
    hints = hints or Hints()
    hinted = bool(peers) and not hints.refused and all(nt.is_nats(u) for u in urls.values())
    if hinted:
        hints.follow(link, {nt.subject(p) for p in peers})
        if hints.refused:
            gw.note(
                "push",
                PeerUnreachable(
                    f"NATS refused a subscription to the peers' subjects ({hints.refused}): "
                    "each peer is long-polled in turn instead"
                ),
            )
            return 0.0
        hints.event.wait(READ_SAFETY_S)
        hints.event.clear()  # a publish from now on wakes the next pass
    tr = fed_pull.transport_for(
        conn,
        peers,
        me,
        wait_s=0.0 if hinted else 1.0,
        nats_link=link,
        deadline_s=gw.opts.peer_deadline_ms / 1000,
    )
    result = fed_pull.pull(
        conn,
        clock.now_ms(),
        max_pages=gw.opts.pull_pages,
        sla_ms=gw.opts.sla_ms,
        transport=tr,
        nats_link=link,
        beat=False,  # the gateway's mirror heartbeats: no room write on the delivery path
    )
    if result.unreachable:
        gw.note("push", PeerUnreachable("unreachable: " + ", ".join(result.unreachable)))
        return 1.0
    return 0.0 if peers else 1.0
