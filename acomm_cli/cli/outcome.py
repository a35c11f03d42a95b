"""How a command's end becomes an exit status: the one `except` of the program, shared by the
Typer path (`app.AcommGroup.main`) and the fast path (`acomm_cli.cli.main`), so both print the
same message and exit with the same status for every error. Light: no typer, no click."""

from __future__ import annotations

import sqlite3

from acomm_cli.errors import CommError, Internal, MissingExtra, ValidationFailed
from acomm_cli.output import render

# Global options may also be written after the subcommand (`acomm send ... --json`).
GLOBAL_FLAGS = {
    "--json",
    "--no-color",
    "--jsonl",
    "--csv",
    "--tsv",
    "--no-headers",
    "-q",
    "--quiet",
    "-v",
    "--verbose",
}
GLOBAL_VALUES = {"--store", "--file", "--config", "--token-file"}

TYPE_CHECKING = False  # typing's, without importing typing on `acomm send`'s path
if TYPE_CHECKING:
    from collections.abc import Callable

    # the command named by these words -> (its options that take a value, whether it is a
    # group), or None for no such command. Given by the caller from the Typer app (app.py)
    # or from the tree generated from it (cli/main.py): never a list of its own here.
    ValueOptions = Callable[[tuple[str, ...]], tuple[frozenset[str], bool] | None]


def _takes_value(a: str, takes: frozenset[str]) -> bool:
    """Whether the word after `a` is `a`'s value, as click reads it: `--opt` taking one, or
    short options clustered up to one taking a value (`-fg`, whose `-g` takes the next word;
    `-gX` has its value attached)."""
    if a in takes:
        return True
    if a.startswith("--") or len(a) < 3 or not a.startswith("-"):
        return False
    for n, c in enumerate(a[1:], start=2):
        if "-" + c in takes:
            return n == len(a)
    return False


def _split(args: list[str], options: ValueOptions) -> tuple[list[str], list[str]]:
    """The global options (with their values) and the rest, in order. The value of the
    invoked command's option is the command's whatever it looks like (`--grep -v` searches
    for "-v"), as click reads it: never a global."""
    front: list[str] = []
    rest: list[str] = []
    path: list[str] = []
    takes: frozenset[str] = frozenset()
    group = True  # the root: its first word names a command
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            rest.extend(args[i:])
            break
        name = a.split("=", 1)[0]
        if a in GLOBAL_FLAGS:
            front.append(a)
        elif name in GLOBAL_VALUES and "=" in a:
            front.append(a)
        elif a in GLOBAL_VALUES and i + 1 < len(args):
            front.extend(args[i : i + 2])
            i += 1
        elif _takes_value(a, takes) and i + 1 < len(args):
            rest.extend(args[i : i + 2])
            i += 1
        else:
            rest.append(a)
            if group and not a.startswith("-"):
                path.append(a)
                found = options(tuple(path))
                takes, group = found if found is not None else (frozenset(), False)
        i += 1
    return front, rest


def hoist_globals(args: list[str], options: ValueOptions) -> list[str]:
    """The global options moved before the subcommand, where click expects them."""
    front, rest = _split(args, options)
    return front + rest


def wants_json(argv: list[str], options: ValueOptions) -> bool:
    """Whether errors are JSON: `--json` given as a global option, before or after the
    command, and not as an option's value nor after a `--`."""
    front, _ = _split(argv, options)
    i = 0
    while i < len(front):
        if front[i] == "--json":
            return True
        i += 2 if front[i] in GLOBAL_VALUES else 1
    return False


class _ReaderGone(Exception):
    """stdout's reader went away (`acomm messages | head`): not an OSError, so that Typer's
    own EPIPE handler (exit 1) lets it through to ours."""


def failed(exc: BaseException, as_json: bool) -> int:
    """Render what ended the command and return the exit status. Anything not handled here
    (SystemExit) is re-raised."""
    if isinstance(exc, CommError):
        render.error(exc, as_json)
        return exc.exit_status
    if isinstance(exc, OverflowError):  # a number past SQLite's 64-bit integers
        render.error(ValidationFailed(f"a number is out of range ({exc})"), as_json)
        return ValidationFailed.exit_status
    if isinstance(exc, sqlite3.DatabaseError):  # not met on opening or in store.write
        from acomm_cli.store.connection import store_error

        err = store_error(exc, None)
        render.error(err, as_json)
        return err.exit_status
    if isinstance(exc, KeyboardInterrupt):
        return 130
    if isinstance(exc, BrokenPipeError | _ReaderGone):
        # The reader took what it wanted (`| head`): printing changed nothing in the store
        # (receive, which marks what it prints read, fails with output_failed instead).
        from acomm_cli.cli.handover import silence_stdout

        silence_stdout()
        return 0
    if isinstance(exc, ModuleNotFoundError) and (missing := MissingExtra.of(exc.name)):
        render.error(missing, as_json)
        return missing.exit_status
    if isinstance(exc, Exception):  # a bug: say so plainly, exit 1
        render.error(Internal(f"{type(exc).__name__}: {exc}"), as_json)
        return 1
    raise exc
