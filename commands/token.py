"""`acomm token ...`: scoped session tokens for external agents (create, list, revoke)."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import token_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(
    help="Session tokens for external agents at this node's gateway.\n\n"
    "An external agent sends and receives through the gateway's /agent/v1 "
    "endpoints as the token's agent only.\n\nExample: acomm token create "
    "--agent bob --ttl 1h --json",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
@runs(token_run.create)
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


@app.command("list")
@listing(columns.TOKENS)
@runs(token_run.list_)
def list_(inv: Invocation) -> None:
    """List session tokens and their state, never the tokens themselves.

    States: active, expired, revoked.

    Example: acomm token list --json
    """


@app.command()
@runs(token_run.revoke)
def revoke(
    inv: Invocation,
    token_id: Annotated[str, typer.Argument(metavar="ID", help="The token id (tok-...).")],
) -> None:
    """Revoke a session token: the gateway refuses it from its next request on.

    Example: acomm token revoke tok-3f2a9c0d1e4b5a67
    """
