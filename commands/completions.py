"""`acomm completions SHELL`, and the hidden `acomm __complete` the scripts call for values."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import completions_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import runs
from acomm_cli.output import render

app = typer.Typer(add_completion=False)


@app.command()
def completions(
    ctx: typer.Context,
    shell: Annotated[
        str, typer.Argument(click_type=params.SHELL, metavar="SHELL", help="bash, zsh or fish.")
    ],
) -> None:
    """Print the completion script for a shell: bash, zsh or fish.

    Name the shell explicitly (guessing it from the parent process fails in containers and
    CI). Commands and options complete without running acomm; channel names and agent ids
    are looked up in the store the command line would use. The same scripts are in
    completions/ and installed under share/ (see docs/INSTALL.md).

    Example: echo 'eval "$(acomm completions bash)"' >> ~/.bashrc

    Example (zsh): acomm completions zsh > ~/.zfunc/_acomm

    Example (fish): acomm completions fish > ~/.config/fish/completions/acomm.fish
    """
    from acomm_cli.cli import clitree, completion

    # the running program's click root (no settings needed): completion sits below the app
    root = clitree.tree(ctx.find_root().command)
    render.text(completion.script(shell, root))


@app.command("__complete", hidden=True)
@runs(completions_run.complete)
def complete(
    inv: Invocation,
    kind: Annotated[str, typer.Argument(help="channels or agents.")],
) -> None:
    """Channel names or registered agent names, one a line, for the completion scripts
    (read-only)."""
