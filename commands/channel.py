"""`acomm channel ...`: create, join, leave, list, show, pause, resume, drain, close."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import params, render
from acomm_cli.commands._common import AsAgent, identity, output, store
from acomm_cli.engine import channels

app = typer.Typer(help="Create and manage channels.\n\nExample: acomm channel create team "
                  "--type group --as planner", no_args_is_help=True,
                  add_completion=False)

NewName = Annotated[str, typer.Argument(help="Channel name.")]
Name = Annotated[str, typer.Argument(click_type=params.CHANNEL, help="Channel name.")]


@app.command()
def create(
    ctx: typer.Context,
    name: NewName,
    type_: Annotated[str, typer.Option(
        "--type", "-t", click_type=params.CHANNEL_TYPE,
        help="direct, group, broadcast, pubsub or queue (each message to one member: the "
        "first receive claims it).")] = "group",
    as_: AsAgent = None,
    delivery: Annotated[str | None, typer.Option(
        click_type=params.DELIVERY_MODE,
        help="at-most-once, at-least-once or exactly-once.")] = None,
    max_message_size: Annotated[str | None, typer.Option(
        click_type=params.SIZE,
        help="e.g. 65536 or 1MiB; at most 998951424 bytes (SQLite's row limit).")] = None,
    ack_timeout: Annotated[str | None, typer.Option(
        click_type=params.DURATION, help="e.g. 30s.")] = None,
    max_retries: Annotated[int | None, typer.Option(
        click_type=params.COUNT, help="Redeliveries before a dead letter.")] = None,
    retry_backoff: Annotated[str | None, typer.Option(
        click_type=params.DURATION, help="Base back-off, e.g. 1000ms.")] = None,
    retry_jitter: Annotated[float | None, typer.Option(
        click_type=params.FRACTION, help="A fraction, e.g. 0.1.")] = None,
    echo: Annotated[bool | None, typer.Option("--echo/--no-echo",
                                              help="Senders receive their own messages.")] = None,
    priority_ordering: Annotated[bool | None, typer.Option(
        "--priority-ordering/--no-priority-ordering", help="Receive by priority first.")] = None,
    max_pending: Annotated[int | None, typer.Option(
        click_type=params.COUNT, help="0 = unlimited.")] = None,
    dedupe_window: Annotated[str | None, typer.Option(
        click_type=params.DURATION, help="e.g. 24h.")] = None,
    retention_count: Annotated[int | None, typer.Option(
        click_type=params.COUNT,
        help="`compact` keeps at most this many finished messages (0 = no limit).")] = None,
    retention_age: Annotated[str | None, typer.Option(
        click_type=params.DURATION,
        help="`compact` removes finished messages older than this, e.g. 7d.")] = None,
    lease: Annotated[str | None, typer.Option(
        click_type=params.DURATION,
        help="How long a received or in_progress ack holds a delivery before it is "
        "redelivered (default: the ack timeout), e.g. 5m.")] = None,
    message_ttl: Annotated[str | None, typer.Option(
        click_type=params.DURATION,
        help="Messages not read within this are dead-lettered `expired` (send --ttl "
        "overrides), e.g. 10m.")] = None,
    retry_failed: Annotated[bool | None, typer.Option(
        "--retry-failed/--no-retry-failed",
        help="A `failed` ack gives the delivery back for a retry (up to --max-retries).")
    ] = None,
    if_not_exists: Annotated[bool, typer.Option(
        "--if-not-exists", help="Succeed if it exists with the same type.")] = False,
) -> None:
    """Create a channel owned by --as; prints its id.

    Example: acomm channel create builds --type pubsub --as ci
    """
    owner = identity(as_)
    cfg = channels.channel_config(
        delivery=delivery,
        max_message_size=clock.parse_size(max_message_size, "max_message_size")
        if max_message_size is not None else None,
        ack_timeout_ms=clock.parse_duration(ack_timeout, "ack_timeout")
        if ack_timeout is not None else None,
        max_retries=max_retries,
        retry_backoff_ms=clock.parse_duration(retry_backoff, "retry_backoff")
        if retry_backoff is not None else None,
        retry_jitter=retry_jitter, echo=echo, priority_ordering=priority_ordering,
        max_pending=max_pending,
        dedupe_window_ms=clock.parse_duration(dedupe_window, "dedupe_window")
        if dedupe_window is not None else None,
        retention_count=retention_count,
        retention_age_ms=clock.parse_duration(retention_age, "retention_age")
        if retention_age is not None else None,
        lease_ms=clock.parse_duration(lease, "lease") if lease is not None else None,
        message_ttl_ms=clock.parse_duration(message_ttl, "message_ttl")
        if message_ttl is not None else None,
        retry_failed=retry_failed,
    )
    with store(ctx, write=True, create=True) as conn:
        ch = channels.create_channel(conn, name, type_, owner, cfg, clock.now_ms(),
                                     if_not_exists=if_not_exists)
    render.channel(output(ctx), ch, id_only=True)


@app.command()
def join(
    ctx: typer.Context,
    name: Name,
    agent: Annotated[str, typer.Argument(click_type=params.AGENT, help="The agent joining.")],
    role: Annotated[str, typer.Option(click_type=params.ROLE, help="member or observer.")]
    = "member",
) -> None:
    """Add an agent to a channel (joining twice changes nothing).

    Example: acomm channel join team reviewer --role observer
    """
    with store(ctx, write=True) as conn:
        r = channels.join_channel(conn, name, agent, role, clock.now_ms())
    render.change(output(ctx), render.channel_doc(r.channel), r.changed,
                  f"{agent} is already in channel {name} (as {r.channel.role_of(agent)})")


@app.command()
def leave(
    ctx: typer.Context,
    name: Name,
    agent: Annotated[str, typer.Argument(click_type=params.AGENT, help="The agent leaving.")],
) -> None:
    """Remove an agent; what still waited for it is dead-lettered (recipient_left).

    An agent that is not in the channel is out already: exit 0, "changed": false.

    Example: acomm channel leave team reviewer
    """
    with store(ctx, write=True) as conn:
        r = channels.leave_channel(conn, name, agent, clock.now_ms())
    render.change(output(ctx), render.channel_doc(r.channel), r.changed,
                  f"{agent} is not in channel {name}; nothing to leave")


@app.command("list")
def list_(ctx: typer.Context) -> None:
    """List channels.

    Example: acomm channel list --json
    """
    with store(ctx, write=False) as conn:
        cs = channels.list_channels(conn)
    render.channels(output(ctx), cs)


@app.command()
def show(ctx: typer.Context, name: Name) -> None:
    """Show a channel: type, state, owner, configuration, participants.

    Example: acomm channel show team
    """
    with store(ctx, write=False) as conn:
        ch = channels.get_channel(conn, name)
    render.channel(output(ctx), ch)


def _state_command(action: str, doc: str) -> None:
    def command(ctx: typer.Context, name: Name) -> None:
        with store(ctx, write=True) as conn:
            r = channels.change_channel_state(conn, name, action)
        ch = r.channel
        render.change(output(ctx), render.channel_doc(ch), r.changed,
                      f"channel {ch.name} is already {ch.state.value}",
                      f"{ch.name}\t{ch.state.value}")

    command.__doc__ = doc
    app.command(action)(command)


_state_command("pause", "Pause sends (recipients can still read).\n\nExample: acomm channel "
                        "pause team")
_state_command("resume", "Make a paused or draining channel active again.\n\nExample: acomm "
                         "channel resume team")
_state_command("drain", "Stop new sends while recipients read what is left.\n\nExample: acomm "
                        "channel drain team")
_state_command("close", "Close for good: no sends or receives; history stays.\n\nExample: "
                        "acomm channel close team")
