"""What `acomm attachment list|get` do, without typer: `commands/attachment.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.errors import UsageError
from acomm_cli.output import render_attachments

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import attachments
else:
    attachments = lazy.module("acomm_cli.engine.attachments")


def list_(
    inv: Invocation,
    message_id: int,
    as_: str | None,
) -> None:
    agent = identity(as_)
    with inv.store(write=False, read_fallback=True) as conn:
        found = attachments.listing(conn, message_id, agent)
    render_attachments.files(inv.output(), message_id, found)


def get(
    inv: Invocation,
    message_id: int,
    name: str,
    output: str | None,
    force: bool,
    as_: str | None,
) -> None:
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
