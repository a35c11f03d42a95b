"""`acomm nack` and `acomm extend`: give a delivery back, or hold it longer."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import nack_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import AsAgent, runs

app = typer.Typer(add_completion=False)

MessageId = Annotated[int, typer.Argument(metavar="MSG", help="The message id.")]


@app.command()
@runs(nack_run.nack)
def nack(
    inv: Invocation,
    message_id: MessageId,
    as_: AsAgent = None,
    requeue: Annotated[
        bool,
        typer.Option(
            "--requeue",
            help="Give it back to be delivered again (counts as a retry; past "
            "--max-retries it is dead-lettered). Without it: dead-lettered now, reason "
            "`nacked`.",
        ),
    ] = False,
    delay: Annotated[
        str | None,
        typer.Option(
            click_type=params.DURATION,
            help="Deliver it again after this long (implies --requeue). " + params.DURATION_HELP,
        ),
    ] = None,
    reason: Annotated[
        str | None,
        typer.Option(help="Why: kept as the delivery's last_error (and the dead letter's)."),
    ] = None,
) -> None:
    """Give a message back: requeue it, or dead-letter it now.

    Example: acomm nack 42 --as worker --requeue --delay 30s --reason "database busy"
    """


@app.command()
@runs(nack_run.extend)
def extend(
    inv: Invocation,
    message_id: MessageId,
    by: Annotated[
        str,
        typer.Option(
            click_type=params.DURATION,
            help="Hold it this long from now (a lease never shrinks). " + params.DURATION_HELP,
        ),
    ],
    as_: AsAgent = None,
) -> None:
    """Renew the lease on a message you hold; prints when it ends.

    Example: acomm extend 42 --by 5m --as worker
    """
