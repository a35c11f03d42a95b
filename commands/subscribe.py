"""`acomm subscribe`, `acomm unsubscribe`, `acomm subscriptions`."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import params
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.cli.params import AsAgent, listing, takes_invocation
from acomm_cli.engine import channels
from acomm_cli.output import columns, render, render_channels

app = typer.Typer(add_completion=False)

Channel = Annotated[str, typer.Argument(click_type=params.CHANNEL, help="A pubsub channel.")]
Pattern = Annotated[str, typer.Argument(help="Topic pattern: * is one segment, # (last) any.")]


@app.command()
@takes_invocation
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
    agent = identity(as_)
    with inv.store(write=True) as conn:
        created = channels.subscribe(conn, channel, pattern, agent, clock.now_ms(), group)
    render.change(
        inv.output(),
        {
            "channel": channel,
            "agent": agent,
            "pattern": pattern,
            **({} if group is None else {"group": group}),
            "created": created,
        },
        created,
        f"{agent} is already subscribed to {pattern!r} on {channel}",
    )


@app.command()
@takes_invocation
def unsubscribe(inv: Invocation, channel: Channel, pattern: Pattern, as_: AsAgent = None) -> None:
    """Remove a subscription (repeating it changes nothing).

    A pattern the agent has not subscribed is a no-op: exit 0, "changed": false.

    Example: acomm unsubscribe ci 'build.*.success' --as deployer
    """
    agent = identity(as_)
    with inv.store(write=True) as conn:
        removed = channels.unsubscribe(conn, channel, pattern, agent)
    render.change(
        inv.output(),
        {"channel": channel, "agent": agent, "pattern": pattern, "removed": removed},
        removed,
        f"{agent} has no subscription {pattern!r} on {channel}; nothing to remove",
    )


@app.command()
@listing(columns.SUBSCRIPTIONS)
@takes_invocation
def subscriptions(inv: Invocation, channel: Channel) -> None:
    """List a pubsub channel's subscriptions.

    Example: acomm subscriptions ci
    """
    with inv.store(write=False) as conn:
        subs = channels.list_grouped_subscriptions(conn, channel)
    render_channels.subscriptions(inv.output(), channel, subs)
