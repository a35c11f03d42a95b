"""`acomm subscribe`, `acomm unsubscribe`, `acomm subscriptions`."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import params
from acomm_cli.cli.commands._common import AsAgent, identity, listing, output, store
from acomm_cli.engine import channels
from acomm_cli.output import columns, render, render_channels

app = typer.Typer(add_completion=False)

Channel = Annotated[str, typer.Argument(click_type=params.CHANNEL, help="A pubsub channel.")]
Pattern = Annotated[str, typer.Argument(help="Topic pattern: * is one segment, # (last) any.")]


@app.command()
def subscribe(ctx: typer.Context, channel: Channel, pattern: Pattern, as_: AsAgent = None) -> None:
    """Receive messages whose topic matches PATTERN (joins the channel if needed).

    Example: acomm subscribe ci 'build.*.success' --as deployer
    """
    agent = identity(as_)
    with store(ctx, write=True) as conn:
        created = channels.subscribe(conn, channel, pattern, agent, clock.now_ms())
    render.change(output(ctx), {"channel": channel, "agent": agent, "pattern": pattern,
                                "created": created}, created,
                  f"{agent} is already subscribed to {pattern!r} on {channel}")


@app.command()
def unsubscribe(ctx: typer.Context, channel: Channel, pattern: Pattern,
                as_: AsAgent = None) -> None:
    """Remove a subscription (repeating it changes nothing).

    A pattern the agent has not subscribed is a no-op: exit 0, "changed": false.

    Example: acomm unsubscribe ci 'build.*.success' --as deployer
    """
    agent = identity(as_)
    with store(ctx, write=True) as conn:
        removed = channels.unsubscribe(conn, channel, pattern, agent)
    render.change(output(ctx), {"channel": channel, "agent": agent, "pattern": pattern,
                                "removed": removed}, removed,
                  f"{agent} has no subscription {pattern!r} on {channel}; nothing to remove")


@app.command()
@listing(columns.SUBSCRIPTIONS)
def subscriptions(ctx: typer.Context, channel: Channel) -> None:
    """List a pubsub channel's subscriptions.

    Example: acomm subscriptions ci
    """
    with store(ctx, write=False) as conn:
        subs = channels.list_subscriptions(conn, channel)
    render_channels.subscriptions(output(ctx), channel, subs)
