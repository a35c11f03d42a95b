"""`acomm query`, `acomm respond`, `acomm thread`: request and response."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import columns, params, render, render_messages, stopping
from acomm_cli.cli import handover as render_handover
from acomm_cli.commands._common import (
    AsAgent,
    identity,
    limits,
    listing,
    output,
    read_body,
    stall_s,
    store,
)
from acomm_cli.engine import queries
from acomm_cli.errors import Timeout
from acomm_cli.model import SendRequest

app = typer.Typer(add_completion=False)


@app.command()
def query(
    ctx: typer.Context,
    channel: Annotated[str, typer.Argument(click_type=params.CHANNEL, help="Channel name.")],
    body: Annotated[str | None, typer.Argument(help="The question; '-' or omitted: stdin.",
                                               show_default=False)] = None,
    as_: AsAgent = None,
    timeout: Annotated[str | None, typer.Option(
        click_type=params.DURATION,
        help="Recipients that have not read it by then get it dead-lettered (expired).")]
    = None,
    wait: Annotated[float | None, typer.Option(
        click_type=params.SECONDS,
        help="Wait this many seconds for the first response and print it (exit 124 if none).")]
    = None,
    priority: Annotated[str, typer.Option(
        "--priority", "-p", click_type=params.PRIORITY,
        help="low, normal, high, urgent, critical or 0-4.")] = "normal",
    topic: Annotated[str | None, typer.Option(help="Topic (needed on pubsub channels).")] = None,
) -> None:
    """Ask a question; prints its correlation id (or, with --wait, the first answer).

    Example: answer=$(acomm query team "pool size?" --as lead --wait 30)
    """
    agent = identity(as_)
    now = clock.now_ms()
    timeout_ms = clock.parse_duration(timeout, "timeout") if timeout is not None else None
    req = SendRequest(sender=agent, content=read_body(body), channel=channel, priority=priority,
                      topic=topic)
    out = output(ctx)
    with store(ctx, write=True) as conn:
        result = queries.query(conn, req, now, timeout_ms, limits(ctx), wait)
        if wait is None:
            render.ok(out, render_messages.send_doc(result), result.correlation_id)
            return
        asked = result.correlation_id
        assert asked is not None  # send gives every query a correlation id
        emit = render_handover.answer_output(out, stall_s(ctx))
        with stopping.on_signals() as stop:
            answer = queries.await_response(conn, asked, agent, wait, stop, emit)
    if answer is None:
        raise Timeout(f"no response to {result.correlation_id} within {wait:g}s",
                      correlation_id=result.correlation_id)


@app.command()
def respond(
    ctx: typer.Context,
    correlation_id: Annotated[str, typer.Argument(metavar="CORR", help="The query's id.")],
    body: Annotated[str | None, typer.Argument(help="The answer; '-' or omitted: stdin.",
                                               show_default=False)] = None,
    as_: AsAgent = None,
    priority: Annotated[str, typer.Option(
        "--priority", "-p", click_type=params.PRIORITY,
        help="low, normal, high, urgent, critical or 0-4.")] = "normal",
) -> None:
    """Answer a query, to its asker; counts as your ack; prints the id.

    Example: acomm respond "$corr" "20 connections" --as researcher
    """
    agent = identity(as_)
    with store(ctx, write=True) as conn:
        result = queries.respond(conn, correlation_id, read_body(body), agent, clock.now_ms(),
                                  priority)
    render_messages.send_results(output(ctx), [result])


@app.command()
@listing(columns.THREAD)
def thread(
    ctx: typer.Context,
    correlation_id: Annotated[str, typer.Argument(metavar="CORR", help="Correlation id.")],
) -> None:
    """A query (or command) and everything correlated with it, in order.

    Example: acomm thread "$corr" --json
    """
    with store(ctx, write=False) as conn:
        msgs = queries.thread(conn, correlation_id)
    render_messages.thread(output(ctx), correlation_id, msgs)
