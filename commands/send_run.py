"""What `acomm send` and `acomm publish` do, without typer: `commands/send.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

import io
import os
import sys

from acomm_cli import clock, model
from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.errors import CommError, UsageError, ValidationFailed
from acomm_cli.model import SendRequest
from acomm_cli.output import render, render_messages

TYPE_CHECKING = False  # typing's, without importing typing (a send does not load it)
if TYPE_CHECKING:
    from typing import TextIO

    from acomm_cli.engine import sending
else:
    sending = lazy.module("acomm_cli.engine.sending")


def _schedule(delay: str | None, deliver_at: str | None, now: int) -> tuple[int | None, int | None]:
    if delay is not None and deliver_at is not None:
        raise UsageError("give --delay or --deliver-at, not both", field="delay")
    return (
        clock.parse_duration(delay, "delay") if delay is not None else None,
        clock.parse_time(deliver_at, "deliver_at", now) if deliver_at is not None else None,
    )


def trace_of(trace_id: str | None) -> str | None:
    """The trace a send joins: `--trace-id` (or $ACOMM_TRACE_ID), else $TRACEPARENT's; None
    lets the engine inherit or start one. A malformed TRACEPARENT is a note, never fatal.
    The traces module is imported only when one of them is set (a plain send's start-up)."""
    if trace_id is None and "TRACEPARENT" not in os.environ:
        return None
    from acomm_cli.engine import traces

    if trace_id is not None:
        return traces.check(trace_id, "trace_id")
    found, note = traces.from_environment(os.environ)
    if note is not None:
        render.note(note)
    return found


def _event(*values: str | None) -> dict[str, str] | None:
    """The event options as the engine takes them (engine/events.py FIELDS, in order), or
    None when none is given: a plain send builds nothing more."""
    if all(v is None for v in values):
        return None
    names = (
        "event_type",
        "actor",
        "target",
        "thread_id",
        "comment_id",
        "parent_comment_id",
        "depth",
        "language",
        "action_hint",
        "occurred_at",
        "event_id",
    )
    return {k: v for k, v in zip(names, values, strict=True) if v is not None}


def _read_batch(inv: Invocation, source: str) -> list[tuple[SendRequest, str | None, int]]:
    if source == "-":
        inv.refuse_terminal_stdin("no batch on stdin: pipe JSON Lines in, or give a file", "batch")
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
        raise ValidationFailed(
            f"batch: cannot read {source}: {exc.strerror}", field="batch", value=source
        ) from None
    import json  # only for --batch: a plain send does not import it

    limits = inv.limits()  # a line's `attach` files are read against them
    items = []
    with fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValidationFailed(
                    f"line {n}: not valid JSON ({exc.msg})", field="line", line=n
                ) from None
            except RecursionError:
                raise ValidationFailed(
                    f"line {n}: nested too deeply", field="line", line=n
                ) from None
            items.append(sending.batch_request(obj, n, limits))
    return items


def send(
    inv: Invocation,
    *,
    channel: str | None,
    body: str | None,
    as_: str | None,
    to: str | None,
    batch: str | None,
    type_: str,
    priority: str,
    topic: str | None,
    correlation_id: str | None,
    dedupe_key: str | None,
    meta: list[str] | None,
    delay: str | None,
    deliver_at: str | None,
    ttl: str | None,
    format_: str | None = None,
    subject: str | None = None,
    attach: list[str] | None = None,
    trace_id: str | None = None,
    event_type: str | None = None,
    actor: str | None = None,
    target: str | None = None,
    thread: str | None = None,
    comment: str | None = None,
    parent_comment: str | None = None,
    depth: str | None = None,
    language: str | None = None,
    action_hint: str | None = None,
    occurred_at: str | None = None,
    event_id: str | None = None,
    group_key: str | None = None,
) -> int | None:
    out = inv.output()
    now = clock.now_ms()
    event = _event(
        event_type,
        actor,
        target,
        thread,
        comment,
        parent_comment,
        depth,
        language,
        action_hint,
        occurred_at,
        event_id,
    )
    if batch is not None:
        if format_ is not None or subject is not None or attach:
            raise UsageError(
                "--batch takes everything from its file; give format, subject and attach on "
                "its lines",
                field="batch",
            )
        if (
            channel is not None
            or body is not None
            or to is not None
            or event is not None
            or group_key is not None
        ):
            raise UsageError(
                "--batch takes everything from its file; give no channel, body, --to, "
                "--group-key or event option (a line's `event` object, `group_key`)",
                field="batch",
            )
        items = _read_batch(inv, batch)
        trace = trace_of(trace_id)
        if trace is not None:  # a line without its own trace id joins the command's
            items = [
                (SendRequest(**{**req.__dict__, "trace_id": req.trace_id or trace}), to, n)
                for req, to, n in items
            ]
        for sender in dict.fromkeys(req.sender for req, _, _ in items):
            identity(sender)  # each line acts as its sender: proven like --as
        with inv.store(write=True) as conn, render.progress(out, "sending") as progress:
            results = sending.send_batch(conn, items, now, inv.limits(), progress)
        render_messages.batch_results(out, results)
        return None
    if to is not None:
        if channel is not None and body is not None:
            raise UsageError("with --to, give only the body (no channel)", field="to")
        body = channel if body is None else body
        channel = None
    elif channel is None:  # said before a missing --as: the channel comes first in the line
        raise UsageError("name a channel, or use --to AGENT or --batch FILE", field="channel")
    sender = identity(as_)
    delay_ms, at = _schedule(delay, deliver_at, now)
    req = SendRequest(
        sender=sender,
        content=inv.read_body(body),
        channel=channel,
        type=type_,
        priority=priority,
        topic=topic,
        correlation_id=correlation_id,
        dedupe_key=dedupe_key,
        metadata=model.metadata_pairs(meta),
        delay_ms=delay_ms,
        deliver_at=at,
        ttl_ms=clock.parse_duration(ttl, "ttl") if ttl is not None else None,
        rich=_rich(inv, format_, subject, attach),
        trace_id=trace_of(trace_id),
        event=event,
        group_key=group_key,
    )
    if to is None:
        with inv.store(write=True) as conn:
            sent = sending.send(conn, req, now, inv.limits())
        render_messages.send_results(out, [sent])
        return None
    with inv.store(write=True, create=True) as conn:  # a direct channel may be created
        direct = sending.send_direct(  # an emitted row is published after the commit
            conn, req, [a.strip() for a in to.split(",")], now, inv.limits()
        )
    render_messages.direct_results(out, direct)
    failed = [r for r in direct if isinstance(r, CommError)]
    return failed[0].exit_status if failed else None


def publish(
    inv: Invocation,
    *,
    channel: str,
    topic: str,
    body: str | None,
    as_: str | None,
    type_: str,
    priority: str,
    correlation_id: str | None,
    dedupe_key: str | None,
    meta: list[str] | None,
    delay: str | None,
    deliver_at: str | None,
    ttl: str | None,
    trace_id: str | None = None,
    event_type: str | None = None,
    actor: str | None = None,
    target: str | None = None,
    thread: str | None = None,
    comment: str | None = None,
    parent_comment: str | None = None,
    depth: str | None = None,
    language: str | None = None,
    action_hint: str | None = None,
    occurred_at: str | None = None,
    event_id: str | None = None,
    group_key: str | None = None,
    require_recipient: bool = False,
) -> None:
    now = clock.now_ms()
    delay_ms, at = _schedule(delay, deliver_at, now)
    req = SendRequest(
        sender=identity(as_),
        content=inv.read_body(body),
        channel=channel,
        type=type_,
        priority=priority,
        topic=topic,
        correlation_id=correlation_id,
        dedupe_key=dedupe_key,
        metadata=model.metadata_pairs(meta),
        delay_ms=delay_ms,
        deliver_at=at,
        ttl_ms=clock.parse_duration(ttl, "ttl") if ttl is not None else None,
        trace_id=trace_of(trace_id),
        event=_event(
            event_type,
            actor,
            target,
            thread,
            comment,
            parent_comment,
            depth,
            language,
            action_hint,
            occurred_at,
            event_id,
        ),
        group_key=group_key,
        require_recipient=require_recipient,
    )
    with inv.store(write=True) as conn:
        result = sending.send(conn, req, now, inv.limits())
    render_messages.send_results(inv.output(), [result])


def _rich(
    inv: Invocation, fmt: str | None, subject: str | None, attach: list[str] | None
) -> model.RichParts | None:
    """--format, --subject and --attach, checked and the files read before the store is
    opened: no write lock is held while a file is read. A plain send imports nothing more."""
    if fmt is None and subject is None and not attach:
        return None
    from acomm_cli.engine import attachments

    return attachments.parts(fmt, subject, attach, inv.limits())
