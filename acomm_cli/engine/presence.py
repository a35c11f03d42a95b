"""Presence: every command that acts as an agent (sends, reads its inbox, acks, nacks,
extends, responds, works a task, or is run for it by dispatch) records when, so that people
and tools can tell who is alive. The time is written inside the transaction the command
already opens: one UPDATE by primary key, no transaction of its own, and nothing at all when
the command is refused (its transaction rolls back). A name the directory does not hold is
left alone: registering names is the directory's business."""

from __future__ import annotations

from acomm_cli.store import presence as sql

TYPE_CHECKING = False  # typing's, without importing typing (a send loads this module)
if TYPE_CHECKING:
    import sqlite3


# Presence is kept to the second: a command within a second of the time recorded leaves
# it. A loop of sends then writes the row once a second, not once a command, and two
# followers waiting on the store (`receive --follow`, whose reads record presence too) do
# not wake each other for ever: a write that changes nothing is no commit to wake on.
GRAIN_MS = 1000


def seen(conn: sqlite3.Connection, agent: str, now: int) -> None:
    """`agent` acted at `now`. Call inside the command's write transaction; a store opened
    read-only records nothing. Never moves the time
    back (a command that read its clock before another committed keeps the later time)."""
    if not getattr(conn, "read_only", False):
        sql.touch(conn, agent, now, now - GRAIN_MS)


def last_seen(conn: sqlite3.Connection, agents: list[str] | None = None) -> dict[str, int]:
    """agent -> when it last acted (ms); agents never seen are absent."""
    return sql.last_seen(conn, agents)
