"""`acomm mcp --print-config claude|json`: how a client starts this server. Absolute paths
(the client starts it from its own working directory) and the store named explicitly, so the
server opens the same store whatever directory the client runs in."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

KINDS = ("claude", "json")


def program() -> str:
    """The `acomm` that is running now, by absolute path when it can be found."""
    beside = Path(sys.executable).parent / "acomm"
    if beside.is_file():
        return str(beside)
    found = shutil.which("acomm")
    return str(Path(found).resolve()) if found else "acomm"


def server_name(agent: str) -> str:
    return f"acomm-{agent}"


def entry(agent: str, store: Path, command: str) -> dict[str, Any]:
    """One `mcpServers` entry: a stdio server."""
    return {
        "type": "stdio",
        "command": command,
        "args": ["--store", str(store), "mcp", "--as", agent],
    }


def mcp_servers(agent: str, store: Path, command: str | None = None) -> dict[str, Any]:
    """The generic `mcpServers` document (.mcp.json, Cursor, Codex and others read it)."""
    return {"mcpServers": {server_name(agent): entry(agent, store, command or program())}}


def render(kind: str, agent: str, store: Path, command: str | None = None) -> str:
    command = command or program()
    doc = json.dumps(mcp_servers(agent, store, command), indent=2)
    if kind == "json":
        return doc + "\n"
    e = entry(agent, store, command)
    add = shlex.join(
        [
            "claude",
            "mcp",
            "add",
            "--scope",
            "project",
            server_name(agent),
            "--",
            e["command"],
            *e["args"],
        ]
    )
    return (
        f"# Register acomm with Claude Code as agent {agent!r} (run in your project;\n"
        f"# --scope project writes .mcp.json there, to share with the team):\n"
        f"{add}\n"
        f"# or put this in .mcp.json yourself:\n"
        f"{doc}\n"
    )
