"""`acomm ack`: acknowledge a message."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import params, render
from acomm_cli.commands._common import AsAgent, identity, output, store
from acomm_cli.engine import delivery
from acomm_cli.lite.records import asdict  # the engine's results are records (issue 17)

app = typer.Typer(add_completion=False)


@app.command()
def ack(
    ctx: typer.Context,
    message_id: Annotated[int, typer.Argument(metavar="MSG", help="The message id.")],
    as_: AsAgent = None,
    status: Annotated[str, typer.Option(
        click_type=params.ACK_STATUS,
        help="received, in_progress, completed or failed (forward only).")] = "completed",
    note: Annotated[str | None, typer.Option(help="Details for the sender.")] = None,
) -> None:
    """Acknowledge a message: stops its retries and tells the sender.

    Example: acomm ack 42 --as executor --status completed --note "deployed"
    """
    agent = identity(as_)
    with store(ctx, write=True) as conn:
        result = delivery.ack(conn, message_id, agent, status, note, clock.now_ms())
    render.ack(output(ctx), asdict(result))
