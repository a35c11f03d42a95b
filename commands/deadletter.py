"""`acomm deadletter ...` (alias `dead-letters`): inspect, replay, discard, purge."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import clock, model
from acomm_cli.cli import params, render
from acomm_cli.commands._common import output, store
from acomm_cli.engine import delivery

app = typer.Typer(help="Inspect and recover dead letters.\n\nExample: acomm deadletter "
                  "list --json", no_args_is_help=True,
                  add_completion=False)

Msg = Annotated[int, typer.Argument(metavar="MSG", help="The message id.")]
Recipient = Annotated[str | None, typer.Option(
    click_type=params.AGENT, help="Only this recipient's dead letter.")]


@app.command("list")
def list_(
    ctx: typer.Context,
    channel: Annotated[str | None, typer.Option(
        "--channel", "-c", click_type=params.CHANNEL, help="Only this channel.")] = None,
    recipient: Recipient = None,
    reason: Annotated[str | None, typer.Option(
        click_type=params.DEAD_LETTER_REASON,
        help=f"{', '.join(model.DEAD_LETTER_REASONS)}.")] = None,
    limit: Annotated[int, typer.Option(click_type=params.COUNT, help="At most this many.")] = 100,
    offset: Annotated[int, typer.Option(click_type=params.COUNT, help="Skip this many first.")]
    = 0,
) -> None:
    """List dead letters, oldest first.

    Example: acomm deadletter list --reason max_retries_exceeded --json
    """
    with store(ctx, write=False) as conn:
        items, total = delivery.list_dead_letters(conn, channel=channel, recipient=recipient,
                                                  reason=reason, limit=limit, offset=offset)
    render.dead_letters(output(ctx), items, total)


@app.command()
def show(ctx: typer.Context, message_id: Msg, recipient: Recipient = None) -> None:
    """Show a message's dead letters.

    Example: acomm deadletter show 42
    """
    with store(ctx, write=False) as conn:
        items = delivery.dead_letters_of(conn, message_id, recipient)
    render.dead_letters(output(ctx), items, len(items))


@app.command()
def replay(ctx: typer.Context, message_id: Msg, recipient: Recipient = None) -> None:
    """Deliver a dead letter again (same id, fresh retry budget).

    Example: acomm deadletter replay 42 --recipient executor
    """
    with store(ctx, write=True) as conn:
        items = delivery.replay(conn, message_id, recipient, clock.now_ms())
    render.dead_letters(output(ctx), items, len(items))


@app.command()
def discard(ctx: typer.Context, message_id: Msg, recipient: Recipient = None) -> None:
    """Remove a dead letter for good.

    Example: acomm deadletter discard 42
    """
    with store(ctx, write=True) as conn:
        n = delivery.discard(conn, message_id, recipient)
    render.ok(output(ctx), {"discarded": n}, str(n))


@app.command()
def purge(
    ctx: typer.Context,
    older_than: Annotated[str, typer.Option(click_type=params.DURATION, help="e.g. 7d.")],
) -> None:
    """Remove dead letters older than a duration.

    Example: acomm deadletter purge --older-than 7d
    """
    with store(ctx, write=True) as conn:
        n = delivery.purge(conn, clock.parse_duration(older_than, "older_than"),
                           clock.now_ms())
    render.ok(output(ctx), {"purged": n}, str(n))
