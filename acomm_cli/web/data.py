"""What the console's pages show, read through the engine (no SQL here): each page one
function, each on one connection, each with the same engine calls as the command that prints
the same thing (`stats`, `messages`, `show`, `deadletter list`, `task list`, `incident list`,
`peers`). Knows nothing of Starlette."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

from acomm_cli.engine import (
    activity,
    channels,
    deadletters,
    directory,
    engagement,
    inbox,
    incidents,
    operations,
    queries,
    tasks,
    traces,
)
from acomm_cli.engine.activity import Activity
from acomm_cli.engine.deadletters import DeadLetter
from acomm_cli.engine.engagement import Engagement
from acomm_cli.engine.incidents import Incident
from acomm_cli.engine.operations import AgentStats
from acomm_cli.engine.taskdata import Task
from acomm_cli.model import Message, MessageFilter

FEED_LIMIT = 200  # the newest messages the feed shows
LIST_LIMIT = 500  # dead letters and tasks shown at most


@dataclass(frozen=True)
class FeedFilter:
    """The feed's filters, as `acomm messages` takes them; empty strings mean none."""

    channel: str = ""
    agent: str = ""
    type: str = ""
    topic: str = ""
    status: str = ""

    def to_filter(self) -> MessageFilter:
        """The engine's filter; a bad value is refused naming its field, as the command does."""
        return inbox.feed_filter(
            self.channel, self.agent, self.type, self.topic, self.status, FEED_LIMIT
        )

    def command(self) -> str:
        """The `acomm messages` command line that lists the same messages."""
        import shlex

        parts = ["acomm messages"]
        for flag, value in (
            ("--channel", self.channel),
            ("--from", self.agent),
            ("--type", self.type),
            ("--topic", self.topic),
            ("--status", self.status),
        ):
            if value:
                parts.append(f"{flag} {shlex.quote(value)}")
        return " ".join(parts)


@dataclass(frozen=True)
class AgentRow:
    """An agent as the agents page lists it: `stats`' counts with the directory's kind."""

    stats: AgentStats
    kind: str
    admin: bool
    stale: bool


@dataclass(frozen=True)
class ChannelRow:
    """A channel, or a worker pool on one (`pool` set): `pending` is its backlog, `in_flight`
    what is claimed or held and not finished."""

    name: str
    type: str
    state: str
    pending: int
    in_flight: int
    queued: int
    dead_letters: int
    pool: str | None = None


@dataclass(frozen=True)
class Overview:
    agents: list[AgentRow]
    channels: list[ChannelRow]
    messages: int
    tasks: dict[str, int]
    incidents: dict[str, int]


@dataclass
class Detail:
    message: Message
    thread: list[Message] = field(default_factory=list)
    dead_letters: list[DeadLetter] = field(default_factory=list)
    engagement: list[Engagement] = field(default_factory=list)
    trace: dict[str, Any] | None = None


@dataclass(frozen=True)
class Node:
    """This store as a federation node: its id, its outbox head and its peers with their lag."""

    node_id: str
    outbox_head: int
    peers: list[dict[str, Any]]


def is_stale(a: AgentStats, stale_after_ms: int) -> bool:
    """An agent that has left a message unread longer than the threshold: dead or stuck."""
    return a.unread > 0 and a.oldest_unread_age_sec * 1000 >= stale_after_ms


def overview(conn: sqlite3.Connection, now: int, *, stale_after_ms: int) -> Overview:
    """The agents and channels pages: `operations.stats`, exactly what `stats --json` prints,
    with the directory's kinds and the channel list's types and states."""
    st = operations.stats(conn, now)
    known = {a.name: a for a in directory.listing(conn, now, include_retired=True)}
    agents = [
        AgentRow(
            a,
            known[a.agent].kind if a.agent in known else "?",
            known[a.agent].admin if a.agent in known else False,
            is_stale(a, stale_after_ms),
        )
        for a in st.agents
    ]
    kinds = {c.name: c for c in channels.list_channels(conn)}
    rows = []
    for c in st.channels:
        ch = kinds.get(c.channel)
        rows.append(
            ChannelRow(
                c.channel,
                ch.type.value if ch else "?",
                ch.state.value if ch else "?",
                c.pending,
                c.in_progress,
                c.queued,
                c.dead_letters,
            )
        )
    for p in st.pools:
        state = kinds[p.channel].state.value if p.channel in kinds else "?"
        rows.append(ChannelRow(p.channel, "pool", state, p.waiting, p.claimed, 0, 0, pool=p.group))
    return Overview(agents, rows, st.store.messages, st.tasks, st.incidents)


def feed(conn: sqlite3.Connection, f: FeedFilter) -> list[Message]:
    """`messages` with the filter, newest first."""
    return inbox.history(conn, f.to_filter()).messages


def detail(conn: sqlite3.Connection, message_id: int) -> Detail:
    """`show MSG` with its thread (`thread CORR`), its dead letters, how far each recipient
    got (`show --json`'s engagement) and its trace (`trace ID`)."""
    msg = inbox.show(conn, message_id)
    thread = queries.thread(conn, msg.correlation_id) if msg.correlation_id else []
    dead, _ = deadletters.list_dead_letters(conn, message_id=message_id, limit=1000)
    trace = traces.tree(conn, msg.trace_id) if msg.trace_id else None
    return Detail(msg, thread, dead, engagement.of(conn, msg), trace)


def dead_letters(conn: sqlite3.Connection) -> tuple[list[DeadLetter], int]:
    return deadletters.list_dead_letters(conn, limit=LIST_LIMIT)


def work(conn: sqlite3.Connection, now: int) -> tuple[list[Task], int, list[Incident]]:
    """`task list` and `incident list`."""
    found, total = tasks.list_tasks(conn, now, limit=LIST_LIMIT)
    return found, total, incidents.list_incidents(conn)


def node(conn: sqlite3.Connection, now: int, offline_after_ms: int) -> Node | None:
    """The peers as `acomm peers` lists them (cursor, head, lag) and the outbox head; None on
    a store that is not a node (federation is imported only on a node)."""
    from acomm_cli.store import federation as fed_sql  # stdlib and SQL only

    me = fed_sql.node_id(conn)
    if me is None:
        return None
    from acomm_cli.federation import room

    return Node(me, fed_sql.outbox_head(conn), room.peers(conn, now, offline_after_ms)["peers"])


def charts(conn: sqlite3.Connection, now: int) -> Activity:
    """The last hour's traffic and backlog and the dead letters by reason (`acomm ui`'s)."""
    return activity.activity(conn, now)


def version(conn: sqlite3.Connection) -> int:
    """SQLite's counter of commits by other connections: what the live updates poll."""
    return activity.data_version(conn)
