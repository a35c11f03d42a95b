"""`acomm attachment list|get`: the files a message carries (`send --attach`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli.cli import lazy, params
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.cli.params import listing, takes_invocation
from acomm_cli.errors import UsageError
from acomm_cli.output import columns, render_attachments

if TYPE_CHECKING:
    from acomm_cli.engine import attachments
else:
    attachments = lazy.module("acomm_cli.engine.attachments")

app = typer.Typer(
    help="The files messages carry (`send --attach FILE`)."
    "\n\nExample: acomm attachment get 42 report.pdf -o report.pdf --as bob",
    no_args_is_help=True,
    add_completion=False,
)

MessageId = Annotated[int, typer.Argument(metavar="MSG", help="The message id.")]


@app.command("list")
@listing(columns.ATTACHMENTS)
@takes_invocation
def list_(inv: Invocation, message_id: MessageId, as_: params.AsAgent = None) -> None:
    """The files a message carries, by name.

    Only a participant of the message's channel may list them.

    Prints {message, attachments: [{name, sha256, size, content_type}]} with --json.

    Example: acomm attachment list 42 --as bob
    """
    agent = identity(as_)
    with inv.store(write=False, read_fallback=True) as conn:
        found = attachments.listing(conn, message_id, agent)
    render_attachments.files(inv.output(), message_id, found)


@app.command()
@takes_invocation
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
    out = inv.output()
    if output is None and out.json:
        raise UsageError("--json needs -o FILE: the bytes go to stdout otherwise", field="json")
    agent = identity(as_)
    if output is not None:
        render_attachments.refuse_existing(output, force)
    with inv.store(write=False, read_fallback=True) as conn:
        from acomm_cli.federation import blobs

        found = blobs.get(
            conn,
            message_id,
            name,
            agent,
            inv.limits(),
            inv.settings.value("federation.peer_deadline") / 1000,
        )
    render_attachments.content(out, message_id, found, output, force)
