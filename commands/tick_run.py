"""What `acomm tick` does, without typer: `commands/tick.py` declares it
(options, help) and runs this; the fast path (`acomm_cli.cli.main`) runs it directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import lazy, stopping
from acomm_cli.cli.config import AGENTS
from acomm_cli.cli.invocation import Invocation, require_admin
from acomm_cli.output import render, render_federation, render_worker

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from typing import Any

    from acomm_cli import worker
    from acomm_cli.bridge import sync as bridge
else:
    bridge = lazy.module("acomm_cli.bridge.sync")
    worker = lazy.module("acomm_cli.worker")


def tick(
    inv: Invocation,
    every: str | None,
    max_time: str | None,
    no_dispatch: bool,
    max_: int,
) -> int | None:
    # here, not at the top: the worker imports them anyway, and start-up stays a send's
    from dataclasses import replace
    from pathlib import Path

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
        return 128 + signum
    if bad_agents is not None:  # the timers ran; the agents did not: exit with the error
        raise bad_agents
    return None
