"""The store in Prometheus' text format (docs/METRICS.md), computed afresh at each scrape by a
custom collector: nothing is counted in memory, so every process that serves `/metrics` over
one store gives the same numbers, and a restart loses none.

The counters are totals of rows as they stand (messages stored per channel, deliveries read,
acknowledged, dead letters held, dispatch receipts): compaction, `deadletter replay` and
`purge` lower them, which Prometheus' `rate()` and `increase()` read as a counter reset.

prometheus_client is imported inside the functions: nothing on a send's path loads it."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from acomm_cli import clock
from acomm_cli.engine import operations
from acomm_cli.store import federation as fed_sql
from acomm_cli.store import metrics as sql
from acomm_cli.store import timers as timer_sql

if TYPE_CHECKING:  # annotations only
    from prometheus_client.metrics_core import Metric

# the classic text format every Prometheus reads (2.x as 3.x); every name here is a classic one
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
OFFLINE_AFTER_MS = 30_000  # `federation.offline_after`'s default: a peer's `online` gauge

# every metric family the collector yields: (name, type, labels, help). docs/METRICS.md and the
# Grafana dashboard's test read this list.
FAMILIES: list[tuple[str, str, tuple[str, ...], str]] = [
    ("acomm_messages_sent", "counter", ("channel",), "Messages stored on a channel."),
    (
        "acomm_messages_received",
        "counter",
        ("channel",),
        "Deliveries on a channel read at least once by their recipient.",
    ),
    ("acomm_messages_acked", "counter", ("channel",), "Deliveries on a channel acknowledged."),
    (
        "acomm_messages_dead_lettered",
        "counter",
        ("channel", "reason"),
        "Dead letters held, by channel and reason.",
    ),
    (
        "acomm_dispatch_runs",
        "counter",
        ("agent", "status"),
        "Dispatch runs recorded, by agent and receipt status.",
    ),
    (
        "acomm_agent_backlog",
        "gauge",
        ("agent",),
        "Deliveries an agent has not read (what its next receive hands over).",
    ),
    (
        "acomm_agent_awaiting_ack",
        "gauge",
        ("agent",),
        "Ack-tracked deliveries of an agent not yet acknowledged.",
    ),
    (
        "acomm_agent_oldest_unread_seconds",
        "gauge",
        ("agent",),
        "Age of an agent's oldest unread delivery (0 when none).",
    ),
    (
        "acomm_channel_backlog",
        "gauge",
        ("channel",),
        "Deliveries pending on a channel (unread, or tracked and not acknowledged).",
    ),
    ("acomm_timers_due", "gauge", (), "Delivery timers due now: the work of the next tick."),
    (
        "acomm_outbox_lag_events",
        "gauge",
        ("peer",),
        "Events in a peer's outbox this node has not read yet (a node only).",
    ),
    ("acomm_peer_online", "gauge", ("peer",), "1 when a peer was heard from lately, else 0."),
    ("acomm_outbox_head", "gauge", (), "The newest event in this node's own outbox."),
    ("acomm_store_size_bytes", "gauge", (), "Size of the store's database file."),
    ("acomm_store_wal_size_bytes", "gauge", (), "Size of the store's write-ahead log."),
    ("acomm_store_messages", "gauge", (), "Messages held in the store."),
]


def metric_names() -> list[str]:
    """Every sample name a scrape can hold (a counter's with `_total`)."""
    return [n + ("_total" if t == "counter" else "") for n, t, _l, _h in FAMILIES]


class StoreCollector:
    """prometheus_client's custom-collector protocol: `collect` yields the families."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        now: Callable[[], int] = clock.now_ms,
        offline_after_ms: int = OFFLINE_AFTER_MS,
    ) -> None:
        self.conn, self.now, self.offline_after_ms = conn, now, offline_after_ms

    def describe(self) -> list[Metric]:
        return []  # no describe at registration: that would scrape the store once more

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        made: dict[str, Any] = {}
        for name, kind, labels, text in FAMILIES:
            cls = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
            made[name] = cls(name, text, labels=list(labels))
        for (family, labels), value in _samples(self.conn, self.now(), self.offline_after_ms):
            made[family].add_metric(list(labels), value)
        yield from made.values()


Sample = tuple[tuple[str, tuple[str, ...]], float]


def _samples(conn: sqlite3.Connection, now: int, offline_after_ms: int) -> Iterator[Sample]:
    for channel, n in sql.sent_by_channel(conn):
        yield ("acomm_messages_sent", (channel,)), n
    for channel, read, acked in sql.deliveries_by_channel(conn):
        yield ("acomm_messages_received", (channel,)), read
        yield ("acomm_messages_acked", (channel,)), acked
    for channel, reason, n in sql.dead_letters_by_channel(conn):
        yield ("acomm_messages_dead_lettered", (channel, reason)), n
    for agent, status, n in sql.receipts_by_status(conn):
        yield ("acomm_dispatch_runs", (agent, status)), n
    st = operations.stats(conn, now)  # as `acomm stats` counts them: due timers applied
    for a in st.agents:
        yield ("acomm_agent_backlog", (a.agent,)), a.unread
        yield ("acomm_agent_awaiting_ack", (a.agent,)), a.awaiting_ack
        yield (
            ("acomm_agent_oldest_unread_seconds", (a.agent,)),
            (a.oldest_unread_age_sec if a.unread else 0),
        )
    for c in st.channels:
        yield ("acomm_channel_backlog", (c.channel,)), c.pending
    yield ("acomm_timers_due", ()), timer_sql.count_due(conn, now)
    if fed_sql.node_id(conn) is not None:
        from acomm_cli.federation import room  # a node only: federation loads on one alone

        for p in room.peers(conn, now, offline_after_ms)["peers"]:
            yield ("acomm_outbox_lag_events", (p["node"],)), p["lag"] or 0
            yield ("acomm_peer_online", (p["node"],)), 1 if p["online"] else 0
        yield ("acomm_outbox_head", ()), fed_sql.outbox_head(conn)
    yield ("acomm_store_size_bytes", ()), st.store.bytes
    yield ("acomm_store_wal_size_bytes", ()), st.store.wal_bytes
    yield ("acomm_store_messages", ()), st.store.messages


def metrics_payload(
    store: sqlite3.Connection | str | os.PathLike[str],
    *,
    now: Callable[[], int] = clock.now_ms,
    offline_after_ms: int = OFFLINE_AFTER_MS,
) -> tuple[bytes, str]:
    """One scrape: (the body in Prometheus' text format, its Content-Type). `store` is an open
    connection (left open) or a store's path, opened read-only for this scrape and closed."""
    from prometheus_client import CollectorRegistry, generate_latest

    own = not isinstance(store, sqlite3.Connection)
    if isinstance(store, sqlite3.Connection):
        conn = store
    else:
        from acomm_cli.engine import opening

        conn = opening.connect(store, create=False, read_only=True, now=now())
    try:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(StoreCollector(conn, now, offline_after_ms))
        return generate_latest(registry), CONTENT_TYPE
    finally:
        if own:
            conn.close()
