"""Recurring schedules and withdrawing a scheduled send.

A schedule sends a normal message at each occurrence, `--every DURATION` or `--cron EXPR`
(UTC), from `tick` or from a reader of its channel. Each occurrence is sent and the schedule
moved past it in one transaction, with a dedupe key naming the schedule and the occurrence:
a process killed at any line sends no occurrence twice and skips none. After a late tick,
`catch_up = all` sends every missed occurrence once (at most CATCH_UP_MAX a pass, the rest on
the next), `last` only the latest.

`cancel` withdraws a `--delay`/`--deliver-at` message none of whose deliveries has been made:
each becomes a dead letter, reason `cancelled`, so nothing accepted disappears silently."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from acomm_cli import clock, model
from acomm_cli.engine import deadletters, sending
from acomm_cli.engine.channels import get_channel
from acomm_cli.errors import (
    CommError,
    Forbidden,
    InvalidState,
    NotFound,
    NotParticipant,
    UsageError,
    ValidationFailed,
)
from acomm_cli.model import Limits, SendRequest
from acomm_cli.store import schedules as sql
from acomm_cli.store import write

CATCH_UP_MAX = 1000  # occurrences one pass sends for one schedule
EVERY_MIN_MS = 1000
CRON_MAX_CHARS = 200
STATES = ("active", "paused", "finished")


@dataclass(frozen=True)
class Schedule:
    id: int
    channel_id: int
    channel: str
    sender: str
    content: str
    request: dict[str, Any]
    every_ms: int | None
    cron: str | None
    next_at: int | None
    until_at: int | None
    max_runs: int | None
    runs: int
    catch_up: str
    state: str
    last_run_at: int | None
    last_message_id: int | None
    last_error: str | None
    created_by: str | None
    created_at: int
    updated_at: int


@dataclass(frozen=True)
class Fired:
    """What one pass sent: per schedule id, the message ids; and the errors it recorded."""

    sent: dict[int, list[int]]
    failed: dict[int, str]

    @property
    def count(self) -> int:
        return sum(len(ids) for ids in self.sent.values())


def _schedule(row: tuple[Any, ...]) -> Schedule:
    values = list(row)
    values[5] = json.loads(values[5]) if values[5] else {}
    return Schedule(*values)


def _get(conn: sqlite3.Connection, schedule_id: int) -> Schedule:
    row = sql.get(conn, schedule_id)
    if row is None:
        raise NotFound(
            f"schedule: no schedule {schedule_id} (`acomm schedule list`)",
            field="schedule",
            value=schedule_id,
        )
    return _schedule(row)


def check_cron(expr: str) -> str:
    """A five-field cron expression (minute hour day-of-month month day-of-week, UTC)."""
    model.utf8(expr, "cron")
    if not expr.strip() or len(expr) > CRON_MAX_CHARS:
        raise ValidationFailed(
            f"cron: {expr!r} is not a cron expression (five fields, e.g. '*/15 9-17 * * MON-FRI')",
            field="cron",
            value=expr,
        )
    from cronsim import CronSim, CronSimError

    try:
        CronSim(expr, datetime.now(UTC))
    except (CronSimError, ValueError) as e:
        raise ValidationFailed(
            f"cron: {expr!r} is not a cron expression ({e}; five fields, e.g."
            " '*/15 9-17 * * MON-FRI')",
            field="cron",
            value=expr,
        ) from None
    return expr


def _cron_after(expr: str, after: int) -> int | None:
    """The first time the expression matches strictly after `after` (ms), or None."""
    from cronsim import CronSim

    start = datetime.fromtimestamp(after / 1000, UTC)
    try:
        nxt = next(CronSim(expr, start))
    except StopIteration:
        return None
    at = int(nxt.timestamp() * 1000)
    if at <= after:  # cronsim starts from the whole second after `start`
        try:
            at = int(next(CronSim(expr, nxt)).timestamp() * 1000)
        except StopIteration:
            return None
    return at


def _cron_last(expr: str, at_or_before: int) -> int | None:
    from cronsim import CronSim

    start = datetime.fromtimestamp(at_or_before / 1000 + 0.001, UTC)
    try:
        return int(next(CronSim(expr, start, reverse=True)).timestamp() * 1000)
    except StopIteration:
        return None


def _following(s: Schedule, at: int) -> int | None:
    if s.every_ms is not None:
        return at + s.every_ms
    assert s.cron is not None
    return _cron_after(s.cron, at)


def create(
    conn: sqlite3.Connection,
    channel: str,
    content: str,
    now: int,
    *,
    sender: str,
    every_ms: int | None = None,
    cron: str | None = None,
    start_at: int | None = None,
    until_at: int | None = None,
    max_runs: int | None = None,
    catch_up: str = "all",
    topic: str | None = None,
    priority: str | None = None,
    metadata: dict[str, str] | None = None,
) -> Schedule:
    """A new schedule; refused (exit 3) when its next occurrence would never come."""
    model.agent_id(sender, "as")
    model.utf8(content, "body")
    if (every_ms is None) == (cron is None):
        raise UsageError("schedule: give one of --every or --cron", field="every")
    if every_ms is not None and every_ms < EVERY_MIN_MS:
        raise ValidationFailed(
            f"every: {every_ms} ms is shorter than a second", field="every", value=every_ms
        )
    if cron is not None:
        check_cron(cron)
    if catch_up not in ("all", "last"):
        raise ValidationFailed(
            f"catch_up: {catch_up!r} is not one of all, last", field="catch_up", value=catch_up
        )
    if max_runs is not None and max_runs < 1:
        raise ValidationFailed(
            f"max_runs: {max_runs} is not 1 or more", field="max_runs", value=max_runs
        )
    if priority is not None:
        priority = model.priority(priority).name.lower()
    if start_at is not None:
        first: int | None = start_at
    elif every_ms is not None:
        first = now + every_ms
    else:
        assert cron is not None
        first = _cron_after(cron, now)
    if first is None or (until_at is not None and first > until_at):
        when = clock.iso(until_at) if until_at is not None else "ever"
        raise ValidationFailed(
            f"until: the first occurrence ({clock.iso(first) if first else 'none'}) comes"
            f" after {when}; this schedule would never send",
            field="until",
            value=clock.iso(until_at),
        )
    request = {
        k: v for k, v in (("topic", topic), ("priority", priority), ("metadata", metadata)) if v
    }
    with write(conn):
        ch = get_channel(conn, channel)
        role = ch.role_of(sender)
        if role is None and ch.type != model.ChannelType.PUBSUB:
            raise NotParticipant(
                f"as: {sender!r} is not a participant of {ch.name!r}; it could not send there",
                field="as",
                value=sender,
            )
        if role == model.Role.OBSERVER:
            raise Forbidden(
                f"as: {sender!r} observes {ch.name!r}; it could not send there",
                field="as",
                value=sender,
            )
        new_id = sql.insert(
            conn,
            {
                "channel_id": ch.id,
                "sender": sender,
                "content": content,
                "request": json.dumps(request, separators=(",", ":")) if request else None,
                "every_ms": every_ms,
                "cron": cron,
                "next_at": first,
                "until_at": until_at,
                "max_runs": max_runs,
                "catch_up": catch_up,
                "created_by": sender,
                "created_at": now,
                "updated_at": now,
            },
        )
        return _get(conn, new_id)


def listing(conn: sqlite3.Connection, channel: str | None = None) -> list[Schedule]:
    return [_schedule(r) for r in sql.every(conn, channel)]


def show(conn: sqlite3.Connection, schedule_id: int) -> Schedule:
    return _get(conn, schedule_id)


def _owned(s: Schedule, by: str, verb: str) -> None:
    if by != s.sender and by != s.created_by:
        raise Forbidden(f"as: only {s.sender!r} may {verb} schedule {s.id}", field="as", value=by)


def set_state(
    conn: sqlite3.Connection, schedule_id: int, verb: str, now: int, *, by: str
) -> tuple[Schedule, bool]:
    """`pause` or `resume` (by the schedule's sender): (the schedule, whether it changed).
    A resumed schedule goes on from the next occurrence after now; what fell due while it was
    paused is not sent."""
    with write(conn):
        s = _get(conn, schedule_id)
        _owned(s, by, verb)
        if s.state == "finished":
            raise InvalidState(
                f"schedule: {schedule_id} has finished; create another",
                field="schedule",
                value=schedule_id,
            )
        want = "paused" if verb == "pause" else "active"
        if s.state == want:
            return s, False
        values: dict[str, Any] = {"state": want, "updated_at": now}
        if want == "active" and s.next_at is not None and s.next_at <= now:
            nxt: int | None = s.next_at
            if s.every_ms is not None:
                missed = (now - s.next_at) // s.every_ms + 1
                nxt = s.next_at + missed * s.every_ms
            else:
                assert s.cron is not None
                nxt = _cron_after(s.cron, now)
            values["next_at"] = nxt
        sql.update(conn, schedule_id, **values)
        return _get(conn, schedule_id), True


def delete(conn: sqlite3.Connection, schedule_id: int, *, by: str) -> Schedule:
    """Delete a schedule (its sender only); the messages it sent stay."""
    with write(conn):
        s = _get(conn, schedule_id)
        _owned(s, by, "delete")
        sql.delete(conn, schedule_id)
        return s


def due(conn: sqlite3.Connection, now: int, agent: str | None = None) -> bool:
    return sql.any_due(conn, now, agent)


def fire(
    conn: sqlite3.Connection, now: int, limits: Limits | None = None, agent: str | None = None
) -> Fired:
    """Send every due occurrence (of the channels `agent` reads, when given), each with the
    schedule moved past it in the same transaction. A send that is refused (the sender left
    the channel, the channel paused) is recorded on the schedule as its last error and the
    occurrence passed: it never stops the other schedules."""
    sent: dict[int, list[int]] = {}
    failed: dict[int, str] = {}
    with write(conn):
        for row in sql.due(conn, now, agent):
            s = _schedule(row)
            ids, error = _fire_one(conn, s, now, limits)
            if ids:
                sent[s.id] = ids
            if error is not None:
                failed[s.id] = error
    return Fired(sent, failed)


def _occurrences(s: Schedule, now: int) -> tuple[list[int], int | None]:
    """The occurrences to send now (oldest first) and the next one after them."""
    assert s.next_at is not None
    if s.catch_up == "last":
        if s.every_ms is not None:
            last = s.next_at + (now - s.next_at) // s.every_ms * s.every_ms
        else:
            assert s.cron is not None
            last = _cron_last(s.cron, now) or s.next_at
            last = max(last, s.next_at)
        return [last], _following(s, last)
    times: list[int] = []
    at: int | None = s.next_at
    while at is not None and at <= now and len(times) < CATCH_UP_MAX:
        times.append(at)
        at = _following(s, at)
    return times, at


def _fire_one(
    conn: sqlite3.Connection, s: Schedule, now: int, limits: Limits | None
) -> tuple[list[int], str | None]:
    times, nxt = _occurrences(s, now)
    ids: list[int] = []
    error: str | None = None
    runs = s.runs
    for at in times:
        if s.until_at is not None and at > s.until_at:
            nxt = None
            break
        if s.max_runs is not None and runs >= s.max_runs:
            nxt = None
            break
        meta = dict(s.request.get("metadata") or {})
        meta.update({"schedule": str(s.id), "occurrence": clock.iso_ms(at)})
        req = SendRequest(
            sender=s.sender,
            content=s.content,
            channel=s.channel,
            topic=s.request.get("topic"),
            priority=s.request.get("priority") or "normal",
            metadata=meta,
            dedupe_key=f"schedule:{s.id}:{at}",
        )
        try:  # a savepoint of this transaction: a refused send leaves nothing behind
            result = sending.send(conn, req, now, limits)
        except CommError as e:
            error = f"{clock.iso_ms(at)}: {e.code}: {e.message}"
        else:
            ids.append(result.id)
        runs += 1
    if nxt is not None and s.until_at is not None and nxt > s.until_at:
        nxt = None
    if nxt is not None and s.max_runs is not None and runs >= s.max_runs:
        nxt = None
    values: dict[str, Any] = {
        "next_at": nxt,
        "runs": runs,
        "last_run_at": now,
        "updated_at": now,
        "state": "active" if nxt is not None else "finished",
    }
    if ids:
        values["last_message_id"] = ids[-1]
    if error is not None:
        values["last_error"] = error
    sql.update(conn, s.id, **values)
    return ids, error


# ---------------------------------------------------------------- cancel


@dataclass(frozen=True)
class Cancelled:
    message_id: int
    channel: str
    dead_lettered: int


def cancel(conn: sqlite3.Connection, message_id: int, now: int, *, by: str) -> Cancelled:
    """Withdraw a scheduled send none of whose deliveries has been made (by its sender): each
    delivery becomes a dead letter, reason `cancelled`. Once any has been delivered: exit 5."""
    from acomm_cli.store import reads

    with write(conn):
        msg = reads.message_by_id(conn, message_id)
        if msg is None:
            raise NotFound(f"message: no message {message_id}", field="message", value=message_id)
        if msg.sender != by:
            raise Forbidden(
                f"as: only {msg.sender!r}, who sent message {message_id}, may cancel it",
                field="as",
                value=by,
            )
        rows = sql.deliveries_of(conn, message_id)
        states = {state for _, state in rows}
        if msg.deliver_at is None:
            why: str | None = "it was not sent with --delay or --deliver-at"
        elif not rows or states == {model.DeliveryState.DEAD.value}:
            why = "it has no delivery left to withdraw (cancelled or dead-lettered already)"
        elif states != {model.DeliveryState.WAITING.value} or msg.deliver_at <= now:
            why = "it has been delivered"
        else:
            why = None
        if why is not None:
            raise InvalidState(
                f"message: {message_id} cannot be cancelled: {why}",
                field="message",
                value=message_id,
            )
        n = deadletters.dead_letter(
            conn,
            [(message_id, r, msg.channel_id, 0) for r, _ in rows],
            "cancelled",
            f"cancelled by {by}",
            now,
        )
        return Cancelled(message_id, msg.channel, n)
