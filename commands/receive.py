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
from acomm_cli.errors import Timeout, ValidationFailed

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
    ack: Annotated[str | None, typer.Option(
        "--ack", click_type=params.ACK_STATUS,
        help="Also acknowledge what is received with this status, in the same transaction "
        "(received, in_progress, completed or failed); the output leaves before it commits.")]
    = None,
    follow: Annotated[bool, typer.Option(
        "--follow", "-f", help="Keep printing messages as they arrive, until interrupted "
        "(rich on a terminal, JSON Lines when piped).")]
    = False,
) -> None:
    """Unread messages for an agent, oldest first; marks them read unless --peek.

    With --ack STATUS, what is received is also acknowledged, in the same transaction.

    Example: acomm receive --as executor --json
    """
    agent = identity(as_, "--as")
    if ack is not None and (peek or follow):
        other = "--peek" if peek else "--follow"
        raise ValidationFailed(f"ack: --ack acknowledges what it reads; it cannot go with "
                               f"{other}", field="ack", value=ack)
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
        if ack is not None:
            from acomm_cli.engine import acking

            result = acking.receive_ack(conn, agent, f, ack, now, emit=emit, wait_s=wait)
        elif wait is not None:
            result = delivery.receive_wait(conn, agent, f, wait, peek=peek, emit=emit)
        else:
            result = delivery.receive_due(conn, agent, f, now, peek=peek, emit=emit)
    if wait is not None and not result.messages:
        raise Timeout(f"nothing arrived for {agent} within {wait:g}s")
