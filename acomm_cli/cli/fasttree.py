"""The compact command tree the fast path reads, derived from the Typer app by `make docs`.

`acomm_cli/cli/fastpath_tree.py` (generated, checked in, checked by tests/test_docs.py) holds
the root's global options and, for every command whose declaration names a body (`@runs(...)`
in `cli/params.py`; a group's subcommand under its two words, `"channel list"`), each
parameter as click sees it after `app.py` has prepared the command: its option names, whether
it is a flag, how its value converts, its default, whether it is required, repeatable or read
from an environment variable. Typer stays the one definition; this is a copy of what it says,
regenerated whenever it changes.
"""

from __future__ import annotations

from typing import Any

from typer._click.core import Command, Context
from typer._click.types import FloatParamType, IntParamType, StringParamType
from typer.core import TyperGroup as Group

from acomm_cli.cli import params

PATH = "acomm_cli/cli/fastpath_tree.py"
HEADER = '''# ruff: noqa: E501
"""Generated from acomm's Typer app by `make docs` (python -m acomm_cli.cli.docgen); do
not edit. The command tree `acomm_cli.cli.main` interprets (see cli/fasttree.py)."""

'''


def _kind(p: Any) -> str:
    """How a value converts: as a string, an ASCII whole number or an ASCII number; "other"
    (anything click would convert in its own way) makes the fast path hand over to Typer."""
    # click's own INT and FLOAT convert what the fast path accepts (ASCII) alike; their
    # ranges (IntRange, FloatRange) check bounds the fast path does not: "other"
    if isinstance(p.type, params.Whole) or type(p.type) is IntParamType:
        return "int"
    if isinstance(p.type, params.Number) or type(p.type) is FloatParamType:
        return "float"
    if isinstance(p.type, params.Value | StringParamType):
        return "str"
    return "other"


def _literal(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


def _param(p: Any) -> dict[str, Any]:
    argument = p.param_type_name == "argument"
    flag = not argument and bool(p.is_flag)
    doc: dict[str, Any] = {
        "name": p.name,
        "argument": argument,
        "opts": [] if argument else list(p.opts),
        "flag": flag,
        # a paired flag's other names (`--no-echo`), which set it False
        "off": list(p.secondary_opts) if flag else [],
        "kind": "bool" if flag else _kind(p),
        "multiple": bool(getattr(p, "multiple", False)),
        "default": p.default if _literal(p.default) else "<other>",
        "required": bool(p.required),
        "envvar": p.envvar if isinstance(p.envvar, str) else None,
        # an argument of any number of words (`ack MSG...`), read when it is the last one
        "variadic": argument and p.nargs == -1,
        # a callback (--version) or a default that is not a plain value: Typer's business
        "typer_only": bool(p.callback)
        or not _literal(p.default)
        or (p.nargs != 1 and not (argument and p.nargs == -1 and p.required))
        or (bool(getattr(p, "secondary_opts", ())) and not flag)
        or (bool(getattr(p, "multiple", False)) and (p.default is not None or p.envvar)),
    }
    return doc


def _plain(group: Group) -> bool:
    """Whether the group only names its subcommands: no options of its own (but --help) and
    nothing run without a subcommand. The fast path reads `GROUP SUBCOMMAND` as one command's
    name for such a group, and for one whose own body (run alone: `acomm peers`) it runs."""
    own = [p for p in group.params if p.name != "help"]
    return not own and not group.invoke_without_command


def _add(commands: dict[str, Any], name: str, cmd: Command) -> bool:
    body = getattr(cmd.callback, "__acomm_body__", None)
    if body is None:
        return False
    commands[name] = {
        "body": body,
        "listing": bool(getattr(cmd.callback, "__acomm_columns__", None)),
        "params": [_param(p) for p in cmd.params],
    }
    return True


def tree() -> dict[str, Any]:
    import typer

    from acomm_cli.cli.app import COMMANDS, GROUPS, app

    root = typer.main.get_command(app)
    ctx = Context(root, info_name="acomm")
    commands: dict[str, Any] = {}
    for name in COMMANDS:
        cmd = root.get_command(ctx, name)  # type: ignore[attr-defined]
        assert isinstance(cmd, Command)
        alone = _add(commands, name, cmd)  # a command, or a group's own body
        if name in GROUPS and isinstance(cmd, Group) and (alone or _plain(cmd)):
            for sub_name, sub in cmd.commands.items():
                if not isinstance(sub, Group):
                    _add(commands, f"{name} {sub_name}", sub)
    return {
        "root": [_param(p) for p in root.params],
        "commands": commands,
    }


def _params(ps: list[dict[str, Any]], indent: str) -> str:
    return "".join(f"{indent}{p!r},\n" for p in ps)


def render(doc: dict[str, Any] | None = None) -> str:
    """The data module's text: one parameter a line."""
    doc = tree() if doc is None else doc
    out = [
        HEADER,
        "# the global options\n",
        "ROOT = [\n",
        _params(doc["root"], "    "),
        "]\n\n",
        "# command -> the body that runs it (module:function) and its parameters, in order\n",
        "COMMANDS = {\n",
    ]
    for name, cmd in doc["commands"].items():
        out += [
            f"    {name!r}: {{\n",
            f"        'body': {cmd['body']!r},\n",
            f"        'listing': {cmd['listing']!r},\n",
            "        'params': [\n",
            _params(cmd["params"], "            "),
            "        ],\n",
            "    },\n",
        ]
    out.append("}\n")
    return "".join(out)
