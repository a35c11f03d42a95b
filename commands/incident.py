"""`acomm incident list|show|resolve`: capability review incidents (routing misses)."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import incident_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(
    help="Review incidents: misfires of published capabilities."
    "\n\nExample: acomm incident list --state open --json",
    no_args_is_help=True,
    add_completion=False,
)

IncidentId = Annotated[int, typer.Argument(metavar="ID", help="The incident id.")]


@app.command("list")
@listing(columns.INCIDENTS)
@runs(incident_run.list_)
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


@app.command()
@runs(incident_run.show)
def show(inv: Invocation, incident_id: IncidentId) -> None:
    """One incident.

    Example: acomm incident show 1 --json
    """


@app.command()
@runs(incident_run.resolve)
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


@app.callback()
def incident_group() -> None:
    """Review incidents: misfires of published capabilities."""
