"""`acomm incident list|show|resolve`: capability review incidents (routing misses)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import lazy, params
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.cli.params import listing, takes_invocation
from acomm_cli.output import columns, render, render_caps

if TYPE_CHECKING:
    from acomm_cli.engine import incidents
else:
    incidents = lazy.module("acomm_cli.engine.incidents")

app = typer.Typer(
    help="Review incidents: misfires of published capabilities."
    "\n\nExample: acomm incident list --state open --json",
    no_args_is_help=True,
    add_completion=False,
)

IncidentId = Annotated[int, typer.Argument(metavar="ID", help="The incident id.")]


@app.command("list")
@listing(columns.INCIDENTS)
@takes_invocation
def list_(
    inv: Invocation,
    state: Annotated[
        str | None,
        typer.Option(click_type=params.INCIDENT_STATE, help="Only incidents in this state."),
    ] = None,
    capability: Annotated[
        str | None, typer.Option(help="Only incidents of this capability.")
    ] = None,
) -> None:
    """Incidents, oldest first.

    Prints {incidents: [{id, capability_id, delegation_skill, executor_skill,
    failure_class, sample_corr_ids, created_at, state, ...}]} with --json.

    Example: acomm incident list --state open --json
    """
    with inv.store(write=False, read_fallback=True) as conn:
        found = incidents.list_incidents(conn, state=state, capability=capability)
    render_caps.incidents(inv.output(), [i.doc() for i in found])


@app.command()
@takes_invocation
def show(inv: Invocation, incident_id: IncidentId) -> None:
    """One incident.

    Example: acomm incident show 1 --json
    """
    with inv.store(write=False, read_fallback=True) as conn:
        found = incidents.load(conn, incident_id)
    render_caps.incident(inv.output(), found.doc())


@app.command()
@takes_invocation
def resolve(
    inv: Invocation,
    incident_id: IncidentId,
    note: Annotated[str | None, typer.Option(help="What was done about it.")] = None,
    as_: Annotated[
        str | None,
        typer.Option(
            "--as",
            click_type=params.AGENT,
            envvar="ACOMM_AGENT",
            help="Who resolved it (recorded).",
        ),
    ] = None,
) -> None:
    """Mark an incident resolved (resolving it again changes nothing).

    Example: acomm incident resolve 1 --note "schema 1.1 allows empty findings"
    """
    if as_ is not None:
        identity(as_)  # recorded as who resolved it: with identity.auth token, proven
    with inv.store(write=True) as conn:
        found, changed = incidents.resolve(conn, incident_id, clock.now_ms(), agent=as_, note=note)
    render.change(
        inv.output(), found.doc(), changed, f"incident {incident_id} is already resolved", None
    )


@app.callback()
def incident_group() -> None:
    """Review incidents: misfires of published capabilities."""
