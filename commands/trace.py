"""`acomm trace`: everything one trace id holds, as a tree in causal order."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli.commands import trace_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import runs

app = typer.Typer(add_completion=False)


@app.command()
@runs(trace_run.trace)
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
