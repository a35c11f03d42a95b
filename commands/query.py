"""`acomm query`, `acomm respond`, `acomm thread`: request and response."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli import clock, model
from acomm_cli.cli import handover as render_handover
from acomm_cli.cli import lazy, params, stopping
from acomm_cli.cli.commands import send_run
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.cli.params import AsAgent, listing, takes_invocation
from acomm_cli.errors import Timeout, UsageError
from acomm_cli.model import SendRequest
from acomm_cli.output import columns, render, render_messages

if TYPE_CHECKING:
    from acomm_cli.engine import queries
else:
    queries = lazy.module("acomm_cli.engine.queries")

app = typer.Typer(add_completion=False)


@app.command()
@takes_invocation
def query(
    inv: Invocation,
    channel: Annotated[
        str | None,
        typer.Argument(
            click_type=params.CHANNEL,
            help="Channel name (none with --to).",
            show_default=False,
        ),
    ] = None,
    body: Annotated[
        str | None, typer.Argument(help="The question; '-' or omitted: stdin.", show_default=False)
    ] = None,
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            click_type=params.AGENT,
            help="Ask one agent, on your direct channel with it (an agent another node owns"
            " too); then give only the body.",
        ),
    ] = None,
    as_: AsAgent = None,
    timeout: Annotated[
        str | None,
        typer.Option(
            click_type=params.DURATION,
            help="Recipients that have not read it by then get it dead-lettered (expired). "
            + params.DURATION_HELP,
        ),
    ] = None,
    wait_for: Annotated[
        str | None,
        typer.Option(
            "--wait",
            click_type=params.DURATION,
            help="Wait this long for the first response and print it (exit 124 if none; "
            "exit 5 at once when every delivery of the question is dead-lettered, here or on "
            "the recipient's node). " + params.DURATION_HELP,
        ),
    ] = None,
    priority: Annotated[
        str,
        typer.Option(
            "--priority",
            "-p",
            click_type=params.PRIORITY,
            help="low, normal, high, urgent, critical or 0-4.",
        ),
    ] = "normal",
    topic: Annotated[str | None, typer.Option(help="Topic (needed on pubsub channels).")] = None,
    meta: Annotated[
        list[str] | None,
        typer.Option(
            "--meta",
            metavar="KEY[=VALUE]",
            help="With --wait: wait for an answer whose metadata has KEY=VALUE, KEY!=VALUE"
            " (or no KEY), KEY (present) or !KEY (absent); repeatable, all must hold. Other"
            " answers stay unread.",
        ),
    ] = None,
) -> None:
    """Ask a question; prints its correlation id (or, with --wait, the first answer).

    Example: answer=$(acomm query team "pool size?" --as lead --wait 30s)

    Example (one agent, maybe on another node): acomm query --to bob "size?" --as lead --wait 30s

    Example (only a final answer): acomm query team "deploy?" --as lead --wait 5m --meta final
    """
    if to is not None:  # as `send --to`: the one positional is the body
        if channel is not None and body is not None:
            raise UsageError("with --to, give only the body (no channel)", field="to")
        body = channel if body is None else body
        channel = None
    elif channel is None:
        raise UsageError("name a channel, or use --to AGENT", field="channel")
    agent = identity(as_)
    conds = model.meta_conditions(meta)
    if conds and wait_for is None:
        raise UsageError(
            "meta: --meta filters the answer --wait waits for; give --wait too", field="meta"
        )
    now = clock.now_ms()
    timeout_ms = clock.parse_duration(timeout, "timeout") if timeout is not None else None
    wait = clock.parse_duration(wait_for, "wait") / 1000 if wait_for is not None else None
    req = SendRequest(
        sender=agent,
        content=inv.read_body(body),
        channel=channel,
        priority=priority,
        topic=topic,
        # a query asked from a dispatch run joins the run's trace, as a send does
        trace_id=send_run.trace_of(os.environ.get("ACOMM_TRACE_ID")),
    )
    out = inv.output()
    # a direct channel may be created by --to
    with inv.store(write=True, create=to is not None) as conn:
        result = queries.query(conn, req, now, timeout_ms, inv.limits(), wait, to=to)
        if wait is None:
            render.ok(out, render_messages.send_doc(result), result.correlation_id)
            return
        asked = result.correlation_id
        assert asked is not None  # send gives every query a correlation id
        emit = render_handover.answer_output(out, inv.stall_s())
        with stopping.on_signals() as stop:
            answer = queries.await_response(conn, asked, agent, wait, stop, emit, conds)
    if answer is None:
        raise Timeout(
            f"no response to {result.correlation_id} within {wait:g}s",
            correlation_id=result.correlation_id,
        )


@app.command()
@takes_invocation
def respond(
    inv: Invocation,
    correlation_id: Annotated[str, typer.Argument(metavar="CORR", help="The query's id.")],
    body: Annotated[
        str | None, typer.Argument(help="The answer; '-' or omitted: stdin.", show_default=False)
    ] = None,
    as_: AsAgent = None,
    priority: Annotated[
        str,
        typer.Option(
            "--priority",
            "-p",
            click_type=params.PRIORITY,
            help="low, normal, high, urgent, critical or 0-4.",
        ),
    ] = "normal",
) -> None:
    """Answer a query, to its asker; counts as your ack; prints the id.

    Example: acomm respond "$corr" "20 connections" --as researcher
    """
    agent = identity(as_)
    with inv.store(write=True) as conn:
        result = queries.respond(
            conn, correlation_id, inv.read_body(body), agent, clock.now_ms(), priority
        )
    render_messages.send_results(inv.output(), [result])


@app.command()
@listing(columns.THREAD)
@takes_invocation
def thread(
    inv: Invocation,
    correlation_id: Annotated[str, typer.Argument(metavar="CORR", help="Correlation id.")],
) -> None:
    """A query (or command) and everything correlated with it, in order.

    Example: acomm thread "$corr" --json
    """
    with inv.store(write=False) as conn:
        msgs = queries.thread(conn, correlation_id)
    render_messages.thread(inv.output(), correlation_id, msgs)
