"""`acomm receipts`: the receipts of agent dispatch, one per run."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import receipts_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

# the dispatcher's STATUSES, written out: reading them would import the dispatcher for
# `--help` (tests/test_startup.py checks that the two agree)
STATUSES = ("running", "accepted", "ignored", "failed")

app = typer.Typer(add_completion=False)


@app.command()
@listing(columns.RECEIPTS)
@runs(receipts_run.receipts)
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
