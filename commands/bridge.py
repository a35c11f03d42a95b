"""`acomm bridge sync`: reconcile the mailbox bridge's directories with the store."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import bridge_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import runs

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="The mailbox bridge: inbox files, team inboxes, response files."
    "\n\nExample: acomm bridge sync --inbox-dir ~/.claude/inbox",
)


@app.command()
@runs(bridge_run.sync)
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


@app.callback()
def bridge_group() -> None:
    """The mailbox bridge: inbox files, team inboxes, response files."""
