"""`acomm messages` and `acomm show`: history, read-only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import lazy, params, stopping
from acomm_cli.cli.invocation import Invocation, build_filter
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
    takes_invocation,
)
from acomm_cli.errors import UsageError
from acomm_cli.lite.records import replace
from acomm_cli.output import columns, render, render_messages

if TYPE_CHECKING:
    from acomm_cli.engine import inbox, waiting
else:
    inbox = lazy.module("acomm_cli.engine.inbox")
    waiting = lazy.module("acomm_cli.engine.waiting")

app = typer.Typer(add_completion=False)


@app.command()
@listing(columns.MESSAGES)
@takes_invocation
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
    if follow and (sort is not None or order is not None):
        raise UsageError(
            "--follow prints messages in the order they are committed; drop --sort and --order",
            field="follow",
        )
    if follow and search is not None:
        raise UsageError(
            "--search ranks the messages there are; drop --follow to search", field="follow"
        )
    f = build_filter(
        channel=channel,
        since=since,
        until=until,
        types=type_,
        sender=from_,
        topic=topic,
        status=status,
        grep=grep,
        priority_min=priority_min,
        sort=sort,
        order=order,
        limit=limit,
        offset=offset,
        now=clock.now_ms(),
        event_type=event_type,
        thread=thread,
        actor=actor,
        meta=meta,
    )
    f = replace(f, correlation_id=correlation_id, recipient=recipient, state=tuple(state or ()))
    if search is not None:
        from acomm_cli.engine import search as full_text

        f = replace(f, search=full_text.expression(search))
    if trace is not None:
        from acomm_cli.engine import traces

        f = replace(f, trace_id=traces.check(trace, "trace"))
    out = inv.output()
    with inv.store(write=False) as conn:
        if follow:
            with stopping.on_signals() as stop:
                for batch in waiting.follow_history(conn, f, stop=stop):
                    render_messages.follow(out, batch)
                    out = render.headed(out)
            return
        if f.search is not None:
            from acomm_cli.engine import search as full_text

            result = full_text.history(conn, f)
        else:
            result = inbox.history(conn, f)
    render_messages.messages(out, result)


@app.command()
@takes_invocation
def show(
    inv: Invocation, message_id: Annotated[int, typer.Argument(metavar="MSG", help="Message id.")]
) -> None:
    """One message with the delivery state of every recipient.

    Example: acomm show 42 --json
    """
    from acomm_cli.engine import engagement

    with inv.store(write=False) as conn:
        msg = inbox.show(conn, message_id)
        seen = engagement.of(conn, msg)
    render_messages.message(inv.output(), msg, seen)
