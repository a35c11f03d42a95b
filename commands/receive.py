"""`acomm receive`: an agent's unread messages."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import handover as render_handover
from acomm_cli.cli import params, stopping
from acomm_cli.commands._common import (
    ChannelOpt,
    From,
    Grep,
    Limit,
    Offset,
    Order,
    PriorityMin,
    Since,
    Sort,
    Status,
    Topic,
    Types,
    Until,
    build_filter,
    identity,
    output,
    stall_s,
    store,
)
from acomm_cli.engine import delivery
from acomm_cli.errors import Timeout

app = typer.Typer(add_completion=False)


@app.command()
def receive(
    ctx: typer.Context,
    channel_arg: Annotated[str | None, typer.Argument(
        click_type=params.CHANNEL, metavar="[CHANNEL]", help="Only this channel.")] = None,
    as_: Annotated[str | None, typer.Option(
        "--as", "--recipient", click_type=params.AGENT, envvar="ACOMM_AGENT", show_envvar=True,
        help="The receiving agent.")] = None,
    channel: ChannelOpt = None,
    since: Since = None,
    until: Until = None,
    type_: Types = None,
    from_: From = None,
    topic: Topic = None,
    status: Status = None,
    grep: Grep = None,
    priority_min: PriorityMin = None,
    sort: Sort = None,
    order: Order = None,
    limit: Limit = 100,
    offset: Offset = 0,
    peek: Annotated[bool, typer.Option("--peek", help="Leave them unread.")] = False,
    body: Annotated[bool, typer.Option("--body", help="Print only the bodies.")] = False,
    jsonl: Annotated[bool, typer.Option("--jsonl", help="One JSON object per line.")] = False,
    wait: Annotated[float | None, typer.Option(
        click_type=params.SECONDS,
        help="Block up to this many seconds until something arrives (exit 124 if nothing).")]
    = None,
    follow: Annotated[bool, typer.Option(
        "--follow", "-f", help="Keep printing messages as they arrive, until interrupted "
        "(rich on a terminal, JSON Lines when piped).")]
    = False,
) -> None:
    """Unread messages for an agent, oldest first; marks them read unless --peek.

    Example: acomm receive --as executor --json
    """
    agent = identity(as_, "--as")
    now = clock.now_ms()
    f = build_filter(channel=channel_arg or channel, since=since, until=until, types=type_,
                     sender=from_, topic=topic, status=status, grep=grep,
                     priority_min=priority_min, sort=sort, order=order, limit=limit,
                     offset=offset, now=now)
    emit = render_handover.inbox_output(output(ctx), body=body, jsonl=jsonl, follow=follow,
                                        peek=peek, stall_s=stall_s(ctx))
    with store(ctx, write=True, read_fallback=peek) as conn:
        if follow:  # rich on a terminal, JSON Lines when piped
            with stopping.on_signals() as stop:
                delivery.follow(conn, agent, f, emit, peek=peek, stop=stop)
            return
        if wait is not None:
            result = delivery.receive_wait(conn, agent, f, wait, peek=peek, emit=emit)
        else:
            result = delivery.receive_due(conn, agent, f, now, peek=peek, emit=emit)
    if wait is not None and not result.messages:
        raise Timeout(f"nothing arrived for {agent} within {wait:g}s")
