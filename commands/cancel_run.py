"""What `acomm cancel` does, without typer: `commands/cancel.py` declares it
(options, help) and runs this; the fast path (`acomm_cli.cli.main`) runs it directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.output import render_schedules


def cancel(
    inv: Invocation,
    message_id: int,
    as_: str | None,
) -> None:
    from acomm_cli.engine import schedules

    by = identity(as_)
    with inv.store(write=True) as conn:
        done = schedules.cancel(conn, message_id, clock.now_ms(), by=by)
    render_schedules.cancelled(inv.output(), done)
