"""`acomm ui`: the live dashboard. Textual is imported here, inside the command,
and nowhere else: no other command pays for it."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import ui_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import AsAgent, ReadOnly, runs

app = typer.Typer(add_completion=False)


@app.command()
@runs(ui_run.ui)
def ui(
    inv: Invocation,
    as_: AsAgent = None,
    read_only: ReadOnly = False,
    stale: Annotated[
        str,
        typer.Option(
            click_type=params.DURATION,
            help="Highlight an agent whose oldest unread message is older than this. "
            + params.DURATION_HELP,
        ),
    ] = "5m",
) -> None:
    """A live dashboard of the store in the terminal (Textual; the `ui` extra).

    Panes: agents (total, unread, awaiting ack, oldest unread, dead letters; stale ones in
    red), channels (type, state, pending, queued), a live feed of messages (filter with /),
    the selected message with each recipient's delivery state and its thread, the peers
    on a federation node, and the last hour's traffic and unread backlog. Updates as other
    processes commit.

    Actions, each confirmed first and done by the same engine function as its command:
    send (s), team broadcast (b), ack (a), replay (r) or discard (x) a dead letter, pause
    (p) or resume (u) a channel; sending and acking act as --as. ? lists the keys, q quits.

    Example: acomm ui --as operator

    Example (auditors): acomm ui --read-only
    """
