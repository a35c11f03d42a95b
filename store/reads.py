"""SQL of reading messages: inbox, history, threads, one message, and their row builders."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from acomm_cli.model import (
    Delivery,
    DeliveryState,
    Message,
    MessageFilter,
    MessageType,
    MetaCondition,
    Priority,
)
from acomm_cli.store import metafilter
from acomm_cli.store.events import events_of

TYPE_CHECKING = False  # typing's, without importing typing (a send must not load it)
if TYPE_CHECKING:
    from typing import Any


_MSG_COLS = (
    "m.id, c.name, m.channel_id, m.sender, m.type, m.content, m.topic, m.priority,"
    " m.correlation_id, m.dedupe_key, m.metadata, m.created_at, m.deliver_at, m.global_id,"
    " m.origin_node, m.trace_id"
)


# whether a message has rich parts (format, subject, files) or an event: with its row, on
# their tables' primary keys, so a page of plain messages looks neither up
_HAS_RICH = (
    "(m.format IS NOT NULL OR m.subject IS NOT NULL OR EXISTS"
    " (SELECT 1 FROM message_attachments a WHERE a.message_id = m.id))"
)
_HAS_EVENT = "EXISTS (SELECT 1 FROM message_events e WHERE e.message_id = m.id)"

_DELIVERY_COLS = (
    "recipient, state, retry_count, delivered_at, read_at, ack_status, acked_at,"
    " next_timer_at, first_read_at"
)


_STATUS_SQL = (
    "(CASE WHEN EXISTS (SELECT 1 FROM deliveries x WHERE x.message_id = m.id AND x.state ="
    " 'dead') THEN 'dead_letter'"
    " WHEN EXISTS (SELECT 1 FROM deliveries x WHERE x.message_id = m.id) AND NOT EXISTS"
    " (SELECT 1 FROM deliveries x WHERE x.message_id = m.id AND x.state != 'acked')"
    " THEN 'acknowledged'"
    " WHEN EXISTS (SELECT 1 FROM deliveries x WHERE x.message_id = m.id AND x.state IN"
    " ('unread', 'read', 'acked')) THEN 'delivered' ELSE 'sent' END)"
)


# `--status in_progress`: a recipient holds the message with an in_progress ack
_HELD_SQL = (
    "m.id IN (SELECT x.message_id FROM deliveries x INDEXED BY deliveries_in_progress"
    " WHERE x.state = 'acked' AND x.ack_status = 'in_progress')"
)


_SORT = {
    "created": "m.created_at {o}, m.id {o}",
    "priority": "m.priority {o}, m.id {o}",
    "id": "m.id {o}",
}


# Plain dict lookups: calling an Enum by value costs about a microsecond a row.
_TYPES = {t.value: t for t in MessageType}


_PRIORITIES = {int(p): p for p in Priority}


_STATES = {s.value: s for s in DeliveryState}


def _metadata(text: str) -> dict[str, Any]:
    """Stored metadata read back; `json` is imported only when a row has some."""
    import json

    metadata: dict[str, Any] = json.loads(text)
    return metadata


# Positional arguments, in the order of _MSG_COLS and _DELIVERY_COLS: building these is most
# of what `receive` costs beyond SQLite, and keywords take twice as long.
def _message(row: Sequence[Any]) -> Message:
    # id, channel, channel_id, sender, type, content, topic, priority, correlation_id,
    # dedupe_key, metadata, created_at, deliver_at, global_id, origin_node, trace_id
    return Message(
        row[0],
        row[1],
        row[2],
        row[3],
        _TYPES[row[4]],
        row[5],
        row[6],
        _PRIORITIES[row[7]],
        row[8],
        row[9],
        _metadata(row[10]) if row[10] else {},
        row[11],
        row[12],
        row[13],
        row[14],
        [],
        None,
        None,
        row[15],
    )


def _delivery(row: Sequence[Any]) -> Delivery:
    # recipient, state, retry_count, delivered_at, read_at, ack_status, acked_at, next_timer_at,
    # first_read_at
    return Delivery(row[0], _STATES[row[1]], row[2], row[3], row[4], row[5], row[6], row[7], row[8])


def _filter_sql(
    f: MessageFilter, conn: sqlite3.Connection | None = None
) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    if f.channel is not None:
        where.append("c.name = ?")
        params.append(f.channel)
        if f.meta and conn is not None:
            # the channel's id written out, so that its metadata indexes (partial indexes
            # on `channel_id = N`) can serve the query; a bound id could not
            row = conn.execute("SELECT id FROM channels WHERE name = ?", (f.channel,)).fetchone()
            where.append(f"m.channel_id = {int(row[0]) if row else -1}")
    if f.since is not None:
        where.append("m.created_at >= ?")
        params.append(f.since)
    if f.until is not None:
        where.append("m.created_at <= ?")
        params.append(f.until)
    if f.types:
        where.append(f"m.type IN ({','.join('?' * len(f.types))})")
        params.extend(t.value for t in f.types)
    if f.sender is not None:
        where.append("m.sender = ?")
        params.append(f.sender)
    if f.topic is not None:
        where.append("m.topic IS NOT NULL AND topic_match(?, m.topic)")
        params.append(f.topic)
    if f.grep is not None:
        where.append("m.content REGEXP ?")
        params.append(f.grep)
    if f.priority_min is not None:
        where.append("m.priority >= ?")
        params.append(int(f.priority_min))
    derived = [s for s in f.status if s != "in_progress"]
    if f.status:
        held = _HELD_SQL if len(derived) < len(f.status) else None
        alternatives = (
            [f"{_STATUS_SQL} IN ({','.join('?' * len(derived))})"] if derived else []
        ) + ([held] if held else [])
        where.append("(" + " OR ".join(alternatives) + ")")
        params.extend(derived)
    if f.after_id is not None:
        where.append("m.id > ?")
        params.append(f.after_id)
    if f.correlation_id is not None:
        where.append("m.correlation_id = ?")
        params.append(f.correlation_id)
    if f.trace_id is not None:  # on m021's index of traces
        where.append("m.trace_id = ?")
        params.append(f.trace_id)
    if f.event_type is not None or f.thread_id is not None or f.actor is not None:
        cond = ["e.message_id = m.id"]
        for column, value in (
            ("event_type", f.event_type),
            ("thread_id", f.thread_id),
            ("actor", f.actor),
        ):
            if value is not None:
                cond.append(f"e.{column} = ?")
                params.append(value)
        where.append(f"EXISTS (SELECT 1 FROM message_events e WHERE {' AND '.join(cond)})")
    if f.meta:
        terms, values = metafilter.where(f.meta)
        where.extend(terms)
        params.extend(values)
    if f.recipient is not None or f.state:
        cond = ["x.message_id = m.id"]  # on the primary key (message_id, recipient)
        if f.recipient is not None:
            cond.append("x.recipient = ?")
            params.append(f.recipient)
        if f.state:
            cond.append(f"x.state IN ({','.join('?' * len(f.state))})")
            params.extend(f.state)
        where.append(f"EXISTS (SELECT 1 FROM deliveries x WHERE {' AND '.join(cond)})")
    return where, params


def _order(f: MessageFilter, default: str, direction: str) -> str:
    """ORDER BY for a filter: `default` (with `{o}`) unless --sort is given; --order alone
    flips the command's own direction (receive: oldest first; messages: newest first)."""
    o = "ASC" if (f.order or direction) == "asc" else "DESC"
    return (default if f.sort is None else _SORT[f.sort]).format(o=o)


def _total(
    conn: sqlite3.Connection, body: str, params: list[Any], rows: list[Any], f: MessageFilter
) -> int:
    """total_count: a page fetched with one row to spare shows whether more exist, so the
    count query runs only when they do (or when an offset hides the rows before the page)."""
    if len(rows) <= f.limit and (f.offset == 0 or rows):
        total = f.offset + len(rows)
    else:
        total = conn.execute(f"SELECT count(*) {body}", params).fetchone()[0]
    del rows[f.limit :]
    return total


def _unfiltered(f: MessageFilter) -> bool:
    """No condition on the message or its channel: only the agent and the states."""
    return (
        f.channel is None
        and f.since is None
        and f.until is None
        and not f.types
        and f.sender is None
        and f.topic is None
        and f.grep is None
        and f.priority_min is None
        and not f.status
        and f.after_id is None
        and f.event_type is None
        and f.thread_id is None
        and f.actor is None
        and not f.meta
    )


_INBOX_WHERE = ["d.recipient = ?", "d.state = 'unread'", "c.state != 'closed'"]
_INBOX_BODY = (
    " FROM deliveries d JOIN messages m ON m.id = d.message_id"
    " JOIN channels c ON c.id = m.channel_id WHERE "
)
_UNREAD_OF = " FROM deliveries d WHERE d.recipient = ? AND d.state = 'unread'"
_INBOX_SQL: dict[tuple[Any, ...], str] = {}  # the statement of each filter's shape


def _inbox_sql(where: list[str], f: MessageFilter, counted: bool) -> str:
    order = _order(f, "d.rank DESC, d.message_id {o}", "asc")
    count = f"(SELECT count(*){_UNREAD_OF})" if counted else "NULL"  # the agent bound first
    return (  # the recipient and state are known: not fetched
        f"SELECT {_MSG_COLS}, d.retry_count, d.delivered_at, d.read_at, d.ack_status,"
        f" d.acked_at, d.next_timer_at, c.max_pending, d.first_read_at,"
        # the deadline a read starts (ack_clock read: a tracked delivery without one)
        f" CASE WHEN d.tracked AND d.next_timer_at IS NULL THEN c.ack_timeout_ms END,"
        f" d.group_key, {_HAS_RICH}, {_HAS_EVENT}, {count}"
        f"{_INBOX_BODY}{' AND '.join(_INBOX_WHERE + where)}"
        f" ORDER BY {order}"
        " LIMIT ? OFFSET ?"
    )


def inbox(
    conn: sqlite3.Connection,
    agent: str,
    f: MessageFilter,
    *,
    marked_at: int | None = None,
    rich: set[int] | None = None,
    closed: bool | None = None,
) -> tuple[list[Message], int, set[int]]:
    """An agent's unread deliveries with their messages, FIFO (by rank first), the total,
    and which of their channels limit pending messages (reading may release queued ones).
    `marked_at`: each delivery as `mark_read(..., marked_at)` leaves it (the caller marks
    them in the same transaction), built so at once rather than changed afterwards.

    `d.state = 'unread'` is written out, never bound: SQLite uses the partial index
    deliveries_agent_active only for a WHERE that implies the index's own (m015).

    `rich`: filled with the ids of the messages that have a format, a subject or files (the
    others need no look-up of their parts). `closed`: whether any channel is closed, when
    the caller knows (store/facts.py). Whether a message carries an event comes with its
    row, so a page without one reads no events."""
    where, params = _filter_sql(f, conn)
    # with no filter on the messages and no closed channel (the caller knows), the count
    # behind total_count rides along with the page, one statement fewer
    counted = closed is False and _unfiltered(f)
    key = (tuple(where), f.sort, f.order, counted)
    sql = _INBOX_SQL.get(key)
    if sql is None:
        if len(_INBOX_SQL) >= 256:  # filters built from many shapes: bounded
            _INBOX_SQL.clear()
        sql = _INBOX_SQL[key] = _inbox_sql(where, f, counted)
    head = (agent, agent) if counted else (agent,)
    rows = conn.execute(sql, (*head, *params, f.limit + 1, f.offset)).fetchall()
    if counted and len(rows) > f.limit:
        total = rows[0][-1]
        del rows[f.limit :]
    else:
        body = _INBOX_BODY + " AND ".join(_INBOX_WHERE + where)
        params = [agent, *params]
        if (
            (len(rows) > f.limit or (f.offset and not rows))
            and _unfiltered(f)
            and not (
                conn.execute("SELECT 1 FROM channels WHERE state = 'closed' LIMIT 1").fetchone()
                if closed is None
                else closed
            )
        ):
            # The count behind total_count, on the inbox index alone (about 4x cheaper than
            # with the joins, which looked up every message of the backlog on every
            # receive): with no filter on the messages and no closed channel, the agent and
            # the states are all it counts.
            body = _UNREAD_OF
            params = [agent]
        total = _total(conn, body, params, rows, f)
    out: list[Message] = []
    add = out.append
    limited = set()
    # _message and the Delivery inlined, the row unpacked at once and the names looked up
    # once: this loop is most of what a receive of 100 spends in Python
    types, priorities = _TYPES, _PRIORITIES
    state = DeliveryState.UNREAD if marked_at is None else DeliveryState.READ
    events = False
    for (
        mid,
        channel,
        channel_id,
        sender,
        type_,
        content,
        topic,
        priority,
        correlation,
        dedupe,
        metadata,
        created,
        deliver_at,
        global_id,
        origin,
        trace,
        retries,
        delivered,
        read_at,
        ack_status,
        acked_at,
        next_timer,
        max_pending,
        first_read,
        starts,
        group_key,
        has_rich,
        has_event,
        _,
    ) in rows:
        if marked_at is not None:  # as mark_read's UPDATE leaves it
            read_at = marked_at
            if first_read is None:
                first_read = marked_at
            if starts is not None:
                next_timer = marked_at + starts
        add(
            Message(
                mid,
                channel,
                channel_id,
                sender,
                types[type_],
                content,
                topic,
                priorities[priority],
                correlation,
                dedupe,
                _metadata(metadata) if metadata else {},
                created,
                deliver_at,
                global_id,
                origin,
                [],
                Delivery(
                    agent,
                    state,
                    retries,
                    delivered,
                    read_at,
                    ack_status,
                    acked_at,
                    next_timer,
                    first_read,
                ),
                None,
                trace,
            )
        )
        if group_key is not None:  # a FIFO message claimed from its pool
            out[-1].group_key = group_key
        if max_pending:
            limited.add(channel_id)
        if has_rich and rich is not None:
            rich.add(mid)
        events = events or has_event
    if events:
        attach_events(conn, out)
    return out, total, limited


def history(conn: sqlite3.Connection, f: MessageFilter) -> tuple[list[Message], int]:
    """Messages matching a filter, newest first by default, with all their deliveries."""
    where, params = _filter_sql(f, conn)
    body = " FROM messages m JOIN channels c ON c.id = m.channel_id"
    if where:
        body += " WHERE " + " AND ".join(where)
    rows = conn.execute(
        f"SELECT {_MSG_COLS} {body} ORDER BY {_order(f, 'm.id {o}', 'desc')} LIMIT ? OFFSET ?",
        (*params, f.limit + 1, f.offset),
    ).fetchall()
    total = _total(conn, body, params, rows, f)
    msgs = [_message(r) for r in rows]
    attach_deliveries(conn, msgs)
    attach_events(conn, msgs)
    return msgs, total


def message_by_id(conn: sqlite3.Connection, message_id: int) -> Message | None:
    row = conn.execute(
        f"SELECT {_MSG_COLS} FROM messages m JOIN channels c ON c.id = m.channel_id WHERE m.id = ?",
        (message_id,),
    ).fetchone()
    if row is None:
        return None
    msg = _message(row)
    attach_deliveries(conn, [msg])
    attach_events(conn, [msg])
    return msg


def attach_deliveries(conn: sqlite3.Connection, msgs: list[Message]) -> None:
    if not msgs:
        return
    by_id = {m.id: m for m in msgs}
    for chunk_start in range(0, len(msgs), 500):
        ids = [m.id for m in msgs[chunk_start : chunk_start + 500]]
        for r in conn.execute(
            f"SELECT message_id, group_key, {_DELIVERY_COLS} FROM deliveries WHERE message_id"
            f" IN ({','.join('?' * len(ids))}) ORDER BY message_id, recipient",
            ids,
        ):
            m = by_id[r[0]]
            m.deliveries.append(_delivery(r[2:]))
            if r[1] is not None:  # a FIFO group key, on the message's pool rows
                m.group_key = r[1]


def attach_events(conn: sqlite3.Connection, msgs: list[Message]) -> None:
    """Each message's notification event (message_events): one query per listing."""
    if not msgs:
        return
    found = events_of(conn, [m.id for m in msgs])
    if found:
        for m in msgs:
            m.event = found.get(m.id)


def thread(conn: sqlite3.Connection, correlation_id: str) -> list[Message]:
    rows = conn.execute(
        f"SELECT {_MSG_COLS} FROM messages m JOIN channels c ON c.id = m.channel_id"
        " WHERE m.correlation_id = ? ORDER BY m.id",
        (correlation_id,),
    ).fetchall()
    msgs = [_message(r) for r in rows]
    attach_deliveries(conn, msgs)
    attach_events(conn, msgs)
    return msgs


def unread_response(
    conn: sqlite3.Connection,
    correlation_id: str,
    agent: str,
    meta: tuple[MetaCondition, ...] = (),
) -> Message | None:
    """The first unread response to `agent`, among those whose metadata meets `meta`."""
    terms, values = metafilter.where(meta)
    extra = "".join(f" AND {t}" for t in terms)
    row = conn.execute(
        f"SELECT {_MSG_COLS} FROM messages m JOIN channels c ON c.id = m.channel_id"
        " JOIN deliveries d ON d.message_id = m.id WHERE m.correlation_id = ?"
        f" AND m.type = 'response' AND d.recipient = ? AND d.state = 'unread'{extra}"
        " ORDER BY m.id LIMIT 1",
        (correlation_id, agent, *values),
    ).fetchone()
    return _message(row) if row else None
