"""What `acomm trace` does, without typer: `commands/trace.py` declares it
(options, help) and runs this; the fast path (`acomm_cli.cli.main`) runs it directly."""

from __future__ import annotations

from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation
from acomm_cli.output import render, render_traces

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import traces
else:
    traces = lazy.module("acomm_cli.engine.traces")


def trace(
    inv: Invocation,
    trace_id: str,
    otlp_endpoint: str | None,
) -> None:
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
