"""What `acomm subscribe`, `acomm unsubscribe` and `acomm subscriptions` do, without typer:
`commands/subscribe.py` declares them (options, help) and runs these; the fast path
(`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.errors import UsageError
from acomm_cli.output import render, render_channels

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import channels
else:
    channels = lazy.module("acomm_cli.engine.channels")


def subscribe(
    inv: Invocation,
    channel: str,
    pattern: str,
    as_: str | None,
    group: str | None,
) -> None:
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


def unsubscribe(
    inv: Invocation,
    channel: str,
    pattern: str | None,
    as_: str | None,
    group: str | None,
    delete: bool,
) -> None:
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


def subscriptions(
    inv: Invocation,
    channel: str,
) -> None:
    with inv.store(write=False) as conn:
        subs = channels.list_grouped_subscriptions(conn, channel)
    render_channels.subscriptions(inv.output(), channel, subs)


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
