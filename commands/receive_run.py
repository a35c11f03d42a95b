"""What `acomm receive` does, without typer: `commands/receive.py` declares it (options,
help) and runs this; the fast path (`acomm_cli.cli.main`) runs it directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import handover as render_handover
from acomm_cli.cli import lazy, stopping
from acomm_cli.cli.invocation import Invocation, build_filter, identity
from acomm_cli.errors import OutputFailed, Timeout, UsageError, ValidationFailed

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import timers, waiting
else:
    timers = lazy.module("acomm_cli.engine.timers")
    waiting = lazy.module("acomm_cli.engine.waiting")


def receive(
    inv: Invocation,
    *,
    channel_arg: str | None,
    as_: str | None,
    channel: str | None,
    since: str | None,
    until: str | None,
    type_: list[str] | None,
    from_: str | None,
    topic: str | None,
    status: list[str] | None,
    grep: str | None,
    priority_min: str | None,
    sort: str | None,
    order: str | None,
    limit: int,
    offset: int,
    peek: bool,
    body: bool,
    wait: str | None,
    ack: str | None,
    follow: bool,
    event_type: str | None = None,
    thread: str | None = None,
    actor: str | None = None,
    meta: list[str] | None = None,
    cursor: str | None = None,
) -> None:
    if cursor is not None:
        given = [
            option
            for option, value in (
                ("a channel", channel_arg or channel),
                ("--since", since),
                ("--until", until),
                ("--type", type_),
                ("--from", from_),
                ("--topic", topic),
                ("--status", status),
                ("--grep", grep),
                ("--priority-min", priority_min),
                ("--sort", sort),
                ("--order", order),
                ("--offset", offset),
                ("--wait", wait),
                ("--ack", ack),
                ("--follow", follow),
                ("--event-type", event_type),
                ("--thread", thread),
                ("--actor", actor),
                ("--meta", meta),
            )
            if value
        ]
        if given:
            raise UsageError(
                f"cursor: --cursor reads with the cursor's own channel and filter; drop"
                f" {', '.join(given)} (`acomm cursor create` sets them)",
                field="cursor",
                value=cursor,
            )
        _read_cursor(inv, cursor, limit, peek=peek, body=body)
        return
    agent = identity(as_, "--as")
    wait_ms = clock.parse_duration(wait, "wait") if wait is not None else None
    wait_s = wait_ms / 1000 if wait_ms is not None else None
    if ack is not None and (peek or follow):
        other = "--peek" if peek else "--follow"
        raise ValidationFailed(
            f"ack: --ack acknowledges what it reads; it cannot go with {other}",
            field="ack",
            value=ack,
        )
    if wait is not None and follow:
        # --follow already waits, until interrupted; a bound on it would be --wait's exit 124
        # on a quiet pass, which a follower never wants
        raise UsageError(
            f"wait: --wait {wait} cannot go with --follow, which waits for new "
            "messages until interrupted (use --wait alone to stop after the "
            "first batch)",
            field="wait",
            value=wait,
        )
    now = clock.now_ms()
    f = build_filter(
        channel=channel_arg or channel,
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
        now=now,
        event_type=event_type,
        thread=thread,
        actor=actor,
        meta=meta,
    )
    emit = render_handover.inbox_output(
        inv.output(), body=body, follow=follow, peek=peek, stall_s=inv.stall_s()
    )
    with inv.store(write=True, read_fallback=peek) as conn:
        if follow:  # rich on a terminal, JSON Lines when piped
            with stopping.on_signals() as stop:
                emit = render_handover.inbox_output(
                    inv.output(), body=body, follow=True, peek=peek, stall_s=None, stop=stop
                )
                gone = render_handover.reader_gone
                waiting.follow(
                    conn, agent, f, emit, peek=peek, stop=stop, gone=gone, limits=inv.limits()
                )
            # the reader left: as a failed write would say (141), or, with --peek, as any
            # read-only command's `| head` ends (0: nothing was to be marked read)
            if not peek and not stop() and gone():
                raise OutputFailed(
                    "stdout: the reader closed the pipe; nothing more was marked read", count=0
                )
            return
        if ack is not None:
            from acomm_cli.engine import acking

            result = acking.receive_ack(conn, agent, f, ack, now, emit=emit, wait_s=wait_s)
        elif wait_s is not None:
            result = waiting.receive_wait(
                conn, agent, f, wait_s, peek=peek, emit=emit, limits=inv.limits()
            )
        else:  # the configured limits: a schedule's occurrence this read sends respects them
            result = timers.receive_due(
                conn, agent, f, now, peek=peek, emit=emit, limits=inv.limits()
            )
    if wait_ms is not None and not result.messages:
        raise Timeout(f"nothing arrived for {agent} within {clock.format_duration(wait_ms)}")


def _read_cursor(inv: Invocation, name: str, limit: int, *, peek: bool, body: bool) -> None:
    """`receive --cursor NAME`: what the cursor has not read yet, printed before the cursor
    moves past it (in one transaction)."""
    from acomm_cli.engine import cursors

    emit = render_handover.inbox_output(
        inv.output(), body=body, follow=False, peek=peek, stall_s=inv.stall_s()
    )
    with inv.store(write=True) as conn:
        cursors.read(conn, name, limit, clock.now_ms(), peek=peek, emit=emit)
