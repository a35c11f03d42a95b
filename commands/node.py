"""`acomm node init`: make this store a federation node (docs/FEDERATION.md)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from acomm_cli import clock
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import takes_invocation
from acomm_cli.errors import ValidationFailed
from acomm_cli.output import render

app = typer.Typer(
    help="This store's federation node identity.\n\nExample: acomm node init --id vps-jane",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
@takes_invocation
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
    from acomm_cli.federation import identity, nats_transport, profile

    if transport is None:  # `federation.transport` in config (or $ACOMM_FED_TRANSPORT)
        transport = inv.settings.value("federation.transport")
    if transport is not None:  # checked before anything is written
        nats_transport.check(transport, nats_creds, replicas)
    elif replicas != 1:
        raise ValidationFailed(
            "replicas: --replicas needs a NATS --transport", field="replicas", value=str(replicas)
        )
    with inv.store(write=True, create=True) as conn:
        node, created = identity.init_node(conn, id_, clock.now_ms())
        if transport is not None:
            nats_transport.configure(conn, transport, nats_creds, replicas)
        production = production or inv.settings.value("federation.profile") == "production"
        if production and not profile.production(conn):
            profile.record(conn)
            created = True  # something changed
        if seed:
            from acomm_cli.federation import seeds

            seeds.mark_seed(conn)
    if not created and transport is None and not seed:
        render.note(f"note: this store is already node {node.node_id}; nothing changed")
    doc: dict[str, Any] = {"node_id": node.node_id, "public_key": node.public_paserk}
    if production:
        doc["profile"] = profile.PRODUCTION
    if transport:
        doc.update(transport=transport, replicas=replicas)
    if seed:
        doc["seed"] = True
    render.status(inv.output(), doc)


@app.callback()
def node_group() -> None:
    """This store's federation node identity."""
