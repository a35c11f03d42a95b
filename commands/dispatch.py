"""`acomm dispatch`: run configured agents on their messages; `acomm dispatch rules`: what
triggers them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import lazy, params, stopping
from acomm_cli.cli.commands import dispatch_run
from acomm_cli.cli.config import AGENTS
from acomm_cli.cli.invocation import Invocation, require_admin
from acomm_cli.cli.params import invocation, runs
from acomm_cli.output import render_worker

if TYPE_CHECKING:
    from acomm_cli.dispatch import dispatcher as engine
else:
    engine = lazy.module("acomm_cli.dispatch.dispatcher")

app = typer.Typer(add_completion=False, invoke_without_command=True)


@app.callback(invoke_without_command=True)
def dispatch(
    ctx: typer.Context,
    agent: Annotated[
        str | None,
        typer.Option(
            click_type=params.AGENT, help="Only this configured agent.", show_default=False
        ),
    ] = None,
    max_: Annotated[
        int, typer.Option("--max", click_type=params.COUNT, help="At most this many deliveries.")
    ] = 100,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="List what would run (or be settled without a run); change nothing."
        ),
    ] = False,
) -> None:
    """Run configured agents' commands on their due messages, one receipt per run.

    For every unread message to an agent of `agents:` in config.yaml whose trigger rules match
    (most urgent first, then oldest), the command runs with the message as JSON on stdin.
    Exit 0 is accepted (the message is read; a query's stdout is the answer; an ack-tracked
    message is acknowledged), exit 3 ignored (stdout gives the reason), anything else, a
    timeout or a failure to start is failed: retried after backoff x 2^(attempt-1), and
    dead-lettered (dispatch_failed) after max_attempts. `acomm tick` does the same.

    SIGINT or SIGTERM kills the running command, records its run as failed (interrupted,
    retried at the next pass) and ends the pass; the exit status is then 128 + the signal.

    With identity.auth token, each run's command gets a secret for its own agent only in
    $ACOMM_AGENT_TOKEN (until its timeout), and dispatching needs an admin's secret.

    `acomm dispatch rules` lists what triggers each agent.

    Example: acomm dispatch --agent reviewer --max 10
    """
    if ctx.invoked_subcommand is None:  # `acomm dispatch` alone makes a pass
        _pass(invocation(ctx), agent, max_, dry_run)


def _pass(inv: Invocation, agent: str | None, max_: int, dry_run: bool) -> None:
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
    if signum is not None:
        raise typer.Exit(128 + signum)


@app.command()
@runs(dispatch_run.rules)
def rules(inv: Invocation) -> None:
    """List the trigger rules: the defaults, and each configured agent's own.

    The defaults are the decision table of events (docs/EVENTS.md, "Default trigger
    rules"): for each event type and target, whether it is a notification and whether it
    triggers an agent. They decide, for an agent without `on:` rules, the messages that
    carry an event; an agent with `on:` rules is triggered by those instead. Each entry says
    where it came from: `default`, or the config file and the agent.

    Example: acomm dispatch rules --json
    """
