"""`acomm dispatch`: run configured agents on their messages; `acomm dispatch rules`: what
triggers them."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import dispatch_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import runs

app = typer.Typer(add_completion=False, invoke_without_command=True)


@app.callback(invoke_without_command=True)
@runs(dispatch_run.dispatch)
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

    `acomm dispatch rules` lists what triggers each agent.

    Example: acomm dispatch --agent reviewer --max 10
    """


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
