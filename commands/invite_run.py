"""What the `acomm invite` subcommands do, without typer: `commands/invite.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli.invocation import Invocation
from acomm_cli.output import render, render_federation


def create(
    inv: Invocation,
    expect: str | None = None,
    ttl: str = "10m",
    pin_key: str | None = None,
) -> None:
    from acomm_cli.federation import invites

    ttl_ms = clock.parse_duration(ttl, "ttl")
    with inv.store(write=True) as conn:
        doc = invites.create(
            conn, expect=expect, ttl_ms=ttl_ms, pin_key=pin_key, now_ms=clock.now_ms()
        )
    render.status(inv.output(), doc)


def list_(inv: Invocation) -> None:
    from acomm_cli.federation import invites

    with inv.store(write=False) as conn:
        docs = invites.list_invites(conn, clock.now_ms())
    render_federation.invites(inv.output(), docs)


def revoke(
    inv: Invocation,
    invite_id: str,
) -> None:
    from acomm_cli.federation import invites

    with inv.store(write=True) as conn:
        doc, changed = invites.revoke(conn, invite_id, clock.now_ms())
    render.change(inv.output(), doc, changed, f"invite {invite_id} was already revoked")
