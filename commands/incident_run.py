"""What the `acomm incident` subcommands do, without typer: `commands/incident.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.output import render, render_caps

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import incidents
else:
    incidents = lazy.module("acomm_cli.engine.incidents")


def list_(
    inv: Invocation,
    state: str | None = None,
    capability: str | None = None,
) -> None:
    with inv.store(write=False, read_fallback=True) as conn:
        found = incidents.list_incidents(conn, state=state, capability=capability)
    render_caps.incidents(inv.output(), [i.doc() for i in found])


def show(
    inv: Invocation,
    incident_id: int,
) -> None:
    with inv.store(write=False, read_fallback=True) as conn:
        found = incidents.load(conn, incident_id)
    render_caps.incident(inv.output(), found.doc())


def resolve(
    inv: Invocation,
    incident_id: int,
    note: str | None = None,
    as_: str | None = None,
) -> None:
    if as_ is not None:
        identity(as_)  # recorded as who resolved it: with identity.auth token, proven
    with inv.store(write=True) as conn:
        found, changed = incidents.resolve(conn, incident_id, clock.now_ms(), agent=as_, note=note)
    render.change(
        inv.output(), found.doc(), changed, f"incident {incident_id} is already resolved", None
    )
