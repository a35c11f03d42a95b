"""`acomm capability host|publish|unpublish|list|show`: the capability catalog:
skills agents host and publish, and routing by capability."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import capability_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(
    help="Capabilities: what an agent can be asked to do, under a contract."
    "\n\nExample: acomm capability list --json",
    no_args_is_help=True,
    add_completion=False,
)

CapId = Annotated[str, typer.Argument(metavar="ID", help="The capability id (code-review).")]


@app.command()
@runs(capability_run.host)
def host(
    inv: Invocation,
    agent: Annotated[
        str,
        typer.Argument(
            metavar="AGENT", click_type=params.AGENT, help="The agent that runs the skill."
        ),
    ],
    skill: Annotated[
        str, typer.Argument(metavar="REF@VERSION", help="The executor skill and its version.")
    ],
    remove: Annotated[
        bool, typer.Option("--remove", help="The agent no longer hosts the skill.")
    ] = False,
) -> None:
    """Register that AGENT hosts an executor skill (what publish checks).

    Example: acomm capability host reviewer skills/review-exec@1.0
    """


@app.command()
@runs(capability_run.publish)
def publish(
    inv: Invocation,
    cap_id: CapId,
    owner: Annotated[
        str | None,
        typer.Option(click_type=params.AGENT, help="The agent that executes it (required)."),
    ] = None,
    delegation_skill: Annotated[
        str | None,
        typer.Option(
            "--delegation-skill",
            metavar="REF@VERSION",
            help="The skill requesters install to delegate (required).",
        ),
    ] = None,
    executor_skill: Annotated[
        str | None,
        typer.Option(
            "--executor-skill",
            metavar="REF@VERSION",
            help="The skill the owner runs; the owner must host it (required).",
        ),
    ] = None,
    schema: Annotated[
        str | None,
        typer.Option(
            # a string (the fast path reads it; click's Path type is Typer's alone),
            # completed as a plain value as before
            click_type=params.Value("FILE"),
            help="The output contract, a JSON Schema file (required).",
        ),
    ] = None,
    eta: Annotated[
        str,
        typer.Option(
            click_type=params.DURATION, help="The default ETA of its tasks. " + params.DURATION_HELP
        ),
    ] = "10m",
) -> None:
    """Publish a capability: tasks for it go to its owner.

    Every other active agent gets a skill_distribution task to install the delegation
    skill, answered with task complete ID '{"status":"installed","version":"1.2","at":TIME}'.

    Example: acomm capability publish code-review --owner reviewer
    --delegation-skill skills/review-request@1.2 --executor-skill skills/review-exec@1.0
    --schema review.json --eta 10m
    """


@app.command()
@runs(capability_run.unpublish)
def unpublish(inv: Invocation, cap_id: CapId) -> None:
    """Unpublish a capability: tasks for it are refused (exit 5) from now on.

    Example: acomm capability unpublish code-review
    """


@app.command("list")
@listing(columns.CAPABILITIES)
@runs(capability_run.list_)
def list_(
    inv: Invocation,
    state: Annotated[
        str | None,
        typer.Option(click_type=params.CAPABILITY_STATE, help="Only capabilities in this state."),
    ] = None,
) -> None:
    """The catalog: this store's capabilities, then (on a node) the room's.

    Prints {capabilities: [...]} with --json.

    Example: acomm capability list --json
    """


@app.command()
@runs(capability_run.show)
def show(inv: Invocation, cap_id: CapId) -> None:
    """One capability: its contract, and who installed which delegation skill.

    Prints the contract, its owner and skill versions, and installs: [{agent, task_id,
    requested_version, status, version, at}] with --json.

    Example: acomm capability show code-review --json
    """


@app.callback()
def capability_group() -> None:
    """Capabilities: what an agent can be asked to do, under a contract."""
