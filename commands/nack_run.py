"""What `acomm nack` and `acomm extend` do, without typer: `commands/nack.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.lite.records import asdict  # the engine's results are records
from acomm_cli.output import render_acks

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import leases
else:
    leases = lazy.module("acomm_cli.engine.leases")


def nack(
    inv: Invocation,
    message_id: int,
    as_: str | None,
    requeue: bool,
    delay: str | None,
    reason: str | None,
) -> None:
    agent = identity(as_)
    delay_ms = clock.parse_duration(delay, "delay") if delay is not None else None
    with inv.store(write=True) as conn:
        result = leases.nack(
            conn,
            message_id,
            agent,
            requeue=requeue,
            delay_ms=delay_ms,
            reason=reason,
            now=clock.now_ms(),
        )
    render_acks.nack(inv.output(), asdict(result))


def extend(
    inv: Invocation,
    message_id: int,
    by: str,
    as_: str | None,
) -> None:
    agent = identity(as_)
    with inv.store(write=True) as conn:
        result = leases.extend(
            conn, message_id, agent, clock.parse_duration(by, "by"), clock.now_ms()
        )
    render_acks.extend(inv.output(), asdict(result))
