"""What `acomm stats` does, without typer: `commands/stats.py` declares it
(options, help) and runs this; the fast path (`acomm_cli.cli.main`) runs it directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation
from acomm_cli.output import render_operations

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import operations
else:
    operations = lazy.module("acomm_cli.engine.operations")


def stats(
    inv: Invocation,
    as_: str | None,
) -> None:
    with inv.store(write=False) as conn:
        result = operations.stats(conn, clock.now_ms(), agent=as_)
    render_operations.stats(inv.output(), result)
