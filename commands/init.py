"""`acomm init` and `acomm status`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import init_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import runs

app = typer.Typer(add_completion=False)


@app.command()
@runs(init_run.init)
def init(
    inv: Invocation,
    directory: Annotated[
        Path | None,
        typer.Argument(
            click_type=params.DIR,
            metavar="DIR",
            help="Project directory; the store goes in DIR/.acomm/ (default: here).",
        ),
    ] = None,
    admin: Annotated[
        str | None,
        typer.Option(
            click_type=params.AGENT,
            help="Register this agent as the store's first admin and print its secret, this "
            "once (a store that has an admin already: exit 5).",
        ),
    ] = None,
) -> None:
    """Create a store and a commented config.yaml beside it.

    With --admin NAME, NAME becomes the first admin: its secret is printed instead of the
    path (with --json, {path, created, agent, admin, token, identity_auth}). Turn
    credentials on for every process with `acomm config set identity.auth token`
    (docs/SECURITY.md).

    Example: acomm init && acomm status

    Example: export ACOMM_AGENT_TOKEN=$(acomm init --admin alice)
    """


@app.command()
@runs(init_run.status)
def status(inv: Invocation) -> None:
    """Show the store's path, schema version, counts, size and flush policy.

    Example: acomm status --json
    """
