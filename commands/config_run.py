"""What the `acomm config` subcommands do, without typer: `commands/config.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

import os

from acomm_cli import clock
from acomm_cli.cli import config_report
from acomm_cli.cli.invocation import Invocation
from acomm_cli.errors import StoreUnavailable
from acomm_cli.output import render, render_operations


def show(inv: Invocation) -> None:
    render_operations.config_report(inv.output(), config_report.show_config(inv.settings))


def set_(
    inv: Invocation,
    key: str,
    value: str,
) -> None:
    from acomm_cli.cli import config as cfg
    from acomm_cli.cli import config_edit
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
    path, parsed = config_edit.set_value(inv.settings, key, value)
    env = cfg.KEYS[key][2]
    if env in os.environ:
        render.note(f"note: ${env} is set and overrides the file for {key}")
    shown = clock.format_duration(parsed) if config_report.is_duration(key) else parsed
    render.ok(inv.output(), {"key": key, "value": parsed, "file": path}, f"{key}: {shown}")


def get(
    inv: Invocation,
    key: str,
) -> None:
    render_operations.config_value(inv.output(), config_report.get_value(inv.settings, key))
