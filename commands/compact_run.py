"""What `acomm compact` and `acomm flush` do, without typer: `commands/compact.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation
from acomm_cli.output import render, render_operations

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import operations
else:
    operations = lazy.module("acomm_cli.engine.operations")


def compact(
    inv: Invocation,
    older_than: str | None,
    dead_letters_older_than: str | None,
    vacuum: bool,
    dry_run: bool,
) -> None:
    now = clock.now_ms()
    older = clock.parse_duration(older_than, "older_than") if older_than is not None else 0
    dead = (
        clock.parse_duration(dead_letters_older_than, "dead_letters_older_than")
        if dead_letters_older_than is not None
        else None
    )
    out = inv.output()
    with (
        inv.store(write=not dry_run, hooks=False) as conn,
        render.progress(out, "compacting") as progress,
    ):
        result = operations.compact(
            conn,
            now,
            older_than_ms=older,
            dead_letters_older_than_ms=dead,
            vacuum=vacuum,
            dry_run=dry_run,
            progress=progress,
        )
    render_operations.compact(out, result)


def flush(
    inv: Invocation,
) -> None:
    with inv.store(write=True, hooks=False) as conn:
        result = operations.flush(conn)
    render_operations.flush_result(inv.output(), result)
