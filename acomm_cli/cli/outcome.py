"""How a command's end becomes an exit status: the one `except` of the program, shared by the
Typer path (`app.AcommGroup.main`) and the fast path (`acomm_cli.shell.fastpath`), so both print the
same message and exit with the same status for every error. Light: no typer, no click."""

from __future__ import annotations

import sqlite3

from acomm_cli.cli import render
from acomm_cli.errors import CommError, Internal, ValidationFailed

# Global options may also be written after the subcommand (`acomm send ... --json`).
GLOBAL_FLAGS = {"--json", "--no-color", "--jsonl", "--csv", "--tsv", "--no-headers",
                "-q", "--quiet", "-v", "--verbose"}
GLOBAL_VALUES = {"--store", "--file", "--config"}


def hoist_globals(args: list[str]) -> list[str]:
    """The global options moved before the subcommand, where click expects them."""
    front: list[str] = []
    rest: list[str] = []
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
            front.extend(args[i:i + 2])
            i += 1
        else:
            rest.append(a)
        i += 1
    return front + rest


def wants_json(argv: list[str]) -> bool:
    """Whether errors are JSON: `--json` anywhere before a `--`."""
    return "--json" in (argv[: argv.index("--")] if "--" in argv else argv)


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
    if isinstance(exc, Exception):  # a bug: say so plainly, exit 1
        render.error(Internal(f"{type(exc).__name__}: {exc}"), as_json)
        return 1
    raise exc

