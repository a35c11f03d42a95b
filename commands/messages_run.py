"""What `acomm messages` and `acomm show` do, without typer: `commands/messages.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import lazy, stopping
from acomm_cli.cli.invocation import Invocation, build_filter
from acomm_cli.errors import UsageError
from acomm_cli.lite.records import replace
from acomm_cli.output import render, render_messages

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import inbox, waiting
else:
    inbox = lazy.module("acomm_cli.engine.inbox")
    waiting = lazy.module("acomm_cli.engine.waiting")


def messages(
    inv: Invocation,
    channel: str | None,
    since: str | None,
    until: str | None,
    type_: list[str] | None,
    from_: str | None,
    topic: str | None,
    event_type: str | None,
    thread: str | None,
    actor: str | None,
    meta: list[str] | None,
    status: list[str] | None,
    grep: str | None,
    search: str | None,
    priority_min: str | None,
    sort: str | None,
    order: str | None,
    limit: int,
    offset: int,
    follow: bool,
    correlation_id: str | None,
    recipient: str | None,
    state: list[str] | None,
    trace: str | None,
) -> None:
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


def show(
    inv: Invocation,
    message_id: int,
) -> None:
    from acomm_cli.engine import engagement

    with inv.store(write=False) as conn:
        msg = inbox.show(conn, message_id)
        seen = engagement.of(conn, msg)
    render_messages.message(inv.output(), msg, seen)
