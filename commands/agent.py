"""`acomm agent own|disown|where`: agent ownership in the federation's state room."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import params
from acomm_cli.cli.commands._common import output, settings, store
from acomm_cli.output import render

app = typer.Typer(help="Which node owns an agent (federation).\n\nExample: acomm agent own "
                  "bob --fallback node-b --json", no_args_is_help=True, add_completion=False)

Agent = Annotated[str, typer.Argument(click_type=params.AGENT, help="The agent id.")]


def _offline_after(ctx: typer.Context) -> int:
    return int(settings(ctx).value("federation.offline_after"))


@app.command()
def own(
    ctx: typer.Context,
    agent: Agent,
    fallback: Annotated[list[str] | None, typer.Option(
        metavar="NODE", help="A node that takes the agent's messages while this one is "
        "offline (repeatable, in order).")] = None,
) -> None:
    """This node owns AGENT: other nodes route its messages here.

    Writes this node's copy of the room and queues the change for the gateway.
    Prints {agent, owner_node, fallback_nodes, online, route}.

    Example: acomm agent own bob --fallback node-b --json
    """
    from acomm_cli.federation import room

    with store(ctx, write=True) as conn:
        doc = room.own(conn, agent, fallback or [], clock.now_ms(), _offline_after(ctx))
    render.status(output(ctx), doc)


@app.command()
def disown(ctx: typer.Context, agent: Agent) -> None:
    """This node gives AGENT up (only its owner may).

    Example: acomm agent disown bob --json
    """
    from acomm_cli.federation import room

    with store(ctx, write=True) as conn:
        doc = room.disown(conn, agent, clock.now_ms(), _offline_after(ctx))
    render.status(output(ctx), doc)


@app.command()
def where(ctx: typer.Context, agent: Agent) -> None:
    """Where a message to AGENT would go now.

    Prints {agent, owner_node, fallback_nodes, online, route}; route is local, owner,
    fallback, no_owner or owner_offline.

    Example: acomm agent where bob --json
    """
    from acomm_cli.federation import room

    with store(ctx, write=False) as conn:
        doc = room.where(conn, agent, clock.now_ms(), _offline_after(ctx))
    render.status(output(ctx), doc)


@app.callback()
def agent_group() -> None:
    """Which node owns an agent (federation)."""
