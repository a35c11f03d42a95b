"""What the dashboard shows, read through the engine (no SQL here; the directory pane's rows
through the store's read function): one `Dashboard` per refresh, and the selected message's
`Detail`. Knows nothing of Textual."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field, replace
from typing import Any

from acomm_cli.engine import (
    activity,
    channels,
    deadletters,
    engagement,
    inbox,
    operations,
    queries,
)
from acomm_cli.engine.activity import Activity
from acomm_cli.engine.deadletters import DeadLetter
from acomm_cli.engine.engagement import Engagement
from acomm_cli.engine.operations import AgentStats, Stats
from acomm_cli.model import Message, MessageFilter
from acomm_cli.store import agents as agent_sql

FEED_LIMIT = 200  # the newest messages the feed holds


@dataclass(frozen=True)
class FeedFilter:
    """The feed's filters, as `acomm messages` takes them (--channel, --from, --type,
    --topic, --status); empty strings mean no filter."""

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

    def describe(self) -> str:
        parts = [
            f"{k}={v}"
            for k, v in (
                ("channel", self.channel),
                ("from", self.agent),
                ("type", self.type),
                ("topic", self.topic),
                ("status", self.status),
            )
            if v
        ]
        return " ".join(parts) or "all messages"


@dataclass(frozen=True)
class ChannelRow:
    """A channel, or a worker pool on one (`pool` set): then `pending` counts the messages a
    member has claimed and not finished, `queued` those waiting for a member to claim."""

    name: str
    type: str
    state: str
    pending: int
    queued: int
    dead_letters: int
    pool: str | None = None

    @property
    def key(self) -> str:
        """Its row: the channel's name, or `CHANNEL *POOL` (a channel name has no space)."""
        return self.name if self.pool is None else f"{self.name} *{self.pool}"


@dataclass(frozen=True)
class Node:
    """This store as a federation node: its id, its own outbox head and its peers."""

    node_id: str
    outbox_head: int
    peers: list[dict[str, Any]]


@dataclass(frozen=True)
class DirectoryRow:
    """One registered name as the directory pane lists it."""

    name: str
    kind: str
    team: str | None
    display_name: str | None
    registered_at: int
    last_seen_at: int | None
    retired_at: int | None


@dataclass
class Dashboard:
    stats: Stats
    channels: list[ChannelRow]
    feed: list[Message]
    node: Node | None = None
    activity: Activity | None = None
    directory: list[DirectoryRow] = field(default_factory=list)
    now: int = 0  # the time the panes were read at (the directory's last-seen ages)


@dataclass
class Detail:
    message: Message
    thread: list[Message] = field(default_factory=list)
    dead_letters: list[DeadLetter] = field(default_factory=list)
    # each recipient's routed -> notified -> engaged, as `show --json` gives it
    engagement: list[Engagement] = field(default_factory=list)


def is_stale(a: AgentStats, stale_after_ms: int) -> bool:
    """An agent that has left a message unread for longer than the threshold: the sign of a
    dead or stuck agent (what queue statistics are for)."""
    return a.unread > 0 and a.oldest_unread_age_sec * 1000 >= stale_after_ms


def load(
    conn: sqlite3.Connection, now: int, feed: FeedFilter, *, offline_after_ms: int, charts: bool
) -> Dashboard:
    """Every pane's data. The counts are `operations.stats`, exactly what `stats --json`
    prints; the channel types and states come from the channel list."""
    st = operations.stats(conn, now)
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
                c.queued,
                c.dead_letters,
            )
        )
    for p in st.pools:  # after the channels: a pool's backlog, as `stats` gives it
        state = kinds[p.channel].state.value if p.channel in kinds else "?"
        rows.append(ChannelRow(p.channel, "pool", state, p.claimed, p.waiting, 0, p.group))
    feed_msgs = inbox.history(conn, feed.to_filter()).messages
    act = activity.activity(conn, now) if charts else None
    if act is not None:  # the last point is the agents pane's own total: the timers due now
        # (retries run out, messages expired) counted as applied, as stats counts them
        act = replace(
            act, unread_backlog=[*act.unread_backlog[:-1], sum(a.unread for a in st.agents)]
        )
    return Dashboard(
        st,
        rows,
        feed_msgs,
        node=node(conn, now, offline_after_ms),
        activity=act,
        directory=[DirectoryRow(*r) for r in agent_sql.directory_rows(conn)],
        now=now,
    )


def node(conn: sqlite3.Connection, now: int, offline_after_ms: int) -> Node | None:
    """The peers as `acomm peers` lists them and the outbox head `gateway status` shows; None
    on a store that is not a node (federation is imported only on a node)."""
    from acomm_cli.store import federation as fed_sql  # stdlib and SQL only

    if fed_sql.node_id(conn) is None:
        return None
    from acomm_cli.federation import room

    me = fed_sql.node_id(conn) or ""
    return Node(me, fed_sql.outbox_head(conn), room.peers(conn, now, offline_after_ms)["peers"])


def detail(conn: sqlite3.Connection, message_id: int) -> Detail:
    """`show MSG` with its thread (`thread CORR`), its dead letters and how far each
    recipient got (`show --json`'s engagement)."""
    msg = inbox.show(conn, message_id)
    thread = queries.thread(conn, msg.correlation_id) if msg.correlation_id else []
    dead, _ = deadletters.list_dead_letters(conn, message_id=message_id, limit=1000)
    return Detail(msg, thread, dead, engagement.of(conn, msg))


def version(conn: sqlite3.Connection) -> int:
    return activity.data_version(conn)
