"""`acomm deadletter ...` (alias `dead-letters`): inspect, replay, discard, purge."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import model
from acomm_cli.cli import params
from acomm_cli.cli.commands import deadletter_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(
    help="Inspect and recover dead letters.\n\nExample: acomm deadletter list --json",
    no_args_is_help=True,
    add_completion=False,
)

Msg = Annotated[int, typer.Argument(metavar="MSG", help="The message id.")]
Recipient = Annotated[
    str | None, typer.Option(click_type=params.AGENT, help="Only this recipient's dead letter.")
]


@app.command("list")
@listing(columns.DEAD_LETTERS)
@runs(deadletter_run.list_)
def list_(
    inv: Invocation,
    channel: Annotated[
        str | None,
        typer.Option("--channel", "-c", click_type=params.CHANNEL, help="Only this channel."),
    ] = None,
    recipient: Recipient = None,
    reason: Annotated[
        str | None,
        typer.Option(
            click_type=params.DEAD_LETTER_REASON, help=f"{', '.join(model.DEAD_LETTER_REASONS)}."
        ),
    ] = None,
    limit: Annotated[int, typer.Option(click_type=params.COUNT, help="At most this many.")] = 100,
    offset: Annotated[int, typer.Option(click_type=params.COUNT, help="Skip this many first.")] = 0,
) -> None:
    """List dead letters, oldest first.

    Example: acomm deadletter list --reason max_retries_exceeded --json
    """


@app.command()
@runs(deadletter_run.show)
def show(inv: Invocation, message_id: Msg, recipient: Recipient = None) -> None:
    """Show a message's dead letters whole, with each delivery attempt.

    Each: reason, retry_count, last_error, the message (type, topic, metadata, content...)
    and every attempt's delivered_at and read_at. Attempts are recorded from schema m012
    on; a store upgraded from an older one lists only the last attempt of a message that
    died before the upgrade.

    Example: acomm deadletter show 42 --json
    """


@app.command()
@runs(deadletter_run.replay)
def replay(
    inv: Invocation,
    message_id: Annotated[
        int | None,
        typer.Argument(metavar="[MSG]", help="The message id (or --all).", show_default=False),
    ] = None,
    recipient: Recipient = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Every dead letter the filters match, in one transaction.")
    ] = False,
    channel: Annotated[
        str | None,
        typer.Option(
            "--channel", "-c", click_type=params.CHANNEL, help="With --all: only this channel."
        ),
    ] = None,
    reason: Annotated[
        str | None,
        typer.Option(click_type=params.DEAD_LETTER_REASON, help="With --all: only this reason."),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            click_type=params.TIME,
            help="With --all: dead-lettered at or after this time. " + params.TIME_HELP,
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="With --all: count what would be replayed, change nothing."),
    ] = False,
) -> None:
    """Deliver dead letters again (same id, fresh retry budget).

    One message's (MSG), or with --all every dead letter the filters match (redrive), in
    one transaction; --all prints how many (with --json: replayed or would_replay, ids,
    deliveries, skipped). A dead letter whose channel is closed or whose recipient left is
    skipped with a note. Nothing matched prints 0 and exits 0.

    Example: acomm deadletter replay --all --reason dispatch_failed --since -1h
    """


@app.command()
@runs(deadletter_run.discard)
def discard(inv: Invocation, message_id: Msg, recipient: Recipient = None) -> None:
    """Remove a dead letter for good.

    Example: acomm deadletter discard 42
    """


@app.command()
@runs(deadletter_run.purge)
def purge(
    inv: Invocation,
    older_than: Annotated[
        str,
        typer.Option(click_type=params.DURATION, help="Older than this. " + params.DURATION_HELP),
    ],
) -> None:
    """Remove dead letters older than a duration.

    Example: acomm deadletter purge --older-than 7d
    """
