"""The work behind each MCP tool and resource, without the SDK: what the matching command does
(the same engine function, one transaction per call), as the command's `--json` document.

The agent is fixed when the server starts (`acomm mcp --as AGENT`): no method takes an
identity, and server.py refuses any argument that names one. Every failure is a CommError,
which server.py turns into a tool error carrying its code and message; the engine checks the
input before it writes, so a refused call leaves the store as it was."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acomm_cli import clock, model
from acomm_cli.errors import CommError, ValidationFailed
from acomm_cli.lite.records import asdict  # the engine's results are lite records
from acomm_cli.model import Message, MessageFilter, QueryResult, SendRequest

MAX_WAIT_S = 60.0  # a tool call holds the client's turn: longer waits are refused
MAX_LIMIT = 1000
MAX_ATTACHMENTS = 100  # files on one message through a tool call

Doc = dict[str, Any]


@dataclass(frozen=True)
class Encoders:
    """The command line's JSON documents (output/render_*.py), passed in by the command: shaping
    output is not this layer's business (as federation's agentapi and dispatch's `encode`)."""

    message: Callable[[Message], Doc]
    send: Callable[[Any], Doc]
    channel: Callable[[Any], Doc]
    dead_letter: Callable[[Any], Doc]
    stats: Callable[[Any], Doc]
    ack: Callable[[Doc], Doc]
    nack: Callable[[Doc], Doc]
    agent: Callable[[Any], Doc] | None = None  # `agent show`'s document
    agents: Callable[[Any], Doc] | None = None  # `agent list`'s document
    task: Callable[[Any], Doc] | None = None  # `task show`'s document
    trace: Callable[[Any], Doc] | None = None  # `trace`'s document
    cursor: Callable[[Any], Doc] | None = None  # `cursor show`'s document
    schedule: Callable[[Any], Doc] | None = None  # `schedule show`'s document


@dataclass(frozen=True)
class StoreOptions:
    """How each call opens the store: the resolved settings of the command line."""

    path: Path
    busy_timeout_ms: int = 5000
    flush: str = "batch"
    batch_messages: int = 100
    batch_interval_ms: int = 1000
    limits: model.Limits | None = None
    directory: str | None = None  # identity.directory (None: the store's own default)
    # run on each call's connection before any work: the agent's credential check
    check: Callable[[sqlite3.Connection], None] | None = None
    # run after a call that appended to the federation outbox committed: a NATS node
    # publishes it at once, as a command does
    after_outbox: Callable[[sqlite3.Connection], None] | None = None


def _bounded_wait(wait_seconds: float | None) -> float | None:
    if wait_seconds is None:
        return None
    if not 0 <= wait_seconds <= MAX_WAIT_S:  # also NaN
        raise ValidationFailed(
            f"wait_seconds: {wait_seconds:g} is not between 0 and {MAX_WAIT_S:g}",
            field="wait_seconds",
            value=wait_seconds,
        )
    return wait_seconds


def _limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise ValidationFailed(
            f"limit: {limit} is not between 1 and {MAX_LIMIT}", field="limit", value=limit
        )
    return limit


def _duration(value: str | None, field: str) -> int | None:
    return clock.parse_duration(value, field) if value is not None else None


class Toolbox:
    """The tools of one agent over one store. Each call opens its own connection (the SDK
    runs calls in worker threads), and `stop` ends any wait when the server shuts down."""

    def __init__(self, options: StoreOptions, agent: str, encoders: Encoders) -> None:
        model.agent_id(agent)
        self.options, self.agent, self.enc = options, agent, encoders
        self.stop = threading.Event()

    @contextmanager
    def _store(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        from acomm_cli.engine import opening

        o = self.options
        conn = opening.connect(
            o.path,
            create=False,
            busy_timeout_ms=o.busy_timeout_ms,
            flush=o.flush,
            now=clock.now_ms(),
            directory=o.directory,
        )
        try:
            if o.check is not None:
                o.check(conn)
            yield conn
            if o.after_outbox is not None and getattr(conn, "outbox_appended", False):
                o.after_outbox(conn)
            if write and o.flush == "batch":  # as every writing command does after itself
                opening.batch_checkpoint(
                    conn, o.batch_messages, o.batch_interval_ms, clock.now_ms()
                )
        finally:
            conn.close()

    def _messages(self, result: QueryResult) -> Doc:
        doc: Doc = {
            "messages": [self.enc.message(m) for m in result.messages],
            "total_count": result.total_count,
            "has_more": result.has_more,
        }
        # a search counts its matches only so far: the total is then at least this many
        if result.total_is_lower_bound is not None:
            doc["total_is_lower_bound"] = result.total_is_lower_bound
        return doc

    def check_store(self) -> None:
        """Fail at start, not on the first call, when the store is missing or unreadable."""
        with self._store(write=False):
            pass

    # ------------------------------------------------------------ sending

    def send(
        self,
        *,
        body: str,
        channel: str | None = None,
        to: str | None = None,
        type: str = "text",
        priority: str = "normal",
        topic: str | None = None,
        correlation_id: str | None = None,
        dedupe_key: str | None = None,
        metadata: dict[str, str] | None = None,
        delay: str | None = None,
        ttl: str | None = None,
        event: dict[str, Any] | None = None,
        trace_id: str | None = None,
        format: str | None = None,
        subject: str | None = None,
        attachments: Sequence[Mapping[str, Any]] | None = None,
        require_recipient: bool = False,
        group_key: str | None = None,
    ) -> tuple[Doc, bool]:
        """`acomm send CHANNEL` or `send --to A,B`: (document, whether any recipient failed).
        The files are decoded and checked (as `send --attach` checks its files) before the
        store is opened."""
        from acomm_cli.engine import sending

        if (channel is None) == (to is None):
            raise ValidationFailed("channel: give exactly one of channel and to", field="channel")
        rich = self._rich(format, subject, attachments)
        now = clock.now_ms()
        req = SendRequest(
            sender=self.agent,
            content=body,
            channel=channel,
            type=type,
            priority=priority,
            topic=topic,
            correlation_id=correlation_id,
            dedupe_key=dedupe_key,
            metadata=metadata,
            delay_ms=_duration(delay, "delay"),
            ttl_ms=_duration(ttl, "ttl"),
            event=event,
            trace_id=trace_id,
            rich=rich,
            require_recipient=require_recipient,
            group_key=group_key,
        )
        with self._store(write=True) as conn:
            if to is None:
                return self.enc.send(sending.send(conn, req, now, self.options.limits)), False
            results = sending.send_direct(
                conn, req, [a.strip() for a in to.split(",")], now, self.options.limits
            )
        if len(results) == 1 and isinstance(results[0], CommError):
            raise results[0]
        docs = [
            {"error": r.to_dict()} if isinstance(r, CommError) else self.enc.send(r)
            for r in results
        ]
        return {"results": docs}, any(isinstance(r, CommError) for r in results)

    def publish(self, *, channel: str, topic: str, body: str, **options: Any) -> Doc:
        doc, _ = self.send(channel=channel, topic=topic, body=body, **options)
        return doc

    def query(
        self,
        *,
        body: str,
        channel: str | None = None,
        to: str | None = None,
        timeout: str | None = None,
        wait_seconds: float | None = None,
        priority: str = "normal",
        topic: str | None = None,
        trace_id: str | None = None,
    ) -> Doc:
        """`acomm query`, on a channel or to one agent (`to`), as the answer's state:
        `pending` without a wait; with one, `answered` (the first answer, marked read) or
        `timed_out` (a later answer arrives in receive; `thread` shows it)."""
        from acomm_cli.engine import queries

        if (channel is None) == (to is None):
            raise ValidationFailed("channel: give exactly one of channel and to", field="channel")
        wait = _bounded_wait(wait_seconds)
        req = SendRequest(
            sender=self.agent,
            content=body,
            channel=channel,
            priority=priority,
            topic=topic,
            trace_id=trace_id,
        )
        with self._store(write=True) as conn:
            sent = queries.query(
                conn,
                req,
                clock.now_ms(),
                _duration(timeout, "timeout"),
                self.options.limits,
                wait,
                to=to,
            )
            asked = sent.correlation_id
            assert asked is not None  # send gives every query a correlation id
            answer = (
                None
                if wait is None
                else queries.await_response(conn, asked, self.agent, wait, self.stop.is_set)
            )
        state = "pending" if wait is None else "answered" if answer is not None else "timed_out"
        return {
            "state": state,
            "correlation_id": asked,
            "sent": self.enc.send(sent),
            "answer": None if answer is None else self.enc.message(answer),
        }

    def respond(self, *, correlation_id: str, body: str, priority: str = "normal") -> Doc:
        from acomm_cli.engine import queries

        with self._store(write=True) as conn:
            return self.enc.send(
                queries.respond(conn, correlation_id, body, self.agent, clock.now_ms(), priority)
            )

    # ------------------------------------------------------------ the inbox

    def receive(
        self,
        *,
        peek: bool = False,
        wait_seconds: float | None = None,
        ack: str | None = None,
        limit: int = 100,
        **filters: Any,
    ) -> Doc:
        """`acomm receive --json`: marks what it returns read (unless `peek`). A wait that
        ends with nothing returns an empty list: not an error (an empty inbox is an answer)."""
        from acomm_cli.engine import acking, timers, waiting

        wait = _bounded_wait(wait_seconds)
        if ack is not None and peek:
            raise ValidationFailed(
                "ack: ack acknowledges what it reads; it cannot go with peek",
                field="ack",
                value=ack,
            )
        f = self._filter(limit=_limit(limit), **filters)
        with self._store(write=True) as conn:
            if ack is not None:
                result = acking.receive_ack(conn, self.agent, f, ack, clock.now_ms(), wait_s=wait)
            elif wait:
                result = waiting.receive_wait(
                    conn,
                    self.agent,
                    f,
                    wait,
                    peek=peek,
                    stop=self.stop.is_set,
                    limits=self.options.limits,
                )
            else:
                result = timers.receive_due(
                    conn, self.agent, f, clock.now_ms(), peek=peek, limits=self.options.limits
                )
        return self._messages(result)

    def ack(
        self, *, message_id: int | list[int], status: str = "completed", note: str | None = None
    ) -> Doc:
        """One id: one document; several: `{acks: [...]}` in their order, all or none (as
        `ack`; a tool's structured result is an object)."""
        from acomm_cli.engine import acking

        now = clock.now_ms()
        with self._store(write=True) as conn:
            if isinstance(message_id, int):
                return self.enc.ack(
                    asdict(acking.ack(conn, message_id, self.agent, status, note, now))
                )
            if not message_id:
                raise ValidationFailed("message_id: give at least one id", field="message_id")
            results = acking.ack_many(conn, message_id, self.agent, status, note, now)
        return {"acks": [self.enc.ack(asdict(r)) for r in results]}

    def nack(
        self,
        *,
        message_id: int,
        requeue: bool = False,
        delay: str | None = None,
        reason: str | None = None,
    ) -> Doc:
        from acomm_cli.engine import leases

        with self._store(write=True) as conn:
            result = leases.nack(
                conn,
                message_id,
                self.agent,
                requeue=requeue,
                delay_ms=_duration(delay, "delay"),
                reason=reason,
                now=clock.now_ms(),
            )
        return self.enc.nack(asdict(result))

    # ------------------------------------------------------------ reading (changes nothing)

    def thread(self, *, correlation_id: str) -> Doc:
        from acomm_cli.engine import queries

        with self._store(write=False) as conn:
            msgs = queries.thread(conn, correlation_id)
        return {"correlation_id": correlation_id, "messages": [self.enc.message(m) for m in msgs]}

    def messages(
        self,
        *,
        limit: int = 100,
        offset: int = 0,
        sort: str | None = None,
        order: str | None = None,
        **filters: Any,
    ) -> Doc:
        from acomm_cli.engine import inbox

        f = self._filter(limit=_limit(limit), offset=offset, sort=sort, order=order, **filters)
        with self._store(write=False) as conn:
            return self._messages(inbox.history(conn, f))

    def search(
        self,
        *,
        query: str,
        limit: int = 20,
        offset: int = 0,
        sort: str | None = None,
        order: str | None = None,
        **filters: Any,
    ) -> Doc:
        """`messages --search`: best match first, each with its rank and snippet."""
        from acomm_cli.engine import search
        from acomm_cli.lite.records import replace

        f = self._filter(limit=_limit(limit), offset=offset, sort=sort, order=order, **filters)
        f = replace(f, search=search.expression(query))
        with self._store(write=False) as conn:
            return self._messages(search.history(conn, f))

    def show(self, *, message_id: int) -> Doc:
        from acomm_cli.engine import inbox

        with self._store(write=False) as conn:
            return self.enc.message(inbox.show(conn, message_id))

    def channels(self) -> Doc:
        from acomm_cli.engine import channels

        with self._store(write=False) as conn:
            return {"channels": [self.enc.channel(c) for c in channels.list_channels(conn)]}

    def stats(self, *, mine: bool = False) -> Doc:
        from acomm_cli.engine import operations

        with self._store(write=False) as conn:
            return self.enc.stats(
                operations.stats(conn, clock.now_ms(), agent=self.agent if mine else None)
            )

    # ------------------------------------------------------------ the directory

    def whois(self, *, name: str) -> Doc:
        from acomm_cli.engine import directory

        assert self.enc.agent is not None
        with self._store(write=False) as conn:
            return self.enc.agent(directory.describe(conn, name))

    def list_agents(
        self, *, kind: str | None = None, active: str | None = None, include_retired: bool = False
    ) -> Doc:
        from acomm_cli.engine import directory

        assert self.enc.agents is not None
        active_ms = _duration(active, "active")
        with self._store(write=False) as conn:
            items = directory.listing(
                conn,
                clock.now_ms(),
                kind=kind,
                active_ms=active_ms,
                include_retired=include_retired,
            )
        return self.enc.agents(items)

    # ------------------------------------------------------------ channels

    def channel_create(
        self,
        *,
        name: str,
        type: str = "group",
        delivery: str | None = None,
        ack_timeout: str | None = None,
        max_retries: int | None = None,
        message_ttl: str | None = None,
        echo: bool | None = None,
        ack_clock: str | None = None,
        ack_notify: str | None = None,
        if_not_exists: bool = False,
    ) -> Doc:
        """`acomm channel create NAME`: owned by this agent."""
        from acomm_cli.engine import channels

        cfg = channels.channel_config(
            delivery=delivery,
            ack_timeout_ms=_duration(ack_timeout, "ack_timeout"),
            max_retries=max_retries,
            message_ttl_ms=_duration(message_ttl, "message_ttl"),
            echo=echo,
            ack_clock=ack_clock,
            ack_notify=ack_notify,
        )
        with self._store(write=True) as conn:
            ch = channels.create_channel(
                conn, name, type, self.agent, cfg, clock.now_ms(), if_not_exists=if_not_exists
            )
        return self.enc.channel(ch)

    def channel_join(self, *, channel: str, member: str | None = None, role: str = "member") -> Doc:
        """`acomm channel join CHANNEL MEMBER --as AGENT`: this agent adds `member` (itself
        by default), which takes the channel's owner or an admin."""
        from acomm_cli.engine import channels

        with self._store(write=True) as conn:
            r = channels.join_channel(
                conn, channel, member or self.agent, role, clock.now_ms(), by=self.agent
            )
        return {**self.enc.channel(r.channel), "changed": r.changed}

    # ------------------------------------------------------------ tasks

    def _task(self, task: Any) -> Doc:
        assert self.enc.task is not None
        return self.enc.task(task)

    def task_create(
        self,
        *,
        body: str,
        to: str | None = None,
        capability: str | None = None,
        eta_required: bool = False,
    ) -> Doc:
        from acomm_cli.engine import tasks

        with self._store(write=True) as conn:
            task = tasks.create(
                conn,
                self.agent,
                to,
                body,
                clock.now_ms(),
                capability=capability,
                eta_required=eta_required,
                limits=self.options.limits,
            )
        return self._task(task)

    def task_accept(
        self, *, task_id: int | str, eta: str | None = None, plan: str | None = None
    ) -> Doc:
        from acomm_cli.engine import tasks

        with self._store(write=True) as conn:
            task = tasks.accept(
                conn,
                task_id,
                self.agent,
                clock.now_ms(),
                eta=eta,
                plan=plan,
                limits=self.options.limits,
            )
        return self._task(task)

    def task_update(
        self, *, task_id: int | str, progress: int | None = None, note: str | None = None
    ) -> Doc:
        from acomm_cli.engine import tasks

        with self._store(write=True) as conn:
            task = tasks.update(
                conn,
                task_id,
                self.agent,
                clock.now_ms(),
                progress=progress,
                note=note,
                limits=self.options.limits,
            )
        return self._task(task)

    def task_complete(self, *, task_id: int | str, result: str | None = None) -> Doc:
        from acomm_cli.engine import tasks

        with self._store(write=True) as conn:
            task = tasks.complete(
                conn,
                task_id,
                self.agent,
                clock.now_ms(),
                content=result,
                limits=self.options.limits,
            )
        return self._task(task)

    def task_fail(self, *, task_id: int | str, reason: str) -> Doc:
        from acomm_cli.engine import tasks

        with self._store(write=True) as conn:
            task = tasks.fail(
                conn, task_id, self.agent, clock.now_ms(), reason=reason, limits=self.options.limits
            )
        return self._task(task)

    def task_show(self, *, task_id: int | str) -> Doc:
        from acomm_cli.engine import tasks

        with self._store(write=False) as conn:
            task = tasks.show(conn, task_id, clock.now_ms())
        return self._task(task)

    def task_list(
        self, *, mine: bool = False, state: str | None = None, limit: int = 100, offset: int = 0
    ) -> Doc:
        from acomm_cli.engine import tasks

        limit = _limit(limit)
        if offset < 0:
            raise ValidationFailed(
                f"offset: {offset} must not be negative", field="offset", value=offset
            )
        with self._store(write=False) as conn:
            found, total = tasks.list_tasks(
                conn,
                clock.now_ms(),
                agent=self.agent if mine else None,
                state=state,
                limit=limit,
                offset=offset,
            )
        return {
            "tasks": [self._task(t) for t in found],
            "total_count": total,
            "has_more": total > offset + len(found),
        }

    # ------------------------------------------------------------ capabilities, traces

    def capability_list(self, *, state: str | None = None) -> Doc:
        from acomm_cli.engine import capabilities

        with self._store(write=False) as conn:
            return {"capabilities": capabilities.list_caps(conn, state=state)}

    def capability_show(self, *, capability_id: str) -> Doc:
        from acomm_cli.engine import capabilities

        with self._store(write=False) as conn:
            return capabilities.show(conn, capability_id)

    def trace(self, *, trace_id: str) -> Doc:
        from acomm_cli.engine import traces

        assert self.enc.trace is not None
        with self._store(write=False) as conn:
            return self.enc.trace(traces.tree(conn, trace_id))

    # ------------------------------------------------------------ subscriptions

    def subscribe(self, *, channel: str, pattern: str, group: str | None = None) -> Doc:
        """`acomm subscribe CHANNEL PATTERN [--group NAME]`."""
        from acomm_cli.engine import channels

        with self._store(write=True) as conn:
            created = channels.subscribe(conn, channel, pattern, self.agent, clock.now_ms(), group)
        return {
            "channel": channel,
            "agent": self.agent,
            "pattern": pattern,
            **({} if group is None else {"group": group}),
            "created": created,
            "changed": created,
        }

    def unsubscribe(self, *, channel: str, pattern: str) -> Doc:
        from acomm_cli.engine import channels

        with self._store(write=True) as conn:
            removed = channels.unsubscribe(conn, channel, pattern, self.agent, clock.now_ms())
        return {
            "channel": channel,
            "agent": self.agent,
            "pattern": pattern,
            "removed": removed,
            "changed": removed,
        }

    # ------------------------------------------------------------ dead letters

    def deadletters(
        self,
        *,
        channel: str | None = None,
        recipient: str | None = None,
        reason: str | None = None,
        message_id: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> Doc:
        from acomm_cli.engine import deadletters

        with self._store(write=False) as conn:
            items, total = deadletters.list_dead_letters(
                conn,
                message_id=message_id,
                channel=channel,
                recipient=recipient,
                reason=reason,
                limit=_limit(limit),
                offset=offset,
            )
        return {"dead_letters": [self.enc.dead_letter(d) for d in items], "total_count": total}

    def replay(self, *, message_id: int, recipient: str | None = None) -> Doc:
        """`acomm deadletter replay MSG`: the same id again, with a fresh retry budget."""
        from acomm_cli.engine import deadletters

        with self._store(write=True) as conn:
            items = deadletters.replay(conn, message_id, recipient, clock.now_ms())
        return {"dead_letters": [self.enc.dead_letter(d) for d in items], "total_count": len(items)}

    # ------------------------------------------------------------ cursors, schedules

    def _cursor(self, c: Any) -> Doc:
        assert self.enc.cursor is not None
        return self.enc.cursor(c)

    def _schedule(self, s: Any) -> Doc:
        assert self.enc.schedule is not None
        return self.enc.schedule(s)

    def cursor_create(
        self,
        *,
        name: str,
        channel: str,
        from_start: bool = False,
        from_now: bool = False,
        from_id: int | None = None,
        from_time: str | None = None,
        meta: list[str] | None = None,
        type: Sequence[str] | None = None,
        from_agent: str | None = None,
        topic: str | None = None,
        event_type: str | None = None,
    ) -> Doc:
        """`acomm cursor create NAME --channel CH`, created by this agent."""
        from acomm_cli.engine import cursors

        spec = cursors.filter_spec(
            meta=meta, types=list(type or ()), sender=from_agent, topic=topic, event_type=event_type
        )
        now = clock.now_ms()
        at = clock.parse_time(from_time, "from_time", now) if from_time is not None else None
        start = cursors.start_of(
            from_start=from_start, from_now=from_now, from_id=from_id, from_time=at, default="now"
        )
        with self._store(write=True) as conn:
            c = cursors.create(conn, name, channel, start, now, by=self.agent, spec=spec)
        return self._cursor(c)

    def cursor_read(self, *, name: str, limit: int = 100, peek: bool = False) -> Doc:
        """`acomm receive --cursor NAME --json`: the next messages past the cursor, which
        moves past them in the same transaction (unless `peek`); nobody's read state moves."""
        from acomm_cli.engine import cursors

        limit = _limit(limit)
        with self._store(write=True) as conn:
            r = cursors.read(conn, name, limit, clock.now_ms(), peek=peek)
        return {
            **self._messages(r.result),
            "cursor": self._cursor(r.cursor),
            "moved_from": r.moved_from,
        }

    def cursor_list(self) -> Doc:
        from acomm_cli.engine import cursors

        with self._store(write=False) as conn:
            return {"cursors": [self._cursor(c) for c in cursors.listing(conn)]}

    def schedule_create(
        self,
        *,
        channel: str,
        body: str,
        every: str | None = None,
        cron: str | None = None,
        start: str | None = None,
        until: str | None = None,
        max_runs: int | None = None,
        catch_up: str = "all",
        topic: str | None = None,
        priority: str | None = None,
        metadata: dict[str, str] | None = None,
    ) -> Doc:
        """`acomm schedule create CHANNEL BODY`: its occurrences are sent as this agent."""
        from acomm_cli.engine import schedules

        now = clock.now_ms()
        with self._store(write=True) as conn:
            s = schedules.create(
                conn,
                channel,
                body,
                now,
                sender=self.agent,
                every_ms=_duration(every, "every"),
                cron=cron,
                start_at=clock.parse_time(start, "start", now) if start is not None else None,
                until_at=clock.parse_time(until, "until", now) if until is not None else None,
                max_runs=max_runs,
                catch_up=catch_up,
                topic=topic,
                priority=priority,
                metadata=metadata,
            )
        return self._schedule(s)

    def schedule_list(self, *, channel: str | None = None) -> Doc:
        from acomm_cli.engine import schedules

        with self._store(write=False) as conn:
            return {"schedules": [self._schedule(s) for s in schedules.listing(conn, channel)]}

    def schedule_delete(self, *, schedule_id: int) -> Doc:
        """`acomm schedule delete ID`: this agent's own schedules only."""
        from acomm_cli.engine import schedules

        with self._store(write=True) as conn:
            s = schedules.delete(conn, schedule_id, by=self.agent)
        return {**self._schedule(s), "deleted": True}

    # ------------------------------------------------------------ resources

    def inbox(self) -> Doc:
        """acomm://inbox: the agent's unread messages as `receive --peek` shows them."""
        return self.receive(peek=True)

    def channel_history(self, name: str) -> Doc:
        """acomm://channel/{name}: the newest 100 messages on it (`messages --channel`)."""
        from acomm_cli.engine import channels

        with self._store(write=False) as conn:
            channels.get_channel(conn, name)  # an unknown channel is not_found, not empty
        return self.messages(channel=name)

    # ------------------------------------------------------------ helpers

    def _rich(
        self, fmt: str | None, subject: str | None, files: Sequence[Mapping[str, Any]] | None
    ) -> model.RichParts | None:
        """format, subject and files as `send --format/--subject/--attach` takes them: each
        file's base64 is bounded by the size limits before it is decoded."""
        from acomm_cli.engine import attachments

        limits = self.options.limits or model.Limits()
        if files is not None and len(files) > MAX_ATTACHMENTS:
            raise ValidationFailed(
                f"attachments: {len(files)} files; at most {MAX_ATTACHMENTS}",
                field="attachments",
            )
        try:
            files_given = attachments.from_base64(
                [(f["name"], f["content_base64"]) for f in files or ()], limits
            )
            if fmt is None and subject is None and not files_given:
                return None
            rich = model.RichParts(format=fmt, subject=subject, attachments=files_given)
            attachments.check(rich, limits)
            return rich
        except CommError as exc:
            if exc.field == "attach":  # the command line's option; here this argument
                exc.field = "attachments"
            raise

    @staticmethod
    def _filter(
        *,
        channel: str | None = None,
        from_agent: str | None = None,
        type: list[str] | None = None,
        topic: str | None = None,
        status: list[str] | None = None,
        grep: str | None = None,
        priority_min: str | None = None,
        since: str | None = None,
        until: str | None = None,
        sort: str | None = None,
        order: str | None = None,
        limit: int = 100,
        offset: int = 0,
        event_type: str | None = None,
        thread: str | None = None,
        actor: str | None = None,
        meta: list[str] | None = None,
    ) -> MessageFilter:
        """The filters `receive` and `messages` share, read as the command line reads them
        (a malformed `meta` is refused here, before the store is opened)."""
        now = clock.now_ms()
        if offset < 0:
            raise ValidationFailed(
                f"offset: {offset} must not be negative", field="offset", value=offset
            )
        return MessageFilter(
            channel=channel,
            sender=from_agent,
            topic=topic,
            grep=grep,
            types=tuple(model.message_type(t) for t in type or ()),
            status=tuple(status or ()),
            priority_min=model.priority(priority_min) if priority_min is not None else None,
            since=clock.parse_time(since, "since", now) if since else None,
            until=clock.parse_time(until, "until", now) if until else None,
            sort=sort,
            order=order,
            limit=limit,
            offset=offset,
            event_type=model.event_type(event_type) if event_type is not None else None,
            thread_id=thread,
            actor=actor,
            meta=model.meta_conditions(meta),
        )
