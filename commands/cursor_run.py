"""What `acomm cursor create|list|show|seek|delete` do, without typer: `commands/cursor.py`
declares them (options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them
directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli.invocation import Invocation
from acomm_cli.output import render_cursors

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine.cursors import Start


def _start(
    from_start: bool, from_now: bool, from_id: int | None, from_time: str | None, default: str
) -> Start:
    from acomm_cli.engine import cursors

    now = clock.now_ms()
    at = clock.parse_time(from_time, "from_time", now) if from_time is not None else None
    return cursors.start_of(
        from_start=from_start, from_now=from_now, from_id=from_id, from_time=at, default=default
    )


def create(
    inv: Invocation,
    name: str,
    channel: str,
    from_start: bool,
    from_now: bool,
    from_id: int | None,
    from_time: str | None,
    meta: list[str] | None,
    type_: list[str] | None,
    from_: str | None,
    topic: str | None,
    event_type: str | None,
    as_: str | None,
) -> None:
    from acomm_cli.engine import cursors

    spec = cursors.filter_spec(
        meta=meta, types=type_, sender=from_, topic=topic, event_type=event_type
    )
    start = _start(from_start, from_now, from_id, from_time, "now")
    with inv.store(write=True) as conn:
        c = cursors.create(conn, name, channel, start, clock.now_ms(), by=as_, spec=spec)
    render_cursors.one(inv.output(), c)


def list_(
    inv: Invocation,
) -> None:
    from acomm_cli.engine import cursors

    with inv.store(write=False, read_fallback=True) as conn:
        found = cursors.listing(conn)
    render_cursors.many(inv.output(), found)


def show(
    inv: Invocation,
    name: str,
) -> None:
    from acomm_cli.engine import cursors

    with inv.store(write=False, read_fallback=True) as conn:
        c = cursors.show(conn, name)
    render_cursors.one(inv.output(), c)


def seek(
    inv: Invocation,
    name: str,
    from_start: bool,
    from_now: bool,
    from_id: int | None,
    from_time: str | None,
) -> None:
    from acomm_cli.engine import cursors

    start = _start(from_start, from_now, from_id, from_time, "now")
    with inv.store(write=True) as conn:
        before, after = cursors.seek(conn, name, start, clock.now_ms())
    render_cursors.moved(inv.output(), before, after)


def delete(
    inv: Invocation,
    name: str,
) -> None:
    from acomm_cli.engine import cursors

    with inv.store(write=True) as conn:
        c = cursors.delete(conn, name)
    render_cursors.deleted(inv.output(), c)
