"""`acomm token ...`: scoped session tokens for external agents (create, list, revoke)."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import params
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, takes_invocation
from acomm_cli.output import columns, render, render_tasks

app = typer.Typer(
    help="Session tokens for external agents at this node's gateway.\n\n"
    "An external agent sends and receives through the gateway's /agent/v1 "
    "endpoints as the token's agent only.\n\nExample: acomm token create "
    "--agent bob --ttl 1h --json",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
@takes_invocation
def create(
    inv: Invocation,
    agent: Annotated[
        str,
        typer.Option(click_type=params.AGENT, help="The agent the token acts as (hosted here)."),
    ],
    ttl: Annotated[
        str,
        typer.Option(
            click_type=params.DURATION,
            help="How long the token stays valid (at most 30d). " + params.DURATION_HELP,
        ),
    ] = "1h",
    scope: Annotated[
        str,
        typer.Option(
            metavar="SCOPES",
            help="What it may do, comma-separated: send (send, respond), receive (receive, ack).",
        ),
    ] = "send,receive",
) -> None:
    """Create a session token for an agent hosted by this node.

    Prints {token_id, token, agent, expires_at, scopes}. The token is shown this
    once: the store keeps only its SHA-256. Give it to the agent, which sends
    `Authorization: Bearer TOKEN` to /agent/v1/... on this node's gateway. With
    identity.auth token, this needs the agent's own secret ($ACOMM_AGENT_TOKEN), which the
    gateway also takes as a bearer token.

    Example: acomm token create --agent bob --ttl 1h --scope send,receive --json
    """
    from acomm_cli.cli.invocation import identity
    from acomm_cli.federation import tokens

    identity(agent, "--agent")  # a session acts as the agent: with identity.auth token, prove it
    ttl_ms = clock.parse_duration(ttl, "ttl")
    scopes = tokens.parse_scopes(scope)
    with inv.store(write=True) as conn:
        doc = tokens.create(conn, agent=agent, ttl_ms=ttl_ms, scopes=scopes, now_ms=clock.now_ms())
    render.status(inv.output(), doc)


@app.command("list")
@listing(columns.TOKENS)
@takes_invocation
def list_(inv: Invocation) -> None:
    """List session tokens and their state, never the tokens themselves.

    States: active, expired, revoked.

    Example: acomm token list --json
    """
    from acomm_cli.federation import tokens

    with inv.store(write=False) as conn:
        docs = tokens.list_tokens(conn, clock.now_ms())
    render_tasks.tokens(inv.output(), docs)


@app.command()
@takes_invocation
def revoke(
    inv: Invocation,
    token_id: Annotated[str, typer.Argument(metavar="ID", help="The token id (tok-...).")],
) -> None:
    """Revoke a session token: the gateway refuses it from its next request on.

    Example: acomm token revoke tok-3f2a9c0d1e4b5a67
    """
    from acomm_cli.federation import tokens

    with inv.store(write=True) as conn:
        doc, changed = tokens.revoke(conn, token_id, clock.now_ms())
    render.change(inv.output(), doc, changed, f"token {token_id} was already revoked")
