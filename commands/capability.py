"""`acomm capability host|publish|unpublish|list|show`: the capability catalog:
skills agents host and publish, and routing by capability."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import lazy, params
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, takes_invocation
from acomm_cli.errors import ValidationFailed
from acomm_cli.output import columns, render_caps

if TYPE_CHECKING:
    from acomm_cli.engine import capabilities
else:
    capabilities = lazy.module("acomm_cli.engine.capabilities")

app = typer.Typer(
    help="Capabilities: what an agent can be asked to do, under a contract."
    "\n\nExample: acomm capability list --json",
    no_args_is_help=True,
    add_completion=False,
)

CapId = Annotated[str, typer.Argument(metavar="ID", help="The capability id (code-review).")]


@app.command()
@takes_invocation
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
    with inv.store(write=True, create=True) as conn:
        doc = capabilities.host(conn, agent, skill, clock.now_ms(), remove=remove)
    render_caps.skills(inv.output(), doc)


@app.command()
@takes_invocation
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
        Path | None,
        typer.Option(metavar="FILE", help="The output contract, a JSON Schema file (required)."),
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
    for value, flag in (
        (owner, "--owner"),
        (delegation_skill, "--delegation-skill"),
        (executor_skill, "--executor-skill"),
        (schema, "--schema"),
    ):
        if not value:
            raise typer.BadParameter(f"{flag} is required", param_hint=flag)
    assert owner and delegation_skill and executor_skill and schema
    try:
        schema_text = schema.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise ValidationFailed(
            f"schema: cannot read {str(schema)!r}: {exc.strerror}",
            field="schema",
            value=str(schema),
        ) from None
    with inv.store(write=True, create=True) as conn:
        doc = capabilities.publish(
            conn,
            cap_id,
            clock.now_ms(),
            owner=owner,
            delegation=delegation_skill,
            executor=executor_skill,
            schema_text=schema_text,
            eta=eta,
            limits=inv.limits(),
        )
    render_caps.capability(inv.output(), doc)


@app.command()
@takes_invocation
def unpublish(inv: Invocation, cap_id: CapId) -> None:
    """Unpublish a capability: tasks for it are refused (exit 5) from now on.

    Example: acomm capability unpublish code-review
    """
    with inv.store(write=True) as conn:
        doc = capabilities.unpublish(conn, cap_id, clock.now_ms())
    render_caps.capability(inv.output(), doc)


@app.command("list")
@listing(columns.CAPABILITIES)
@takes_invocation
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
    with inv.store(write=False, read_fallback=True) as conn:
        docs = capabilities.list_caps(conn, state=state)
    render_caps.capabilities(inv.output(), docs)


@app.command()
@takes_invocation
def show(inv: Invocation, cap_id: CapId) -> None:
    """One capability: its contract, and who installed which delegation skill.

    Prints the contract, its owner and skill versions, and installs: [{agent, task_id,
    requested_version, status, version, at}] with --json.

    Example: acomm capability show code-review --json
    """
    with inv.store(write=False, read_fallback=True) as conn:
        doc = capabilities.show(conn, cap_id)
    render_caps.capability(inv.output(), doc)


@app.callback()
def capability_group() -> None:
    """Capabilities: what an agent can be asked to do, under a contract."""
