"""`acomm bridge sync`: reconcile the mailbox bridge's directories with the store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import lazy, params
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import takes_invocation
from acomm_cli.errors import UsageError
from acomm_cli.output import render_worker

if TYPE_CHECKING:
    from acomm_cli.bridge import sync as bridge
else:
    bridge = lazy.module("acomm_cli.bridge.sync")

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="The mailbox bridge: inbox files, team inboxes, response files."
    "\n\nExample: acomm bridge sync --inbox-dir ~/.claude/inbox",
)


@app.command()
@takes_invocation
def sync(
    inv: Invocation,
    inbox_dir: Annotated[
        str | None,
        typer.Option(
            click_type=params.DIR,
            metavar="INBOX_DIR",
            help="Mirror unread deliveries as INBOX_DIR/AGENT/ID.json (default: bridge.inbox_dir).",
            show_default=False,
        ),
    ] = None,
    outbox_dir: Annotated[
        str | None,
        typer.Option(
            click_type=params.DIR,
            metavar="OUTBOX_DIR",
            help="Ingest response files OUTBOX_DIR/AGENT/*.json (default: bridge.outbox_dir).",
            show_default=False,
        ),
    ] = None,
    teams_dir: Annotated[
        str | None,
        typer.Option(
            click_type=params.DIR,
            metavar="TEAMS_DIR",
            help="Claude Code team inboxes TEAMS_DIR/TEAM/inboxes/AGENT.json for agent@team "
            "(default: bridge.teams_dir).",
            show_default=False,
        ),
    ] = None,
    default_channel: Annotated[
        str | None,
        typer.Option(
            click_type=params.CHANNEL,
            metavar="CHANNEL",
            help="Send response objects that name no target to CHANNEL (default: "
            "bridge.default_channel; unset, each is a reply to the agent's latest message).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Reconcile the mailbox bridge's directories with the store, once.

    Writes missing mirror files, takes away those of deliveries no longer unread, marks read
    what agents read through their files, prunes read team entries older than
    bridge.read_ttl, and ingests response files (each deleted once its message is committed,
    and never sent twice; a bad one, e.g. not a JSON object, stays and is reported once until
    it changes; one refused for now, e.g. on a paused channel, is reported once and tried
    again by every sync). A response object naming a target (to, channel, reply_to,
    correlation_id) or an ack is read with acomm's fields; any other JSON object is sent as
    its JSON text to --default-channel or, without one, in reply to the agent's latest
    message. Creates the inbox and outbox directories if they are missing.
    `acomm tick` does the same when the bridge is configured, and every writing command
    mirrors what it sent or made unread and takes away the mirrors of what it read.

    Example: acomm bridge sync --inbox-dir ~/.claude/inbox --outbox-dir ~/.claude/outbox
    """
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


@app.callback()
def bridge_group() -> None:
    """The mailbox bridge: inbox files, team inboxes, response files."""
