"""`acomm invite ...`: invites on a seed node (create, list, revoke)."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import params
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, takes_invocation
from acomm_cli.output import columns, render, render_federation

app = typer.Typer(
    help="Invite other nodes to join this one (a seed).\n\nExample: acomm "
    "invite create --expect mbp-jane --ttl 10m --json",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
@takes_invocation
def create(
    inv: Invocation,
    expect: Annotated[
        str | None, typer.Option(metavar="NODE", help="Only this node id may use the invite.")
    ] = None,
    ttl: Annotated[
        str,
        typer.Option(
            click_type=params.DURATION,
            help="How long the invite stays valid (at most 7d). " + params.DURATION_HELP,
        ),
    ] = "10m",
    pin_key: Annotated[
        str | None,
        typer.Option(
            metavar="KEY",
            help="The joining node's public key (PASERK k4.public...): it must "
            "prove it holds the key.",
        ),
    ] = None,
) -> None:
    """Create a single-use invite for another node to join this one.

    Prints {invite_id, invite_token, expires_at}. The token is shown this once: the
    store keeps only its SHA-256.

    Example: acomm invite create --expect mbp-jane --ttl 10m --json
    """
    from acomm_cli.federation import invites

    ttl_ms = clock.parse_duration(ttl, "ttl")
    with inv.store(write=True) as conn:
        doc = invites.create(
            conn, expect=expect, ttl_ms=ttl_ms, pin_key=pin_key, now_ms=clock.now_ms()
        )
    render.status(inv.output(), doc)


@app.command("list")
@listing(columns.INVITES)
@takes_invocation
def list_(inv: Invocation) -> None:
    """List invites and their state, never their tokens.

    States: pending, used, expired, revoked.

    Example: acomm invite list --json
    """
    from acomm_cli.federation import invites

    with inv.store(write=False) as conn:
        docs = invites.list_invites(conn, clock.now_ms())
    render_federation.invites(inv.output(), docs)


@app.command()
@takes_invocation
def revoke(
    inv: Invocation,
    invite_id: Annotated[str, typer.Argument(metavar="ID", help="The invite id.")],
) -> None:
    """Revoke an invite that was not used yet; its token is refused from now on.

    Example: acomm invite revoke inv-3f2a9c0d1e4b5a67
    """
    from acomm_cli.federation import invites

    with inv.store(write=True) as conn:
        doc, changed = invites.revoke(conn, invite_id, clock.now_ms())
    render.change(inv.output(), doc, changed, f"invite {invite_id} was already revoked")
