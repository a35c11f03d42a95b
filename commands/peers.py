"""`acomm peers` and `acomm peers add`: the other nodes in this node's copy of the room."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli.commands import peers_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(
    help="The other federation nodes this node knows.\n\nExample: acomm peers "
    "--json\n\n" + columns.describe(columns.PEERS),  # the group's help is shown
    invoke_without_command=True,
    add_completion=False,
)


@app.callback(invoke_without_command=True)
@listing(columns.PEERS)
@runs(peers_run.peers)
def peers(inv: Invocation) -> None:
    """List the other nodes: {peers: [{node, url, online, last_seen_at, cursor, head, lag}]}.

    Example: acomm peers --json
    """


@app.command()
@runs(peers_run.add)
def add(
    inv: Invocation,
    node: Annotated[str, typer.Argument(metavar="NODE", help="The peer's node id.")],
    url: Annotated[
        str,
        typer.Option(
            metavar="URL", help="How to reach it: store:PATH for a store on this machine."
        ),
    ],
) -> None:
    """Register a peer node in this node's copy of the room by hand.

    The stand-in until the gateway syncs the room: `fed pull` reads a store:PATH
    peer's outbox straight from its file. Prints {node, url}.

    Example: acomm peers add node-b --url store:../b/.acomm/store.acomm
    """
