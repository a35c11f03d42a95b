"""`acomm mcp`: the store as MCP tools and resources for one agent (docs/MCP.md)."""

from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.invocation import Invocation, identity, identity_check, publish_after_commit
from acomm_cli.cli.params import AsAgent, takes_invocation
from acomm_cli.errors import MissingExtra, UsageError
from acomm_cli.output import render

if TYPE_CHECKING:
    from acomm_cli.mcpserver.tools import Encoders

app = typer.Typer(add_completion=False)

CONFIG_KIND = params.choice(("claude", "json"), "KIND")
TOKEN_ENV = "ACOMM_MCP_TOKEN"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@app.command()
@takes_invocation
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
            envvar=TOKEN_ENV,
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
    agent = identity(as_)
    s = inv.settings
    found, _ = s.store_path(create=False)
    path = Path(found)  # store_path gives a str (a send does without pathlib)
    if print_config is not None:
        from acomm_cli.mcpserver import clientconfig

        render.text(clientconfig.render(print_config, agent, path.resolve()))
        return
    host = port = None
    if http is not None:
        from acomm_cli.federation.gateway import parse_listen

        host, port = parse_listen(http)
        if not token and not _loopback(host):
            raise UsageError(
                f"http: {host} is not a loopback address: give --token (or "
                f"${TOKEN_ENV}) so that only your agents can connect",
                field="http",
                value=http,
            )
    elif token is not None and TOKEN_ENV not in os.environ:
        raise UsageError("token: only with --http (stdio needs none)", field="token")
    try:
        from acomm_cli.mcpserver import server, tools
    except ImportError as exc:  # the SDK is an extra
        raise MissingExtra(
            "mcp: needs the MCP SDK, which the `mcp` extra installs: pip install 'acomm[mcp]'",
            extra="mcp",
            install="pip install 'acomm[mcp]'",
            missing=[exc.name],
        ) from None

    box = tools.Toolbox(
        tools.StoreOptions(
            path=path,
            busy_timeout_ms=s.value("store.busy_timeout"),
            flush=s.value("store.flush"),
            batch_messages=s.value("store.batch_messages"),
            batch_interval_ms=s.value("store.batch_interval"),
            limits=inv.limits(),
            directory=s.value("identity.directory"),
            check=identity_check(s, agent),  # identity.auth token: every call proves it
            after_outbox=publish_after_commit,
        ),
        agent,
        _encoders(),
    )
    box.check_store()  # and proves the agent: refused at start, not at the first call
    if host is None or port is None:
        server.serve_stdio(box)
        return

    def ready(bound: int) -> None:
        print(
            f"acomm: mcp: serving {agent} at http://{host}:{bound}/mcp", file=sys.stderr, flush=True
        )

    server.serve_http(box, host, port, token or None, ready)


def _encoders() -> Encoders:
    from acomm_cli.mcpserver.tools import Encoders
    from acomm_cli.output import (
        render_acks,
        render_agents,
        render_channels,
        render_cursors,
        render_deadletters,
        render_messages,
        render_operations,
        render_schedules,
        render_tasks,
        render_traces,
    )

    return Encoders(
        message=render_messages.message_doc,
        send=render_messages.send_doc,
        channel=render_channels.channel_doc,
        dead_letter=render_deadletters.dead_letter_doc,
        stats=render_operations.stats_doc,
        ack=render_acks.ack_doc,
        nack=render_acks.nack_doc,
        agent=render_agents.agent_doc,
        agents=render_agents.agents_doc,
        task=render_tasks.task_doc,
        trace=render_traces.trace_doc,
        cursor=render_cursors.doc,
        schedule=render_schedules.doc,
    )
