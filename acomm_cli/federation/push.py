"""`gateway serve --push` on a node whose outbox travels on NATS JetStream: the
outbox published as rows land, the peers' streams long-polled, so a send is delivered within
a second with no tick. Runs inside the gateway's task group; a NATS server that is down is
noted and retried every second, never fatal."""

from __future__ import annotations

import sqlite3
from typing import Any

from acomm_cli import clock
from acomm_cli.errors import CommError, PeerUnreachable
from acomm_cli.federation import identity
from acomm_cli.federation.gateway import Gateway
from acomm_cli.store import federation as sql


async def loop(gw: Gateway) -> None:
    """`--push` on a NATS node: one thread publishes this node's outbox as soon as a row
    lands (a cheap SQLite read every 0.1 s), another long-polls the peers' streams
    (JetStream answers a waiting pull at once): a send is delivered within a second,
    no tick needed. Each keeps its NATS link; a server that is down is noted, retried."""
    import anyio

    async with anyio.create_task_group() as tg:
        tg.start_soon(_forever, gw, "publish", _publish_once)
        tg.start_soon(_forever, gw, "push", _push_once)


async def _forever(gw: Gateway, what: str, once: Any) -> None:
    import anyio

    from acomm_cli.federation import nats_transport as nt

    conn = link = None
    try:
        while True:
            try:
                if conn is None:
                    from acomm_cli.engine import opening

                    conn = opening.connect(
                        gw.opts.store_path, create=False, busy_timeout_ms=gw.opts.busy_timeout_ms
                    )
                    link = nt.link_for(
                        conn,
                        note=lambda text: gw.note("NATS cluster", PeerUnreachable(text)),
                        probe_always=True,
                    )
                pause = await anyio.to_thread.run_sync(once, gw, conn, link)
            except (sqlite3.Error, CommError) as exc:
                gw.note(what, exc)
                pause = 1.0
            await anyio.sleep(pause)
    finally:
        if link is not None:
            link.close()
        if conn is not None:
            conn.close()


def _publish_once(gw: Gateway, conn: sqlite3.Connection, link: Any) -> float:
    from acomm_cli.federation import nats_transport as nt

    cfg = sql.nats_config(conn)
    if cfg is not None and int(cfg[2]) < sql.outbox_head(conn):
        try:
            nt.publish(conn, link, gw.me.node_id)
        except PeerUnreachable as exc:
            gw.note("publishing the outbox on NATS", exc)
            return 1.0
    return 0.1


def _push_once(gw: Gateway, conn: sqlite3.Connection, link: Any) -> float:
    from acomm_cli.federation import pull as fed_pull
    from acomm_cli.federation import room

    me = identity.require(conn)
    peers = room.peer_ids(conn, me.node_id)
    tr = fed_pull.transport_for(
        conn, peers, me, wait_s=1.0, nats_link=link, deadline_s=gw.opts.peer_deadline_ms / 1000
    )
    result = fed_pull.pull(
        conn,
        clock.now_ms(),
        max_pages=gw.opts.pull_pages,
        sla_ms=gw.opts.sla_ms,
        transport=tr,
        nats_link=link,
    )
    if result.unreachable:
        gw.note("push", PeerUnreachable("unreachable: " + ", ".join(result.unreachable)))
        return 1.0
    return 0.0 if peers else 1.0
