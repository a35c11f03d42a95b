"""`acomm cancel MSG`: withdraw a scheduled send before it is delivered."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import params
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.cli.params import takes_invocation
from acomm_cli.output import render_schedules

app = typer.Typer(add_completion=False)


@app.command()
@takes_invocation
def cancel(
    inv: Invocation,
    message_id: Annotated[int, typer.Argument(metavar="MSG", help="The message id.")],
    as_: params.AsAgent = None,
) -> None:
    """Withdraw a --delay/--deliver-at message that has not been delivered yet.

    Only its sender may. Each delivery becomes a dead letter with reason `cancelled`
    (`deadletter list`), so nothing accepted disappears. A message already delivered, or
    not scheduled, exits 5 (invalid_state). Prints `id<TAB>cancelled<TAB>deliveries`.

    Example: acomm cancel 42 --as planner
    """
    from acomm_cli.engine import schedules

    by = identity(as_)
    with inv.store(write=True) as conn:
        done = schedules.cancel(conn, message_id, clock.now_ms(), by=by)
    render_schedules.cancelled(inv.output(), done)
