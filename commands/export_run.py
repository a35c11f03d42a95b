"""What `acomm export` does, without typer: `commands/export.py` declares it (options, help) and
runs this; the fast path (`acomm_cli.cli.main`) runs it directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli.invocation import Invocation
from acomm_cli.output import render, render_analytics


def export(
    inv: Invocation,
    out: str,
    since: str | None,
    until: str | None,
    incremental: bool,
    format_: str,
) -> None:
    from acomm_cli.analytics import export as rules
    from acomm_cli.analytics import installed

    installed.require("export")  # before the store is opened
    now = clock.now_ms()
    lo = clock.parse_time(since, "since", now) if since else None
    hi = clock.parse_time(until, "until", now) if until else None
    o = inv.output()
    with inv.store(write=True, hooks=False) as conn, render.progress(o, "exporting") as start:
        result = rules.export(
            conn, out, now, since=lo, until=hi, incremental=incremental, fmt=format_, progress=start
        )
    render_analytics.export_result(o, result)
