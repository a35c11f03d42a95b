"""`acomm tick`: advance every due timer (run it from cron, or with --every as a worker)."""

from __future__ import annotations

import signal
import sqlite3
import time
from dataclasses import asdict
from typing import Annotated, Any

import typer

from acomm_cli import bridge, clock, delivery, render
from acomm_cli.commands._common import output, settings, store
from acomm_cli.errors import ValidationFailed

app = typer.Typer(add_completion=False)


@app.command()
def tick(
    ctx: typer.Context,
    every: Annotated[str | None, typer.Option(
        help="Keep running, ticking at this interval (e.g. 1s) until SIGINT/SIGTERM.")] = None,
    max_seconds: Annotated[float | None, typer.Option(
        help="With --every: stop after this many seconds.")] = None,
) -> None:
    """Deliver scheduled messages, retry unacknowledged ones, dead-letter the rest.

    Example (crontab): * * * * * acomm --store /srv/agents.acomm tick
    """
    out = output(ctx)
    cfg = bridge.config(settings(ctx).value)

    def once(conn: sqlite3.Connection) -> tuple[dict[str, Any], int]:
        """Advance the timers, then reconcile a configured mailbox bridge."""
        now = clock.now_ms()
        with render.progress(out, "ticking") as progress:
            result = delivery.tick(conn, now, progress)
        doc: dict[str, Any] = asdict(result)
        total = result.total
        if cfg.configured:
            synced = bridge.sync(conn, cfg, now)
            render.bridge_notes(synced)
            doc["bridge"] = synced.doc()
            total += sum(doc["bridge"].values())
        return doc, total

    with store(ctx, write=True, bridge_hook=False) as conn:
        if every is None:
            render.bridge_tick(out, once(conn)[0])
            return
        interval = clock.parse_duration(every, "every") / 1000
        if interval < 0.1:
            raise ValidationFailed(f"every: {every!r} is too short (at least 100ms)",
                                   field="every", value=every)
        stopped: list[int] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda signum, _frame: stopped.append(signum))
        end = time.monotonic() + max_seconds if max_seconds is not None else float("inf")
        while not stopped and time.monotonic() < end:
            doc, total = once(conn)
            if total or out.json:
                render.bridge_tick(out, doc)
            wake = min(time.monotonic() + interval, end)
            while not stopped and time.monotonic() < wake:
                time.sleep(min(0.1, max(0.0, wake - time.monotonic())))
