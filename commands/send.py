"""`acomm send` and `acomm publish`: their options and help; `send_run` does the work."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import send_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import runs

app = typer.Typer(add_completion=False)

Sender = Annotated[
    str | None,
    typer.Option(
        "--as",
        "--from",
        "--sender",
        click_type=params.AGENT,
        envvar="ACOMM_AGENT",
        show_envvar=True,
        help="The sending agent.",
    ),
]
Type = Annotated[
    str,
    typer.Option(
        "--type",
        "-t",
        click_type=params.MESSAGE_TYPE,
        help="text, command, query, response, acknowledgment (ack), notification, broadcast, "
        "error.",
    ),
]
Priority = Annotated[
    str,
    typer.Option(
        "--priority",
        "-p",
        click_type=params.PRIORITY,
        help="low, normal, high, urgent, critical or 0-4.",
    ),
]
Correlation = Annotated[str | None, typer.Option(metavar="CORR", help="Thread / request id.")]
GroupKey = Annotated[
    str | None,
    typer.Option(
        metavar="KEY",
        help="FIFO group (a work queue or a pubsub channel's worker pool): messages with the "
        "same key are handed out in send order, one at a time; other keys in parallel.",
    ),
]
DedupeKey = Annotated[
    str | None,
    typer.Option(
        metavar="KEY",
        help="Idempotency key: a repeat inside the channel's window sends nothing again.",
    ),
]
Meta = Annotated[
    list[str] | None, typer.Option("--meta", metavar="KEY=VALUE", help="k=v metadata (repeatable).")
]
Delay = Annotated[
    str | None,
    typer.Option(
        click_type=params.DURATION, help="Deliver after this long. " + params.DURATION_HELP
    ),
]
DeliverAt = Annotated[
    str | None,
    typer.Option(click_type=params.TIME, help="Deliver at this time. " + params.TIME_HELP),
]
Ttl = Annotated[
    str | None,
    typer.Option(
        click_type=params.DURATION,
        help="Time to live: not read within this (from delivery), the message is dead-lettered "
        "`expired` (default: the channel's --message-ttl). " + params.DURATION_HELP,
    ),
]

TraceId = Annotated[
    str | None,
    typer.Option(
        metavar="ID",
        envvar="ACOMM_TRACE_ID",
        show_envvar=True,
        help="The trace the message joins: 1-64 characters of A-Z a-z 0-9 _ - (default: "
        "$TRACEPARENT's W3C trace id, else the trace of what it answers, else a new one).",
    ),
]
# The notification event the message carries (docs/EVENTS.md): every one needs --event-type.
EventType = Annotated[
    str | None,
    typer.Option(
        metavar="TYPE",
        help="The event the message carries: comment.created, comment.replied, "
        "mention.created, like.created, thread.created, agent.action.feedback.",
    ),
]
Actor = Annotated[
    str | None,
    typer.Option(
        click_type=params.AGENT,
        help="The event's actor (default: the sender).",
    ),
]
Target = Annotated[
    str | None,
    typer.Option(
        click_type=params.AGENT,
        help="The agent the event is for (its kind is recorded).",
    ),
]
Thread = Annotated[
    str | None,
    typer.Option(
        metavar="ID",
        help="The event's thread id.",
    ),
]
Comment = Annotated[
    str | None,
    typer.Option(
        metavar="ID",
        help="The event's comment id.",
    ),
]
ParentComment = Annotated[
    str | None,
    typer.Option(
        metavar="ID",
        help="The comment it replies to (its id).",
    ),
]
Depth = Annotated[
    str | None,
    typer.Option(
        metavar="1|2|3",
        help="The comment's depth (comment events only).",
    ),
]
Language = Annotated[
    str | None,
    typer.Option(
        metavar="TAG",
        help="The content's language: zh, en, or a BCP 47 tag.",
    ),
]
ActionHint = Annotated[
    str | None,
    typer.Option(
        metavar="HINT",
        help="What the target should do: notify_only, consider_reply, must_reply.",
    ),
]
OccurredAt = Annotated[
    str | None,
    typer.Option(
        click_type=params.TIME,
        help="When the event occurred (default: now). " + params.TIME_HELP,
    ),
]
EventId = Annotated[
    str | None,
    typer.Option(
        metavar="ID",
        help="The event's unique id: a repeat on the channel sends nothing again.",
    ),
]


@app.command()
@runs(send_run.send)
def send(
    inv: Invocation,
    channel: Annotated[
        str | None,
        typer.Argument(click_type=params.CHANNEL, help="Channel name.", show_default=False),
    ] = None,
    body: Annotated[
        str | None, typer.Argument(help="Message body; '-' or omitted: stdin.", show_default=False)
    ] = None,
    as_: Sender = None,
    to: Annotated[
        str | None,
        typer.Option(
            click_type=params.AGENTS,
            help="Direct message to these agents (comma-separated) instead of a channel.",
        ),
    ] = None,
    batch: Annotated[
        str | None,
        typer.Option(
            click_type=params.FILE,
            help="Send every JSON Lines object of FILE ('-' for stdin) in one transaction.",
        ),
    ] = None,
    type_: Type = "text",
    priority: Priority = "normal",
    topic: Annotated[str | None, typer.Option(help="Topic (needed on pubsub channels).")] = None,
    correlation_id: Correlation = None,
    dedupe_key: DedupeKey = None,
    meta: Meta = None,
    delay: Delay = None,
    deliver_at: DeliverAt = None,
    ttl: Ttl = None,
    format_: Annotated[
        str | None,
        typer.Option(
            "--format",
            click_type=params.MESSAGE_FORMAT,
            help="How the body reads: text (the default) or markdown (`show` renders it on "
            "a terminal).",
            show_default=False,
        ),
    ] = None,
    subject: Annotated[
        str | None,
        typer.Option(metavar="TEXT", help="A subject line (at most 256 characters)."),
    ] = None,
    attach: Annotated[
        list[str] | None,
        typer.Option(
            "--attach",
            click_type=params.FILE,
            help="Attach this file (repeatable); `acomm attachment get MSG NAME` fetches it.",
        ),
    ] = None,
    trace_id: TraceId = None,
    event_type: EventType = None,
    actor: Actor = None,
    target: Target = None,
    thread: Thread = None,
    comment: Comment = None,
    parent_comment: ParentComment = None,
    depth: Depth = None,
    language: Language = None,
    action_hint: ActionHint = None,
    occurred_at: OccurredAt = None,
    event_id: EventId = None,
    group_key: GroupKey = None,
) -> None:
    """Send a message; prints its id.

    Example: acomm send team "hello" --as alice

    Example (body on stdin, direct message): echo hi | acomm send --to bob --as alice

    Example (markdown, a subject and a file): acomm send --to bob --format markdown
    --subject "Build report" --attach report.pdf "**green**" --as alice

    Example (FIFO per order on a work queue): acomm send jobs "charge" --group-key order-42
    --as shop
    """


@app.command()
@runs(send_run.publish)
def publish(
    inv: Invocation,
    channel: Annotated[str, typer.Argument(click_type=params.CHANNEL, help="A pubsub channel.")],
    topic: Annotated[str, typer.Argument(help="Topic, e.g. build.frontend.success.")],
    body: Annotated[
        str | None, typer.Argument(help="Message body; '-' or omitted: stdin.", show_default=False)
    ] = None,
    as_: Sender = None,
    type_: Type = "notification",
    priority: Priority = "normal",
    correlation_id: Correlation = None,
    dedupe_key: DedupeKey = None,
    meta: Meta = None,
    delay: Delay = None,
    deliver_at: DeliverAt = None,
    ttl: Ttl = None,
    trace_id: TraceId = None,
    event_type: EventType = None,
    actor: Actor = None,
    target: Target = None,
    thread: Thread = None,
    comment: Comment = None,
    parent_comment: ParentComment = None,
    depth: Depth = None,
    language: Language = None,
    action_hint: ActionHint = None,
    occurred_at: OccurredAt = None,
    event_id: EventId = None,
    group_key: GroupKey = None,
    require_recipient: Annotated[
        bool,
        typer.Option(
            "--require-recipient",
            help="Refuse (exit 5, nothing stored) a message no subscription matches; without "
            "it, such a message is stored with a note on stderr and no recipients.",
        ),
    ] = False,
) -> None:
    """Publish on a pubsub channel to every matching subscription; prints the id.

    A message no subscription matches is stored for nobody (exit 0, a note on stderr,
    `"recipients": []`); with --require-recipient it is refused (exit 5, `no_recipient`).

    Example: acomm publish ci build.frontend.success "847 tests passed" --as ci
    """
