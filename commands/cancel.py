"""`acomm cancel MSG`: withdraw a scheduled send before it is delivered."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import cancel_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import runs

app = typer.Typer(add_completion=False)


@app.command()
@runs(cancel_run.cancel)
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
