"""`acomm agent own|disown|where`: agent ownership in the federation's state room."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import params
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import takes_invocation
from acomm_cli.output import columns, render

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


# ---------------------------------------------------------------- credentials (identity.auth)


@app.command()
@takes_invocation
def token(
    inv: Invocation,
    agent: Agent,
    rotate: Annotated[
        bool, typer.Option("--rotate", help="Revoke its secrets and issue a new one.")
    ] = False,
    revoke: Annotated[
        bool, typer.Option("--revoke", help="Revoke its secrets (its dispatch runs' too).")
    ] = False,
) -> None:
    """Issue AGENT's secret, printed this once: the store keeps only its SHA-256.

    With identity.auth token, acting as AGENT needs the secret in $ACOMM_AGENT_TOKEN (or
    --token-file FILE); this command needs an admin's. An agent that has a secret already
    is refused (exit 5): --rotate replaces it, --revoke withdraws it.
    Prints the secret (with --json {agent, token, revoked}); --revoke prints {agent,
    revoked, changed}.

    Example: export ACOMM_AGENT_TOKEN=$(acomm agent token bob --rotate)
    """
    from acomm_cli.cli.invocation import require_admin
    from acomm_cli.engine import credentials
    from acomm_cli.errors import UsageError
    from acomm_cli.output import render_credentials

    if rotate and revoke:
        raise UsageError("give --rotate or --revoke, not both", field="rotate")
    action = "rotate" if rotate else "revoke" if revoke else "issue"
    with inv.store(write=True) as conn:
        require_admin(inv.settings, conn)
        doc = credentials.token(conn, agent, action, clock.now_ms())
    if revoke:
        render_credentials.revoked(inv.output(), doc)
    else:
        render_credentials.secret(inv.output(), doc)


# ---------------------------------------------------------------- contact rules


@app.command()
@params.listing(columns.CONTACTS)
@takes_invocation
def contacts(
    inv: Invocation,
    agent: Agent,
    action: Annotated[
        str | None,
        typer.Argument(
            click_type=params.choice(("add", "remove"), "ACTION"),
            help="add or remove OTHER; without it, list AGENT's contacts.",
        ),
    ] = None,
    other: Annotated[
        str | None,
        typer.Argument(click_type=params.AGENT, help="The contact to add or remove."),
    ] = None,
) -> None:
    """List, add or remove the agents whose direct messages AGENT accepts.

    The list takes effect while AGENT's rule is `accept: contacts` (agent update AGENT
    --accept contacts); then a direct message or `task create` from anyone else exits 5,
    forbidden. Adding a contact listed already, or removing one that is not, changes
    nothing: exit 0, "changed": false. AGENT must be registered (exit 4).

    Example: acomm agent contacts bob add alice --json
    """
    from acomm_cli.engine import contacts as rules
    from acomm_cli.output import render_contacts

    if action is None:
        with inv.store(write=False) as conn:
            found = rules.contacts(conn, agent)
        render_contacts.contacts(inv.output(), found)
        return
    if other is None:
        from acomm_cli.errors import ValidationFailed

        raise ValidationFailed(
            f"contact: name the agent to {action} (acomm agent contacts {agent} {action} OTHER)",
            field="contact",
        )
    with inv.store(write=True) as conn:
        did = rules.change(conn, agent, action, other, clock.now_ms())
    render_contacts.changed(inv.output(), agent, action, other, did)
