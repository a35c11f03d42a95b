"""What `acomm ack` does, without typer: `commands/ack.py` declares it
(options, help) and runs this; the fast path (`acomm_cli.cli.main`) runs it directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.lite.records import asdict  # the engine's results are records
from acomm_cli.output import render_acks

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import acking
else:
    acking = lazy.module("acomm_cli.engine.acking")


def ack(
    inv: Invocation,
    message_ids: list[int],
    as_: str | None,
    status: str,
    note: str | None,
) -> None:
    agent = identity(as_)
    with inv.store(write=True) as conn:
        if len(message_ids) == 1:  # one id keeps its one JSON object
            results = [acking.ack(conn, message_ids[0], agent, status, note, clock.now_ms())]
        else:
            results = acking.ack_many(conn, message_ids, agent, status, note, clock.now_ms())
    if len(results) == 1:
        render_acks.ack(inv.output(), asdict(results[0]))
    else:
        render_acks.acks(inv.output(), [asdict(r) for r in results])
