"""`acomm subscribe`, `acomm unsubscribe`, `acomm subscriptions`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import lazy, params
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.cli.params import AsAgent, listing, takes_invocation
from acomm_cli.errors import UsageError
from acomm_cli.output import columns, render, render_channels

if TYPE_CHECKING:
    from acomm_cli.engine import channels
else:
    channels = lazy.module("acomm_cli.engine.channels")

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
    agent = identity(as_)
    if delete or group is not None:
        _delete_pool(inv, channel, pattern, agent, group, delete)
        return
    if pattern is None:
        raise UsageError("pattern: give the pattern to unsubscribe", field="pattern")
    with inv.store(write=True) as conn:
        removed = channels.unsubscribe(conn, channel, pattern, agent, clock.now_ms())
    render.change(
        inv.output(),
        {"channel": channel, "agent": agent, "pattern": pattern, "removed": removed},
        removed,
        f"{agent} has no subscription {pattern!r} on {channel}; nothing to remove",
    )


def _delete_pool(
    inv: Invocation,
    channel: str,
    pattern: str | None,
    agent: str,
    group: str | None,
    delete: bool,
) -> None:
    if group is None or not delete or pattern is not None:
        raise UsageError(
            "group: deleting a worker pool is `unsubscribe CHANNEL --group NAME --delete`, "
            "without a pattern (a member unsubscribes with its pattern alone)",
            field="group",
        )
    with inv.store(write=True) as conn:
        dead = channels.delete_pool(conn, channel, group, agent, clock.now_ms())
    render.ok(
        inv.output(),
        {"channel": channel, "group": group, "deleted": True, "dead_lettered": dead},
        f"deleted worker pool {group} on {channel}"
        + (f"; {dead} waiting messages dead-lettered (reason pool_deleted)" if dead else ""),
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
