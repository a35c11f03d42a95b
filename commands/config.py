"""`acomm config show`: the effective configuration and where each value came from;
`acomm config set`: one setting written into the config file."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import config_report
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, takes_invocation
from acomm_cli.errors import StoreUnavailable
from acomm_cli.output import columns, render, render_operations

app = typer.Typer(
    help="Inspect and change the configuration.\n\nExample: acomm config show --json",
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


@app.command("set")
@takes_invocation
def set_(
    inv: Invocation,
    key: Annotated[str, typer.Argument(metavar="KEY", help="A setting, e.g. identity.directory.")],
    value: Annotated[str, typer.Argument(metavar="VALUE", help="Its new value.")],
) -> None:
    """Set KEY to VALUE in the config file.

    The file is the store's config.yaml, or --config's (or $ACOMM_CONFIG's). VALUE is
    checked as the file's value would be (an unknown key or a bad value: exit 3, naming
    it, and the file is left as it was). A file holding only comments (as `acomm init`
    writes it) keeps them, with the setting added at its end; any other file is rewritten
    from its parsed YAML, and its comments are not kept. The environment still overrides
    the file. identity.auth is the store's own setting instead (file null), which binds
    every process; turning it on needs an admin (`acomm init --admin NAME`). With
    identity.auth token, setting anything needs an admin's secret. Prints {key, value,
    file}.

    Example: acomm config set identity.directory strict
    """
    from acomm_cli.cli import config as cfg
    from acomm_cli.cli.invocation import presented_secret, require_admin

    if key == "identity.auth":  # the store's own setting, which binds every process
        from acomm_cli.engine import credentials

        with inv.store(write=True) as conn:
            mode = credentials.set_auth(
                conn,
                cfg.KEYS[key][1](value, key),
                secret=presented_secret(inv.settings),
                now=clock.now_ms(),
                configured=inv.settings.value(key),
            )
        render.ok(inv.output(), {"key": key, "value": mode, "file": None}, f"{key}: {mode}")
        return
    try:
        missing = inv.settings.store_path(create=False)[1]
    except StoreUnavailable:  # no store: no admin to ask (and --config names the file)
        missing = True
    if not missing:
        with inv.store(write=False) as conn:
            require_admin(inv.settings, conn)
    path, parsed = cfg.set_value(inv.settings, key, value)
    env = cfg.KEYS[key][2]
    if env in os.environ:
        render.note(f"note: ${env} is set and overrides the file for {key}")
    render.ok(inv.output(), {"key": key, "value": parsed, "file": path}, f"{key}: {parsed}")


@app.callback()
def config() -> None:
    """Inspect and change the configuration."""
