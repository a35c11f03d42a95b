"""What every command module shares: settings, the store, identity, filter options."""

from __future__ import annotations

import functools
import inspect
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Annotated, Any

import typer
from typer._click.core import Context
from typer._click.globals import get_current_context

from acomm_cli import model
from acomm_cli.cli import params
from acomm_cli.cli.commands import _runtime
from acomm_cli.cli.commands._runtime import build_filter as build_filter  # messages uses it
from acomm_cli.cli.commands._runtime import identity as identity  # re-exported for the commands
from acomm_cli.cli.config import Settings
from acomm_cli.cli.invocation import Invocation
from acomm_cli.output.columns import Columns, describe
from acomm_cli.output.render import Output


def settings(ctx: Context) -> Settings:
    """The root's settings (any click context will do: `get_current_context` gives one)."""
    obj = ctx.find_root().obj
    return obj if isinstance(obj, Settings) else Settings()


def output(ctx: typer.Context) -> Output:
    return _runtime.output(settings(ctx))


def store(ctx: typer.Context, **options: bool) -> AbstractContextManager[sqlite3.Connection]:
    """The resolved store, opened as `_runtime.store` says (write=, create=, ...)."""
    return _runtime.store(settings(ctx), **options)


def limits(ctx: typer.Context) -> model.Limits:
    return _runtime.limits(settings(ctx))


def stall_s(ctx: typer.Context) -> float:
    return _runtime.stall_s(settings(ctx))


def invocation(ctx: Context | None = None) -> Invocation:
    """A Typer command's `Invocation`: the settings, and its --help for a refusal to show."""
    ctx = ctx or get_current_context(silent=True)
    if ctx is None:
        return Invocation(Settings())
    found = ctx
    return Invocation(settings(found), lambda: found.get_help())


def read_body(body: str | None) -> str:
    """The body argument, or standard input when it is omitted or `-`."""
    return _runtime.read_body(invocation(), body)


def refuse_terminal_stdin(message: str, field: str) -> None:
    """Refuse to read from a terminal (see `_runtime.refuse_terminal_stdin`)."""
    _runtime.refuse_terminal_stdin(invocation(), message, field)


def runs(body: Callable[..., int | None]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """`@runs(send_run.send)` under `@app.command()`: the decorated function declares the
    command (its signature and docstring are the options and the help) and `body` does the
    work, with the same keyword parameters after an `Invocation`. `make docs` records `body`
    in `acomm_cli/cli/fastpath_tree.py`, so that the fast path can run it without Typer."""
    def declare(declaration: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(declaration)
        def command(ctx: typer.Context, **values: Any) -> None:
            code = body(invocation(ctx), **values)
            if code:
                raise typer.Exit(code)

        command.__acomm_body__ = f"{body.__module__}:{body.__qualname__}"  # type: ignore[attr-defined]
        return command
    return declare


def listing(columns: Columns) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`@listing(columns.X)` under `@app.command()` (above `@runs`): the command prints rows,
    so it takes the output options (--json, --jsonl, --csv, --tsv, --no-headers: global,
    declared once on the root, app.py), and its --help ends with its columns, from the same
    list its renderer writes the header row from. A command without it refuses the row
    formats (app.py; the fast path hands such a line to Typer)."""
    def declare(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__doc__ = inspect.cleandoc(fn.__doc__ or "") + "\n\n" + describe(columns)
        fn.__acomm_columns__ = columns  # type: ignore[attr-defined]
        return fn
    return declare


AsAgent = Annotated[str | None, typer.Option(
    "--as", click_type=params.AGENT, envvar="ACOMM_AGENT", show_envvar=True,
    help="The acting agent.")]

# Filters shared by `receive` and `messages`.
ChannelOpt = Annotated[str | None, typer.Option(
    "--channel", "-c", click_type=params.CHANNEL, help="Only this channel.")]
Since = Annotated[str | None, typer.Option(
    click_type=params.TIME, help="From this time (ISO 8601 or relative, e.g. -1h).")]
Until = Annotated[str | None, typer.Option(
    click_type=params.TIME, help="Up to this time (ISO 8601 or relative).")]
Types = Annotated[list[str] | None, typer.Option(
    "--type", "-t", click_type=params.MESSAGE_TYPE, help="Message type (repeatable).")]
From = Annotated[str | None, typer.Option(
    "--from", click_type=params.AGENT, help="Only messages from this agent.")]
Topic = Annotated[str | None, typer.Option(help="Topic pattern (* one segment, # any).")]
Status = Annotated[list[str] | None, typer.Option(
    click_type=params.MESSAGE_STATUS,
    help="Message status: sent, delivered, acknowledged, dead_letter (repeatable).")]
Grep = Annotated[str | None, typer.Option(
    metavar="REGEX", help="Regular expression the content must match.")]
PriorityMin = Annotated[str | None, typer.Option(
    click_type=params.PRIORITY, help="Lowest priority (name or 0-4).")]
Sort = Annotated[str | None, typer.Option(click_type=params.SORT, help="created, priority or id.")]
Order = Annotated[str | None, typer.Option(click_type=params.ORDER, help="asc or desc.")]
Limit = Annotated[int, typer.Option(click_type=params.COUNT, help="At most this many messages.")]
Offset = Annotated[int, typer.Option(click_type=params.COUNT, help="Skip this many first.")]
