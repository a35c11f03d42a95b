"""`acomm compact` and `acomm flush`: space and durability."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import compact_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import runs

app = typer.Typer(add_completion=False)


@app.command()
@runs(compact_run.compact)
def compact(
    inv: Invocation,
    older_than: Annotated[
        str | None,
        typer.Option(
            click_type=params.DURATION,
            help="Only messages created longer ago than this (default: any age). "
            + params.DURATION_HELP,
            show_default=False,
        ),
    ] = None,
    dead_letters_older_than: Annotated[
        str | None,
        typer.Option(
            click_type=params.DURATION,
            help="Also purge dead letters older than this, which lets their messages go. "
            + params.DURATION_HELP,
            show_default=False,
        ),
    ] = None,
    vacuum: Annotated[
        bool,
        typer.Option(
            "--vacuum",
            help="Then rewrite the file to give the freed space back (slow on big "
            "stores; needs as much free disk as the store).",
        ),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count what would go; change nothing.")
    ] = False,
) -> None:
    """Remove messages that are done with, and their deliveries, in one transaction.

    A message goes when every delivery is terminal (acked; read and not ack-tracked; dead with
    its dead letter gone) or it has none. Never removed: anything unread, queued, waiting or
    awaiting an ack, a message with a dead letter, or one whose dedupe key is still inside
    its channel's dedupe window. Message ids are never reused.

    Example: acomm compact --older-than 30d --dead-letters-older-than 90d --vacuum
    """


@app.command()
@runs(compact_run.flush)
def flush(inv: Invocation) -> None:
    """Checkpoint the WAL into the database file and truncate it.

    Reports the frames (pages) in the WAL, how many were copied, and the WAL's size before and
    after. With `store.flush: manual` nothing else checkpoints.

    Example: acomm flush --json
    """
