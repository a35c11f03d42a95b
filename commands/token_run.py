"""What the `acomm token` subcommands do, without typer: `commands/token.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli.invocation import Invocation
from acomm_cli.output import render, render_tasks


def create(
    inv: Invocation,
    agent: str,
    ttl: str = "1h",
    scope: str = "send,receive",
) -> None:
    from acomm_cli.cli.invocation import identity
    from acomm_cli.federation import tokens

    identity(agent, "--agent")  # a session acts as the agent: with identity.auth token, prove it
    ttl_ms = clock.parse_duration(ttl, "ttl")
    scopes = tokens.parse_scopes(scope)
    with inv.store(write=True) as conn:
        doc = tokens.create(conn, agent=agent, ttl_ms=ttl_ms, scopes=scopes, now_ms=clock.now_ms())
    render.status(inv.output(), doc)


def list_(inv: Invocation) -> None:
    from acomm_cli.federation import tokens

    with inv.store(write=False) as conn:
        docs = tokens.list_tokens(conn, clock.now_ms())
    render_tasks.tokens(inv.output(), docs)


def revoke(
    inv: Invocation,
    token_id: str,
) -> None:
    from acomm_cli.federation import tokens

    with inv.store(write=True) as conn:
        doc, changed = tokens.revoke(conn, token_id, clock.now_ms())
    render.change(inv.output(), doc, changed, f"token {token_id} was already revoked")
