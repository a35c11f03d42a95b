"""The `acomm` process: the hot commands' well-formed calls without Typer, the rest with it.

Importing typer and click and building a command costs about half of an `acomm send`. For
the commands whose declaration names a body (`@runs(...)`, cli/params.py), this module
reads the command line against `fastpath_tree` (generated from the Typer app by `make docs`)
and calls the body itself (and `acomm -V` / `--version [-v]` alone, cli/version.py). It
handles only what it can answer exactly as click would: known options in their plain forms,
values that convert the way the command's types do. Anything else (help, completion,
--version among other options, an unknown or misspelt option, a missing argument, a value
click would refuse, `--`, a clustered short option) goes to Typer, untouched, so every
message and exit status stays Typer's. Errors raised by a body go through the same handler
as on the Typer path (`cli/outcome.py`). tests/test_fastpath.py runs a table of command
lines through both and compares what they print, their exit status and the store.
"""

from __future__ import annotations

import gc
import os
import sys
import time

TYPE_CHECKING = False  # typing's, without importing typing (a send does not load it)
if TYPE_CHECKING:
    from typing import Any

    Plan = tuple[str, dict[str, Any], dict[str, Any]]  # body, the root's values, the command's

    # bound at run time by _load(), once a command line needs them
    from acomm_cli.cli import outcome  # noqa: TC004
    from acomm_cli.cli.config import Settings  # noqa: TC004
    from acomm_cli.output import render  # noqa: TC004

_ROOT: list[dict[str, Any]] = []
_COMMANDS: dict[str, dict[str, Any]] = {}  # "send", "channel list": a group's under two words
_GROUPS: frozenset[str] = frozenset()


def _load() -> None:
    """The fast path's modules, imported once a command line is more than `--version`:
    `acomm -V` answers before any of them is loaded (a third of its time was theirs)."""
    global _ROOT, _COMMANDS, _GROUPS, outcome, Settings, render
    if _COMMANDS:
        return
    from acomm_cli.cli import fastpath_tree, outcome
    from acomm_cli.cli.config import Settings
    from acomm_cli.output import render

    # the generated tree is plain data (fastpath_tree imports nothing, not even typing)
    _ROOT, _COMMANDS = fastpath_tree.ROOT, fastpath_tree.COMMANDS
    _GROUPS = frozenset(name.partition(" ")[0] for name in _COMMANDS if " " in name)


class _Typer(Exception):
    """Raised while reading or running a command line that only Typer can answer."""


def _convert(p: dict[str, Any], value: str) -> Any:
    """A value as the parameter's click type converts it, or _Typer where click would
    refuse it (so that click says so, in its own words)."""
    kind = p["kind"]
    if kind == "str":
        return value
    if kind == "int":  # params.Whole: ASCII digits, optional sign and blanks
        digits = value.strip(" \t\n\r\f\v")
        digits = digits[1:] if digits[:1] in ("+", "-") else digits
        if not (digits.isascii() and digits.isdigit()):
            raise _Typer()
        return int(value)
    if kind == "float":  # params.Number
        if not value.isascii():
            raise _Typer()
        try:
            return float(value)
        except ValueError:
            raise _Typer() from None
    raise _Typer()


def _read(
    spec: list[dict[str, Any]], args: list[str], *, root: bool
) -> tuple[dict[str, Any], list[str]]:
    """The values of `spec`'s parameters in `args`; the root stops at its first word (the
    command) and returns what follows it."""
    by_opt = {o: p for p in spec for o in p["opts"]}
    off = {o: p for p in spec for o in p.get("off", ())}  # a paired flag's --no-X: False
    positional = [p for p in spec if p["argument"]]
    given: dict[str, Any] = {}
    words: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-") and a != "-":
            name, eq, attached = a.partition("=") if a.startswith("--") else (a, "", "")
            p = by_opt.get(name) or off.get(name)
            if p is None or p["typer_only"]:
                raise _Typer()
            if p["flag"]:
                if eq or p["name"] in given:
                    raise _Typer()
                given[p["name"]] = name not in off
            else:
                if not eq:  # the next word, whatever it looks like (click's rule)
                    i += 1
                    if i == len(args):
                        raise _Typer()
                    attached = args[i]
                value = _convert(p, attached)
                if p["multiple"]:
                    given.setdefault(p["name"], []).append(value)
                elif p["name"] in given:
                    raise _Typer()
                else:
                    given[p["name"]] = value
        elif root:
            rest = args[i:]
            break
        else:
            words.append(a)
        i += 1
    if root and not rest:
        raise _Typer()  # no command: Typer shows the help
    # the last argument may take every word left (`ack MSG...`), as click gives it
    many = positional.pop() if positional and positional[-1]["variadic"] else None
    if any(p["variadic"] for p in positional) or (many is not None and many["typer_only"]):
        raise _Typer()
    if len(words) > len(positional) and many is None:
        raise _Typer()
    for p, word in zip(positional, words, strict=False):
        if p["typer_only"]:
            raise _Typer()
        given[p["name"]] = _convert(p, word)
    if many is not None and words[len(positional) :]:
        given[many["name"]] = [_convert(many, word) for word in words[len(positional) :]]
    values: dict[str, Any] = {}
    for p in spec:
        name = p["name"]
        if name in given:
            values[name] = given[name]
            continue
        env = os.environ.get(p["envvar"]) if p["envvar"] else None
        if env:
            values[name] = _convert(p, env)
        elif p["required"]:
            raise _Typer()
        elif p["multiple"]:
            values[name] = None  # Typer's list of nothing, for a default of None
        else:
            values[name] = p["default"]
    return values, rest


def _value_options(path: tuple[str, ...]) -> tuple[frozenset[str], bool] | None:
    """For `outcome.hoist_globals`: the fast command's options that take a value, from the
    generated tree (a group's own, when it has a body: the tree holds no other group with
    options). Any other command is Typer's, which hoists again from its own."""
    cmd = _COMMANDS.get(" ".join(path)) if len(path) <= 2 else None
    group = len(path) == 1 and path[0] in _GROUPS
    if cmd is None:
        return (frozenset(), True) if group else None
    return frozenset(o for p in cmd["params"] if not p["flag"] for o in p["opts"]), group


def plan(argv: list[str]) -> Plan | None:
    """What to run for this command line, or None when it is Typer's to answer."""
    _load()
    args = outcome.hoist_globals(argv, _value_options)
    if "--" in args:
        return None
    try:
        root, rest = _read(_ROOT, args, root=True)
        # `channel list`: a group's subcommand; `peers`: a group's own body, run alone
        words = 2 if rest[0] in _GROUPS and " ".join(rest[:2]) in _COMMANDS else 1
        cmd = _COMMANDS.get(" ".join(rest[:words]))
        if cmd is None:
            return None
        if not cmd["listing"] and any(root[k] for k in ("jsonl", "csv", "tsv")):
            return None  # Typer refuses a row format on a command that prints no rows
        values, _ = _read(cmd["params"], rest[words:], root=False)
    except _Typer:
        return None
    return cmd["body"], root, values


def _typer() -> None:
    from acomm_cli.cli.app import main as typer_main

    _collect_again()
    typer_main()


def _collect_again() -> None:
    """The garbage collector back on, once the imports are done: what start-up allocated lives
    until the process ends (frozen: never traversed again), and a worker that runs for hours
    (`receive --follow`, `tick --every`) still collects what it makes."""
    gc.freeze()
    gc.enable()


def _needs_typer() -> str:
    raise _Typer()


def main() -> None:
    """The `acomm` command. The garbage collector is off while the modules load: a collection
    then walks thousands of objects that all live to the end, and cost about 1 ms of a send
    (2.5% of its CPU time)."""
    gc.disable()
    try:
        _main()
    finally:
        gc.enable()


def _main() -> None:
    argv = sys.argv[1:]
    if "-V" in argv or "--version" in argv:  # its module only then: a send never loads it
        from acomm_cli.cli import version

        verbose = version.asked(argv)
        if verbose is not None:  # `acomm -V`, `acomm --version -v`: no Typer for that
            sys.stdout.write(version.text(verbose))
            sys.exit(0)
    found = plan(argv)
    if found is None:
        return _typer()
    ref, root, values = found
    module, _, function = ref.partition(":")
    root.pop("version", None)
    as_json = bool(root["json_"])  # as read by plan(): not an option's value
    started = time.perf_counter()
    try:
        from acomm_cli.cli.invocation import Invocation  # here: not for a Typer command line

        inv = Invocation(Settings.from_options(**root), help=_needs_typer)
        render.loudness(quiet=root["quiet"], verbose=root["verbose"])
        # __import__, not importlib.import_module: importing importlib (and its warnings)
        # cost half a millisecond of a send
        body = getattr(__import__(module, fromlist=[function]), function)
        _collect_again()
        code = body(inv, **values)
        sys.stdout.flush()
    except _Typer:  # raised before the body wrote anything (see Invocation.help_text)
        return _typer()
    except (Exception, KeyboardInterrupt) as exc:
        code = outcome.failed(exc, as_json)
    render.verbose(f"done in {(time.perf_counter() - started) * 1000:.1f} ms")
    sys.exit(code or 0)
