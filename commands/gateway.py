"""`acomm gateway serve` and `acomm gateway status`: the node's long-running gateway."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli.commands import gateway_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import runs

app = typer.Typer(
    help="This node's gateway: the exchange, the state room, the outbox.\n\n"
    "Example: acomm gateway serve --listen 0.0.0.0:8765 --seed --tls-cert gw.pem --tls-key gw.key",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
@runs(gateway_run.serve)
def serve(
    inv: Invocation,
    listen: Annotated[
        str,
        typer.Option(
            metavar="HOST:PORT",
            help="Where to listen (port 0: "
            "any free port; `gateway status` shows it); `none`: "
            "no socket, for a NATS node behind NAT.",
        ),
    ],
    seed: Annotated[
        bool,
        typer.Option(
            "--seed",
            help="Host the state room and keep it across restarts (for good: as `node init "
            "--seed`).",
        ),
    ] = False,
    join: Annotated[
        str | None,
        typer.Option(
            metavar="URL[,URL...]",
            help="The seeds' gateway urls (http://HOST:PORT), comma-separated: a node joins "
            "the first that answers and falls over to the next; a seed joins them all (its "
            "fellow seeds, which relay every node's entries).",
        ),
    ] = None,
    invite: Annotated[
        str | None,
        typer.Option(
            metavar="TOKEN",
            help="The invite token for a first join; without it, rejoin by node proof.",
        ),
    ] = None,
    public_url: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            help="How peers reach this gateway (default: http(s)://HOST:PORT of --listen).",
        ),
    ] = None,
    pull: Annotated[
        bool | None,
        typer.Option(
            "--pull/--no-pull",
            help="Pull the peers' outboxes continuously, by long polls (default: "
            "gateway.pull, continuous; a NATS node reads its peers with --push instead).",
            show_default=False,
        ),
    ] = None,
    pull_every: Annotated[
        str | None,
        typer.Option(
            metavar="DURATION",
            help="Pull the peers' outboxes in one pass this often instead of continuously.",
        ),
    ] = None,
    tls_cert: Annotated[
        str | None,
        typer.Option(
            metavar="FILE",
            help="Serve HTTPS with this certificate chain (PEM); with --tls-key.",
        ),
    ] = None,
    tls_key: Annotated[
        str | None,
        typer.Option(metavar="FILE", help="The private key (PEM) of --tls-cert."),
    ] = None,
    insecure_listen: Annotated[
        bool,
        typer.Option(
            "--insecure-listen",
            help="Listen beyond loopback in plain HTTP (without it: refused, exit 3).",
        ),
    ] = False,
    push: Annotated[
        bool,
        typer.Option(
            "--push",
            help="On a NATS node: publish the outbox "
            "and read the peers' streams as events come "
            "(within a second), instead of --pull-every.",
        ),
    ] = False,
) -> None:
    """Run the gateway until SIGINT or SIGTERM.

    Serves POST /ansible/auth/exchange, the room at /ansible/yjs/control
    (WebSocket, ticket checked before the upgrade), GET /acomm/outbox (signed
    reads by member nodes) and the agent endpoints /agent/v1/send, respond,
    receive and ack (external agents with an `acomm token`), and GET /metrics
    (the store in Prometheus' format, unauthenticated: docs/METRICS.md); mirrors
    the room into this store and heartbeats.

    Pulls the peers continuously (a long poll on each peer's outbox, so that a
    reply arrives within about a second) unless --no-pull or gateway.pull: off.
    Listening beyond loopback needs --tls-cert/--tls-key (or --insecure-listen).

    Several seeds: each runs with --seed (or was made one by `node init --seed`) and
    --join lists the other seeds; they keep the room in step between them, and a node
    may join or rejoin at any of them.

    Example: acomm gateway serve --listen 127.0.0.1:8766 --join http://seed:8765 --invite TOKEN
    """


@app.command()
@runs(gateway_run.status)
def status(inv: Invocation) -> None:
    """Show this node's gateway: {node_id, running, listen, room_synced, peers, ...}.

    A gateway runs while its process is alive and its heartbeat (every 5 s, in
    <store>.gateway.json) is fresh (30 s). When none runs, the document says why
    (`not_running`; listen null, room_synced false) and the command exits 7
    (gateway_not_running).

    Example: acomm gateway status --json
    """


@app.callback()
def gateway_group() -> None:
    """This node's gateway: the exchange, the state room, the outbox."""
