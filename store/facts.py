"""What a long-lived connection may remember between transactions about the channels: facts
that change only with channels, participants or subscriptions, kept under m011's channels
token (every change to those tables, in any process, adds one to it). A receive reads the
token (one statement) instead of the three statements the facts cost: whether any channel
is closed, whether any starts ack deadlines at the read, and which queues and worker pools
an agent serves."""

from __future__ import annotations

import sqlite3

from acomm_cli.store import acks, timers
from acomm_cli.store import queues as queue_sql
from acomm_cli.store.channels import CHANNELS_TOKEN
from acomm_cli.store.connection import AGENTS_TOKEN, StoreConnection, enter_agents

TYPE_CHECKING = False  # typing's, without importing typing (a receive's start-up time)
if TYPE_CHECKING:
    from typing import Any


class Facts:
    """The channel facts of one token. Built only right after the token is read at the start
    of a transaction its caller opened (before any write of it): so what is cached is what
    the committed token stands for, and a rolled-back change never lands in the cache."""

    __slots__ = ("conn", "token", "closed", "read_clock", "works_on")

    def __init__(self, conn: sqlite3.Connection, token: int) -> None:
        self.conn = conn
        self.token = token
        self.closed = (
            conn.execute("SELECT 1 FROM channels WHERE state = 'closed' LIMIT 1").fetchone()
            is not None
        )
        self.read_clock = acks.read_clock_in_use(conn)
        self.works_on: dict[str, tuple[bool, list[tuple[int, str]]]] = {}

    def serves(self, agent: str) -> tuple[bool, list[tuple[int, str]]]:
        """queues.works_on_any(agent), read once per token (in a transaction that has
        written nothing to channels, participants or subscriptions before it)."""
        got = self.works_on.get(agent)
        if got is None:
            if len(self.works_on) >= 1024:  # a gateway serving many agents: bounded
                self.works_on.clear()
            got = self.works_on[agent] = queue_sql.works_on_any(self.conn, agent)
        return got


_START_DUE = f"SELECT {CHANNELS_TOKEN}, {AGENTS_TOKEN}, {timers.READER_DUE_COLUMNS}"


def at_start_due(conn: sqlite3.Connection, reader: str, now: int) -> tuple[Facts | None, bool]:
    """at_start, and in the same statement whether anything is due for `reader`
    (timers.reader_due, either part): a receive that finds something due applies it first
    and reads again."""
    token, agents, timer, expired, scheduled = conn.execute(
        _START_DUE, timers.reader_due_params(now, reader)
    ).fetchone()
    return _facts(conn, token, agents), bool(timer or expired or scheduled)


def at_start(conn: sqlite3.Connection) -> Facts | None:
    """The connection's facts, checked against the token (read now), or None on a connection
    that is not a StoreConnection. Call it first thing in a transaction the caller began;
    the directory's cache answers from then on (connection.enter_agents, with the agents
    token of the same statement): the caller calls connection.leave_agents when it ends."""
    if not isinstance(conn, StoreConnection):
        return None
    token, agents = conn.execute(f"SELECT {CHANNELS_TOKEN}, {AGENTS_TOKEN}").fetchone()
    return _facts(conn, token, agents)


def _facts(conn: sqlite3.Connection, token: int, agents: int) -> Facts | None:
    if not isinstance(conn, StoreConnection):
        return None
    enter_agents(conn, agents)
    cached: Any = conn.facts
    if cached is None or cached.token != token:
        cached = conn.facts = Facts(conn, token)
    return cached
