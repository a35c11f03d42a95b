"""`acomm ui`: the live dashboard. Textual is imported here, inside the command,
and nowhere else: no other command pays for it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import params
from acomm_cli.cli.config import Settings
from acomm_cli.cli.invocation import Invocation, after_write, identity, limits, store
from acomm_cli.cli.params import AsAgent, ReadOnly, takes_invocation
from acomm_cli.errors import UsageError

if TYPE_CHECKING:
    from acomm_cli.ui.app import Session

app = typer.Typer(add_completion=False)


@app.command()
@takes_invocation
def ui(
    inv: Invocation,
    as_: AsAgent = None,
    read_only: ReadOnly = False,
    stale: Annotated[
        str,
        typer.Option(
            click_type=params.DURATION,
            help="Highlight an agent whose oldest unread message is older than this. "
            + params.DURATION_HELP,
        ),
    ] = "5m",
) -> None:
    """A live dashboard of the store in the terminal (Textual; the `ui` extra).

    Panes: agents (total, unread, awaiting ack, oldest unread, dead letters; stale ones in
    red), channels (type, state, pending, queued), a live feed of messages (filter with /),
    the selected message with each recipient's delivery state and its thread, the peers
    on a federation node, and the last hour's traffic and unread backlog. Updates as other
    processes commit.

    Actions, each confirmed first and done by the same engine function as its command:
    send (s), team broadcast (b), ack (a), replay (r) or discard (x) a dead letter, pause
    (p) or resume (u) a channel; sending and acking act as --as. ? lists the keys, q quits.

    Example: acomm ui --as operator

    Example (auditors): acomm ui --read-only
    """
    stale_ms = clock.parse_duration(stale, "stale")
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        raise UsageError(
            "acomm ui draws on a terminal: run it in one (stdin and stdout must be terminals)",
            field="ui",
        )
    try:
        from acomm_cli.ui.app import DashboardApp
    except ImportError as exc:  # textual is the `ui` extra
        raise UsageError(
            f"acomm ui needs Textual ({exc.name} is missing): pip install 'acomm[ui]'", field="ui"
        ) from None
    if as_ is not None and not read_only:  # it sends and acks as --as: proven first
        identity(as_)
        inv.prove_identity()
    with open_session(
        inv.settings, agent=as_, read_only=read_only, stale_after_ms=stale_ms
    ) as session:
        DashboardApp(session).run()


@contextmanager
def open_session(
    s: Settings, *, agent: str | None, read_only: bool, stale_after_ms: int
) -> Iterator[Session]:
    """The store as every command opens it (a store that cannot be written is opened
    read-only, and the session is then read-only too), with what a writing command does
    after each commit."""
    from acomm_cli.ui.app import Session

    with store(s, write=not read_only, read_fallback=True, hooks=False) as conn:
        path, _ = s.store_path(create=False)
        yield Session(
            conn,
            title=str(path),
            agent=agent,
            read_only=read_only or bool(getattr(conn, "read_only", False)),
            limits=limits(s),
            offline_after_ms=s.value("federation.offline_after"),
            stale_after_ms=stale_after_ms,
            after_write=partial(after_write, s, conn),
        )
