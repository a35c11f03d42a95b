"""What `acomm node init` does, without typer: `commands/node.py` declares it (options, help)
and runs this; the fast path (`acomm_cli.cli.main`) runs it directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli.invocation import Invocation
from acomm_cli.errors import ValidationFailed
from acomm_cli.output import render

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from typing import Any


def init(
    inv: Invocation,
    id_: str,
    transport: str | None = None,
    seed: bool = False,
    replicas: int = 1,
    nats_creds: str | None = None,
    production: bool = False,
) -> None:
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
