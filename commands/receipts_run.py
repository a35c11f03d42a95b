"""What `acomm receipts` does, without typer: `commands/receipts.py` declares it (options, help)
and runs this; the fast path (`acomm_cli.cli.main`) runs it directly."""

from __future__ import annotations

from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation
from acomm_cli.output import render_worker

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.dispatch import dispatcher as engine
else:
    engine = lazy.module("acomm_cli.dispatch.dispatcher")


def receipts(
    inv: Invocation,
    agent: str | None,
    message: int | None,
    status: str | None,
    limit: int,
    offset: int,
) -> None:
    with inv.store(write=False) as conn:
        page = engine.list_receipts(
            conn, agent=agent, message_id=message, status=status, limit=limit, offset=offset
        )
    render_worker.receipts(inv.output(), page)
