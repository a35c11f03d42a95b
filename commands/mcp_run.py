"""What `acomm mcp` does, without typer: `commands/mcp.py` declares it (options, help) and
runs this; the fast path (`acomm_cli.cli.main`) runs it directly."""

from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path

from acomm_cli.cli.invocation import Invocation, identity, identity_check, publish_after_commit
from acomm_cli.errors import MissingExtra, UsageError
from acomm_cli.output import render

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.mcpserver.tools import Encoders

TOKEN_ENV = "ACOMM_MCP_TOKEN"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def mcp(
    inv: Invocation,
    as_: str | None = None,
    print_config: str | None = None,
    http: str | None = None,
    token: str | None = None,
) -> None:
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
