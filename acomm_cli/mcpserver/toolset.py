"""The MCP tools: names, arguments and descriptions, each a thin async function over one
Toolbox method. The SDK builds each tool's input schema from these signatures; server.py
checks every call against it before anything runs. None of them takes an identity."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from acomm_cli.mcpserver.tools import MAX_LIMIT, MAX_WAIT_S, Toolbox

Run = Callable[[Callable[[], Any]], Awaitable[CallToolResult]]
Tool = Callable[..., Awaitable[CallToolResult]]

# argument types with their descriptions (the schema the model reads)
Body = Annotated[str, Field(description="The message content.")]
ChannelName = Annotated[str, Field(description="Channel name.")]
OptChannel = Annotated[str | None, Field(description="Only this channel.")]
MessageId = Annotated[int, Field(description="The message id.")]
Priority = Annotated[str, Field(description="low, normal, high, urgent, critical or 0-4.")]
Topic = Annotated[str | None, Field(description="Topic (needed on pubsub channels).")]
MsgType = Annotated[
    str,
    Field(
        description="Message type: text, command, notification, "
        "broadcast, error... (as `acomm send --type`)."
    ),
]
Corr = Annotated[str, Field(description="The query's correlation id.")]
Duration = Annotated[str | None, Field(description="A duration: 30s, 5m, 2h, 1d.")]
Wait = Annotated[
    float | None, Field(description=f"Wait up to this many seconds (at most {MAX_WAIT_S:g}).")
]
Limit = Annotated[int, Field(description=f"At most this many (1-{MAX_LIMIT}).")]
Offset = Annotated[int, Field(description="Skip this many first.")]
Metadata = Annotated[
    dict[str, str] | None, Field(description="String key/value pairs stored with the message.")
]
FromAgent = Annotated[str | None, Field(description="Only messages from this agent.")]
Types = Annotated[list[str] | None, Field(description="Only these message types.")]
Statuses = Annotated[list[str] | None, Field(description="Only messages in these statuses.")]
Grep = Annotated[str | None, Field(description="Only contents matching this regular expression.")]
PriorityMin = Annotated[str | None, Field(description="Only this priority or higher.")]
Since = Annotated[str | None, Field(description="From this time: ISO 8601 or relative (-1h).")]
Until = Annotated[str | None, Field(description="Up to this time: ISO 8601 or relative.")]
TraceArg = Annotated[
    str | None,
    Field(
        description="The trace the message joins (1-64 characters of A-Z a-z 0-9 _ -, such "
        "as a W3C trace id); default: its question's or thread's trace, else a new one."
    ),
]
EventArg = Annotated[
    dict[str, Any] | None,
    Field(
        description="The notification event the message carries: event_type (comment.created, "
        "comment.replied, mention.created, like.created, thread.created, "
        "agent.action.feedback) and optionally event_id (a repeat on the channel is not sent "
        "again), occurred_at, actor, target, thread_id, comment_id, parent_comment_id, depth "
        "(1-3, comment events), language, action_hint (notify_only, consider_reply, "
        "must_reply)."
    ),
]


def tools(box: Toolbox, run: Run) -> list[tuple[Tool, bool]]:
    """Each tool and whether it only reads (a hint clients show)."""

    async def send(
        body: Body,
        channel: Annotated[
            str | None, Field(description="The channel to send on (or give `to`).")
        ] = None,
        to: Annotated[
            str | None,
            Field(description="A direct message to these agents instead (comma-separated)."),
        ] = None,
        type: MsgType = "text",
        priority: Priority = "normal",
        topic: Topic = None,
        correlation_id: Annotated[
            str | None, Field(description="Correlate with an earlier message.")
        ] = None,
        dedupe_key: Annotated[
            str | None,
            Field(
                description="A second send with this key within the channel's "
                "dedupe window is not delivered again."
            ),
        ] = None,
        metadata: Metadata = None,
        delay: Annotated[
            str | None, Field(description="Deliver after this long (30s, 5m).")
        ] = None,
        ttl: Annotated[
            str | None, Field(description="Dead-letter it if unread after this long.")
        ] = None,
        event: EventArg = None,
        trace_id: TraceArg = None,
    ) -> CallToolResult:
        """Send a message on a channel, or directly to agents with `to` (acomm send).
        Returns the send document: id, channel, recipients, status, correlation_id..."""
        return await run(
            partial(
                box.send,
                body=body,
                channel=channel,
                to=to,
                type=type,
                priority=priority,
                topic=topic,
                correlation_id=correlation_id,
                dedupe_key=dedupe_key,
                metadata=metadata,
                delay=delay,
                ttl=ttl,
                event=event,
                trace_id=trace_id,
            )
        )

    async def publish(
        channel: ChannelName,
        topic: Annotated[str, Field(description="The topic, e.g. build.web.success.")],
        body: Body,
        type: MsgType = "notification",
        priority: Priority = "normal",
        metadata: Metadata = None,
        event: EventArg = None,
        trace_id: TraceArg = None,
    ) -> CallToolResult:
        """Publish on a pubsub channel: delivered to the agents whose subscription pattern
        matches the topic (acomm publish)."""
        return await run(
            partial(
                box.publish,
                channel=channel,
                topic=topic,
                body=body,
                type=type,
                priority=priority,
                metadata=metadata,
                event=event,
                trace_id=trace_id,
            )
        )

    async def receive(
        peek: Annotated[bool, Field(description="Look without marking anything read.")] = False,
        wait_seconds: Wait = None,
        ack: Annotated[
            str | None,
            Field(
                description="Also acknowledge what is returned with this status "
                "(received, in_progress, completed, failed), in the same "
                "transaction."
            ),
        ] = None,
        channel: OptChannel = None,
        from_agent: FromAgent = None,
        type: Types = None,
        topic: Annotated[
            str | None, Field(description="Only topics matching this pattern.")
        ] = None,
        status: Statuses = None,
        grep: Grep = None,
        priority_min: PriorityMin = None,
        since: Since = None,
        until: Until = None,
        limit: Limit = 100,
    ) -> CallToolResult:
        """Your unread messages, oldest first (highest priority first); marks them read
        unless `peek` (acomm receive). With wait_seconds, waits for the first to arrive;
        nothing by then returns an empty list. Returns {messages, total_count, has_more}."""
        return await run(
            partial(
                box.receive,
                peek=peek,
                wait_seconds=wait_seconds,
                ack=ack,
                limit=limit,
                channel=channel,
                from_agent=from_agent,
                type=type,
                topic=topic,
                status=status,
                grep=grep,
                priority_min=priority_min,
                since=since,
                until=until,
            )
        )

    async def ack(
        message_id: Annotated[
            int | list[int], Field(description="The message id, or several (all or none).")
        ],
        status: Annotated[
            str, Field(description="received, in_progress, completed or failed.")
        ] = "completed",
        note: Annotated[str | None, Field(description="Details for the sender.")] = None,
    ) -> CallToolResult:
        """Acknowledge a message you received: stops its retries and tells the sender
        (acomm ack)."""
        return await run(partial(box.ack, message_id=message_id, status=status, note=note))

    async def nack(
        message_id: MessageId,
        requeue: Annotated[
            bool,
            Field(
                description="Give it back to be delivered again; without it, it is "
                "dead-lettered now (reason nacked)."
            ),
        ] = False,
        delay: Annotated[
            str | None, Field(description="With requeue: deliver again after this long.")
        ] = None,
        reason: Annotated[
            str | None, Field(description="Why, for the sender and the dead letter.")
        ] = None,
    ) -> CallToolResult:
        """Give a message back: requeue it, or dead-letter it now (acomm nack)."""
        return await run(
            partial(box.nack, message_id=message_id, requeue=requeue, delay=delay, reason=reason)
        )

    async def query(
        channel: ChannelName,
        body: Annotated[str, Field(description="The question.")],
        wait_seconds: Wait = None,
        timeout: Annotated[
            str | None,
            Field(
                description="Recipients that have not read it by then get it "
                "dead-lettered (expired)."
            ),
        ] = None,
        priority: Priority = "normal",
        topic: Topic = None,
    ) -> CallToolResult:
        """Ask a question on a channel (acomm query). Without wait_seconds, returns the send
        document with its correlation_id (read answers later with thread or receive); with
        it, the first answer, or a timeout error carrying the correlation_id."""
        return await run(
            partial(
                box.query,
                channel=channel,
                body=body,
                timeout=timeout,
                wait_seconds=wait_seconds,
                priority=priority,
                topic=topic,
            )
        )

    async def respond(
        correlation_id: Corr,
        body: Annotated[str, Field(description="The answer.")],
        priority: Priority = "normal",
    ) -> CallToolResult:
        """Answer a query, to its asker; counts as your ack (acomm respond)."""
        return await run(
            partial(box.respond, correlation_id=correlation_id, body=body, priority=priority)
        )

    async def thread(
        correlation_id: Annotated[str, Field(description="The correlation id.")],
    ) -> CallToolResult:
        """A query (or command) and everything correlated with it, in order (acomm
        thread)."""
        return await run(partial(box.thread, correlation_id=correlation_id))

    async def messages(
        channel: OptChannel = None,
        from_agent: FromAgent = None,
        type: Types = None,
        topic: Annotated[
            str | None, Field(description="Only topics matching this pattern.")
        ] = None,
        status: Statuses = None,
        grep: Grep = None,
        priority_min: PriorityMin = None,
        since: Since = None,
        until: Until = None,
        sort: Annotated[str | None, Field(description="created, priority or id.")] = None,
        order: Annotated[str | None, Field(description="asc or desc.")] = None,
        limit: Limit = 100,
        offset: Offset = 0,
    ) -> CallToolResult:
        """Message history of the whole store, newest first; changes nothing (acomm
        messages)."""
        return await run(
            partial(
                box.messages,
                channel=channel,
                from_agent=from_agent,
                type=type,
                topic=topic,
                status=status,
                grep=grep,
                priority_min=priority_min,
                since=since,
                until=until,
                sort=sort,
                order=order,
                limit=limit,
                offset=offset,
            )
        )

    async def show(message_id: MessageId) -> CallToolResult:
        """One message with every recipient's delivery state (acomm show)."""
        return await run(partial(box.show, message_id=message_id))

    async def channels() -> CallToolResult:
        """Every channel: type, state, owner, configuration, participants (acomm channel
        list)."""
        return await run(box.channels)

    async def subscribe(
        channel: Annotated[str, Field(description="A pubsub channel.")],
        pattern: Annotated[
            str, Field(description="Topic pattern: * is one segment, # (last) any.")
        ],
    ) -> CallToolResult:
        """Receive the messages on a pubsub channel whose topic matches the pattern (joins
        the channel if needed; acomm subscribe)."""
        return await run(partial(box.subscribe, channel=channel, pattern=pattern))

    async def unsubscribe(
        channel: Annotated[str, Field(description="A pubsub channel.")],
        pattern: Annotated[str, Field(description="The pattern subscribed.")],
    ) -> CallToolResult:
        """Remove a subscription; repeating it changes nothing (acomm unsubscribe)."""
        return await run(partial(box.unsubscribe, channel=channel, pattern=pattern))

    async def deadletters(
        channel: OptChannel = None,
        recipient: Annotated[str | None, Field(description="Only this recipient's.")] = None,
        reason: Annotated[
            str | None,
            Field(description="Only this reason (max_retries_exceeded, expired, nacked, ...)."),
        ] = None,
        message_id: Annotated[int | None, Field(description="Only this message's.")] = None,
        limit: Limit = 100,
        offset: Offset = 0,
    ) -> CallToolResult:
        """Dead letters, oldest first (acomm deadletter list)."""
        return await run(
            partial(
                box.deadletters,
                channel=channel,
                recipient=recipient,
                reason=reason,
                message_id=message_id,
                limit=limit,
                offset=offset,
            )
        )

    async def replay(
        message_id: MessageId,
        recipient: Annotated[
            str | None, Field(description="Only this recipient's dead letter.")
        ] = None,
    ) -> CallToolResult:
        """Deliver a message's dead letters again: the same id, a fresh retry budget
        (acomm deadletter replay)."""
        return await run(partial(box.replay, message_id=message_id, recipient=recipient))

    async def stats(
        mine: Annotated[bool, Field(description="Only your own counts.")] = False,
    ) -> CallToolResult:
        """Counts per agent and channel, tasks, incidents and the store's size (acomm
        stats)."""
        return await run(partial(box.stats, mine=mine))

    async def whois(
        name: Annotated[str, Field(description="The agent's name.")],
    ) -> CallToolResult:
        """Who an agent is: kind (agent, human, service), team, contact rule, channels,
        unread count, last seen, and on a federation node its node (acomm agent show)."""
        return await run(partial(box.whois, name=name))

    async def list_agents(
        kind: Annotated[
            str | None, Field(description="Only this kind: agent, human or service.")
        ] = None,
        active: Annotated[
            str | None, Field(description="Only those seen within this duration: 5m, 1h.")
        ] = None,
        include_retired: Annotated[bool, Field(description="Retired agents too.")] = False,
    ) -> CallToolResult:
        """The registered agents, by name (acomm agent list)."""
        return await run(
            partial(box.list_agents, kind=kind, active=active, include_retired=include_retired)
        )

    return [
        (send, False),
        (publish, False),
        (receive, False),
        (ack, False),
        (nack, False),
        (query, False),
        (respond, False),
        (thread, True),
        (messages, True),
        (show, True),
        (channels, True),
        (subscribe, False),
        (unsubscribe, False),
        (deadletters, True),
        (replay, False),
        (stats, True),
        (whois, True),
        (list_agents, True),
    ]
