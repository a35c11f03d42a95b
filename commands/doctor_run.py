"""What `acomm doctor` does, without typer: `commands/doctor.py` declares it (options, help) and
runs this; the fast path (`acomm_cli.cli.main`) runs it directly."""

from __future__ import annotations

from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation
from acomm_cli.output import render_operations

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import operations
else:
    operations = lazy.module("acomm_cli.engine.operations")


def doctor(
    inv: Invocation,
    quick: bool,
    rebuild_search: bool,
) -> None:
    if rebuild_search:
        from acomm_cli.engine import search

        with inv.store(write=True) as conn:
            indexed = search.rebuild(conn)
        render_operations.search_rebuilt(inv.output(), indexed)
    with inv.store(write=False) as conn:
        health = operations.doctor(conn, quick=quick)
    render_operations.doctor(inv.output(), health)
    operations.require_healthy(health)
