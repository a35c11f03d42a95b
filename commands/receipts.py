"""`acomm receipts`: the receipts of agent dispatch, one per run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli.cli import lazy, params
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, takes_invocation
from acomm_cli.output import columns, render_worker

if TYPE_CHECKING:
    from acomm_cli.dispatch import dispatcher as engine
else:
    engine = lazy.module("acomm_cli.dispatch.dispatcher")

# the dispatcher's STATUSES, written out: reading them would import the dispatcher for
# `--help` (tests/test_startup.py checks that the two agree)
STATUSES = ("running", "accepted", "ignored", "failed")

app = typer.Typer(add_completion=False)


@app.command()
@listing(columns.RECEIPTS)
@takes_invocation
def receipts(
    inv: Invocation,
    agent: Annotated[
        str | None,
        typer.Option(click_type=params.AGENT, help="Only this agent's runs.", show_default=False),
    ] = None,
    message: Annotated[
        int | None,
        typer.Option(metavar="MSG", help="Only runs on this message id.", show_default=False),
    ] = None,
    status: Annotated[
        str | None,
        typer.Option(
            click_type=params.choice(STATUSES, "STATUS"),
            help="running, accepted, ignored or failed.",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[int, typer.Option(click_type=params.COUNT, help="At most this many.")] = 100,
    offset: Annotated[int, typer.Option(click_type=params.COUNT, help="Skip this many first.")] = 0,
) -> None:
    """List agent dispatch receipts (one per run), newest first.

    Example: acomm receipts --agent reviewer --json
    """
    with inv.store(write=False) as conn:
        page = engine.list_receipts(
            conn, agent=agent, message_id=message, status=status, limit=limit, offset=offset
        )
    render_worker.receipts(inv.output(), page)
