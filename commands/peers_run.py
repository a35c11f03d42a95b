"""What `acomm peers` (the listing) and `acomm peers add` do, without typer:
`commands/peers.py` declares them (options, help) and runs these; the fast path
(`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli.invocation import Invocation
from acomm_cli.output import render, render_federation


def peers(inv: Invocation) -> None:
    """`acomm peers` alone: the peers (its subcommand, `add`, is below)."""
    from acomm_cli.federation import room

    with inv.store(write=False) as conn:
        doc = room.peers(conn, clock.now_ms(), inv.settings.value("federation.offline_after"))
    render_federation.peers(inv.output(), doc)


def add(inv: Invocation, node: str, url: str) -> None:
    from acomm_cli.federation import room

    with inv.store(write=True) as conn:
        doc = room.add_peer(conn, node, url, clock.now_ms())
    render.status(inv.output(), doc)
