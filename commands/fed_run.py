"""What `acomm fed pull`, `fed status` and `fed migrate` do, without typer: `commands/fed.py`
declares them (options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them
directly. A pull from a store file or an http peer loads the federation modules it reads
with, and no more."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli.invocation import Invocation
from acomm_cli.errors import UsageError
from acomm_cli.output import render


def pull(inv: Invocation, peer: str | None, max_pages: int, wait: str) -> None:
    from acomm_cli.federation import http_transport
    from acomm_cli.federation import pull as fed_pull

    if max_pages < 1:
        raise UsageError(
            f"max_pages: --max-pages {max_pages} must be at least 1",
            field="max_pages",
            value=max_pages,
        )
    wait_ms = clock.parse_duration(wait, "wait")
    http_transport.use_ca_file(inv.settings.value("federation.ca_file"))
    with inv.store(write=True) as conn:
        result = fed_pull.pull(
            conn,
            clock.now_ms(),
            peer=peer,
            max_pages=max_pages,
            sla_ms=inv.settings.value("federation.sla"),
            wait_s=wait_ms / 1000,
            deadline_s=inv.settings.value("federation.peer_deadline") / 1000,
            profile_name=inv.settings.value("federation.profile"),
        )
    if result.unreachable:
        from acomm_cli.output import render_federation

        for node in result.unreachable:
            render_federation.unreachable_note(node, result.why.get(node, "unreachable"))
    render.status(inv.output(), result.doc())
    failed = result.failure()
    if failed is not None:  # after the others were pulled and the counts printed
        raise failed


def status(inv: Invocation, latest: int) -> None:
    from acomm_cli.federation import room
    from acomm_cli.output import render_federation

    if not 0 <= latest <= 1000:
        raise UsageError(
            f"latest: --latest {latest} must be from 0 to 1000", field="latest", value=latest
        )

    with inv.store(write=False) as conn:
        doc = room.status(
            conn, clock.now_ms(), inv.settings.value("federation.offline_after"), latest
        )
    render_federation.fed_status(inv.output(), doc)


def migrate(inv: Invocation, to: str, nats_creds: str | None) -> None:
    from acomm_cli.federation import nats_transport

    with inv.store(write=True) as conn:
        doc = nats_transport.migrate(conn, to, nats_creds, clock.now_ms())
    render.status(inv.output(), doc)
