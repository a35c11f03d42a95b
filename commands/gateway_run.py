"""What `acomm gateway serve` and `status` do, without typer: `commands/gateway.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from pathlib import Path

from acomm_cli import clock
from acomm_cli.cli.invocation import Invocation
from acomm_cli.output import render, render_messages


def serve(
    inv: Invocation,
    listen: str,
    seed: bool = False,
    join: str | None = None,
    invite: str | None = None,
    public_url: str | None = None,
    pull: bool | None = None,
    pull_every: str | None = None,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    insecure_listen: bool = False,
    push: bool = False,
) -> None:
    from functools import partial

    from acomm_cli.errors import ValidationFailed
    from acomm_cli.federation import agentapi, gateway, seeds
    from acomm_cli.monitoring.metrics import metrics_payload

    if invite is not None and join is None:
        raise ValidationFailed("invite: only with --join URL", field="invite")
    seeds.parse_join(join)  # exit 3 naming a bad url, before anything starts
    host, port = gateway.parse_listen(listen)
    s = inv.settings
    path, _ = s.store_path(create=False)
    every = clock.parse_duration(pull_every, "pull_every") if pull_every else None
    if pull is None:
        pull = s.value("gateway.pull") == "continuous"
    elif not pull and every is not None:
        raise ValidationFailed("pull_every: not with --no-pull", field="pull_every")
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
            pull=pull,
            pull_wait_ms=s.value("gateway.pull_wait"),
            pull_interval_ms=s.value("gateway.pull_interval"),
            tls_cert=tls_cert,
            tls_key=tls_key,
            insecure_listen=insecure_listen,
            profile_name=s.value("federation.profile"),
            ca_file=s.value("federation.ca_file"),
            encoders=agentapi.Encoders(
                message=render_messages.message_doc, send=render_messages.send_doc
            ),
            metrics=partial(metrics_payload, offline_after_ms=s.value("federation.offline_after")),
        )
    )


def status(inv: Invocation) -> None:
    from acomm_cli.federation import gwstate

    s = inv.settings
    path, _ = s.store_path(create=False)
    with inv.store(write=False) as conn:
        doc = gwstate.status(conn, Path(path), clock.now_ms())
    render.status(inv.output(), doc)
    failed = gwstate.not_running(doc)
    if failed is not None:
        raise failed
