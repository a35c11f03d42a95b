"""`acomm dispatch` and `acomm receipts`: run configured agents on their messages."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import params, stopping
from acomm_cli.cli.config import AGENTS
from acomm_cli.cli.invocation import Invocation, require_admin
from acomm_cli.cli.params import listing, takes_invocation
from acomm_cli.dispatch import dispatcher as engine
from acomm_cli.output import columns, render_worker

app = typer.Typer(add_completion=False)


@app.command()
@takes_invocation
def dispatch(
    inv: Invocation,
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

    Example: acomm dispatch --agent reviewer --max 10
    """
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
@listing(columns.RECEIPTS)
@takes_invocation
def receipts(
    inv: Invocation,
    agent: Annotated[
        str | None,
        typer.Option(click_type=params.AGENT, help="Only this agent's runs.", show_default=False),
    ] = None,
    message: Annotated[
        int | None,
        typer.Option(metavar="MSG", help="Only runs on this message id.", show_default=False),
    ] = None,
    status: Annotated[
        str | None,
        typer.Option(
            click_type=params.choice(engine.STATUSES, "STATUS"),
            help="running, accepted, ignored or failed.",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[int, typer.Option(click_type=params.COUNT, help="At most this many.")] = 100,
    offset: Annotated[int, typer.Option(click_type=params.COUNT, help="Skip this many first.")] = 0,
) -> None:
    """List agent dispatch receipts (one per run), newest first.

    Example: acomm receipts --agent reviewer --json
    """
    with inv.store(write=False) as conn:
        page = engine.list_receipts(
            conn, agent=agent, message_id=message, status=status, limit=limit, offset=offset
        )
    render_worker.receipts(inv.output(), page)
