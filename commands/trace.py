"""`acomm trace`: everything one trace id holds, as a tree in causal order."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import takes_invocation
from acomm_cli.engine import traces
from acomm_cli.output import render_traces

app = typer.Typer(add_completion=False)


@app.command()
@takes_invocation
def trace(
    inv: Invocation,
    trace_id: Annotated[str, typer.Argument(metavar="ID", help="The trace id.")],
) -> None:
    """A trace as a tree: each hop under its cause, with its latency.

    The hops are the trace's messages (replies, acknowledgements, dead-letter notices and
    copies from other nodes among them), the dispatch runs on them and their tasks' events.

    Example: acomm trace "$(acomm show 42 --json | jq -r .trace_id)" --json
    """
    with inv.store(write=False) as conn:
        tree = traces.tree(conn, trace_id)
    render_traces.trace(inv.output(), tree)
