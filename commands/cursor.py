"""`acomm cursor create|list|show|seek|delete`: durable replay cursors over a channel's
history, read with `receive --cursor NAME`."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import cursor_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(
    help="Durable replay cursors over a channel's history."
    "\n\nA cursor is a named position, read forward with `receive --cursor NAME` without "
    "touching anyone's messages."
    "\n\nExample: acomm cursor create audit --channel team --from-start",
    no_args_is_help=True,
    add_completion=False,
)

Name = Annotated[str, typer.Argument(metavar="NAME", help="The cursor's name.")]
FromStart = Annotated[
    bool, typer.Option("--from-start", help="Before the channel's first message.")
]
FromNow = Annotated[
    bool, typer.Option("--from-now", help="After the channel's newest message (the default).")
]
FromId = Annotated[
    int | None,
    typer.Option("--from-id", click_type=params.COUNT, help="Message N is the next one read."),
]
FromTime = Annotated[
    str | None,
    typer.Option(
        "--from-time",
        click_type=params.TIME,
        help="The first message created at or after this time is the next one read "
        "(ISO 8601 or relative, e.g. -1h).",
    ),
]


@app.command()
@runs(cursor_run.create)
def create(
    inv: Invocation,
    name: Name,
    channel: Annotated[
        str, typer.Option("--channel", "-c", click_type=params.CHANNEL, help="Its channel.")
    ],
    from_start: FromStart = False,
    from_now: FromNow = False,
    from_id: FromId = None,
    from_time: FromTime = None,
    meta: params.MetaFilter = None,
    type_: params.Types = None,
    from_: params.From = None,
    topic: params.Topic = None,
    event_type: params.EventTypeFilter = None,
    as_: params.AsAgent = None,
) -> None:
    """Create a cursor on a channel's history; it reads only what its filter matches.

    Starts after the newest message unless told otherwise. Anyone who may read the store's
    history may create one; --as only records who did. An existing NAME exits 5.

    Prints the cursor as `cursor show` does.

    Example: acomm cursor create audit --channel team --from-start --meta region=eu
    """


@app.command("list")
@listing(columns.CURSORS)
@runs(cursor_run.list_)
def list_(inv: Invocation) -> None:
    """Every cursor, with its position and what lies past it.

    Shows its channel, position, the channel's newest id, and how many messages lie past it.

    Example: acomm cursor list --json
    """


@app.command()
@runs(cursor_run.show)
def show(inv: Invocation, name: Name) -> None:
    """One cursor, with its filter and whether compaction passed it.

    Example: acomm cursor show audit
    """


@app.command()
@runs(cursor_run.seek)
def seek(
    inv: Invocation,
    name: Name,
    from_start: FromStart = False,
    from_now: FromNow = False,
    from_id: FromId = None,
    from_time: FromTime = None,
) -> None:
    """Move a cursor: back to replay, forward to skip.

    Also how a cursor goes on after compaction removed messages it had not read.
    Prints `name<TAB>from<TAB>to`.

    Example: acomm cursor seek audit --from-time 2026-11-01T00:00:00Z
    """


@app.command()
@runs(cursor_run.delete)
def delete(inv: Invocation, name: Name) -> None:
    """Delete a cursor (the history it read stays).

    Example: acomm cursor delete audit
    """
