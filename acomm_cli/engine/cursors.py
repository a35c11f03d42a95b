"""Durable replay cursors: a named position in one channel's history, read forward by
`receive --cursor NAME` and advanced in the same transaction. A cursor never touches a
delivery, so an auditor or a late consumer streams history without taking anyone's messages
(as a Kafka consumer offset or a JetStream durable consumer does)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from acomm_cli import model
from acomm_cli.engine.channels import get_channel
from acomm_cli.engine.inbox import check_filter
from acomm_cli.errors import Duplicate, InvalidState, NotFound, UsageError, ValidationFailed
from acomm_cli.model import MessageFilter, MessageType, QueryResult
from acomm_cli.store import cursors as sql
from acomm_cli.store import reads, write

# where a new cursor starts, or a seek goes
STARTS = ("start", "now", "id", "time")
READ_MAX = 10_000  # messages one read may return


@dataclass(frozen=True)
class Start:
    """`--from-start` (before the first message), `--from-now` (after the newest),
    `--from-id N` (N is the next message read) or `--from-time T` (the first message created
    at or after T, ms)."""

    kind: str
    value: int = 0


@dataclass(frozen=True)
class Cursor:
    name: str
    channel_id: int
    channel: str
    position: int  # the last message id read through it (0: none yet)
    filter: dict[str, Any]
    lost_through: int | None  # compact removed messages up to here before it read them
    created_by: str | None
    created_at: int
    updated_at: int
    head: int = 0  # the channel's newest message id
    pending: int = 0  # the channel's messages past the position (filter aside)


@dataclass(frozen=True)
class CursorRead:
    cursor: Cursor  # as it stands after the read
    result: QueryResult
    moved_from: int


def filter_spec(
    *,
    meta: list[str] | None = None,
    types: list[str] | None = None,
    sender: str | None = None,
    topic: str | None = None,
    event_type: str | None = None,
) -> dict[str, Any]:
    """The conditions a cursor reads with, checked now and stored as given."""
    spec: dict[str, Any] = {}
    if meta:
        model.meta_conditions(meta)
        spec["meta"] = list(meta)
    if types:
        spec["types"] = [model.message_type(t).value for t in types]
    if sender is not None:
        spec["from"] = model.agent_id(sender, "from")
    if topic is not None:
        from acomm_cli.topics import validate_pattern

        validate_pattern(topic)
        spec["topic"] = topic
    if event_type is not None:
        spec["event_type"] = model.event_type(event_type)
    return spec


def _filter(c: Cursor, limit: int) -> MessageFilter:
    spec = c.filter
    f = MessageFilter(
        channel=c.channel,
        types=tuple(MessageType(t) for t in spec.get("types", ())),
        sender=spec.get("from"),
        topic=spec.get("topic"),
        event_type=spec.get("event_type"),
        meta=model.meta_conditions(spec.get("meta")),
        sort="id",
        order="asc",
        limit=limit,
        after_id=c.position,
    )
    check_filter(f)
    return f


def _cursor(row: tuple[Any, ...], conn: sqlite3.Connection | None = None) -> Cursor:
    c = Cursor(row[0], row[1], row[2], row[3], json.loads(row[4]) if row[4] else {}, *row[5:])
    if conn is None:
        return c
    return replace(
        c, head=sql.head(conn, c.channel_id), pending=sql.pending(conn, c.channel_id, c.position)
    )


def _get(conn: sqlite3.Connection, name: str) -> Cursor:
    model.cursor_name(name)
    row = sql.get(conn, name)
    if row is None:
        raise NotFound(
            f"cursor: no cursor {name!r} (`acomm cursor list`)", field="cursor", value=name
        )
    return _cursor(row, conn)


def _position(conn: sqlite3.Connection, channel_id: int, start: Start) -> int:
    if start.kind == "start":
        return 0
    if start.kind == "now":
        return sql.head(conn, channel_id)
    if start.kind == "id":
        if start.value < 1:
            raise ValidationFailed(
                f"from_id: {start.value} is not a message id (1 or more)",
                field="from_id",
                value=start.value,
            )
        return start.value - 1
    assert start.kind == "time", start
    return sql.last_before(conn, channel_id, start.value)


def create(
    conn: sqlite3.Connection,
    name: str,
    channel: str,
    start: Start,
    now: int,
    *,
    by: str | None = None,
    spec: dict[str, Any] | None = None,
) -> Cursor:
    """A new cursor on a channel's history, at `start`."""
    model.cursor_name(name)
    if by is not None:
        model.agent_id(by, "as")
    with write(conn):
        ch = get_channel(conn, channel)
        if sql.get(conn, name) is not None:
            raise Duplicate(
                f"cursor: {name!r} exists (`acomm cursor seek {name}` moves it)",
                field="cursor",
                value=name,
            )
        position = _position(conn, ch.id, start)
        text = json.dumps(spec, separators=(",", ":")) if spec else None
        sql.insert(conn, name, ch.id, position, text, by, now)
        return _get(conn, name)


def read(
    conn: sqlite3.Connection,
    name: str,
    limit: int,
    now: int,
    *,
    peek: bool = False,
    emit: Callable[[QueryResult], None] | None = None,
) -> CursorRead:
    """The next messages past the cursor, oldest first, at most `limit`; the cursor moves past
    them in the same transaction, after `emit` has handed them on (so a reader killed before
    its output left reads them again). With `peek` the cursor stays where it is. A cursor
    behind messages that compact removed before it read them refuses to read on (the oldest
    id still held, and `cursor seek` to go on)."""
    if not 1 <= limit <= READ_MAX:
        raise ValidationFailed(
            f"limit: {limit} is not 1-{READ_MAX} for a cursor read", field="limit", value=limit
        )
    with write(conn):
        c = _get(conn, name)
        if c.lost_through is not None and c.lost_through > c.position:
            oldest = sql.oldest_after(conn, c.channel_id, c.position)
            held = f"the oldest id still held is {oldest}" if oldest else "none is held"
            raise InvalidState(
                f"cursor: {name!r} is behind compacted history: messages of {c.channel} up to"
                f" id {c.lost_through} were removed before it read them; {held}"
                f" (`acomm cursor seek {name} --from-id {oldest or c.head + 1}` goes on from"
                " there)",
                field="cursor",
                value=name,
            )
        msgs, _ = reads.history(conn, _filter(c, limit))
        moved_to = c.position
        if msgs:
            moved_to = msgs[-1].id
        if len(msgs) < limit:  # nothing else up to the head matched: pass it all
            moved_to = max(moved_to, c.head)
        result = QueryResult(msgs, len(msgs))
        if emit is not None:
            emit(result)
        if not peek and moved_to != c.position:
            sql.advance(conn, name, moved_to, now)
        after = replace(
            c,
            position=moved_to if not peek else c.position,
            updated_at=now if not peek and moved_to != c.position else c.updated_at,
            pending=sql.pending(conn, c.channel_id, moved_to if not peek else c.position),
        )
    return CursorRead(after, result, c.position)


def show(conn: sqlite3.Connection, name: str) -> Cursor:
    return _get(conn, name)


def listing(conn: sqlite3.Connection) -> list[Cursor]:
    return [_cursor(row, conn) for row in sql.every(conn)]


def seek(conn: sqlite3.Connection, name: str, start: Start, now: int) -> tuple[Cursor, Cursor]:
    """Move a cursor (before, after); a seek also accepts what compaction removed."""
    with write(conn):
        before = _get(conn, name)
        sql.seek(conn, name, _position(conn, before.channel_id, start), now)
        return before, _get(conn, name)


def delete(conn: sqlite3.Connection, name: str) -> Cursor:
    with write(conn):
        c = _get(conn, name)
        sql.delete(conn, name)
        return c


def start_of(
    *, from_start: bool, from_now: bool, from_id: int | None, from_time: int | None, default: str
) -> Start:
    """The one start the options name (exit 2 when they name more than one)."""
    given = [
        s
        for s, on in (
            (Start("start"), from_start),
            (Start("now"), from_now),
            (Start("id", from_id or 0), from_id is not None),
            (Start("time", from_time or 0), from_time is not None),
        )
        if on
    ]
    if len(given) > 1:
        raise UsageError(
            "cursor: give one of --from-start, --from-now, --from-id, --from-time",
            field="from",
        )
    return given[0] if given else Start(default)
