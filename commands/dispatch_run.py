"""What `acomm dispatch rules` does, without typer: `commands/dispatch.py` declares it (options,
help) and runs this; the fast path (`acomm_cli.cli.main`) runs it directly."""

from __future__ import annotations

from acomm_cli.cli.invocation import Invocation
from acomm_cli.output import render_worker


def rules(
    inv: Invocation,
) -> None:
    from acomm_cli.cli import config
    from acomm_cli.dispatch import triggers

    specs, _ = config.load_agents(inv.settings)
    path = config.config_file(inv.settings) if specs else None
    render_worker.trigger_rules(inv.output(), triggers.listing(specs, path))
