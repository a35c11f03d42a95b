"""`acomm agent own|disown|where`: agent ownership in the federation's state room."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import params
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import takes_invocation
from acomm_cli.output import render

app = typer.Typer(
    help="Which node owns an agent (federation).\n\nExample: acomm agent own "
    "bob --fallback node-b --json",
    no_args_is_help=True,
    add_completion=False,
)

Agent = Annotated[str, typer.Argument(click_type=params.AGENT, help="The agent id.")]


def _offline_after(inv: Invocation) -> int:
    return int(inv.settings.value("federation.offline_after"))


@app.command()
@takes_invocation
def own(
    inv: Invocation,
    agent: Agent,
    fallback: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NODE",
            help="A node that takes the agent's messages while this one is "
            "offline (repeatable, in order).",
        ),
    ] = None,
) -> None:
    """This node owns AGENT: other nodes route its messages here.

    Writes this node's copy of the room and queues the change for the gateway. An
    agent another node owns: refused (exit 5, naming it) until that node disowns it or
    has been silent past federation.takeover_grace (default 10m).
    Prints {agent, owner_node, fallback_nodes, online, route}.

    Example: acomm agent own bob --fallback node-b --json
    """
    from acomm_cli.federation import room

    with inv.store(write=True) as conn:
        doc = room.own(
            conn,
            agent,
            fallback or [],
            clock.now_ms(),
            _offline_after(inv),
            int(inv.settings.value("federation.takeover_grace")),
        )
    render.status(inv.output(), doc)


@app.command()
@takes_invocation
def disown(inv: Invocation, agent: Agent) -> None:
    """This node gives AGENT up (only its owner may).

    Example: acomm agent disown bob --json
    """
    from acomm_cli.federation import room

    with inv.store(write=True) as conn:
        doc = room.disown(conn, agent, clock.now_ms(), _offline_after(inv))
    render.status(inv.output(), doc)


@app.command()
@takes_invocation
def where(inv: Invocation, agent: Agent) -> None:
    """Where a message to AGENT would go now.

    Prints {agent, owner_node, fallback_nodes, online, route}; route is local, owner,
    fallback, no_owner or owner_offline.

    Example: acomm agent where bob --json
    """
    from acomm_cli.federation import room

    with inv.store(write=False) as conn:
        doc = room.where(conn, agent, clock.now_ms(), _offline_after(inv))
    render.status(inv.output(), doc)


@app.callback()
def agent_group() -> None:
    """Which node owns an agent (federation)."""
