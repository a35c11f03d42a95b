"""`acomm doctor`: integrity check, schema version and the delivery invariants."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli.commands import doctor_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(add_completion=False)


@app.command()
@listing(columns.FINDINGS)
@runs(doctor_run.doctor)
def doctor(
    inv: Invocation,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick",
            help="PRAGMA quick_check instead of the full integrity_check (faster on "
            "big stores; skips index consistency).",
        ),
    ] = False,
    rebuild_search: Annotated[
        bool,
        typer.Option(
            "--rebuild-search",
            help="First write the full-text search index (of `messages --search`) again "
            "from the messages, in one transaction (a missing or damaged index; about a "
            "full scan of the messages), then check.",
        ),
    ] = False,
) -> None:
    """Check the store's integrity, schema and delivery invariants.

    Runs SQLite's integrity check, checks the schema version and its migrations, and
    that every delivery is queued, waiting, unread, read, acked or dead with the timers and
    dead letters its state needs.

    Mailbox bridge trouble (mirror writes or removals that failed and wait for a retry,
    response files left in place: bad, refused for now, or ingested but not deleted) is
    listed under `notices`: it is not store corruption, so it does not change the exit
    status.

    Exit status: 0 when healthy; 5 (invalid_state) with the list of findings on stdout when
    anything is wrong; 7 when the store cannot be opened at all.

    Example: acomm doctor || acomm doctor --json | jq .findings

    Example (the search index): acomm doctor --rebuild-search
    """
