"""A command's start-up alone: the `acomm` program up to where the command's body starts.

    .venv/bin/python bench/startup_probe.py COMMAND [ARGS...]

Runs `acomm_cli.cli.main.main()` on the command line, as the `acomm` program does, and exits
(status 0) at the moment the body would be called, so that what it measures is everything a
command pays before its work on the store. On the fast path: reading the command line against
the generated tree, the settings, the Invocation and the body's module (cut where main.py turns
the garbage collector back on, right before the call). On the Typer path: importing typer,
building the command's parser, parsing, the root's (and a group's) callback and the Invocation
(cut where click would call the command's callback). A command line that reaches neither cut
ran to its end instead: exit 70, so that the bench never times a command's work as its
start-up.
"""

from __future__ import annotations

import sys
from typing import Any

from acomm_cli.cli import main

MISSED = 70  # the command ran to its end: no start-up to report
_reached: list[bool] = []


def _cut() -> None:
    _reached.append(True)
    sys.exit(0)


def _cut_fast() -> None:
    """main.py's fast path calls this once the body's module is imported, before the body."""
    _cut()


def _typer() -> None:
    """main.py's hand-over to Typer, stopped where click calls the command's callback (a
    group's own callback, the root's among them, runs first when a subcommand follows)."""
    from typer._click.core import Command

    from acomm_cli.cli import params
    from acomm_cli.cli.app import main as run

    invoke = Command.invoke

    def invoked(self: Command, ctx: Any) -> Any:
        if ctx.invoked_subcommand is not None:
            return invoke(self, ctx)
        params.invocation(ctx)  # what the callback makes first (cli/params.py)
        _cut()

    Command.invoke = invoked  # type: ignore[method-assign]
    collect_again()  # as main._typer does
    run()


collect_again = main._collect_again


def probe(argv: list[str]) -> int:
    main._collect_again = _cut_fast  # type: ignore[assignment]
    main._typer = _typer  # type: ignore[assignment]
    sys.argv = ["acomm", *argv]
    try:
        main.main()
    except SystemExit:
        pass
    return 0 if _reached else MISSED


if __name__ == "__main__":
    sys.exit(probe(sys.argv[1:]))
