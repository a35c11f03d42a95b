"""`acomm subscribe`, `acomm unsubscribe`, `acomm subscriptions`."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import subscribe_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import AsAgent, listing, runs
from acomm_cli.output import columns

app = typer.Typer(add_completion=False)

Channel = Annotated[str, typer.Argument(click_type=params.CHANNEL, help="A pubsub channel.")]
Pattern = Annotated[str, typer.Argument(help="Topic pattern: * is one segment, # (last) any.")]


@app.command()
@runs(subscribe_run.subscribe)
def subscribe(
    inv: Invocation,
    channel: Channel,
    pattern: Pattern,
    as_: AsAgent = None,
    group: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="Serve the worker pool NAME: the pool gets one copy of each matching "
            "message, claimed by one member's `receive` (leases, nack and retries as on a "
            "work queue); other subscriptions and pools get their own copies.",
        ),
    ] = None,
) -> None:
    """Receive messages whose topic matches PATTERN (joins the channel if needed).

    Example: acomm subscribe ci 'build.*.success' --as deployer

    Example (a worker pool: each build job goes to one of the workers):
    acomm subscribe ci 'build.*.queued' --group builders --as worker-1
    """


@app.command()
@runs(subscribe_run.unsubscribe)
def unsubscribe(
    inv: Invocation,
    channel: Channel,
    pattern: Annotated[
        str | None,
        typer.Argument(help="The pattern subscribed (none with --group NAME --delete)."),
    ] = None,
    as_: AsAgent = None,
    group: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="With --delete: the worker pool to delete."),
    ] = None,
    delete: Annotated[
        bool,
        typer.Option(
            "--delete",
            help="Delete the worker pool --group NAME, which has no member left: it stops "
            "getting copies, and what waits in it becomes `pool_deleted` dead letters (the "
            "channel's owner or an admin).",
        ),
    ] = False,
) -> None:
    """Remove a subscription (repeating it changes nothing).

    A pattern the agent has not subscribed is a no-op: exit 0, "changed": false. A worker
    pool whose last member unsubscribes keeps getting its copies until it is deleted.

    Example: acomm unsubscribe ci 'build.*.success' --as deployer

    Example (delete a worker pool nobody serves): acomm unsubscribe ci --group builders
    --delete --as ci
    """


@app.command()
@listing(columns.SUBSCRIPTIONS)
@runs(subscribe_run.subscriptions)
def subscriptions(inv: Invocation, channel: Channel) -> None:
    """List a pubsub channel's subscriptions.

    Example: acomm subscriptions ci
    """
