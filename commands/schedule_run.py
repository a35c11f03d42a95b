"""What `acomm schedule create|list|show|pause|resume|delete` do, without typer:
`commands/schedule.py` declares them (options, help) and runs these; the fast path
(`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli import clock, model
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.output import render_schedules


def create(
    inv: Invocation,
    channel: str,
    body: str,
    every: str | None,
    cron: str | None,
    start: str | None,
    until: str | None,
    max_runs: int | None,
    catch_up: str,
    topic: str | None,
    priority: str | None,
    meta: list[str] | None,
    as_: str | None,
) -> None:
    from acomm_cli.engine import schedules

    sender = identity(as_)
    now = clock.now_ms()
    with inv.store(write=True) as conn:
        s = schedules.create(
            conn,
            channel,
            body,
            now,
            sender=sender,
            every_ms=clock.parse_duration(every, "every") if every is not None else None,
            cron=cron,
            start_at=clock.parse_time(start, "start", now) if start is not None else None,
            until_at=clock.parse_time(until, "until", now) if until is not None else None,
            max_runs=max_runs,
            catch_up=catch_up,
            topic=topic,
            priority=priority,
            metadata=model.metadata_pairs(meta),
        )
    render_schedules.one(inv.output(), s)


def list_(
    inv: Invocation,
    channel: str | None,
) -> None:
    from acomm_cli.engine import schedules

    with inv.store(write=False, read_fallback=True) as conn:
        found = schedules.listing(conn, channel)
    render_schedules.many(inv.output(), found)


def show(
    inv: Invocation,
    schedule_id: int,
) -> None:
    from acomm_cli.engine import schedules

    with inv.store(write=False, read_fallback=True) as conn:
        s = schedules.show(conn, schedule_id)
    render_schedules.one(inv.output(), s)


def delete(
    inv: Invocation,
    schedule_id: int,
    as_: str | None,
) -> None:
    from acomm_cli.engine import schedules

    by = identity(as_)
    with inv.store(write=True) as conn:
        s = schedules.delete(conn, schedule_id, by=by)
    render_schedules.deleted(inv.output(), s)


def _set_state(inv: Invocation, verb: str, schedule_id: int, as_: str | None) -> None:
    from acomm_cli.engine import schedules

    by = identity(as_)
    with inv.store(write=True) as conn:
        s, changed = schedules.set_state(conn, schedule_id, verb, clock.now_ms(), by=by)
    render_schedules.changed(inv.output(), s, changed)


def pause(inv: Invocation, schedule_id: int, as_: str | None) -> None:
    _set_state(inv, "pause", schedule_id, as_)


def resume(inv: Invocation, schedule_id: int, as_: str | None) -> None:
    _set_state(inv, "resume", schedule_id, as_)
