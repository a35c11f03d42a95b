"""What `acomm __complete` does, without typer: the completion scripts run it on every TAB
that completes a channel or an agent, so the fast path (`acomm_cli.cli.main`) runs it
directly; `commands/completions.py` declares it."""

from __future__ import annotations

import sqlite3

from acomm_cli.cli.invocation import Invocation
from acomm_cli.errors import UsageError
from acomm_cli.model import SYSTEM_AGENT
from acomm_cli.output import render
from acomm_cli.store import agents, channels

# agents: the names registered in the directory and not retired (what `--to`, `--as` and an
# agent argument accept), read from its primary key in order
WORDS = {"channels": channels.channel_names, "agents": agents.names}


def words(conn: sqlite3.Connection, kind: str) -> list[str]:
    """Channel names or registered agent names a user may type, sorted (not acomm's own
    system agent, nor a retired agent)."""
    if kind not in WORDS:
        raise UsageError(
            f"kind: {kind!r} is not one of {', '.join(WORDS)}", field="kind", value=kind
        )
    return [w for w in WORDS[kind](conn) if w != SYSTEM_AGENT]


def complete(inv: Invocation, *, kind: str) -> None:
    """Channel names or agent names, one a line, for the completion scripts (read-only)."""
    with inv.store(write=False) as conn:
        found = words(conn, kind)
    render.text("".join(f"{w}\n" for w in found))
