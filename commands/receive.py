"""`acomm receive`: an agent's unread messages (options and help; `receive_run` does the
work)."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import receive_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import (
    ActorFilter,
    ChannelOpt,
    EventTypeFilter,
    From,
    Grep,
    Limit,
    MetaFilter,
    Offset,
    Order,
    PriorityMin,
    Since,
    Sort,
    Status,
    ThreadFilter,
    Topic,
    Types,
    Until,
    listing,
    runs,
)
from acomm_cli.output import columns

app = typer.Typer(add_completion=False)


@app.command()
@listing(columns.MESSAGES)
@runs(receive_run.receive)
def receive(
    inv: Invocation,
    channel_arg: Annotated[
        str | None,
        typer.Argument(click_type=params.CHANNEL, metavar="[CHANNEL]", help="Only this channel."),
    ] = None,
    as_: Annotated[
        str | None,
        typer.Option(
            "--as",
            "--recipient",
            click_type=params.AGENT,
            envvar="ACOMM_AGENT",
            show_envvar=True,
            help="The receiving agent.",
        ),
    ] = None,
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
    wait: Annotated[
        str | None,
        typer.Option(
            click_type=params.DURATION,
            help="Block up to this long until something arrives (exit 124 if nothing). "
            + params.DURATION_HELP,
        ),
    ] = None,
    ack: Annotated[
        str | None,
        typer.Option(
            "--ack",
            click_type=params.ACK_STATUS,
            help="Also acknowledge what is received with this status, in the same transaction "
            "(received, in_progress, completed or failed); the output leaves before it commits.",
        ),
    ] = None,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            "-f",
            help="Keep printing messages as they arrive, until interrupted "
            "(rich on a terminal, JSON Lines when piped); each is marked read once the reader "
            "has taken it, so `| head -1` marks one. With --peek: each new message once, none "
            "marked read. Not with --wait or --ack.",
        ),
    ] = False,
    event_type: EventTypeFilter = None,
    thread: ThreadFilter = None,
    actor: ActorFilter = None,
    meta: MetaFilter = None,
    cursor: Annotated[
        str | None,
        typer.Option(
            "--cursor",
            metavar="NAME",
            help="Read the channel's history forward from this cursor (`acomm cursor`) and "
            "move it past what is printed; no message is marked read. With --peek the cursor "
            "stays. Takes --limit, --body and the output options; the cursor holds the filter.",
        ),
    ] = None,
) -> None:
    """Unread messages for an agent, oldest first; marks them read unless --peek.

    With --ack STATUS, what is received is also acknowledged, in the same transaction.

    Example: acomm receive --as executor --json
    """
