"""`acomm tick`: advance every due timer (run it from cron, or with --every as a worker)."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import tick_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import runs

app = typer.Typer(add_completion=False)


@app.command()
@runs(tick_run.tick)
def tick(
    inv: Invocation,
    every: Annotated[
        str | None,
        typer.Option(
            click_type=params.DURATION,
            help="Keep running, ticking at this interval (at least 100ms) until SIGINT/SIGTERM. "
            + params.DURATION_HELP,
        ),
    ] = None,
    max_time: Annotated[
        str | None,
        typer.Option(
            "--max-seconds",
            click_type=params.DURATION,
            help="With --every: stop after this long. " + params.DURATION_HELP,
        ),
    ] = None,
    no_dispatch: Annotated[
        bool,
        typer.Option("--no-dispatch", help="Do not run configured agents (see `acomm dispatch`)."),
    ] = False,
    max_: Annotated[
        int,
        typer.Option(
            "--max", click_type=params.COUNT, help="Dispatch at most this many deliveries per pass."
        ),
    ] = 100,
) -> None:
    """Advance timers: deliver, retry, dead-letter; then run configured agents.

    Runs configured agents on their due messages too (see `acomm dispatch`). SIGINT or
    SIGTERM kills a running agent command (its run is retried later) and stops within a
    second, also while waiting for another process's write lock: --every exits 0, a single
    pass 128 + the signal. With --every, once the store is open, stderr is a log (each line
    an ISO time in UTC and a level); a pass that finds the store locked (or full) is a
    WARNING there and is tried again at the next interval; stopped while the last pass had
    failed so, it exits with that error's status.

    A bad `agents:` section in config.yaml (or a `run:` for an agent registered as a
    human: humans are never dispatched) turns dispatch off but not the timers: tick still
    advances them, reports the error (dispatch_error in --json, and on stderr) and exits 3.

    With identity.auth token, each run's command gets a secret for its own agent only in
    $ACOMM_AGENT_TOKEN (until its timeout), and dispatching needs an admin's secret.

    Example (crontab): * * * * * acomm --store /srv/agents.acomm tick
    """
