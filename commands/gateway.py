"""`acomm gateway serve` and `acomm gateway status`: the node's long-running gateway."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import takes_invocation
from acomm_cli.output import render, render_messages

app = typer.Typer(
    help="This node's gateway: the exchange, the state room, the outbox.\n\n"
    "Example: acomm gateway serve --listen 0.0.0.0:8765 --seed",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
@takes_invocation
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
        bool, typer.Option("--seed", help="Host the state room and keep it across restarts.")
    ] = False,
    join: Annotated[
        str | None,
        typer.Option(metavar="URL", help="The seed gateway's url to join (http://HOST:PORT)."),
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
            help="How peers reach this gateway (default: http://HOST:PORT of --listen).",
        ),
    ] = None,
    pull_every: Annotated[
        str | None,
        typer.Option(
            metavar="DURATION",
            help="Also pull the "
            "peers' outboxes this often (default: "
            "never; `fed pull` and `tick` do).",
        ),
    ] = None,
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

    Example: acomm gateway serve --listen 0.0.0.0:8766 --join http://seed:8765 --invite TOKEN
    """
    from functools import partial

    from acomm_cli.errors import ValidationFailed
    from acomm_cli.federation import agentapi, gateway
    from acomm_cli.monitoring.metrics import metrics_payload

    if invite is not None and join is None:
        raise ValidationFailed("invite: only with --join URL", field="invite")
    if seed and join is not None:
        raise ValidationFailed("seed: a seed hosts the room; it does not --join one", field="seed")
    host, port = gateway.parse_listen(listen)
    s = inv.settings
    path, _ = s.store_path(create=False)
    every = clock.parse_duration(pull_every, "pull_every") if pull_every else None
    import logging

    from acomm_cli.output import logs

    logs.configure("acomm", logging.INFO)  # uvicorn's lines too: the gateway sets no log config
    gateway.serve(
        gateway.Options(
            store_path=Path(path),
            host=host,
            port=port,
            seed=seed,
            join=join,
            invite=invite,
            public_url=public_url,
            pull_every_ms=every,
            push=push,
            sla_ms=s.value("federation.sla"),
            pull_pages=s.value("federation.pull_pages"),
            peer_deadline_ms=s.value("federation.peer_deadline"),
            takeover_grace_ms=s.value("federation.takeover_grace"),
            limits=inv.limits(),
            max_body=s.value("gateway.max_body"),
            encoders=agentapi.Encoders(
                message=render_messages.message_doc, send=render_messages.send_doc
            ),
            metrics=partial(metrics_payload, offline_after_ms=s.value("federation.offline_after")),
        )
    )


@app.command()
@takes_invocation
def status(inv: Invocation) -> None:
    """Show this node's gateway: {node_id, listen, room_synced, peers, outbox_head}.

    listen is null and room_synced false when no gateway runs for this store.

    Example: acomm gateway status --json
    """
    from acomm_cli.federation import gwstate

    s = inv.settings
    path, _ = s.store_path(create=False)
    with inv.store(write=False) as conn:
        doc = gwstate.status(conn, Path(path))
    render.status(inv.output(), doc)


@app.callback()
def gateway_group() -> None:
    """This node's gateway: the exchange, the state room, the outbox."""
