"""The MCP tools: names, arguments and descriptions, each a thin async function over one
Toolbox method. The SDK builds each tool's input schema from these signatures; server.py
checks every call against it before anything runs. None of them takes an identity."""

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Annotated, Any, Literal

from mcp_types import CallToolResult
from pydantic import Field, WithJsonSchema
from typing_extensions import TypedDict  # pydantic needs this one below Python 3.12

from acomm_cli.mcpserver.tools import MAX_ATTACHMENTS, MAX_LIMIT, MAX_WAIT_S, Toolbox
from acomm_cli.model import META_FILTERS_MAX, META_KEY_MAX, META_VALUE_MAX

Run = Callable[[Callable[[], Any]], Awaitable[CallToolResult]]
Tool = Callable[..., Awaitable[CallToolResult]]

# argument types with their descriptions (the schema the model reads)
Body = Annotated[str, Field(description="The message content.")]
ChannelName = Annotated[str, Field(description="Channel name.")]
OptChannel = Annotated[str | None, Field(description="Only this channel.")]
MessageId = Annotated[int, Field(description="The message id.")]
PriorityArg = Literal["low", "normal", "high", "urgent", "critical", "0", "1", "2", "3", "4"]
MessageTypeArg = Literal[
    "text", "command", "query", "response", "acknowledgment", "notification", "broadcast", "error"
]
StatusArg = Literal["sent", "delivered", "acknowledged", "dead_letter", "in_progress"]
ReasonArg = Literal[
    "max_retries_exceeded",
    "expired",
    "recipient_left",
    "dispatch_failed",
    "no_owner",
    "owner_offline",
    "federation_max_attempts",
    "nacked",
    "channel_deleted",
    "cancelled",
    "pool_deleted",
]
KindArg = Literal["agent", "human", "service"]
AckClockArg = Literal["sent", "read"]
AckNotifyArg = Literal["all", "failures", "none"]
GroupKey = Annotated[
    str | None,
    Field(
        description="FIFO group (a work queue or a pubsub channel's worker pool): messages "
        "with the same key are handed out in send order, one at a time (send --group-key)."
    ),
]
Priority = Annotated[
    PriorityArg, Field(description="The priority (a name, or 0-4 low to critical).")
]
Topic = Annotated[str | None, Field(description="Topic (needed on pubsub channels).")]
MsgType = Annotated[MessageTypeArg, Field(description="The message type (as `send --type`).")]
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
Types = Annotated[list[MessageTypeArg] | None, Field(description="Only these message types.")]
Statuses = Annotated[list[StatusArg] | None, Field(description="Only messages in these statuses.")]
Grep = Annotated[str | None, Field(description="Only contents matching this regular expression.")]
PriorityMin = Annotated[PriorityArg | None, Field(description="Only this priority or higher.")]
Since = Annotated[str | None, Field(description="From this time: ISO 8601 or relative (-1h).")]
Until = Annotated[str | None, Field(description="Up to this time: ISO 8601 or relative.")]
TraceArg = Annotated[
    str | None,
    Field(
        description="The trace the message joins (1-64 characters of A-Z a-z 0-9 _ -, such "
        "as a W3C trace id); default: its question's or thread's trace, else a new one."
    ),
]
# the event object: its closed fields as enums, the rest checked by the engine as `send
# --event-*` options are (an unknown key is refused there, naming it)
EVENT_SCHEMA = {
    "type": "object",
    "required": ["event_type"],
    "properties": {
        "event_type": {
            "enum": [
                "comment.created",
                "comment.replied",
                "mention.created",
                "like.created",
                "thread.created",
                "agent.action.feedback",
            ]
        },
        "action_hint": {"enum": ["notify_only", "consider_reply", "must_reply"]},
        "depth": {"enum": [1, 2, 3], "description": "Comment events only."},
        "event_id": {"description": "A repeat on the channel is not sent again."},
        "occurred_at": {"description": "ISO 8601."},
        "actor": {},
        "target": {},
        "thread_id": {},
        "comment_id": {},
        "parent_comment_id": {},
        "language": {},
    },
}
EventArg = Annotated[
    Annotated[dict[str, Any], WithJsonSchema(EVENT_SCHEMA)] | None,
    Field(description="The notification event the message carries (as `send --event-type`)."),
]

# closed sets as enums in the input schema: the argument check refuses anything else, naming
# the argument (the values are the model's: tests/test_mcp_tools.py checks they agree)
AckStatusArg = Literal["received", "in_progress", "completed", "failed"]
EventTypeArg = Literal[
    "comment.created",
    "comment.replied",
    "mention.created",
    "like.created",
    "thread.created",
    "agent.action.feedback",
]
TaskStateArg = Literal[
    "created", "accepted", "updated", "completed", "failed", "overdue", "incident"
]
ChannelTypeArg = Literal["direct", "group", "broadcast", "pubsub", "queue"]
DeliveryArg = Literal["at-most-once", "at-least-once", "exactly-once"]
RoleArg = Literal["member", "observer"]
FormatArg = Literal["text", "markdown"]


class AttachmentArg(TypedDict):
    name: Annotated[str, Field(description="The file's name on the message (no /).")]
    content_base64: Annotated[str, Field(description="The file's bytes, base64 (RFC 4648).")]


Format = Annotated[FormatArg | None, Field(description="How the body is written.")]
Subject = Annotated[
    str | None, Field(description="A subject line (one line, at most 256 characters).")
]
Attachments = Annotated[
    list[AttachmentArg] | None,
    Field(
        description="Files the message carries, as `send --attach`: the same size limits "
        "(limits.max_attachment_bytes a file, limits.max_message_attachment_bytes all). "
        "Not to an agent on another node.",
        max_length=MAX_ATTACHMENTS,
    ),
]
EventTypeFilter = Annotated[
    EventTypeArg | None, Field(description="Only messages carrying this event type.")
]
ThreadFilter = Annotated[str | None, Field(description="Only events of this thread id.")]
ActorFilter = Annotated[str | None, Field(description="Only events by this actor.")]
MetaFilterArg = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=META_KEY_MAX + META_VALUE_MAX + 2)]] | None,
    Field(
        description="Only messages whose metadata meets every one of these, as `--meta` on "
        "the command line: KEY=VALUE, KEY!=VALUE (or no KEY), KEY (present), !KEY (absent).",
        max_length=META_FILTERS_MAX,
    ),
]
CursorName = Annotated[str, Field(description="The cursor's name.")]
ScheduleId = Annotated[int, Field(description="The schedule's id.")]
TaskId = Annotated[
    int | str, Field(description="The task id (its message's id here), or its global id.")
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
        format: Format = None,
        subject: Subject = None,
        attachments: Attachments = None,
        group_key: GroupKey = None,
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
                format=format,
                subject=subject,
                attachments=attachments,
                group_key=group_key,
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
        format: Format = None,
        subject: Subject = None,
        attachments: Attachments = None,
        require_recipient: Annotated[
            bool,
            Field(
                description="Refuse (no_recipient) and store nothing when no subscription "
                "matches the topic, instead of publishing to nobody."
            ),
        ] = False,
        group_key: GroupKey = None,
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
                format=format,
                subject=subject,
                attachments=attachments,
                require_recipient=require_recipient,
                group_key=group_key,
            )
        )

    async def receive(
        peek: Annotated[bool, Field(description="Look without marking anything read.")] = False,
        wait_seconds: Wait = None,
        ack: Annotated[
            AckStatusArg | None,
            Field(
                description="Also acknowledge what is returned with this status, in the "
                "same transaction."
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
        event_type: EventTypeFilter = None,
        thread: ThreadFilter = None,
        actor: ActorFilter = None,
        meta: MetaFilterArg = None,
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
                event_type=event_type,
                thread=thread,
                actor=actor,
                meta=meta,
            )
        )

    async def ack(
        message_id: Annotated[
            int | list[int], Field(description="The message id, or several (all or none).")
        ],
        status: Annotated[AckStatusArg, Field(description="The acknowledgement.")] = "completed",
        note: Annotated[str | None, Field(description="Details for the sender.")] = None,
    ) -> CallToolResult:
        """Acknowledge a message you received: stops its retries and tells the sender
        (acomm ack). Several ids: {acks: [...]}, all or none."""
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
        body: Annotated[str, Field(description="The question.")],
        channel: Annotated[
            str | None, Field(description="The channel to ask on (or give `to`).")
        ] = None,
        to: Annotated[str | None, Field(description="Ask this one agent directly instead.")] = None,
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
        trace_id: TraceArg = None,
    ) -> CallToolResult:
        """Ask a question on a channel or one agent (acomm query). Returns {state,
        correlation_id, sent, answer}: without wait_seconds `pending` (read answers later
        with thread or receive); with it `answered` (the first answer, marked read) or
        `timed_out`."""
        return await run(
            partial(
                box.query,
                channel=channel,
                to=to,
                body=body,
                timeout=timeout,
                wait_seconds=wait_seconds,
                priority=priority,
                topic=topic,
                trace_id=trace_id,
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
        event_type: EventTypeFilter = None,
        thread: ThreadFilter = None,
        actor: ActorFilter = None,
        meta: MetaFilterArg = None,
        sort: Annotated[
            Literal["created", "priority", "id"] | None, Field(description="The order's key.")
        ] = None,
        order: Annotated[Literal["asc", "desc"] | None, Field(description="The direction.")] = None,
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
                event_type=event_type,
                thread=thread,
                actor=actor,
                meta=meta,
                sort=sort,
                order=order,
                limit=limit,
                offset=offset,
            )
        )

    async def search(
        query: Annotated[
            str,
            Field(
                description="Words, all required, each matched as written (word* matches a"
                " prefix); or 'fts:' and an FTS5 query (OR, NOT, NEAR, \"a phrase\","
                " subject:word). At most 500 characters.",
                max_length=500,
            ),
        ],
        channel: OptChannel = None,
        from_agent: FromAgent = None,
        type: Types = None,
        since: Since = None,
        until: Until = None,
        event_type: EventTypeFilter = None,
        thread: ThreadFilter = None,
        actor: ActorFilter = None,
        sort: Annotated[
            Literal["rank", "created", "priority", "id"] | None,
            Field(description="The order's key (default: rank, best match first)."),
        ] = None,
        order: Annotated[Literal["asc", "desc"] | None, Field(description="The direction.")] = None,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> CallToolResult:
        """Full-text search of the message history (content, subject, the event's thread,
        actor and target), best match first, each message with search.rank (bm25: the
        lower, the better; null when sorted otherwise) and search.snippet (the match in
        [ ]); changes nothing (acomm messages --search)."""
        return await run(
            partial(
                box.search,
                query=query,
                channel=channel,
                from_agent=from_agent,
                type=type,
                since=since,
                until=until,
                event_type=event_type,
                thread=thread,
                actor=actor,
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
        group: Annotated[
            str | None,
            Field(
                description="Serve the worker pool of this name: the pool gets one copy of "
                "each matching message, claimed by one member's receive (leases, nack and "
                "retries as on a work queue); other subscriptions and pools get their own."
            ),
        ] = None,
    ) -> CallToolResult:
        """Receive the messages on a pubsub channel whose topic matches the pattern (joins
        the channel if needed; acomm subscribe). With `group`, share them with the other
        members of that worker pool (subscribe --group)."""
        return await run(partial(box.subscribe, channel=channel, pattern=pattern, group=group))

    async def unsubscribe(
        channel: Annotated[str, Field(description="A pubsub channel.")],
        pattern: Annotated[str, Field(description="The pattern subscribed.")],
    ) -> CallToolResult:
        """Remove a subscription; repeating it changes nothing (acomm unsubscribe)."""
        return await run(partial(box.unsubscribe, channel=channel, pattern=pattern))

    async def deadletters(
        channel: OptChannel = None,
        recipient: Annotated[str | None, Field(description="Only this recipient's.")] = None,
        reason: Annotated[ReasonArg | None, Field(description="Only this reason.")] = None,
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
        kind: Annotated[KindArg | None, Field(description="Only this kind.")] = None,
        active: Annotated[
            str | None, Field(description="Only those seen within this duration: 5m, 1h.")
        ] = None,
        include_retired: Annotated[bool, Field(description="Retired agents too.")] = False,
    ) -> CallToolResult:
        """The registered agents, by name (acomm agent list)."""
        return await run(
            partial(box.list_agents, kind=kind, active=active, include_retired=include_retired)
        )

    async def channel_create(
        name: Annotated[str, Field(description="The new channel's name.")],
        type: Annotated[ChannelTypeArg, Field(description="The channel's type.")] = "group",
        delivery: Annotated[
            DeliveryArg | None, Field(description="The delivery guarantee (default: the store's).")
        ] = None,
        ack_timeout: Annotated[
            str | None, Field(description="Redeliver unacknowledged messages after this long.")
        ] = None,
        max_retries: Annotated[
            int | None, Field(description="Redeliveries before a dead letter.", ge=0)
        ] = None,
        message_ttl: Annotated[
            str | None, Field(description="Dead-letter messages unread after this long.")
        ] = None,
        echo: Annotated[bool | None, Field(description="Senders receive their own.")] = None,
        ack_clock: Annotated[
            AckClockArg | None,
            Field(
                description="When the ack timeout starts: `sent` (at delivery, the default) "
                "or `read` (at the recipient's first read of each delivery)."
            ),
        ] = None,
        ack_notify: Annotated[
            AckNotifyArg | None,
            Field(
                description="Which acks also become a message to the sender: `all` (the "
                "default), `failures` (only `failed`) or `none`."
            ),
        ] = None,
        if_not_exists: Annotated[
            bool, Field(description="Succeed if it exists with the same type.")
        ] = False,
    ) -> CallToolResult:
        """Create a channel that you own (acomm channel create). Returns the channel."""
        return await run(
            partial(
                box.channel_create,
                name=name,
                type=type,
                delivery=delivery,
                ack_timeout=ack_timeout,
                max_retries=max_retries,
                message_ttl=message_ttl,
                echo=echo,
                ack_clock=ack_clock,
                ack_notify=ack_notify,
                if_not_exists=if_not_exists,
            )
        )

    async def channel_join(
        channel: ChannelName,
        member: Annotated[str | None, Field(description="The agent to add (default: you).")] = None,
        role: Annotated[RoleArg, Field(description="The member's role.")] = "member",
    ) -> CallToolResult:
        """Add an agent (yourself included) to a channel you own or administer (acomm
        channel join); others are forbidden. Returns the channel and `changed`."""
        return await run(partial(box.channel_join, channel=channel, member=member, role=role))

    async def task_create(
        body: Annotated[str, Field(description="What to do.")],
        to: Annotated[
            str | None,
            Field(description="The agent that owns the task (with capability: its owner)."),
        ] = None,
        capability: Annotated[
            str | None,
            Field(description="A published capability: the task goes to its owner."),
        ] = None,
        eta_required: Annotated[
            bool, Field(description="The owner must accept with an ETA.")
        ] = False,
    ) -> CallToolResult:
        """Delegate a task to an agent (acomm task create). Returns the task."""
        return await run(
            partial(
                box.task_create, body=body, to=to, capability=capability, eta_required=eta_required
            )
        )

    async def task_accept(
        task_id: TaskId,
        eta: Annotated[
            str | None,
            Field(description="When it will be done: a duration from now (10m) or ISO 8601."),
        ] = None,
        plan: Annotated[str | None, Field(description="How, in a sentence.")] = None,
    ) -> CallToolResult:
        """Take on a task you own, with an ETA (acomm task accept)."""
        return await run(partial(box.task_accept, task_id=task_id, eta=eta, plan=plan))

    async def task_update(
        task_id: TaskId,
        progress: Annotated[int | None, Field(description="Percent done.", ge=0, le=100)] = None,
        note: Annotated[str | None, Field(description="What happened.")] = None,
    ) -> CallToolResult:
        """Report progress on a task you accepted (acomm task update)."""
        return await run(partial(box.task_update, task_id=task_id, progress=progress, note=note))

    async def task_complete(
        task_id: TaskId,
        result: Annotated[
            str | None, Field(description="The result, sent to the creator as a response.")
        ] = None,
    ) -> CallToolResult:
        """Finish a task you own (acomm task complete)."""
        return await run(partial(box.task_complete, task_id=task_id, result=result))

    async def task_fail(
        task_id: TaskId,
        reason: Annotated[str, Field(description="Why, for the creator.")],
    ) -> CallToolResult:
        """Give up or decline a task you own (acomm task fail)."""
        return await run(partial(box.task_fail, task_id=task_id, reason=reason))

    async def task_show(task_id: TaskId) -> CallToolResult:
        """One task and its history (acomm task show)."""
        return await run(partial(box.task_show, task_id=task_id))

    async def task_list(
        mine: Annotated[bool, Field(description="Only tasks you created or own.")] = False,
        state: Annotated[TaskStateArg | None, Field(description="Only this state.")] = None,
        limit: Limit = 100,
        offset: Offset = 0,
    ) -> CallToolResult:
        """Tasks, newest first (acomm task list). Returns {tasks, total_count, has_more}."""
        return await run(partial(box.task_list, mine=mine, state=state, limit=limit, offset=offset))

    async def capability_list(
        state: Annotated[
            Literal["published", "unpublished"] | None, Field(description="Only this state.")
        ] = None,
    ) -> CallToolResult:
        """The capability catalog: this store's, then (on a node) the room's (acomm
        capability list)."""
        return await run(partial(box.capability_list, state=state))

    async def capability_show(
        capability_id: Annotated[str, Field(description="The capability's id.")],
    ) -> CallToolResult:
        """One capability: its contract (a JSON Schema), owner, skills and installs (acomm
        capability show)."""
        return await run(partial(box.capability_show, capability_id=capability_id))

    async def trace(
        trace_id: Annotated[str, Field(description="The trace id (a message's trace_id).")],
    ) -> CallToolResult:
        """A trace's hops in causal order, each with its parent and latency (acomm
        trace)."""
        return await run(partial(box.trace, trace_id=trace_id))

    async def cursor_create(
        name: CursorName,
        channel: ChannelName,
        from_start: Annotated[
            bool, Field(description="Start before the channel's first message.")
        ] = False,
        from_now: Annotated[
            bool, Field(description="Start after the channel's newest message (the default).")
        ] = False,
        from_id: Annotated[
            int | None, Field(description="Message N is the next one read.", ge=1)
        ] = None,
        from_time: Annotated[
            str | None,
            Field(
                description="The first message created at or after this time is the next "
                "one read (ISO 8601 or relative, -1h)."
            ),
        ] = None,
        meta: MetaFilterArg = None,
        type: Types = None,
        from_agent: FromAgent = None,
        topic: Annotated[
            str | None, Field(description="Only topics matching this pattern.")
        ] = None,
        event_type: EventTypeFilter = None,
    ) -> CallToolResult:
        """Create a durable replay cursor on a channel's history, reading only what its
        filter matches (acomm cursor create). Give at most one from_* start. Returns the
        cursor."""
        return await run(
            partial(
                box.cursor_create,
                name=name,
                channel=channel,
                from_start=from_start,
                from_now=from_now,
                from_id=from_id,
                from_time=from_time,
                meta=meta,
                type=type,
                from_agent=from_agent,
                topic=topic,
                event_type=event_type,
            )
        )

    async def cursor_read(
        name: CursorName,
        limit: Limit = 100,
        peek: Annotated[bool, Field(description="Look without moving the cursor.")] = False,
    ) -> CallToolResult:
        """The next messages past a cursor, oldest first; the cursor moves past them in the
        same transaction, and nobody's messages are marked read (acomm receive --cursor).
        Returns {messages, total_count, has_more, cursor, moved_from}."""
        return await run(partial(box.cursor_read, name=name, limit=limit, peek=peek))

    async def cursor_list() -> CallToolResult:
        """Every cursor, with its position and how many messages lie past it (acomm cursor
        list)."""
        return await run(box.cursor_list)

    async def schedule_create(
        channel: Annotated[str, Field(description="Where each occurrence is sent.")],
        body: Annotated[str, Field(description="The message each occurrence sends.")],
        every: Annotated[
            str | None, Field(description="Send every DURATION: 15m, 1h (or give cron).")
        ] = None,
        cron: Annotated[
            str | None, Field(description="Send when this cron expression matches (UTC).")
        ] = None,
        start: Annotated[
            str | None,
            Field(
                description="The first occurrence (default: one `every` from now, or the "
                "cron's next)."
            ),
        ] = None,
        until: Annotated[str | None, Field(description="No occurrence after this time.")] = None,
        max_runs: Annotated[
            int | None, Field(description="Stop after N occurrences.", ge=1)
        ] = None,
        catch_up: Annotated[
            Literal["all", "last"],
            Field(description="After a late tick: every missed occurrence once, or the latest."),
        ] = "all",
        topic: Topic = None,
        priority: Annotated[
            PriorityArg | None, Field(description="The messages' priority.")
        ] = None,
        metadata: Metadata = None,
    ) -> CallToolResult:
        """Create a recurring send, as you (acomm schedule create): every DURATION or on a
        cron expression, each occurrence a normal message sent by tick or a reader. Returns
        the schedule."""
        return await run(
            partial(
                box.schedule_create,
                channel=channel,
                body=body,
                every=every,
                cron=cron,
                start=start,
                until=until,
                max_runs=max_runs,
                catch_up=catch_up,
                topic=topic,
                priority=priority,
                metadata=metadata,
            )
        )

    async def schedule_list(channel: OptChannel = None) -> CallToolResult:
        """Every schedule, with its next occurrence and how many it has sent (acomm
        schedule list)."""
        return await run(partial(box.schedule_list, channel=channel))

    async def schedule_delete(schedule_id: ScheduleId) -> CallToolResult:
        """Delete one of your schedules; the messages it sent stay (acomm schedule
        delete)."""
        return await run(partial(box.schedule_delete, schedule_id=schedule_id))

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
        (search, True),
        (show, True),
        (channels, True),
        (subscribe, False),
        (unsubscribe, False),
        (deadletters, True),
        (replay, False),
        (stats, True),
        (whois, True),
        (list_agents, True),
        (channel_create, False),
        (channel_join, False),
        (task_create, False),
        (task_accept, False),
        (task_update, False),
        (task_complete, False),
        (task_fail, False),
        (task_show, True),
        (task_list, True),
        (capability_list, True),
        (capability_show, True),
        (trace, True),
        (cursor_create, False),
        (cursor_read, False),
        (cursor_list, True),
        (schedule_create, False),
        (schedule_list, True),
        (schedule_delete, False),
    ]
