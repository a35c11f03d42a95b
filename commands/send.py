"""`acomm send` and `acomm publish`."""

from __future__ import annotations

import io
import json
import sys
from typing import Annotated, TextIO

import typer

from acomm_cli import clock, model
from acomm_cli.cli import params, render
from acomm_cli.commands._common import (
    identity,
    limits,
    output,
    read_body,
    refuse_terminal_stdin,
    store,
)
from acomm_cli.engine import sending
from acomm_cli.errors import CommError, UsageError, ValidationFailed
from acomm_cli.model import SendRequest

app = typer.Typer(add_completion=False)

Sender = Annotated[str | None, typer.Option(
    "--as", "--from", "--sender", click_type=params.AGENT, envvar="ACOMM_AGENT", show_envvar=True,
    help="The sending agent.")]
Type = Annotated[str, typer.Option(
    "--type", "-t", click_type=params.MESSAGE_TYPE,
    help="text, command, query, response, acknowledgment (ack), notification, broadcast, error.")]
Priority = Annotated[str, typer.Option(
    "--priority", "-p", click_type=params.PRIORITY,
    help="low, normal, high, urgent, critical or 0-4.")]
Correlation = Annotated[str | None, typer.Option(metavar="CORR", help="Thread / request id.")]
DedupeKey = Annotated[str | None, typer.Option(
    help="Idempotency key: a repeat inside the channel's window sends nothing again.")]
Meta = Annotated[list[str] | None, typer.Option(
    "--meta", metavar="KEY=VALUE", help="k=v metadata (repeatable).")]
Delay = Annotated[str | None, typer.Option(
    click_type=params.DURATION, help="Deliver after this long, e.g. 30s.")]
DeliverAt = Annotated[str | None, typer.Option(
    click_type=params.TIME, help="Deliver at this time (ISO 8601).")]
Ttl = Annotated[str | None, typer.Option(
    click_type=params.DURATION,
    help="Time to live: not read within this (from delivery), the message is dead-lettered "
    "`expired`, e.g. 10m (default: the channel's --message-ttl).")]



def _schedule(delay: str | None, deliver_at: str | None, now: int) -> tuple[int | None, int | None]:
    if delay is not None and deliver_at is not None:
        raise UsageError("give --delay or --deliver-at, not both", field="delay")
    return (clock.parse_duration(delay, "delay") if delay is not None else None,
            clock.parse_time(deliver_at, "deliver_at", now) if deliver_at is not None else None)


def _read_batch(source: str) -> list[tuple[SendRequest, str | None, int]]:
    if source == "-":
        refuse_terminal_stdin("no batch on stdin: pipe JSON Lines in, or give a file",
                              "batch")
    # Bytes that are not UTF-8 become lone surrogates, refused by the engine naming the line.
    fh: TextIO
    try:
        if source != "-":
            fh = open(source, encoding="utf-8", errors="surrogateescape")
        elif hasattr(sys.stdin, "buffer"):
            fh = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")
        else:
            fh = sys.stdin
    except OSError as exc:
        raise ValidationFailed(f"batch: cannot read {source}: {exc.strerror}", field="batch",
                               value=source) from None
    items = []
    with fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValidationFailed(f"line {n}: not valid JSON ({exc.msg})", field="line",
                                       line=n) from None
            except RecursionError:
                raise ValidationFailed(f"line {n}: nested too deeply", field="line",
                                       line=n) from None
            items.append(sending.batch_request(obj, n))
    return items


@app.command()
def send(
    ctx: typer.Context,
    channel: Annotated[str | None, typer.Argument(
        click_type=params.CHANNEL, help="Channel name.", show_default=False)] = None,
    body: Annotated[str | None, typer.Argument(help="Message body; '-' or omitted: stdin.",
                                               show_default=False)] = None,
    as_: Sender = None,
    to: Annotated[str | None, typer.Option(
        click_type=params.AGENTS,
        help="Direct message to these agents (comma-separated) instead of a channel.")] = None,
    batch: Annotated[str | None, typer.Option(
        click_type=params.FILE,
        help="Send every JSON Lines object of FILE ('-' for stdin) in one transaction.")] = None,
    type_: Type = "text",
    priority: Priority = "normal",
    topic: Annotated[str | None, typer.Option(help="Topic (needed on pubsub channels).")] = None,
    correlation_id: Correlation = None,
    dedupe_key: DedupeKey = None,
    meta: Meta = None,
    delay: Delay = None,
    deliver_at: DeliverAt = None,
    ttl: Ttl = None,
) -> None:
    """Send a message; prints its id.

    Example: acomm send team "hello" --as alice

    Example (body on stdin, direct message): echo hi | acomm send --to bob --as alice
    """
    out = output(ctx)
    now = clock.now_ms()
    if batch is not None:
        if channel is not None or body is not None or to is not None:
            raise UsageError("--batch takes everything from its file; give no channel, body "
                             "or --to", field="batch")
        items = _read_batch(batch)
        with store(ctx, write=True) as conn, render.progress(out, "sending") as progress:
            results = sending.send_batch(conn, items, now, limits(ctx), progress)
        render.batch_results(out, results)
        return
    sender = identity(as_)
    if to is not None:
        if channel is not None and body is not None:
            raise UsageError("with --to, give only the body (no channel)", field="to")
        body = channel if body is None else body
        channel = None
    elif channel is None:
        raise UsageError("name a channel, or use --to AGENT or --batch FILE", field="channel")
    delay_ms, at = _schedule(delay, deliver_at, now)
    req = SendRequest(
        sender=sender, content=read_body(body), channel=channel, type=type_, priority=priority,
        topic=topic, correlation_id=correlation_id, dedupe_key=dedupe_key,
        metadata=model.metadata_pairs(meta), delay_ms=delay_ms, deliver_at=at,
        ttl_ms=clock.parse_duration(ttl, "ttl") if ttl is not None else None,
    )
    if to is None:
        with store(ctx, write=True) as conn:
            sent = sending.send(conn, req, now, limits(ctx))
        render.send_results(out, [sent])
        return
    with store(ctx, write=True, create=True) as conn:  # a direct channel may be created
        direct = sending.send_direct(conn, req, [a.strip() for a in to.split(",")], now,
                                     limits(ctx))
    render.direct_results(out, direct)
    failed = [r for r in direct if isinstance(r, CommError)]
    if failed:
        raise typer.Exit(failed[0].exit_status)


@app.command()
def publish(
    ctx: typer.Context,
    channel: Annotated[str, typer.Argument(click_type=params.CHANNEL, help="A pubsub channel.")],
    topic: Annotated[str, typer.Argument(help="Topic, e.g. build.frontend.success.")],
    body: Annotated[str | None, typer.Argument(help="Message body; '-' or omitted: stdin.",
                                               show_default=False)] = None,
    as_: Sender = None,
    type_: Type = "notification",
    priority: Priority = "normal",
    correlation_id: Correlation = None,
    dedupe_key: DedupeKey = None,
    meta: Meta = None,
    delay: Delay = None,
    deliver_at: DeliverAt = None,
    ttl: Ttl = None,
) -> None:
    """Publish on a pubsub channel to every matching subscription; prints the id.

    Example: acomm publish ci build.frontend.success "847 tests passed" --as ci
    """
    now = clock.now_ms()
    delay_ms, at = _schedule(delay, deliver_at, now)
    req = SendRequest(
        sender=identity(as_), content=read_body(body), channel=channel, type=type_,
        priority=priority, topic=topic, correlation_id=correlation_id, dedupe_key=dedupe_key,
        metadata=model.metadata_pairs(meta), delay_ms=delay_ms, deliver_at=at,
        ttl_ms=clock.parse_duration(ttl, "ttl") if ttl is not None else None,
    )
    with store(ctx, write=True) as conn:
        result = sending.send(conn, req, now, limits(ctx))
    render.send_results(output(ctx), [result])
