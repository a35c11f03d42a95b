"""The Typer app: global options, command registration, and errors -> exit status."""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import sys
import time
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer._click.core import Command, Context, Parameter
from typer._click.exceptions import NoArgsIsHelpError
from typer._click.exceptions import UsageError as ClickUsageError
from typer._click.types import FloatParamType, IntParamType
from typer.core import TyperCommand, TyperGroup

from acomm_cli.cli import outcome, params, version
from acomm_cli.cli.config import Settings
from acomm_cli.cli.outcome import _ReaderGone
from acomm_cli.errors import UsageError
from acomm_cli.output import render

# The registered command tree, in the order `--help` lists it: command -> module of
# acomm_cli.cli.commands. Modules are imported on demand instead of mounted with add_typer, which
# would build every command's parser on every call (about 20 ms per process).
COMMANDS = {
    "init": "init",
    "status": "init",
    "config": "config",
    "channel": "channel",
    "send": "send",
    "publish": "send",
    "subscribe": "subscribe",
    "unsubscribe": "subscribe",
    "subscriptions": "subscribe",
    "receive": "receive",
    "ack": "ack",
    "nack": "nack",
    "extend": "nack",
    "query": "query",
    "respond": "query",
    "thread": "query",
    "trace": "trace",
    "task": "task",
    "capability": "capability",
    "incident": "incident",
    "messages": "messages",
    "show": "messages",
    "attachment": "attachment",
    "cursor": "cursor",
    "schedule": "schedule",
    "cancel": "cancel",
    "deadletter": "deadletter",
    "tick": "tick",
    "dispatch": "dispatch",
    "receipts": "receipts",
    "flush": "compact",
    "compact": "compact",
    "stats": "stats",
    "doctor": "doctor",
    "completions": "completions",
    "__complete": "completions",  # __complete: hidden
    "export": "export",
    "audit": "audit",
    "bridge": "bridge",
    "node": "node",
    "invite": "invite",
    "agent": "agent",
    "peers": "peers",
    "fed": "fed",
    "gateway": "gateway",
    "token": "token",
    "mcp": "mcp",
    "ui": "ui",
    "web": "web",
}
# named groups; the others are top-level verbs
GROUPS = {
    "channel",
    "deadletter",
    "config",
    "bridge",
    "node",
    "invite",
    "agent",
    "peers",
    "dispatch",
    "fed",
    "gateway",
    "task",
    "capability",
    "incident",
    "token",
    "attachment",
    "cursor",
    "schedule",
}
ALIASES = {"dead-letters": "deadletter"}


def _unwrapped_examples(text: str) -> str:
    """Each `Example:` paragraph on one line, kept whole by click (`\b`): a command wrapped
    at 80 columns would be two commands when copied."""
    paras = re.split(r"\n\s*\n", inspect.cleandoc(text))
    return "\n\n".join(
        "\b\n" + " ".join(line.strip() for line in p.splitlines()) if p.startswith("Example") else p
        for p in paras
    )


def _argument_metavar(p: Parameter, ctx: Context, *, usage: bool = False) -> str:
    """An argument in a usage line as POSIX writes it: `NAME` when required, `[NAME]` when
    not, `NAME...` when it takes several (Typer's own writes a required one `{NAME}`)."""
    var = p.metavar or (p.name or "").upper()
    if p.nargs != 1 and not var.rstrip("]").endswith("..."):
        var += "..."
    return f"[{var}]" if usage and not p.required and not var.startswith("[") else var


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
        if p.param_type_name == "argument":
            p.make_metavar = functools.partial(_argument_metavar, p)  # type: ignore[method-assign]
    for sub in getattr(cmd, "commands", {}).values():
        _plain_help(sub)
    return cmd


_ASCII_INT, _ASCII_FLOAT = params.Whole(), params.Number()


def _listings_only(cmd: Command, path: str) -> Command:
    """The row formats (--jsonl, --csv, --tsv) for the commands that print rows (those
    declared with `@listing`, cli/params.py): any other command refuses them (exit 2)
    rather than ignore them. Group callbacks are left alone (`peers` itself is a listing)."""
    subs = getattr(cmd, "commands", None)
    if subs:
        for name, sub in subs.items():
            _listings_only(sub, f"{path} {name}")
        return cmd
    callback = cmd.callback
    if callback is None or getattr(callback, "__acomm_columns__", None):
        return cmd

    @functools.wraps(callback)  # keeps `__acomm_body__` (the fast path's tree reads it)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        from typer._click.globals import get_current_context

        obj = get_current_context().find_root().obj
        table = getattr(obj, "table", None)
        if table is not None:
            raise UsageError(
                f"--{table} is for listings; `acomm {path}` prints no rows "
                "(--json gives its document)",
                field="format",
                value=table,
            )
        return callback(*args, **kwargs)

    cmd.callback = guarded
    return cmd


def _ascii_numbers(cmd: Command) -> Command:
    """Every number option and argument of every command parses ASCII digits only. A range
    (`min=`/`max=`) keeps its own type: its bounds matter more than the digits' script."""
    for p in cmd.params:
        if type(p.type) is IntParamType:
            p.type = _ASCII_INT
        elif type(p.type) is FloatParamType:
            p.type = _ASCII_FLOAT
    for sub in getattr(cmd, "commands", {}).values():
        _ascii_numbers(sub)
    return cmd


def closest(typo: str, names: Sequence[str]) -> list[str]:
    """At most three of `names` closest to a mistyped one: those it begins (`recei`), else
    the closest by difflib's ratio (`recieve`), best first."""
    import difflib  # here: only a mistyped command pays for it

    begun = [n for n in names if len(typo) >= 2 and n.startswith(typo)]
    return begun[:3] or difflib.get_close_matches(typo, names, n=3, cutoff=0.6)


def no_such_command(typo: str, names: Sequence[str]) -> str:
    """`No such command: recieve. Did you mean receive?`: the usage error's text."""
    near = closest(typo, names)
    if not near:
        return f"No such command: {typo}."
    if len(near) == 1:
        return f"No such command: {typo}. Did you mean {near[0]}?"
    return f"No such command: {typo}. Did you mean one of {', '.join(near)}?"


class _Suggesting(TyperGroup):
    """A group whose mistyped subcommand gets the closest names, as a mistyped option does
    (exit 2, usage)."""

    def _visible(self, ctx: Context) -> list[str]:
        return [
            n for n in self.list_commands(ctx) if not getattr(self.commands.get(n), "hidden", 0)
        ]

    def resolve_command(
        self, ctx: Context, args: list[str]
    ) -> tuple[str | None, Command | None, list[str]]:
        name = args[0] if args else None
        if (
            name is not None
            and not ctx.resilient_parsing
            and not name.startswith("-")
            and self.get_command(ctx, name) is None
        ):
            ctx.fail(no_such_command(name, self._visible(ctx)))
        return super().resolve_command(ctx, args)


def _suggesting(cmd: Command) -> Command:
    """Every group of a command's tree suggests the closest subcommands (Typer's own quotes
    them as Python does, and knows nothing of the root's lazy registry)."""
    if isinstance(cmd, TyperGroup):
        if type(cmd) is TyperGroup:
            cmd.__class__ = _Suggesting
        for sub in cmd.commands.values():
            _suggesting(sub)
    return cmd


class AcommGroup(_Suggesting):
    """Holds the only `except` of the program: every error is rendered here, once."""

    aliases = ALIASES  # for the completion scripts, which read the tree, not this module

    def list_commands(self, ctx: Context) -> list[str]:
        return list(COMMANDS)  # registration order, not alphabetical

    def _visible(self, ctx: Context) -> list[str]:
        return [n for n in COMMANDS if not n.startswith("_")]  # __complete is hidden

    def get_command(self, ctx: Context, name: str) -> Command | None:
        """Import only the module of the command being run: start-up time is a feature."""
        name = ALIASES.get(name, name)
        cache: dict[str, Command] = self.__dict__.setdefault("_built", {})
        if name in cache:  # built once: to hoist the globals (below), then to run it
            return cache[name]
        module = COMMANDS.get(name)
        if module is None:
            return None
        mod = importlib.import_module(f"{__package__}.commands.{module}")
        built = _ascii_numbers(_plain_help(typer.main.get_command(mod.app)))
        if name in GROUPS:
            _listings_only(_suggesting(built), name)
            built.name = name
            cache[name] = built
            return built
        leaf = built.commands[name] if isinstance(built, TyperGroup) else built
        cache[name] = _listings_only(leaf, name)
        return cache[name]

    def value_options(self, path: tuple[str, ...]) -> tuple[frozenset[str], bool] | None:
        """The options of the command `path` names that take a value, and whether it is a
        group (what `outcome.hoist_globals` needs), from click's own command: the Typer app
        stays the one definition (a literal `--grep -v` is the command's, not a global)."""
        ctx = Context(self, info_name="acomm")
        cmd: Command = self
        for word in path:
            sub = cmd.get_command(ctx, word) if isinstance(cmd, TyperGroup) else None
            if sub is None:
                return None
            cmd = sub
        takes = frozenset(
            o
            for p in cmd.params
            if p.param_type_name == "option"
            and not getattr(p, "is_flag", False)
            and not getattr(p, "count", False)
            for o in (*p.opts, *p.secondary_opts)
        )
        return takes, isinstance(cmd, TyperGroup)

    def invoke(self, ctx: Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise _ReaderGone() from None

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        as_json = outcome.wants_json(argv, self.value_options)
        render.loudness(quiet=False, verbose=False)  # until the root's options say
        started = time.perf_counter()
        try:
            self._main(argv, as_json, prog_name, complete_var, windows_expand_args, **extra)
        finally:
            render.verbose(f"done in {(time.perf_counter() - started) * 1000:.1f} ms")

    def _main(
        self,
        argv: list[str],
        as_json: bool,
        prog_name: str | None,
        complete_var: str | None,
        windows_expand_args: bool,
        **extra: Any,
    ) -> None:
        try:
            hoisted = outcome.hoist_globals(argv, self.value_options)
            _ARGV[0] = hoisted
            rv = super().main(
                hoisted,
                prog_name or "acomm",
                complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )
            sys.stdout.flush()  # here, where a reader that went away is still ours to report
        except typer.Abort:
            print("acomm: aborted", file=sys.stderr)
            sys.exit(130)
        except NoArgsIsHelpError as exc:  # `acomm` or `acomm channel` alone: show the help
            if exc.format_message().strip():
                print(exc.format_message(), file=sys.stderr)
            sys.exit(2)
        except ClickUsageError as exc:
            hint = (
                f" (see `acomm {exc.ctx.command_path.partition(' ')[2]} --help`)".replace("  ", " ")
                if exc.ctx
                else ""
            )
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


# the command line being run, after hoisting: `--version` is eager, so its callback runs before
# -v is read, and looks for it here
_ARGV: list[list[str]] = [[]]


def _verbose_in(args: list[str]) -> bool:
    words = args[: args.index("--")] if "--" in args else args
    return any(
        w in version.VERBOSE
        or (w[:1] == "-" and w[1:2] != "-" and "v" in w and set(w[1:]) <= set("qvV"))
        for w in words
    )


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(version.text(_verbose_in(_ARGV[0])))
        raise typer.Exit()


@app.callback()
def main_options(
    ctx: typer.Context,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            "--file",
            click_type=params.FILE,
            metavar="PATH",
            show_default=False,
            help="The store file (default: $ACOMM_STORE, then the nearest .acomm/store.acomm).",
        ),
    ] = None,
    config: Annotated[
        str | None,
        typer.Option(
            click_type=params.FILE,
            metavar="PATH",
            show_default=False,
            help="Config file (default: $ACOMM_CONFIG, then config.yaml beside the store).",
        ),
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    jsonl: Annotated[
        bool, typer.Option("--jsonl", help="A listing: one JSON object a row.")
    ] = False,
    csv: Annotated[
        bool, typer.Option("--csv", help="A listing: comma-separated values, with a header row.")
    ] = False,
    tsv: Annotated[
        bool, typer.Option("--tsv", help="A listing: tab-separated values, with a header row.")
    ] = False,
    no_headers: Annotated[
        bool, typer.Option("--no-headers", help="--csv or --tsv without the header row.")
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="No `acomm: note:` lines on stderr (warnings and errors stay)."
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Also say on stderr which store and config file were used, "
            "and how long the command took.",
        ),
    ] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="No colour.")] = False,
    token_file: Annotated[
        str | None,
        typer.Option(
            click_type=params.FILE,
            metavar="FILE",
            envvar="ACOMM_AGENT_TOKEN_FILE",
            show_default=False,
            help="The acting agent's secret, in a file only its owner may read "
            "(identity.auth token; default: $ACOMM_AGENT_TOKEN).",
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            callback=_version,
            is_eager=True,
            help="Print the version (with -v: also Python's, SQLite's and the extras').",
        ),
    ] = False,
) -> None:
    """A durable message engine for AI agents, driven from the shell.

    Global options may also follow the subcommand.

    Example: id=$(acomm send team "hello" --as alice) && acomm show "$id"
    """
    ctx.obj = Settings.from_options(
        store=store,
        config=config,
        json_=json_,
        no_color=no_color,
        jsonl=jsonl,
        csv=csv,
        tsv=tsv,
        no_headers=no_headers,
        quiet=quiet,
        verbose=verbose,
        token_file=token_file,
    )
    render.loudness(quiet=quiet, verbose=verbose)


def main() -> None:
    app()
