"""`acomm trace`: everything one trace id holds, as a tree in causal order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import takes_invocation
from acomm_cli.output import render, render_traces

if TYPE_CHECKING:
    from acomm_cli.engine import traces
else:
    traces = lazy.module("acomm_cli.engine.traces")

app = typer.Typer(add_completion=False)


@app.command()
@takes_invocation
def trace(
    inv: Invocation,
    trace_id: Annotated[str, typer.Argument(metavar="ID", help="The trace id.")],
    otlp_endpoint: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            envvar="OTEL_EXPORTER_OTLP_ENDPOINT",
            show_envvar=True,
            help="Also send each hop as an OpenTelemetry span to this OTLP/HTTP endpoint "
            "(needs the otel extra); one that is down drops them with a note.",
        ),
    ] = None,
) -> None:
    """A trace as a tree: each hop under its cause, with its latency.

    The hops are the trace's messages (replies, acknowledgements, dead-letter notices and
    copies from other nodes among them), the dispatch runs on them and their tasks' events.

    Example: acomm trace "$(acomm show 42 --json | jq -r .trace_id)" --json
    """
    if otlp_endpoint:  # the extra's import, before anything is printed
        from acomm_cli.analytics import otel

        otel.ready()
    with inv.store(write=False) as conn:
        tree = traces.tree(conn, trace_id)
    render_traces.trace(inv.output(), tree)
    if otlp_endpoint:
        from acomm_cli.analytics import otel

        _, note = otel.send(tree, otlp_endpoint)
        if note is not None:
            render.note(note)
