"""What the `acomm channel` subcommands on the fast path do, without typer:
`commands/channel.py` declares them (options, help) and runs these; the fast path
(`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation
from acomm_cli.output import render_channels

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import channels
else:
    channels = lazy.module("acomm_cli.engine.channels")


def list_(inv: Invocation) -> None:
    with inv.store(write=False) as conn:
        cs = channels.list_channels(conn)
    render_channels.channels(inv.output(), cs)
