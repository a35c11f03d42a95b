"""`acomm nack` and `acomm extend`: give a delivery back, or hold it longer."""

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
    from acomm_cli.engine import leases
else:
    leases = lazy.module("acomm_cli.engine.leases")

app = typer.Typer(add_completion=False)

MessageId = Annotated[int, typer.Argument(metavar="MSG", help="The message id.")]


@app.command()
@takes_invocation
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
    agent = identity(as_)
    delay_ms = clock.parse_duration(delay, "delay") if delay is not None else None
    with inv.store(write=True) as conn:
        result = leases.nack(
            conn,
            message_id,
            agent,
            requeue=requeue,
            delay_ms=delay_ms,
            reason=reason,
            now=clock.now_ms(),
        )
    render_acks.nack(inv.output(), asdict(result))


@app.command()
@takes_invocation
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
    agent = identity(as_)
    with inv.store(write=True) as conn:
        result = leases.extend(
            conn, message_id, agent, clock.parse_duration(by, "by"), clock.now_ms()
        )
    render_acks.extend(inv.output(), asdict(result))
