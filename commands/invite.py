"""`acomm invite ...`: invites on a seed node (create, list, revoke)."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import invite_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(
    help="Invite other nodes to join this one (a seed).\n\nExample: acomm "
    "invite create --expect mbp-jane --ttl 10m --json",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
@runs(invite_run.create)
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


@app.command("list")
@listing(columns.INVITES)
@runs(invite_run.list_)
def list_(inv: Invocation) -> None:
    """List invites and their state, never their tokens.

    States: pending, used, expired, revoked.

    Example: acomm invite list --json
    """


@app.command()
@runs(invite_run.revoke)
def revoke(
    inv: Invocation,
    invite_id: Annotated[str, typer.Argument(metavar="ID", help="The invite id.")],
) -> None:
    """Revoke an invite that was not used yet; its token is refused from now on.

    Example: acomm invite revoke inv-3f2a9c0d1e4b5a67
    """
