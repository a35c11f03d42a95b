"""The kinds of values options and arguments take, as click parameter types.

Each type carries what `--help`, the man pages and the shell completions say about a value:
its metavar (`--as AGENT`) and how a shell completes it (agent ids and channel names from the
store, paths, or a fixed list of choices). Declare an option with `click_type=params.AGENT`;
a declaration may still give its own `metavar=` when its help names the value (INBOX_DIR).

Conversion passes the string through: the engine validates values and its errors name the
field and the value. Numbers are the exception: `Whole` and `Number` accept ASCII digits only.

Below the types: the options several commands share (`AsAgent`, the message filters) and the
decorators a command module declares its commands with (`takes_invocation`, `runs`,
`listing`). Imported by the commands on the Typer path only: the fast path never loads it.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer._click.core import Context
from typer._click.globals import get_current_context
from typer._click.types import FloatParamType, IntParamType, ParamType

from acomm_cli import model
from acomm_cli.cli.config import Settings
from acomm_cli.output.columns import Columns, describe

if TYPE_CHECKING:  # imported when a command runs: `acomm --help` opens no store
    from acomm_cli.cli.invocation import Invocation


class Kind(StrEnum):
    """How a shell completes a value; channel names and agent ids are looked up in the store
    (`acomm __complete channels|agents`)."""

    CHANNEL = "channel"
    AGENT = "agent"
    FILE = "file"
    DIR = "dir"
    CHOICE = "choice"


class Value(ParamType):
    """A string value with a metavar (None: the parameter's own name) and a completion kind."""

    name = "text"  # what the man pages print for a string option: `--as TEXT`

    def __init__(
        self, metavar: str | None = None, kind: Kind | None = None, choices: Iterable[str] = ()
    ) -> None:
        self.metavar = metavar
        self.choices = tuple(choices)
        self.kind = Kind.CHOICE if self.choices else kind

    def get_metavar(self, param: Any, ctx: Any) -> str | None:
        return self.metavar

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        return value

    def __repr__(self) -> str:
        return f"Value({self.metavar!r}, {self.kind!r})"


def choice(values: Iterable[str], metavar: str) -> Value:
    """One of a fixed list, as completion offers it; the engine refuses anything else."""
    return Value(metavar, choices=values)


class Whole(IntParamType):
    """click's INT calls int(), which also takes "１", "٣" or "1_000": ASCII digits only."""

    _OK = re.compile(r"\s*[+-]?[0-9]+\s*", re.ASCII)

    def __init__(self, metavar: str | None = None) -> None:
        self.metavar = metavar

    def get_metavar(self, param: Any, ctx: Any) -> str | None:
        return self.metavar

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and not self._OK.fullmatch(value):
            self.fail(f"{value!r} is not a whole number (ASCII digits)", param, ctx)
        return super().convert(value, param, ctx)


class Number(FloatParamType):
    """click's FLOAT calls float(), which also takes "１.５": ASCII only."""

    def __init__(self, metavar: str | None = None) -> None:
        self.metavar = metavar

    def get_metavar(self, param: Any, ctx: Any) -> str | None:
        return self.metavar

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and not value.isascii():
            self.fail(f"{value!r} is not a number (ASCII digits)", param, ctx)
        return super().convert(value, param, ctx)


# Names from the store.
AGENT = Value("AGENT", Kind.AGENT)
AGENTS = Value("AGENT[,AGENT...]", Kind.AGENT)  # `send --to bob,carol`
CHANNEL = Value("CHANNEL", Kind.CHANNEL)

# Paths.
FILE = Value("FILE", Kind.FILE)
DIR = Value("DIR", Kind.DIR)

# Parsed by acomm_cli.clock and the engine.
DURATION = Value("DURATION")  # 500ms, 30s, 1h30m, 7d, PT1H30M
TIME = Value("TIME")  # ISO 8601, or relative to now: -1h
ETA = Value("DURATION|TIME")  # a task's ETA: 10m from now, or when
SIZE = Value("SIZE")  # 65536, 1MiB

# What the help of every duration and time option ends with: one set of forms everywhere
# (docs/SCRIPTING.md, "Durations and times").
DURATION_HELP = (
    "DURATION: 500ms, 30s, 5m, 1h30m, 2d or ISO 8601 (PT1H30M); a bare number is seconds."
)
TIME_HELP = (
    "TIME: ISO 8601 (2026-11-27T18:00:00Z, or with an offset such as +01:00), epoch ms, "
    "or relative to now (-1h, +30m)."
)

# Numbers.
COUNT = Whole("N")
FRACTION = Number("FRACTION")

# Choices, from the model's enums.
SHELLS = ("bash", "zsh", "fish")  # what `acomm completions SHELL` writes scripts for
MESSAGE_TYPE = choice((t.value for t in model.MessageType), "TYPE")
CHANNEL_TYPE = choice((t.value for t in model.ChannelType), "TYPE")
DELIVERY_MODE = choice((m.value for m in model.DeliveryMode), "MODE")
PRIORITY = choice((p.name.lower() for p in model.Priority), "PRIORITY")
MESSAGE_STATUS = choice(model.MESSAGE_STATUSES, "STATUS")
DELIVERY_STATE = choice((s.value for s in model.DeliveryState), "STATE")
TASK_STATE = choice(model.TASK_STATES, "STATE")
CAPABILITY_STATE = choice(("published", "unpublished"), "STATE")
INCIDENT_STATE = choice(("open", "resolved"), "STATE")
ACK_STATUS = choice((s.value for s in model.AckStatus), "STATUS")
DEAD_LETTER_REASON = choice(model.DEAD_LETTER_REASONS, "REASON")
ROLE = choice((model.Role.MEMBER.value, model.Role.OBSERVER.value), "ROLE")  # not owner
SORT = choice(("created", "priority", "id"), "SORT")
HISTORY_SORT = choice(("created", "priority", "id", "rank"), "SORT")  # rank: `--search`'s
ORDER = choice(("asc", "desc"), "ORDER")
EXPORT_FORMAT = choice(("parquet", "jsonl"), "FORMAT")
MESSAGE_FORMAT = choice(("text", "markdown"), "FORMAT")  # `send --format`
SHELL = choice(SHELLS, "SHELL")


# ---------------------------------------------------------------- declaring a command


def invocation(ctx: Context | None = None) -> Invocation:
    """A Typer command's `Invocation`: the root's settings, and its --help for a refusal to
    show (any click context will do: `get_current_context` gives one)."""
    from acomm_cli.cli.invocation import Invocation

    ctx = ctx or get_current_context(silent=True)
    if ctx is None:
        return Invocation(Settings())
    found = ctx
    obj = ctx.find_root().obj
    return Invocation(obj if isinstance(obj, Settings) else Settings(), lambda: found.get_help())


def _on_invocation(
    declaration: Callable[..., Any], body: Callable[..., int | None]
) -> Callable[..., None]:
    """The Typer callback for `declaration`'s signature (its first parameter, the Invocation,
    becomes click's context) that runs `body(invocation, **values)`; a status it returns is
    the exit status."""
    signature = inspect.signature(declaration, eval_str=True)
    first, *rest = signature.parameters.values()
    context = first.replace(name="ctx", annotation=typer.Context)

    @functools.wraps(declaration)
    def command(ctx: typer.Context, **values: Any) -> None:
        if ctx.invoked_subcommand is not None:  # a group's own body runs only alone
            return
        code = body(invocation(ctx), **values)
        if code:
            raise typer.Exit(code)

    command.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[context, *rest]
    )
    command.__annotations__ = {
        p.name: p.annotation
        for p in (context, *rest)
        if p.annotation is not inspect.Parameter.empty
    }
    del command.__wrapped__  # Typer reads the signature above, not the declaration's
    command.__acomm_invocation__ = True  # type: ignore[attr-defined]
    return command


def takes_invocation(fn: Callable[..., int | None]) -> Callable[..., None]:
    """`@takes_invocation` under `@app.command()`: the function is the command, declared by
    its signature and docstring as usual, and runs with an `Invocation` as its first argument
    (the settings, the output, the store) instead of click's context."""
    return _on_invocation(fn, fn)


def runs(body: Callable[..., int | None]) -> Callable[[Callable[..., Any]], Callable[..., None]]:
    """`@runs(send_run.send)` under `@app.command()`, for a command the fast path runs: the
    decorated function only declares it (its signature and docstring), and `body`, in a module
    without typer, does the work with the same parameters. `make docs` records `body` in
    `cli/fastpath_tree.py`, so that the `acomm` program can run it without Typer."""

    def declare(declaration: Callable[..., Any]) -> Callable[..., None]:
        command = _on_invocation(declaration, body)
        command.__acomm_body__ = f"{body.__module__}:{body.__qualname__}"  # type: ignore[attr-defined]
        return command

    return declare


def listing(columns: Columns) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`@listing(columns.X)` under `@app.command()` (above `@takes_invocation` or `@runs`): the
    command prints rows, so it takes the output options (--json, --jsonl, --csv, --tsv,
    --no-headers: global, declared once on the root, app.py), and its --help ends with its
    columns, from the same list its renderer writes the header row from. A command without it
    refuses the row formats (app.py; the fast path hands such a line to Typer)."""

    def declare(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__doc__ = inspect.cleandoc(fn.__doc__ or "") + "\n\n" + describe(columns)
        fn.__acomm_columns__ = columns  # type: ignore[attr-defined]
        return fn

    return declare


# ---------------------------------------------------------------- options commands share

AsAgent = Annotated[
    str | None,
    typer.Option(
        "--as", click_type=AGENT, envvar="ACOMM_AGENT", show_envvar=True, help="The acting agent."
    ),
]

# The operator front ends' (`acomm ui`, `acomm web`) switch to look without acting.
ReadOnly = Annotated[
    bool,
    typer.Option(
        "--read-only",
        help="Show, never change: every action is refused (automatic on a "
        "store that cannot be written).",
    ),
]

# Filters shared by `receive` and `messages`.
ChannelOpt = Annotated[
    str | None, typer.Option("--channel", "-c", click_type=CHANNEL, help="Only this channel.")
]
Since = Annotated[
    str | None,
    typer.Option(click_type=TIME, help="From this time. " + TIME_HELP),
]
Until = Annotated[str | None, typer.Option(click_type=TIME, help="Up to this time. " + TIME_HELP)]
Types = Annotated[
    list[str] | None,
    typer.Option("--type", "-t", click_type=MESSAGE_TYPE, help="Message type (repeatable)."),
]
From = Annotated[
    str | None, typer.Option("--from", click_type=AGENT, help="Only messages from this agent.")
]
Topic = Annotated[str | None, typer.Option(help="Topic pattern (* one segment, # any).")]
EventTypeFilter = Annotated[
    str | None,
    typer.Option(
        "--event-type", metavar="TYPE", help="Only messages carrying an event of this type."
    ),
]
ThreadFilter = Annotated[
    str | None,
    typer.Option("--thread", metavar="ID", help="Only messages whose event is in this thread."),
]
ActorFilter = Annotated[
    str | None,
    typer.Option("--actor", click_type=AGENT, help="Only messages whose event this agent did."),
]
MetaFilter = Annotated[
    list[str] | None,
    typer.Option(
        "--meta",
        metavar="KEY[=VALUE]",
        help="Only messages whose metadata has KEY=VALUE, KEY!=VALUE (or no KEY), KEY (present)"
        " or !KEY (absent); repeatable, all must hold.",
    ),
]
Status = Annotated[
    list[str] | None,
    typer.Option(
        click_type=MESSAGE_STATUS,
        help="Message status: sent, delivered, acknowledged, dead_letter (repeatable).",
    ),
]
Grep = Annotated[
    str | None, typer.Option(metavar="REGEX", help="Regular expression the content must match.")
]
PriorityMin = Annotated[
    str | None, typer.Option(click_type=PRIORITY, help="Lowest priority (name or 0-4).")
]
Sort = Annotated[str | None, typer.Option(click_type=SORT, help="created, priority or id.")]
Order = Annotated[str | None, typer.Option(click_type=ORDER, help="asc or desc.")]
Limit = Annotated[int, typer.Option(click_type=COUNT, help="At most this many messages.")]
Offset = Annotated[int, typer.Option(click_type=COUNT, help="Skip this many first.")]
