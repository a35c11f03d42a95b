"""`acomm deadletter ...` (alias `dead-letters`): inspect, replay, discard, purge."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli import clock, model
from acomm_cli.cli import lazy, params
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, takes_invocation
from acomm_cli.errors import UsageError
from acomm_cli.output import columns, render, render_deadletters

if TYPE_CHECKING:
    from acomm_cli.engine import deadletters
else:
    deadletters = lazy.module("acomm_cli.engine.deadletters")

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
@takes_invocation
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
    with inv.store(write=False) as conn:
        items, total = deadletters.list_dead_letters(
            conn, channel=channel, recipient=recipient, reason=reason, limit=limit, offset=offset
        )
    render_deadletters.dead_letters(inv.output(), items, total)


@app.command()
@takes_invocation
def show(inv: Invocation, message_id: Msg, recipient: Recipient = None) -> None:
    """Show a message's dead letters whole, with each delivery attempt.

    Each: reason, retry_count, last_error, the message (type, topic, metadata, content...)
    and every attempt's delivered_at and read_at. Attempts are recorded from schema m012
    on; a store upgraded from an older one lists only the last attempt of a message that
    died before the upgrade.

    Example: acomm deadletter show 42 --json
    """
    with inv.store(write=False) as conn:
        records = deadletters.records(conn, message_id, recipient)
    render_deadletters.dead_letter_records(inv.output(), records)


@app.command()
@takes_invocation
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
    if all_ and message_id is not None:
        raise UsageError(
            "message: give a message id or --all, not both", field="message", value=message_id
        )
    if not all_:
        if message_id is None:
            raise UsageError(
                "message: give a message id, or --all to replay every dead "
                "letter the filters match",
                field="message",
            )
        for name, given in (
            ("channel", channel),
            ("reason", reason),
            ("since", since),
            ("dry_run", dry_run or None),
        ):
            if given is not None:
                flag = "--" + name.replace("_", "-")
                raise UsageError(f"{name}: {flag} goes with --all", field=name)
        with inv.store(write=True) as conn:
            items = deadletters.replay(conn, message_id, recipient, clock.now_ms())
        render_deadletters.dead_letters(inv.output(), items, len(items))
        return
    now = clock.now_ms()
    lo = clock.parse_time(since, "since", now) if since is not None else None
    with inv.store(write=True) as conn:
        result = deadletters.redrive(
            conn,
            channel=channel,
            recipient=recipient,
            reason=reason,
            since=lo,
            now=now,
            dry_run=dry_run,
        )
    render_deadletters.redrive(inv.output(), result)


@app.command()
@takes_invocation
def discard(inv: Invocation, message_id: Msg, recipient: Recipient = None) -> None:
    """Remove a dead letter for good.

    Example: acomm deadletter discard 42
    """
    with inv.store(write=True) as conn:
        n = deadletters.discard(conn, message_id, recipient)
    render.ok(inv.output(), {"discarded": n}, str(n))


@app.command()
@takes_invocation
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
    with inv.store(write=True) as conn:
        n = deadletters.purge(conn, clock.parse_duration(older_than, "older_than"), clock.now_ms())
    render.ok(inv.output(), {"purged": n}, str(n))
