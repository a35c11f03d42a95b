"""`acomm ack`: acknowledge messages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import lazy, params
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.cli.params import AsAgent, takes_invocation
from acomm_cli.lite.records import asdict  # the engine's results are records
from acomm_cli.output import render_acks

if TYPE_CHECKING:
    from acomm_cli.engine import acking
else:
    acking = lazy.module("acomm_cli.engine.acking")

app = typer.Typer(add_completion=False)


@app.command()
@takes_invocation
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
    agent = identity(as_)
    with inv.store(write=True) as conn:
        if len(message_ids) == 1:  # one id keeps its one JSON object
            results = [acking.ack(conn, message_ids[0], agent, status, note, clock.now_ms())]
        else:
            results = acking.ack_many(conn, message_ids, agent, status, note, clock.now_ms())
    if len(results) == 1:
        render_acks.ack(inv.output(), asdict(results[0]))
    else:
        render_acks.acks(inv.output(), [asdict(r) for r in results])
