"""The Typer app: global options, command registration, and errors -> exit status."""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer._click.core import Command, Context
from typer._click.exceptions import NoArgsIsHelpError
from typer._click.exceptions import UsageError as ClickUsageError
from typer._click.types import FloatParamType, IntParamType
from typer.core import TyperCommand, TyperGroup

from acomm_cli import __version__
from acomm_cli.cli import outcome, params, render
from acomm_cli.cli.config import Settings
from acomm_cli.cli.outcome import _ReaderGone
from acomm_cli.errors import UsageError

# The registered command tree, in the order `--help` lists it: command -> module of
# acomm_cli.commands. Modules are imported on demand instead of mounted with add_typer, which
# would build every command's parser on every call (about 20 ms per process).
COMMANDS = {
    "init": "init", "status": "init", "config": "config",
    "channel": "channel",
    "send": "send", "publish": "send",
    "subscribe": "subscribe", "unsubscribe": "subscribe", "subscriptions": "subscribe",
    "receive": "receive",
    "ack": "ack", "nack": "nack", "extend": "nack",
    "query": "query", "respond": "query", "thread": "query",
    "task": "task", "capability": "capability", "incident": "incident",
    "messages": "messages", "show": "messages",
    "deadletter": "deadletter",
    "tick": "tick",
    "dispatch": "dispatch", "receipts": "dispatch",
    "flush": "compact", "compact": "compact",
    "stats": "stats",
    "doctor": "doctor",
    "completions": "completions", "__complete": "completions",  # __complete: hidden
    "export": "export", "audit": "audit",
    "bridge": "bridge",
    "node": "node", "invite": "invite",
    "agent": "agent", "peers": "peers", "fed": "fed", "gateway": "gateway",
    "token": "token",
    "ui": "ui",
}
# named groups; the others are top-level verbs
GROUPS = {"channel", "deadletter", "config", "bridge", "node", "invite", "agent", "peers",
          "fed", "gateway", "task", "capability", "incident", "token"}
ALIASES = {"dead-letters": "deadletter"}


def _unwrapped_examples(text: str) -> str:
    """Each `Example:` paragraph on one line, kept whole by click (`\b`): a command wrapped
    at 80 columns would be two commands when copied."""
    paras = re.split(r"\n\s*\n", inspect.cleandoc(text))
    return "\n\n".join(
        "\b\n" + " ".join(line.strip() for line in p.splitlines()) if p.startswith("Example")
        else p for p in paras)


def _plain_help(cmd: Command) -> Command:
    """Every --help in click's plain layout, as the root's: the same on every command, honest
    about --no-color (no rich panels), and exactly what docs/cli.md quotes. The listing of a
    group shows each command's whole first paragraph rather than cutting it at ~45 columns."""
    if isinstance(cmd, TyperCommand | TyperGroup):
        cmd.rich_markup_mode = None
    if cmd.short_help is None and cmd.help:
        cmd.short_help = cmd.help.split("\n\n", 1)[0].replace("\n", " ").strip()
    if cmd.help and "\bExample" not in cmd.help:
        cmd.help = _unwrapped_examples(cmd.help)
    for p in cmd.params:  # `--as AGENT` (the option's type says) and `NAME`, not `<str>`/`{name}`
        if p.metavar is None and not getattr(p, "is_flag", False) and p.name:
            typed = getattr(p.type, "metavar", None) if p.param_type_name == "option" else None
            p.metavar = typed or p.name.upper().rstrip("_")
    for sub in getattr(cmd, "commands", {}).values():
        _plain_help(sub)
    return cmd


_ASCII_INT, _ASCII_FLOAT = params.Whole(), params.Number()


def _ascii_numbers(cmd: Command) -> Command:
    """Every number option and argument of every command parses ASCII digits only."""
    for p in cmd.params:
        if isinstance(p.type, IntParamType) and not isinstance(p.type, params.Whole):
            p.type = _ASCII_INT
        elif isinstance(p.type, FloatParamType) and not isinstance(p.type, params.Number):
            p.type = _ASCII_FLOAT
    for sub in getattr(cmd, "commands", {}).values():
        _ascii_numbers(sub)
    return cmd


class AcommGroup(TyperGroup):
    """Holds the only `except` of the program: every error is rendered here, once."""

    def list_commands(self, ctx: Context) -> list[str]:
        return list(COMMANDS)  # registration order, not alphabetical

    def get_command(self, ctx: Context, name: str) -> Command | None:
        """Import only the module of the command being run: start-up time is a feature."""
        name = ALIASES.get(name, name)
        module = COMMANDS.get(name)
        if module is None:
            return None
        mod = importlib.import_module(f"{__package__}.commands.{module}")
        built = _ascii_numbers(_plain_help(typer.main.get_command(mod.app)))
        if name in GROUPS:
            built.name = name
            return built
        return built.commands[name] if isinstance(built, TyperGroup) else built

    def invoke(self, ctx: Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise _ReaderGone() from None

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             windows_expand_args: bool = True, **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        as_json = outcome.wants_json(argv)
        try:
            rv = super().main(outcome.hoist_globals(argv), prog_name or "acomm", complete_var,
                              standalone_mode=False, windows_expand_args=windows_expand_args,
                              **extra)
            sys.stdout.flush()  # here, where a reader that went away is still ours to report
        except typer.Abort:
            print("acomm: aborted", file=sys.stderr)
            sys.exit(130)
        except NoArgsIsHelpError as exc:  # `acomm` or `acomm channel` alone: show the help
            if exc.format_message().strip():
                print(exc.format_message(), file=sys.stderr)
            sys.exit(2)
        except ClickUsageError as exc:
            hint = f" (see `acomm {exc.ctx.command_path.partition(' ')[2]} --help`)".replace(
                "  ", " ") if exc.ctx else ""
            render.error(UsageError(exc.format_message() + hint), as_json)
            sys.exit(2)
        except (Exception, KeyboardInterrupt) as exc:  # shared with the fast path
            sys.exit(outcome.failed(exc, as_json))
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    cls=AcommGroup,
    name="acomm",
    help="A durable message engine for AI agents, driven from the shell.\n\n"
    "Global options may also follow the subcommand.\n\n"
    'Example: id=$(acomm send team "hello" --as alice) && acomm show "$id"',
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        print(f"acomm {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    ctx: typer.Context,
    store: Annotated[str | None, typer.Option(
        "--store", "--file", click_type=params.FILE, metavar="PATH", show_default=False,
        help="The store file (default: $ACOMM_STORE, then the nearest .acomm/store.acomm).")
    ] = None,
    config: Annotated[str | None, typer.Option(
        click_type=params.FILE, metavar="PATH", show_default=False,
        help="Config file (default: $ACOMM_CONFIG, then config.yaml beside the store).")] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="No colour.")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version.")] = False,
) -> None:
    """A durable message engine for AI agents, driven from the shell.

    Global options may also follow the subcommand.

    Example: id=$(acomm send team "hello" --as alice) && acomm show "$id"
    """
    ctx.obj = Settings.from_options(store=store, config=config, json_=json_, no_color=no_color)




def main() -> None:
    app()
