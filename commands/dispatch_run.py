"""What `acomm dispatch` (a pass) and `acomm dispatch rules` do, without typer:
`commands/dispatch.py` declares them (options, help) and runs these; the fast path
(`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import lazy, stopping
from acomm_cli.cli.config import AGENTS
from acomm_cli.cli.invocation import Invocation, require_admin
from acomm_cli.output import render_worker

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.dispatch import dispatcher as engine
else:
    engine = lazy.module("acomm_cli.dispatch.dispatcher")


def dispatch(inv: Invocation, agent: str | None, max_: int, dry_run: bool) -> int | None:
    """`acomm dispatch` alone: one pass (its subcommand, `rules`, is below)."""
    from pathlib import Path

    s = inv.settings
    agents = s.value(AGENTS)
    engine.chosen(agents, agent, max_)  # refused before the store is opened
    with inv.store(write=not dry_run) as conn, stopping.on_signals() as stop:
        engine.check_kinds(conn, agents)  # a human is never dispatched: exit 3, nothing run
        if not dry_run:  # it mints agents' secrets: with identity.auth token, an admin's
            require_admin(s, conn)
        path, _ = s.store_path(create=False)
        result = engine.dispatch(
            conn,
            agents,
            clock.now_ms(),
            store_path=str(Path(path).resolve()),
            encode=render_worker.message_json,
            only=agent,
            max_runs=max_,
            dry_run=dry_run,
            config_path=str(Path(s.config).expanduser().resolve()) if s.config else None,
            stop=stop,
            auth=s.value("identity.auth"),
        )
        signum = stop.signum
    render_worker.dispatch_result(inv.output(), result)
    return None if signum is None else 128 + signum


def rules(
    inv: Invocation,
) -> None:
    from acomm_cli.cli import config
    from acomm_cli.dispatch import triggers

    specs, _ = config.load_agents(inv.settings)
    path = config.config_file(inv.settings) if specs else None
    render_worker.trigger_rules(inv.output(), triggers.listing(specs, path))
