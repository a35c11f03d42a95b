"""What `acomm query`, `acomm respond` and `acomm thread` do, without typer: `commands/query.py`
declares them (options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them
directly."""

from __future__ import annotations

import os

from acomm_cli import clock, model
from acomm_cli.cli import handover as render_handover
from acomm_cli.cli import lazy, stopping
from acomm_cli.cli.commands import send_run
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.errors import Timeout, UsageError
from acomm_cli.model import SendRequest
from acomm_cli.output import render, render_messages

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import queries
else:
    queries = lazy.module("acomm_cli.engine.queries")


def query(
    inv: Invocation,
    channel: str | None,
    body: str | None,
    to: str | None,
    as_: str | None,
    timeout: str | None,
    wait_for: str | None,
    priority: str,
    topic: str | None,
    meta: list[str] | None,
) -> None:
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


def respond(
    inv: Invocation,
    correlation_id: str,
    body: str | None,
    as_: str | None,
    priority: str,
) -> None:
    agent = identity(as_)
    with inv.store(write=True) as conn:
        result = queries.respond(
            conn, correlation_id, inv.read_body(body), agent, clock.now_ms(), priority
        )
    render_messages.send_results(inv.output(), [result])


def thread(
    inv: Invocation,
    correlation_id: str,
) -> None:
    with inv.store(write=False) as conn:
        msgs = queries.thread(conn, correlation_id)
    render_messages.thread(inv.output(), correlation_id, msgs)
