"""`acomm messages` and `acomm show`: history, read-only."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import messages_run
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
@runs(messages_run.messages)
def messages(
    inv: Invocation,
    channel: ChannelOpt = None,
    since: Since = None,
    until: Until = None,
    type_: Types = None,
    from_: From = None,
    topic: Topic = None,
    event_type: EventTypeFilter = None,
    thread: ThreadFilter = None,
    actor: ActorFilter = None,
    meta: MetaFilter = None,
    status: Status = None,
    grep: Grep = None,
    search: Annotated[
        str | None,
        typer.Option(
            "--search",
            metavar="QUERY",
            help="Full-text search of content, subject and the event's thread, actor and "
            "target: words, all required (word* for a prefix), best match first (within "
            "the newest 1000 matches, when more match); or 'fts:' and an FTS5 query (OR, "
            'NOT, NEAR, "phrase", subject:word). --json adds each message\'s rank and '
            "snippet, and whether total_count is a lower bound.",
        ),
    ] = None,
    priority_min: PriorityMin = None,
    sort: Annotated[
        str | None,
        typer.Option(
            click_type=params.HISTORY_SORT,
            help="created, priority, id, or rank (with --search, its default).",
        ),
    ] = None,
    order: Order = None,
    limit: Limit = 100,
    offset: Offset = 0,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            "-f",
            help="Print the newest --limit matches oldest first, then each new "
            "one as it is committed, until interrupted (rich on a terminal, JSON Lines when "
            "piped).",
        ),
    ] = False,
    correlation_id: Annotated[
        str | None,
        typer.Option(
            "--correlation-id",
            metavar="CORR",
            help="Only messages with this correlation id (a query, its "
            "responses and acknowledgements).",
        ),
    ] = None,
    recipient: Annotated[
        str | None,
        typer.Option(
            click_type=params.AGENT,
            help="Only messages delivered to this agent (with --state: "
            "whose delivery is in that state).",
        ),
    ] = None,
    state: Annotated[
        list[str] | None,
        typer.Option(
            click_type=params.DELIVERY_STATE,
            help="Only messages with a delivery in this state: queued, waiting, unread, read, "
            "acked, dead (repeatable).",
        ),
    ] = None,
    trace: Annotated[
        str | None,
        typer.Option(
            "--trace",
            metavar="ID",
            help="Only the messages of this trace (`acomm trace ID` shows its tree).",
        ),
    ] = None,
) -> None:
    """Message history, newest first (changes nothing).

    Example: acomm messages --type command --since -1h --json

    Example (watch a channel): acomm messages --channel team --follow

    Example (full-text search): acomm messages --search "deploy fail*" --since -7d --json
    """


@app.command()
@runs(messages_run.show)
def show(
    inv: Invocation, message_id: Annotated[int, typer.Argument(metavar="MSG", help="Message id.")]
) -> None:
    """One message with the delivery state of every recipient.

    Example: acomm show 42 --json
    """
