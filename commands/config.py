"""`acomm config show`: the effective configuration and where each value came from."""

from __future__ import annotations

import typer

from acomm_cli.cli import config_report
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, takes_invocation
from acomm_cli.output import columns, render_operations

app = typer.Typer(
    help="Inspect the configuration.\n\nExample: acomm config show --json",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
@listing(columns.CONFIG)
@takes_invocation
def show(inv: Invocation) -> None:
    """Print every setting's effective value and where it came from.

    Sources: flag > environment > config file > default; the store and config file in use
    are listed too.

    A config file with an unknown key or a bad value is refused (exit 3, naming the key).

    Example: ACOMM_FLUSH=immediate acomm config show
    """
    render_operations.config_report(inv.output(), config_report.show_config(inv.settings))


@app.callback()
def config() -> None:
    """Inspect the configuration."""
