"""`acomm ack`: acknowledge messages."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import ack_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import AsAgent, runs

app = typer.Typer(add_completion=False)


@app.command()
@runs(ack_run.ack)
def ack(
    inv: Invocation,
    message_ids: Annotated[
        list[int],
        typer.Argument(
            metavar="MSG...",
            help="The message id; several are acknowledged in one transaction (all or none).",
        ),
    ],
    as_: AsAgent = None,
    status: Annotated[
        str,
        typer.Option(
            click_type=params.ACK_STATUS,
            help="received, in_progress, completed or failed (forward only).",
        ),
    ] = "completed",
    note: Annotated[str | None, typer.Option(help="Details for the sender.")] = None,
) -> None:
    """Acknowledge messages: stops their retries and tells each sender.

    Several ids are one transaction: if any cannot be acknowledged, its error is reported and
    none is. JSON: one object for one id, a list in the order given for several.

    Example: acomm ack 42 --as executor --status completed --note "deployed"
    """
