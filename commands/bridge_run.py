"""What `acomm bridge sync` does, without typer: `commands/bridge.py` declares it (options,
help) and runs this; the fast path (`acomm_cli.cli.main`) runs it directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation
from acomm_cli.errors import UsageError
from acomm_cli.output import render_worker

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.bridge import sync as bridge
else:
    bridge = lazy.module("acomm_cli.bridge.sync")


def sync(
    inv: Invocation,
    inbox_dir: str | None = None,
    outbox_dir: str | None = None,
    teams_dir: str | None = None,
    default_channel: str | None = None,
) -> None:
    cfg = bridge.config(
        inv.settings.value,
        inbox_dir=inbox_dir,
        outbox_dir=outbox_dir,
        teams_dir=teams_dir,
        default_channel=default_channel,
    )
    if not cfg.configured:
        raise UsageError(
            "the mailbox bridge is not configured: give --inbox-dir, "
            "--outbox-dir or --teams-dir, or set bridge.* in config.yaml",
            field="inbox_dir",
        )
    with inv.store(write=True, bridge_hook=False) as conn:
        result = bridge.sync(conn, cfg, clock.now_ms())
    render_worker.bridge_notes(result)
    render_worker.bridge_sync(inv.output(), result)
