"""`acomm config show`: the effective configuration and where each value came from;
`acomm config get`: one of them; `acomm config set`: one setting written into the config
file."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli.commands import config_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(
    help="Inspect and change the configuration.\n\nExample: acomm config show --json",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
@listing(columns.CONFIG)
@runs(config_run.show)
def show(inv: Invocation) -> None:
    """Print every setting's effective value and where it came from.

    Sources: flag > environment > config file > default; the store and config file in use
    are listed too.

    A config file with an unknown key or a bad value is refused (exit 3, naming the key).

    Example: ACOMM_FLUSH=immediate acomm config show
    """


@app.command("set")
@runs(config_run.set_)
def set_(
    inv: Invocation,
    key: Annotated[str, typer.Argument(metavar="KEY", help="A setting, e.g. identity.directory.")],
    value: Annotated[str, typer.Argument(metavar="VALUE", help="Its new value.")],
) -> None:
    """Set KEY to VALUE in the config file.

    The file is the store's config.yaml, or --config's (or $ACOMM_CONFIG's); it is made if
    missing. VALUE is checked as loading the file checks it (an unknown key or a bad value:
    exit 3, naming it, and the file is left byte for byte as it was). Only the key's value
    changes, or one line is added to its section (or the section to the end): comments,
    blank lines and every other key are kept. A duration takes the unit forms (500ms, 30s,
    5m, 1h30m, 2d, PT1H30M); a bare number is milliseconds, as in the file. The environment
    still overrides the file. identity.auth is the store's own setting instead (file null),
    which binds every process; turning it on needs an admin (`acomm init --admin NAME`).
    With identity.auth token, setting anything needs an admin's secret. Prints {key, value,
    file} (a duration's value in milliseconds).

    Example: acomm config set store.busy_timeout 10s
    """


@app.command("get")
@runs(config_run.get)
def get(
    inv: Invocation,
    key: Annotated[str, typer.Argument(metavar="KEY", help="A setting, e.g. store.busy_timeout.")],
) -> None:
    """Print KEY's effective value (flag > environment > config file > default).

    A duration prints in its unit form (5s, 1h30m); nothing for a setting with no value.
    Read as every command reads the configuration: a config file with an unknown key or a
    bad value is refused (exit 3, naming the key), as is an unknown KEY. identity.auth and
    an unconfigured identity.directory come from the store, as `config show` says; an
    agent's settings are agents.NAME.FIELD. With --json: {key, value, source}, a duration
    in milliseconds.

    Example: acomm config get store.busy_timeout
    """


@app.callback()
def config() -> None:
    """Inspect and change the configuration."""
