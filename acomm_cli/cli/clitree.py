"""The command tree as data, read from the root click command it is given.

The man pages, docs/cli.md and the shell completion scripts are all generated from this one
walk over the registered commands, so commands added later are documented and completed
without touching the generators. Imported only by `acomm completions` and
`python -m acomm_cli.cli.docgen`, which pass the root (the one of the running program, or the
app's): this module sits below the commands and never imports the app.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from typer._click.core import Command, Context
from typer.core import TyperArgument, TyperGroup

from acomm_cli.cli.params import Value

HELP_WIDTH = 80  # --help as the generated docs quote it, whatever the terminal's width


@dataclass(frozen=True)
class Param:
    name: str  # the Python name
    opts: tuple[str, ...]  # ("-t", "--type"), or ("NAME",) for an argument
    secondary: tuple[str, ...]  # ("--no-echo",)
    argument: bool
    takes_value: bool
    metavar: str  # NAME, TEXT, INT, ... ("" for flags)
    help: str
    default: str | None
    envvar: str | None
    required: bool
    multiple: bool  # a repeatable option, or an argument taking several values
    kind: str | None  # how a shell completes it (a params.Kind), from its type
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Cmd:
    path: tuple[str, ...]  # () for acomm itself
    summary: str
    description: tuple[str, ...]  # paragraphs after the summary, no examples
    examples: tuple[tuple[str, str], ...]  # (caption, command line)
    params: tuple[Param, ...]
    subcommands: tuple[Cmd, ...]
    usage: str
    help_text: str  # `acomm PATH --help`, plain, HELP_WIDTH columns
    aliases: tuple[tuple[str, str], ...] = ()  # (alias, command), on the root only

    @property
    def name(self) -> str:
        return " ".join(("acomm", *self.path))

    @property
    def options(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if not p.argument)

    @property
    def arguments(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.argument)

    def walk(self) -> Iterator[Cmd]:
        yield self
        for sub in self.subcommands:
            yield from sub.walk()


_EXAMPLE = re.compile(r"^Examples?(?:\s*\(([^)]*)\))?:\s*(.*)$", re.DOTALL)


def split_help(text: str | None) -> tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]:
    """A docstring as (summary, other paragraphs, examples): paragraphs are separated by blank
    lines; the first is the summary; each `Example: CMD` or `Example (caption): CMD` one is an
    example. Click's markers (\\b, and everything after \\f) are dropped."""
    text = (text or "").split("\f", 1)[0]
    paras = [
        " ".join(line.strip() for line in p.strip().splitlines() if line.strip() != "\b")
        for p in re.split(r"\n\s*\n", text.strip())
    ]
    paras = [p for p in paras if p]
    if not paras:
        return "", (), ()
    rest, examples = [], []
    for p in paras[1:]:
        m = _EXAMPLE.match(p)
        if m:
            examples.append(((m.group(1) or "").strip(), m.group(2).strip()))
        else:
            rest.append(p)
    return paras[0], tuple(rest), tuple(examples)


def _param(p: Any) -> Param:
    argument = isinstance(p, TyperArgument)
    typed = p.type if isinstance(p.type, Value) else None  # the declared kind of value
    kind, choices = (typed.kind, typed.choices) if typed else (None, ())
    is_flag = bool(getattr(p, "is_flag", False))
    if argument:
        metavar = (p.metavar or p.name).strip("[]").upper()
        if metavar.endswith("_ARG"):
            metavar = metavar[:-4]
        opts: tuple[str, ...] = (metavar,)
    else:
        # what --help shows (app._plain_help sets it from the type): man pages say the same
        metavar = "" if is_flag else (p.metavar or _type_metavar(p))
        opts = tuple(sorted(p.opts, key=lambda o: (o.startswith("--"), o)))
    default = None
    if not is_flag and not argument and p.default is not None and p.show_default is not False:
        default = str(p.default)
    envvar = p.envvar if isinstance(p.envvar, str) else None
    multiple = bool(getattr(p, "multiple", False)) or p.nargs == -1
    return Param(
        name=p.name,
        opts=opts,
        secondary=tuple(getattr(p, "secondary_opts", ())),
        argument=argument,
        takes_value=not is_flag,
        metavar=metavar,
        help=" ".join((getattr(p, "help", None) or "").split()),
        default=default,
        envvar=envvar,
        required=p.required,
        multiple=multiple,
        kind=None if is_flag else kind,
        choices=choices,
    )


def _type_metavar(p: Any) -> str:
    name = getattr(p.type, "name", "text").upper()
    return {"STR": "TEXT", "STRING": "TEXT", "INTEGER": "INT"}.get(name, name)


def _cmd(cmd: Command, ctx: Context, path: tuple[str, ...]) -> Cmd:
    summary, description, examples = split_help(cmd.help)
    subs: list[Cmd] = []
    if isinstance(cmd, TyperGroup):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            sub_ctx = Context(
                sub,
                info_name=name,
                parent=ctx,
                terminal_width=HELP_WIDTH,
                max_content_width=HELP_WIDTH,
            )
            subs.append(_cmd(sub, sub_ctx, (*path, name)))
    params = tuple(
        _param(p)
        for p in cmd.get_params(ctx)
        if not getattr(p, "hidden", False) and p.name != "help"
    )
    return Cmd(
        path=path,
        summary=summary,
        description=description,
        examples=examples,
        params=params,
        subcommands=tuple(subs),
        usage=" ".join(cmd.collect_usage_pieces(ctx)),
        help_text=cmd.get_help(ctx).rstrip() + "\n",
    )


def tree(root: Command) -> Cmd:
    """The whole command tree under `root` (the Typer app's group), in `--help` order, hidden
    commands left out."""
    ctx = Context(root, info_name="acomm", terminal_width=HELP_WIDTH, max_content_width=HELP_WIDTH)
    top = _cmd(root, ctx, ())
    aliases = tuple(sorted(getattr(root, "aliases", {}).items()))
    return replace(top, aliases=aliases)
