"""`acomm cursor create|list|show|seek|delete`: durable replay cursors over a channel's
history, read with `receive --cursor NAME`."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import params
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, takes_invocation
from acomm_cli.output import columns, render_cursors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from acomm_cli.engine.cursors import Start

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


def _start(
    from_start: bool, from_now: bool, from_id: int | None, from_time: str | None, default: str
) -> Start:
    from acomm_cli.engine import cursors

    now = clock.now_ms()
    at = clock.parse_time(from_time, "from_time", now) if from_time is not None else None
    return cursors.start_of(
        from_start=from_start, from_now=from_now, from_id=from_id, from_time=at, default=default
    )


@app.command()
@takes_invocation
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
    from acomm_cli.engine import cursors

    spec = cursors.filter_spec(
        meta=meta, types=type_, sender=from_, topic=topic, event_type=event_type
    )
    start = _start(from_start, from_now, from_id, from_time, "now")
    with inv.store(write=True) as conn:
        c = cursors.create(conn, name, channel, start, clock.now_ms(), by=as_, spec=spec)
    render_cursors.one(inv.output(), c)


@app.command("list")
@listing(columns.CURSORS)
@takes_invocation
def list_(inv: Invocation) -> None:
    """Every cursor, with its position and what lies past it.

    Shows its channel, position, the channel's newest id, and how many messages lie past it.

    Example: acomm cursor list --json
    """
    from acomm_cli.engine import cursors

    with inv.store(write=False, read_fallback=True) as conn:
        found = cursors.listing(conn)
    render_cursors.many(inv.output(), found)


@app.command()
@takes_invocation
def show(inv: Invocation, name: Name) -> None:
    """One cursor, with its filter and whether compaction passed it.

    Example: acomm cursor show audit
    """
    from acomm_cli.engine import cursors

    with inv.store(write=False, read_fallback=True) as conn:
        c = cursors.show(conn, name)
    render_cursors.one(inv.output(), c)


@app.command()
@takes_invocation
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
    from acomm_cli.engine import cursors

    start = _start(from_start, from_now, from_id, from_time, "now")
    with inv.store(write=True) as conn:
        before, after = cursors.seek(conn, name, start, clock.now_ms())
    render_cursors.moved(inv.output(), before, after)


@app.command()
@takes_invocation
def delete(inv: Invocation, name: Name) -> None:
    """Delete a cursor (the history it read stays).

    Example: acomm cursor delete audit
    """
    from acomm_cli.engine import cursors

    with inv.store(write=True) as conn:
        c = cursors.delete(conn, name)
    render_cursors.deleted(inv.output(), c)
