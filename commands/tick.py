"""`acomm tick`: advance every due timer (run it from cron, or with --every as a worker)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from acomm_cli import clock
from acomm_cli.cli import lazy, params, stopping
from acomm_cli.cli.config import AGENTS
from acomm_cli.cli.invocation import Invocation, require_admin
from acomm_cli.cli.params import takes_invocation
from acomm_cli.output import render, render_federation, render_worker

if TYPE_CHECKING:
    from acomm_cli import worker
    from acomm_cli.bridge import sync as bridge
else:
    bridge = lazy.module("acomm_cli.bridge.sync")
    worker = lazy.module("acomm_cli.worker")

app = typer.Typer(add_completion=False)


@app.command()
@takes_invocation
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
    out = inv.output()
    s = inv.settings
    every_s = worker.interval(every) if every is not None else None
    max_seconds = (
        clock.parse_duration(max_time, "max_seconds") / 1000 if max_time is not None else None
    )
    path, _ = s.store_path(create=False)
    bridge_config = bridge.config(s.value)  # a bad file or setting: nothing is ticked
    agents, bad_agents = worker.load_agents(lambda: {} if no_dispatch else s.value(AGENTS))
    setup = worker.TickSetup(
        bridge=bridge_config,
        agents=agents,
        dispatch_error=bad_agents,
        store_path=str(Path(path).resolve()),
        encode=render_worker.message_json,
        config_path=str(Path(s.config).expanduser().resolve()) if s.config else None,
        max_runs=worker.max_runs(max_),
        auth=s.value("identity.auth"),
        on_bridge=render_worker.bridge_notes,
        on_dispatch=render_worker.dispatch_notes,
        on_peer_unreachable=render_federation.unreachable_note,
        progress=lambda: render.progress(out, "ticking"),
        settings=s.value,
        limits=inv.limits(),
    )
    failed = None  # with --every: the transient error of the last pass, if it failed
    with inv.store(write=True, bridge_hook=False) as conn, stopping.on_signals() as stop:
        if every_s is not None:  # a worker now: its stderr is a log, each line timed, levelled
            render.log_lines()
            if bad_agents is not None:  # say so now, not at its end
                render_worker.dispatch_off(bad_agents)
        worker.stop_ends_lock_waits(conn, stop, render_worker.lock_waiting)
        if bad_agents is None and (bad_agents := worker.refused_kinds(conn, agents)):
            setup = replace(setup, agents={}, dispatch_error=bad_agents)
            if every_s is not None:
                render_worker.dispatch_off(bad_agents)
        if setup.agents:  # dispatch mints agents' secrets: with identity.auth token, an admin's
            require_admin(s, conn)
        try:
            if every_s is None:
                doc = worker.tick_once(conn, setup, clock.now_ms(), stop, stop.cuttable)[0]
                render_worker.bridge_tick(out, doc)
                signum = stop.signum
            else:

                def report(doc: dict[str, Any], total: int) -> None:
                    if total or out.json:
                        render_worker.bridge_tick(out, doc)

                failed = worker.run_every(
                    conn, setup, every_s, max_seconds, stop, report, render_worker.tick_retry
                )
                signum = None  # a signal is how a worker is meant to stop
        except stopping._Interrupted:  # a pass cut short by a stop: its transaction rolled back
            signum = None if every_s is not None else stop.signum
    if failed is not None:  # stopped while the store was locked: say so, as a single pass would
        raise failed
    if signum is not None:  # a single pass cut short: say so, as a killed program would
        raise typer.Exit(128 + signum)
    if bad_agents is not None:  # the timers ran; the agents did not: exit with the error
        raise bad_agents
