"""`acomm mcp`: the store as MCP tools and resources for one agent (docs/MCP.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import mcp_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import AsAgent, runs

app = typer.Typer(add_completion=False)

CONFIG_KIND = params.choice(("claude", "json"), "KIND")


@app.command()
@runs(mcp_run.mcp)
def mcp(
    inv: Invocation,
    as_: AsAgent = None,
    print_config: Annotated[
        str | None,
        typer.Option(
            "--print-config",
            click_type=CONFIG_KIND,
            help="Print how to register this server and exit: `claude` (the `claude mcp add` "
            "line and .mcp.json) or `json` (a generic mcpServers document).",
        ),
    ] = None,
    http: Annotated[
        str | None,
        typer.Option(
            metavar="HOST:PORT",
            help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (port 0: any "
            "free port, printed on stderr).",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            envvar=mcp_run.TOKEN_ENV,
            show_envvar=True,
            metavar="TOKEN",
            help="With --http: require `Authorization: Bearer TOKEN` (needed on a host that is "
            "not loopback).",
        ),
    ] = None,
) -> None:
    """Serve the store to an MCP client (Claude Code, Codex...) as one agent.

    Over stdio by default: the client starts it. Tools: send, publish, receive, ack, nack,
    query, respond, thread, messages, show, channels, channel_create, channel_join, subscribe,
    unsubscribe, deadletters, replay, stats, whois, list_agents, task_create, task_accept,
    task_update, task_complete, task_fail, task_show, task_list, capability_list,
    capability_show, trace, each with an output schema; resources acomm://inbox,
    acomm://channel/{name} and acomm://thread/{correlation_id}, with a resources/updated
    notification when the inbox changes. The agent is fixed here: no tool can act as another.
    Needs the `mcp` extra.

    Example: acomm mcp --as lead --print-config claude
    """
