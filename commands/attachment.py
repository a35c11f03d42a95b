"""`acomm attachment list|get`: the files a message carries (`send --attach`)."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import attachment_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(
    help="The files messages carry (`send --attach FILE`)."
    "\n\nExample: acomm attachment get 42 report.pdf -o report.pdf --as bob",
    no_args_is_help=True,
    add_completion=False,
)

MessageId = Annotated[int, typer.Argument(metavar="MSG", help="The message id.")]


@app.command("list")
@listing(columns.ATTACHMENTS)
@runs(attachment_run.list_)
def list_(inv: Invocation, message_id: MessageId, as_: params.AsAgent = None) -> None:
    """The files a message carries, by name.

    Only a participant of the message's channel may list them.

    Prints {message, attachments: [{name, sha256, size, content_type}]} with --json.

    Example: acomm attachment list 42 --as bob
    """


@app.command()
@runs(attachment_run.get)
def get(
    inv: Invocation,
    message_id: MessageId,
    name: Annotated[str, typer.Argument(metavar="NAME", help="The file's name on the message.")],
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            click_type=params.FILE,
            help="Write the file here (mode 0600) instead of to stdout.",
        ),
    ] = None,
    force: Annotated[bool, typer.Option(help="Replace FILE if it exists.")] = False,
    as_: params.AsAgent = None,
) -> None:
    """Write one file of a message to stdout or FILE.

    Its bytes are checked against the sha256 the message names (exit 7 if they differ);
    only a participant of the message's channel may get it. A file of a message from
    another node is fetched from that node's gateway the first time (within
    federation.peer_deadline; exit 7 naming the node when it cannot be reached).

    Prints {message, name, sha256, size, content_type, path} with --json and -o.

    Example: acomm attachment get 42 report.pdf -o report.pdf --as bob
    """
