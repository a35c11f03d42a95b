"""`acomm node init`: make this store a federation node (docs/FEDERATION.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli.commands import node_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import runs

app = typer.Typer(
    help="This store's federation node identity.\n\nExample: acomm node init --id vps-jane",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
@runs(node_run.init)
def init(
    inv: Invocation,
    id_: Annotated[
        str,
        typer.Option(
            "--id",
            metavar="NODE",
            help="The node id: 1-64 "
            "characters of A-Z a-z 0-9 . _ -, starting with a "
            "letter or a digit.",
        ),
    ],
    transport: Annotated[
        str | None,
        typer.Option(
            "--transport",
            metavar="URL",
            help="Carry this node's outbox on NATS JetStream: "
            "nats://HOST:PORT, or a cluster's servers nats://A:4222,nats://B:4222,... "
            "(default: `federation.transport` in config, else the gateway's "
            "HTTP outbox). See docs/FEDERATION_NATS.md.",
        ),
    ] = None,
    seed: Annotated[
        bool,
        typer.Option(
            "--seed",
            help="This node serves the state room: its gateway runs as a seed (several nodes "
            'may be seeds; docs/FEDERATION.md, "Several seeds").',
        ),
    ] = False,
    replicas: Annotated[
        int,
        typer.Option(
            metavar="N",
            help="Replicas of this node's stream in a JetStream cluster: 1-5, at most the "
            "servers --transport names.",
        ),
    ] = 1,
    nats_creds: Annotated[
        str | None,
        typer.Option(
            "--nats-creds",
            metavar="FILE",
            help="A NATS credentials file for --transport ($ACOMM_NATS_CREDS wins when set).",
        ),
    ] = None,
    production: Annotated[
        bool,
        typer.Option(
            "--production",
            help="The production profile, recorded in the store: a node proof at every join "
            "and rejoin, no plain-HTTP peer (docs/FEDERATION.md).",
        ),
    ] = False,
) -> None:
    """Make this store a node: its id and an Ed25519 key pair.

    Prints {node_id, public_key}; the public key is PASERK (k4.public.<base64url>).
    The same id again changes nothing and prints the same key; another id is refused
    (exit 5).

    With --seed the node serves the state room (its gateway runs as a seed); prints
    seed: true.

    With --transport nats://HOST:PORT the node's outbox is a NATS JetStream stream
    (ACOMM_<node>, subject acomm.<node>.out) and peers read it there; with a cluster's
    servers and --replicas 3 the stream survives the loss of one server.

    With --production (or federation.profile: production in config) the store records
    the production profile, which binds every process on it.

    Example: acomm node init --id vps-jane --json
    """


@app.callback()
def node_group() -> None:
    """This store's federation node identity."""
