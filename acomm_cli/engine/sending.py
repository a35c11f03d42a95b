"""Sending: validate -> assign id and time -> route -> persist -> deliver, in one transaction
(all or nothing: a failed step writes nothing); direct messages, batches, and a direct
message to an agent another node owns (`send_remote`). SQL lives in the store."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence

from acomm_cli import clock, model
from acomm_cli.engine import directory, presence
from acomm_cli.engine.channels import channel_by_id, get_channel
from acomm_cli.errors import (
    CommError,
    Forbidden,
    InvalidState,
    NoRecipient,
    NotParticipant,
    StoreCapacity,
    StoreFull,
    ValidationFailed,
)
from acomm_cli.model import (
    ACK_ORDER,
    AckStatus,
    Channel,
    ChannelConfig,
    ChannelState,
    ChannelType,
    DeliveryMode,
    DeliveryState,
    Limits,
    MessageType,
    Role,
    SendRequest,
    SendResult,
)
from acomm_cli.store import backlog, channels, savepoint, sending, write
from acomm_cli.store.connection import StoreConnection, enter_agents, leave_agents
from acomm_cli.topics import SubscriptionIndex, validate_topic

TYPE_CHECKING = False  # typing's, without importing typing (a send's start-up time)
if TYPE_CHECKING:
    from dataclasses import dataclass, replace
    from typing import Any

    from acomm_cli.engine.remote import Route
else:  # the same classes, without importing dataclasses (a send's start-up time)
    from acomm_cli.lite.records import dataclass, replace

# ---------------------------------------------------------------- send


@dataclass
class _Plan:
    """A validated message ready to persist: its row (without id) and its recipients."""

    channel: Channel
    row: list[Any]
    recipients: list[str]
    correlation_id: str | None
    deliver_at: int | None
    tracked: bool
    rank: int
    suppressed: tuple[str, ...] = ()  # exactly-once: already handed this message
    # a response or acknowledgement: the ack status it records on the sender's own
    # deliveries of the query or command it answers (any ack stops their timers)
    acks: AckStatus | None = None
    rich: model.RichParts | None = None  # format, subject, files (engine/attachments.py)
    event: model.Event | None = None  # the notification event it carries (events.py)
    # rows waiting in a pool ('*' of a queue or '*NAME' of a worker pool), to be marked
    # with their pool and FIFO group key (store/queues.mark_pool) once inserted
    pooled: bool = False
    group_key: str | None = None


class _ChannelCache:
    """Channels (and a pubsub channel's subscription index) as read under one token."""

    __slots__ = ("token", "channels")

    def __init__(self, token: int) -> None:
        self.token = token
        self.channels: dict[str, tuple[Channel, SubscriptionIndex | None]] = {}


_LIMITS = Limits()  # frozen: one default for every Router


class Router:
    """Per-transaction cache of channels and subscription indexes (a batch reuses them)."""

    def __init__(self, conn: sqlite3.Connection, limits: Limits | None = None) -> None:
        self.conn = conn
        self.limits = limits or _LIMITS
        self.backlog: dict[int, list[int]] = {}  # channel id -> [pending, queued] messages
        self.channels: dict[str, Channel] = {}
        self.indexes: dict[int, SubscriptionIndex] = {}
        # (corr, type) -> (channel id, sender, trace id) of queries and commands sent in
        # this batch
        self.correlated: dict[tuple[str, str], tuple[int, str, str | None]] = {}
        self.dedupe: dict[tuple[int, str], SendResult] = {}
        # federation: this store's node id ("" until asked: only a direct message to an
        # agent without a direct channel here asks), and remote routes found by agent
        self.node: str | None = ""
        self.remote: dict[str, Any] = {}
        self.retired: frozenset[str] | None = None  # read once, by the first group send
        self.checked: set[tuple[str, str | None]] = set()  # (sender, to) a batch checked
        self.agents_token: int | None = None  # read by check_capacity
        # the channels token read first thing in a transaction the caller began, which
        # `prime` may use until the transaction changes a channel (acking.py)
        self.primed: int | None = None

    def prime(self, name: str, token: int) -> None:
        """Look `name` up through the connection's channel cache (`send`'s path): entries
        are kept while the channels token read in this transaction is the one they were
        read under. Called right after that read, at the start of a transaction `send`
        opened itself (so the token is a committed value, and no write of this transaction
        came before): what it caches is what the token stands for. The token grows with
        every change to channels, participants or subscriptions, in any process (m011)."""
        conn = self.conn
        cache = getattr(conn, "channel_cache", None)
        if not isinstance(cache, _ChannelCache) or cache.token != token:
            cache = _ChannelCache(token)
            if isinstance(conn, StoreConnection):
                conn.channel_cache = cache
        hit = cache.channels.get(name)
        if hit is None:
            try:
                ch = get_channel(conn, name)
            except CommError:  # plan_message raises it, after the checks that come first
                return
            index = (
                SubscriptionIndex(channels.routes(conn, ch.id))
                if ch.type == ChannelType.PUBSUB
                else None
            )
            hit = cache.channels[name] = (ch, index)
        ch, index = hit
        self.channels[name] = ch
        if index is not None:
            self.indexes[ch.id] = index

    def channel(self, name: str) -> Channel:
        ch = self.channels.get(name)
        if ch is None:
            ch = self.channels[name] = get_channel(self.conn, name)
        return ch

    def recipients(self, ch: Channel, sender: str, topic: str | None) -> list[str]:
        if ch.type == ChannelType.PUBSUB:
            index = self.indexes.get(ch.id)
            if index is None:
                index = self.indexes[ch.id] = SubscriptionIndex(channels.routes(self.conn, ch.id))
            # plan_message refuses a topicless pubsub message before it is routed
            found = index.route(topic) if topic is not None else set()
        elif ch.type == ChannelType.QUEUE:  # one row for the queue; a receive claims it
            return [model.QUEUE_RECIPIENT]
        elif ch.type == ChannelType.BROADCAST:
            found = {p.agent for p in ch.participants if p.role != Role.OWNER}
        else:  # direct and group: everyone but the sender
            found = {p.agent for p in ch.participants}
        if ch.config.echo and ch.type != ChannelType.PUBSUB:
            found.add(sender)
        elif not ch.config.echo:
            found.discard(sender)
        if found:
            if self.retired is None:
                self.retired = directory.retired(self.conn)
            if self.retired:  # a retired agent receives nothing new
                gone = found & self.retired
                if gone and ch.type == ChannelType.DIRECT:  # by the channel's name too
                    directory.refuse_retired(min(gone))
                found = found - self.retired
        return sorted(found)


_ACK_EXEMPT = (MessageType.RESPONSE.value, MessageType.ACKNOWLEDGMENT.value)
# Enum members as module constants on the per-message path: reading `Enum.MEMBER` costs
# about 0.1 us, `.value` more: a send's Python time.
_ANSWERS = (MessageType.RESPONSE, MessageType.ACKNOWLEDGMENT)


def _a(word: str) -> str:
    """The word with its article: "a response", "an acknowledgment"."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


_ASKS = (MessageType.COMMAND, MessageType.QUERY)
_ACTIVE = ChannelState.ACTIVE
_UNREAD = DeliveryState.UNREAD.value


def _json(metadata: dict[str, Any]) -> str:
    """A message's metadata as stored. `json` (with `re`) is imported only by a send that has
    metadata, not by a plain `acomm send` (start-up time)."""
    global _ENCODER
    if _ENCODER is None:  # one encoder: json.dumps with separators builds one a call
        import json

        _ENCODER = json.JSONEncoder(separators=(",", ":"))
    return _ENCODER.encode(metadata)


_ENCODER: Any = None


def plan_message(
    router: Router,
    req: SendRequest,
    now: int,
    *,
    only_to: str | None = None,
    internal: bool = False,
) -> _Plan:
    """Stage 1 (validate) and stage 3 (route); raises before anything is written.

    `only_to` routes to one agent whatever the channel type (responses and acknowledgements
    go back to the original sender); `internal` marks a message acomm itself derives (an ack)
    that may travel on a paused or draining channel and needs no correlation check."""
    return _plan_checked(router, req, now, only_to, internal)


_TYPES = {t.value: t for t in MessageType}
_PRIORITIES = {
    **{p.name.lower(): p for p in model.Priority},
    **{str(p.value): p for p in model.Priority},
}


def check_request(
    req: SendRequest, now: int
) -> tuple[str, MessageType, model.Priority, dict[str, Any], int | None]:
    """The checks that do not depend on the channel: (sender, type, priority, metadata,
    deliver_at). `send --to a,b` runs them once, so a bad body is one error, not one per
    recipient."""
    sender = req.sender
    model.agent_id_once(sender, "sender")
    # the common values by dict lookup (a send's Python time); the rest, and every
    # error, through model's validators
    t = req.type
    mtype = (_TYPES.get(t) if type(t) is str else None) or (
        model.message_type(t) if isinstance(t, str) else t
    )
    prio = (type(req.priority) is str and _PRIORITIES.get(req.priority)) or model.priority(
        req.priority
    )
    if not isinstance(req.content, str) or req.content == "":
        raise ValidationFailed("content: must not be empty", field="content", value_length=0)
    model.utf8(req.content, "content")
    if req.correlation_id is not None:
        model.correlation_id(req.correlation_id)
    if req.dedupe_key is not None:
        model.dedupe_key(req.dedupe_key)
    if req.topic is not None:
        validate_topic(req.topic, allow_system=req.sender == model.SYSTEM_AGENT)
    metadata = req.metadata or {}
    if not isinstance(metadata, dict):
        raise ValidationFailed("metadata: must be an object of key/value pairs", field="metadata")
    model.utf8_json(metadata, "metadata")
    deliver_at = req.deliver_at
    if req.delay_ms is not None:
        if req.delay_ms < 0:
            raise ValidationFailed(
                f"delay: {req.delay_ms} ms must not be negative", field="delay", value=req.delay_ms
            )
        deliver_at = now + req.delay_ms
    if deliver_at is not None and not clock.MIN_TIME_MS <= deliver_at <= clock.MAX_TIME_MS:
        clock.checked_time(deliver_at, "deliver_at")  # past the year 9999: refused, not stored
    if req.ttl_ms is not None and req.ttl_ms <= 0:
        raise ValidationFailed(
            f"ttl: {req.ttl_ms} ms must be longer than 0", field="ttl", value=req.ttl_ms
        )
    if req.trace_id is not None:  # imported only by a send that names its trace
        from acomm_cli.engine import traces

        traces.check(req.trace_id)
    if req.event is not None:  # its fields refused before the store is read
        from acomm_cli.engine import events

        events.check(req.event, sender, now)
    return sender, mtype, prio, metadata, deliver_at


def _check_channel(
    ch: Channel, sender: str, content: str, internal: bool, only_to: str | None
) -> None:
    """What the channel asks of a message `sender` puts on it: active (a message acomm
    writes itself, `internal`, also on a paused or draining one, never a closed one), not
    the system channel, a participant allowed to speak there, and at most max_message_size."""
    if ch.state != _ACTIVE and not (internal and ch.state != ChannelState.CLOSED):
        raise InvalidState(
            f"channel {ch.name!r} is {ch.state.value}; sends need it active",
            field="channel",
            value=ch.name,
            state=ch.state.value,
        )
    if ch.name == model.SYSTEM_CHANNEL:
        raise Forbidden(
            f"only acomm publishes on {ch.name!r}; subscribe to read it",
            field="channel",
            value=ch.name,
        )
    role = ch.role_of(sender)
    if role is None:
        raise NotParticipant(
            f"{sender!r} is not a participant of {ch.name!r}", field="sender", value=sender
        )
    # An acknowledgement is part of receiving, so observers may send one; a reply routed
    # back to the asker (only_to) is not a broadcast, so members may answer the owner.
    if role == Role.OBSERVER and not internal:
        raise Forbidden(
            f"{sender!r} observes {ch.name!r} and cannot send to it", field="sender", value=sender
        )
    if ch.type == ChannelType.BROADCAST and role != Role.OWNER and only_to is None:
        raise Forbidden(
            f"only the owner ({ch.owner}) sends on broadcast channel {ch.name!r}",
            field="sender",
            value=sender,
        )
    # str.isascii() is O(1): an ASCII body's length is its size
    size = len(content) if content.isascii() else len(content.encode("utf-8"))
    if size > ch.config.max_message_size:
        raise ValidationFailed(
            f"content: {size} bytes exceeds channel max_message_size "
            f"({ch.config.max_message_size} bytes)",
            field="content",
            value_length=size,
        )


def _plan_checked(
    router: Router, req: SendRequest, now: int, only_to: str | None, internal: bool
) -> _Plan:
    sender, mtype, prio, metadata, deliver_at = check_request(req, now)
    if req.rich is not None:  # only a send with --format, --subject or --attach
        from acomm_cli.engine import attachments

        attachments.check(req.rich, router.limits)
    if req.channel is None:
        raise ValidationFailed("channel: a channel (or --to) is required", field="channel")
    ch = router.channel(req.channel)
    _check_channel(ch, sender, req.content, internal, only_to)
    if ch.type == ChannelType.PUBSUB and req.topic is None and only_to is None:
        raise ValidationFailed(
            f"topic: a message on pubsub channel {ch.name!r} needs a topic", field="topic"
        )
    corr = req.correlation_id
    acks = None
    trace = req.trace_id
    if mtype in _ANSWERS and not internal:
        wanted = MessageType.QUERY if mtype == MessageType.RESPONSE else MessageType.COMMAND
        origin = _correlated(router, corr, wanted) if corr is not None else None
        if origin is None:
            raise ValidationFailed(
                f"correlation_id: {_a(mtype.value)} needs the correlation id of an existing "
                f"{wanted.value}" + (f"; {corr!r} matches none" if corr else ""),
                field="correlation_id",
                value=corr,
            )
        if origin[0] != ch.id:
            raise ValidationFailed(
                f"channel: {_a(mtype.value)} travels on the channel of its {wanted.value}, not "
                f"{ch.name!r}",
                field="channel",
                value=ch.name,
            )
        # However it is sent (`respond`, `send --type response`, a batch line), an answer
        # goes to the asker only and acknowledges the answerer's own delivery.
        only_to = origin[1] if only_to is None else only_to
        acks = AckStatus.COMPLETED if mtype == MessageType.RESPONSE else AckStatus.RECEIVED
        trace = trace or origin[2]  # an answer joins its question's trace
    elif corr is None and (mtype in _ASKS or ch.config.delivery == DeliveryMode.EXACTLY_ONCE):
        corr = os.urandom(16).hex()  # exactly-once deduplicates by correlation id
    elif trace is None and corr is not None:  # a thread's message joins the thread's trace
        trace = _thread_trace(router, corr)
    if trace is None:
        trace = os.urandom(16).hex()  # a new trace: no query when nothing is correlated
    if corr is not None and mtype in _ASKS:
        router.correlated[(corr, mtype.value)] = (ch.id, sender, trace)
    if only_to is not None:
        recipients = [only_to] if only_to != sender or ch.config.echo else []
    else:
        recipients = router.recipients(ch, sender, req.topic)
    # contact rules: the recipient's `accept` on a direct channel (answers and acomm's own
    # messages pass); imported here so that a group send never loads it
    if ch.type == ChannelType.DIRECT and acks is None and not internal:
        from acomm_cli.engine import contacts

        contacts.check_direct(router.conn, ch.name, sender, recipients)
    # a worker pool's placeholder ('*NAME') sorts before every agent id
    pooled = bool(recipients) and recipients[0][0] == "*"
    if req.group_key is not None:
        _check_group_key(router, ch, req.group_key)
    tracked = ch.config.delivery != DeliveryMode.AT_MOST_ONCE and mtype not in _ANSWERS
    expires_at = req.expires_at
    ttl = (
        req.ttl_ms
        if req.ttl_ms is not None
        else (None if internal else ch.config.message_ttl_ms or None)
    )
    if expires_at is None and ttl is not None:  # counted from when it may be delivered
        expires_at = max(deliver_at or now, now) + ttl
    if expires_at is not None and expires_at > clock.MAX_TIME_MS:
        clock.checked_time(expires_at, "ttl")
    row = [
        ch.id,
        sender,
        mtype.value,
        req.content,
        req.topic,
        int(prio),
        corr,
        req.dedupe_key,
        _json(metadata) if metadata else None,
        now,
        deliver_at,
        expires_at,
        trace,
    ]
    return _Plan(
        ch,
        row,
        recipients,
        corr,
        deliver_at,
        tracked,
        int(prio) if ch.config.priority_ordering else 0,
        acks=acks,
        rich=req.rich,
        event=None if req.event is None else _event(router, req, sender, now, internal),
        pooled=pooled and (ch.type == ChannelType.PUBSUB or req.group_key is not None),
        group_key=req.group_key,
    )


def _check_group_key(router: Router, ch: Channel, key: str) -> None:
    """A FIFO group key orders a pool's messages: a work queue's, or a pubsub channel's
    worker pools'. Anywhere else nothing could keep the order, so it is refused."""
    model.utf8(key, "group_key")
    if not isinstance(key, str) or not 1 <= len(key) <= model.NAME_MAX:
        raise ValidationFailed(
            f"group_key: must be 1-{model.NAME_MAX} characters, not {len(key)}",
            field="group_key",
            value_length=len(key),
        )
    if ch.type == ChannelType.QUEUE:
        return
    if ch.type == ChannelType.PUBSUB and channels.has_groups(router.conn, ch.id):
        return
    raise ValidationFailed(
        f"group_key: channel {ch.name!r} ({ch.type.value}) cannot order messages: a group "
        "key needs a work queue or a pubsub channel with a worker pool (subscribe --group)",
        field="group_key",
        value=key,
    )


_FED = "_fed:"


def reaches(router: Router, plan: _Plan, req: SendRequest) -> _Plan:
    """What a caller sends must reach someone: refused before anything is written when it
    would be delivered to nobody, so no script takes it for delivered (a channel whose only
    member is the sender, members all retired, a `_fed:` channel used directly: it hands
    nothing to the other node's agent). On a pub/sub channel a message no subscription
    matches is pub/sub as meant: stored with a note, unless `require_recipient`; a query
    there is refused all the same (nobody could answer it). An answer goes to its asker.
    Messages acomm derives itself (acks, a peer's events) do not pass here."""
    ch = plan.channel
    if plan.recipients and not ch.name.startswith(_FED) or plan.acks is not None:
        return plan
    if ch.name.startswith(_FED):
        other = ch.name[len(_FED) :].partition(":")[2]
        raise NoRecipient(
            f"channel {ch.name!r} is this node's exchange with {other!r} on another node and "
            f"delivers nothing sent on it directly; send with `--to {other}`",
            field="channel",
            value=ch.name,
            reason="federation_channel",
        )
    mtype = plan.row[2]
    if ch.type == ChannelType.PUBSUB and mtype != MessageType.QUERY.value:
        topic = plan.row[4]
        if req.require_recipient:
            raise NoRecipient(
                f"topic: no subscription on {ch.name!r} matches {topic!r}, and a recipient "
                "was required; subscribe an agent first (`acomm subscribe "
                f"{ch.name} PATTERN --as AGENT`)",
                field="topic",
                value=topic,
                channel=ch.name,
                reason="no_subscription",
            )
        directory.note(
            router.conn,
            f"note: no subscription on {ch.name!r} matches topic {topic!r}: the message "
            "reaches nobody (--require-recipient refuses such a publish)",
        )
        return plan
    if ch.type == ChannelType.PUBSUB:
        why, way = (
            f"no subscription matches topic {plan.row[4]!r}",
            f"`acomm subscribe {ch.name} PATTERN --as AGENT`",
        )
    else:
        why, way = (
            f"it has no member to deliver to but {plan.row[1]!r}",
            f"`acomm channel join {ch.name} AGENT --as {ch.owner}`",
        )
    raise NoRecipient(
        f"channel: {_a(mtype)} on {ch.name!r} would reach nobody: {why}; add a recipient "
        f"first ({way}), or send to an agent with `--to`",
        field="channel",
        value=ch.name,
        reason="no_member" if ch.type != ChannelType.PUBSUB else "no_subscription",
    )


def _event(router: Router, req: SendRequest, sender: str, now: int, internal: bool) -> model.Event:
    """The request's event, checked and completed (names known, target kind, preview); an
    internal message's (one from another node) names are not the directory's to refuse."""
    from acomm_cli.engine import events

    ev = events.check(req.event or {}, sender, now)
    return events.complete(
        router.conn, ev, req.content, now, router.limits.preview_chars, arrived=internal
    )


def _exactly_once(router: Router, plan: _Plan, now: int) -> None:
    """Exactly-once: the same sender's same-type message with the same correlation id is
    recorded but not handed again to a recipient inside 2 x ack_timeout."""
    cfg = plan.channel.config
    if cfg.delivery != DeliveryMode.EXACTLY_ONCE or not plan.recipients:
        return
    corr, sender, mtype = plan.correlation_id, plan.row[1], plan.row[2]
    assert corr is not None  # exactly-once messages always get one in _plan_checked
    seen = sending.exactly_once_seen(router.conn, corr, sender, mtype, plan.recipients, now)
    plan.suppressed = tuple(r for r in plan.recipients if r in seen)
    plan.recipients = [r for r in plan.recipients if r not in seen]
    sending.exactly_once_record(
        router.conn, corr, sender, mtype, plan.recipients, now + 2 * cfg.ack_timeout_ms
    )


def _correlated(
    router: Router, corr: str, wanted: MessageType
) -> tuple[int, str, str | None] | None:
    """(channel id, sender, trace id) of the first query or command with this correlation
    id."""
    seen = router.correlated.get((corr, wanted.value))
    if seen is not None:
        return seen
    found = sending.first_of_type(router.conn, corr, wanted.value)
    return (found[1], found[2], found[3]) if found else None


def _thread_trace(router: Router, corr: str) -> str | None:
    """The trace of the thread a correlated message joins (this batch's first, else the
    store's): one indexed read, only for a message that names a correlation id."""
    seen = router.correlated.get((corr, "query")) or router.correlated.get((corr, "command"))
    return seen[2] if seen is not None else sending.trace_of_correlation(router.conn, corr)


def _acknowledge_origin(router: Router, plan: _Plan, now: int) -> None:
    """An answer acknowledges its sender's deliveries of what it answers (forward only)."""
    from acomm_cli.store import acks as ack_queries  # answers only: not a plain send's path

    status = plan.acks
    assert status is not None and plan.correlation_id is not None
    wanted = MessageType.QUERY if plan.row[2] == MessageType.RESPONSE.value else MessageType.COMMAND
    cfg = plan.channel.config  # the command's channel: an answer travels on it
    # a `received` ack holds an ack-tracked delivery for the channel's lease
    until = (
        now + cfg.effective_lease_ms
        if status == AckStatus.RECEIVED and cfg.delivery != DeliveryMode.AT_MOST_ONCE
        else None
    )
    for mid, state, previous in ack_queries.correlated_deliveries(
        router.conn, plan.correlation_id, wanted.value, plan.row[1]
    ):
        if state == DeliveryState.DEAD.value or (
            previous is not None and ACK_ORDER[AckStatus(previous)] >= ACK_ORDER[status]
        ):
            continue
        ack_queries.set_ack(router.conn, mid, plan.row[1], status.value, None, now, until)


def _held_back(router: Router, ch: Channel) -> bool:
    """max_pending: once a channel has that many pending messages (or any queued), new
    messages are accepted but queued, to be released oldest first."""
    if ch.config.max_pending <= 0:
        return False
    counts = router.backlog.get(ch.id)
    if counts is None:
        counts = router.backlog[ch.id] = list(backlog.channel_backlog(router.conn, ch.id))
    held = counts[1] > 0 or counts[0] >= ch.config.max_pending
    counts[1 if held else 0] += 1
    return held


def _delivery_rows(router: Router, plan: _Plan, message_id: int, now: int) -> list[tuple[Any, ...]]:
    ch = plan.channel
    if plan.deliver_at is not None and plan.deliver_at > now:
        state, delivered, timer = DeliveryState.WAITING.value, None, plan.deliver_at
    elif plan.recipients and plan.row[2] not in _ACK_EXEMPT and _held_back(router, ch):
        state, delivered, timer = DeliveryState.QUEUED.value, None, None
    else:
        state, delivered = _UNREAD, now
        # the ack deadline: from now, or (ack_clock read) from the first read
        timer = ch.config.deadline_at(now) if plan.tracked else None
        if ch.type == ChannelType.QUEUE and plan.recipients == [model.QUEUE_RECIPIENT]:
            timer = None  # the ack timer starts when a worker claims it
        elif plan.pooled and timer is not None:  # a pool's row: likewise
            return [
                (
                    message_id,
                    r,
                    ch.id,
                    state,
                    plan.rank,
                    int(plan.tracked),
                    delivered,
                    None if r[0] == "*" else timer,
                )
                for r in plan.recipients
            ]
    return [
        (message_id, r, ch.id, state, plan.rank, int(plan.tracked), delivered, timer)
        for r in plan.recipients
    ]


def _result(plan: _Plan, message_id: int, now: int, delivered: bool) -> SendResult:
    """An exactly-once resend suppressed for some recipients says so (`deduplicated`, and
    whom in `suppressed`): else it would look like a message nobody was there to get."""
    return SendResult(
        id=message_id,
        channel=plan.channel.name,
        channel_id=plan.channel.id,
        recipients=tuple(plan.recipients),
        status="delivered" if plan.recipients and delivered else "sent",
        created_at=now,
        correlation_id=plan.correlation_id,
        deduplicated=bool(plan.suppressed),
        suppressed=plan.suppressed,
        trace_id=plan.row[12],
    )


def _deduplicated(router: Router, plan: _Plan, key: str | None, now: int) -> SendResult | None:
    if key is None:
        return None if plan.event is None else _same_event(router, plan)
    ch = plan.channel
    seen = router.dedupe.get((ch.id, key))
    if seen is not None:
        return replace(seen, deduplicated=True, suppressed=seen.recipients)
    found = sending.find_dedupe(router.conn, ch.id, key, now - ch.config.dedupe_window_ms)
    if found is None:
        return None if plan.event is None else _same_event(router, plan)
    return _first_sent(router, ch, found)


def _event_key(event_id: str) -> str:
    """router.dedupe's key for an event id: a dedupe key never holds a control character."""
    return "\x00event:" + event_id


def _same_event(router: Router, plan: _Plan) -> SendResult | None:
    """An event id is an idempotency key as a dedupe key is: the message already sent on
    this channel with the same event id is the answer, and nothing is sent again. Unlike a
    dedupe key it does not expire with the window: one channel holds an event id once."""
    from acomm_cli.store import events as event_sql

    assert plan.event is not None
    eid = plan.event.event_id
    if eid is None:
        return None
    ch = plan.channel
    seen = router.dedupe.get((ch.id, _event_key(eid)))
    if seen is not None:
        return replace(seen, deduplicated=True, suppressed=seen.recipients)
    found = event_sql.find_event_id(router.conn, ch.id, eid)
    return None if found is None else _first_sent(router, ch, found)


def _first_sent(router: Router, ch: Channel, found: tuple[int, int, str | None]) -> SendResult:
    mid, created, corr = found
    recipients = tuple(sending.delivery_recipients(router.conn, mid))
    return SendResult(
        id=mid,
        channel=ch.name,
        channel_id=ch.id,
        recipients=recipients,
        status=_status_of(router.conn, mid),
        created_at=created,
        correlation_id=corr,
        deduplicated=True,
        suppressed=recipients,
    )


def _status_of(conn: sqlite3.Connection, message_id: int) -> str:
    from acomm_cli.store import reads  # a deduplicated send only: not a plain send's path

    msg = reads.message_by_id(conn, message_id)
    return msg.status if msg else "sent"


def persist(router: Router, plan: _Plan, now: int, *, federated: bool = False) -> SendResult:
    """Stages 2, 4 and 5 for one message: id and time, persist, deliver.

    On a `_fed:` channel (a node's exchange with an agent of another node) the remote agent
    gets no local delivery; an answer there also owes the other node a reply (remote.py).
    `federated`: the caller (send_remote) does the federation part itself."""
    fed = plan.channel.name.startswith("_fed:") and not federated
    if fed:
        plan.recipients = [r for r in plan.recipients if r == plan.row[1]]
    _exactly_once(router, plan, now)
    mid = sending.insert_new_message(router.conn, plan.row)
    rows = _delivery_rows(router, plan, mid, now)
    sending.insert_deliveries(router.conn, rows)
    if plan.pooled:
        _mark_pool(router, mid, plan.group_key)
    if plan.rich is not None:
        from acomm_cli.engine import attachments

        attachments.store(router.conn, mid, plan.rich, now)
    result = _result(plan, mid, now, bool(rows) and rows[0][3] == _UNREAD)
    if plan.acks is not None:
        _acknowledge_origin(router, plan, now)
    if plan.row[7] is not None:
        router.dedupe[(plan.channel.id, plan.row[7])] = result
    if plan.event is not None:
        _store_event(router, plan, mid, result)
    if fed:
        from acomm_cli.engine import remote

        remote.answered(router.conn, plan.row, plan.correlation_id, mid, now)
    return result


_ACK_TYPE = MessageType.ACKNOWLEDGMENT.value
_NORMAL = int(model.Priority.NORMAL)
_EXACTLY_ONCE = DeliveryMode.EXACTLY_ONCE


def send_acknowledgment(
    router: Router,
    channel: str,
    sender: str,
    to: str,
    content: str,
    now: int,
    *,
    ack_for: int,
    status: str,
    extra: dict[str, str] | None = None,
    correlation_id: str | None = None,
    trace_id: str | None = None,
) -> int | None:
    """The acknowledgement message `sender` (who acked) sends back to `to` (who sent
    message `ack_for`): its id, None when it has no recipient. Exactly what
    `plan_message(..., only_to=to, internal=True)` and `persist` write for it, without
    what cannot apply to a message acomm builds itself with one recipient: no request
    object, topic, dedupe key, event, schedule, expiry, attachments, pool, contact rule
    or backpressure (acknowledgements are exempt from max_pending); the refusals that can
    apply, in the same order. tests/test_ack_message_route.py holds the two to the same
    rows."""
    model.agent_id_once(sender, "sender")
    model.utf8(content, "content")
    corr = correlation_id
    if corr is not None:
        model.correlation_id(corr)
    if extra:
        metadata = {**extra, "ack_for": str(ack_for), "status": status}
        model.utf8_json(metadata, "metadata")
        meta = _json(metadata)
    else:  # what the encoder writes for these two (a status is an ASCII word)
        meta = f'{{"ack_for":"{ack_for}","status":"{status}"}}'
    trace = trace_id
    if trace is not None:
        from acomm_cli.engine import traces

        traces.check(trace)
    ch = router.channel(channel)
    _check_channel(ch, sender, content, True, to)
    cfg = ch.config
    exactly_once = cfg.delivery == _EXACTLY_ONCE
    if corr is None and exactly_once:
        corr = os.urandom(16).hex()  # exactly-once deduplicates by correlation id
    elif trace is None and corr is not None:  # a thread's message joins the thread's trace
        trace = _thread_trace(router, corr)
    if trace is None:
        trace = os.urandom(16).hex()
    if to == sender and not cfg.echo:
        return None
    recipient: str | None = to
    if exactly_once:
        assert corr is not None
        seen = sending.exactly_once_seen(router.conn, corr, sender, _ACK_TYPE, [to], now)
        recipient = None if to in seen else to
        sending.exactly_once_record(
            router.conn,
            corr,
            sender,
            _ACK_TYPE,
            [] if recipient is None else [to],
            now + 2 * cfg.ack_timeout_ms,
        )
    return sending.insert_acknowledgment(
        router.conn,
        ch.id,
        sender,
        content,
        _NORMAL,
        corr,
        meta,
        now,
        trace,
        recipient,
        _NORMAL if cfg.priority_ordering else 0,
    )


def _mark_pool(router: Router, mid: int, group_key: str | None) -> None:
    from acomm_cli.store import queues  # only a send to a pool or with a group key

    queues.mark_pool(router.conn, mid, group_key)


def _store_event(router: Router, plan: _Plan, mid: int, result: SendResult) -> None:
    from acomm_cli.store import events as event_sql

    ev = plan.event
    assert ev is not None
    event_sql.insert_events(router.conn, [event_sql.row_of(mid, plan.channel.id, ev)])
    if ev.event_id is not None:
        router.dedupe[(plan.channel.id, _event_key(ev.event_id))] = result


def check_capacity(router: Router, adding: int) -> int:
    """Backpressure before accepting `adding` messages: store size, then active messages.
    Returns the channels token, read in the same statement as the count; the agents token
    (m030) goes to `router.agents_token`."""
    lim = router.limits
    if lim.max_store_bytes:
        size = backlog.store_bytes(router.conn)
        if size >= lim.max_store_bytes - lim.reserve_bytes:
            raise StoreCapacity(
                f"store is {size} bytes, within {lim.reserve_bytes} bytes of its limit "
                f"({lim.max_store_bytes}); compact it (`acomm compact`) or raise "
                "limits.max_store_bytes",
                field="limits.max_store_bytes",
                bytes=size,
            )
    limit = lim.max_active_messages
    active, token, router.agents_token = sending.start(
        router.conn, limit - adding + 1 if limit else None
    )
    if limit and active + adding > lim.max_active_messages:
        raise StoreFull(
            f"{active} messages are still being delivered; accepting {adding} more would "
            f"pass limits.max_active_messages ({lim.max_active_messages})",
            field="limits.max_active_messages",
            active=active,
        )
    return token


def capacity_warning(conn: sqlite3.Connection, limits: Limits) -> str | None:
    """A warning once the store passes 90% of limits.max_store_bytes."""
    if not limits.max_store_bytes:
        return None
    size = backlog.store_bytes(conn)
    if size > limits.warn_fraction * limits.max_store_bytes:
        return (
            f"store is {size} bytes, {100 * size / limits.max_store_bytes:.0f}% of "
            f"limits.max_store_bytes ({limits.max_store_bytes}); compact it soon"
        )
    return None


def send(
    conn: sqlite3.Connection, req: SendRequest, now: int, limits: Limits | None = None
) -> SendResult:
    """Send one message through the whole pipeline, in one transaction."""
    shared = not conn.in_transaction  # a token read now is a committed one (m011, m030)
    try:
        with write(conn):
            router = Router(conn, limits)
            token = check_capacity(router, 1)
            if not shared:
                return _send(router, req, now)
            if req.channel is not None:  # else plan_message reads (or refuses) it
                router.prime(req.channel, token)
            # what the directory says, from the connection's cache under the agents token
            assert router.agents_token is not None
            enter_agents(conn, router.agents_token)
            return _send(router, req, now)
    except BaseException:
        if shared:  # rolled back: what it read of the directory may not hold
            leave_agents(conn, failed=True)
        raise
    finally:
        if shared:
            leave_agents(conn, failed=False)


def _send(router: Router, req: SendRequest, now: int) -> SendResult:
    conn = router.conn
    try:
        plan = plan_message(router, req, now)
    except NotParticipant:  # a name nobody registered: say so, with the closest ones
        directory.known(conn, req.sender, "as", now, register=False)
        raise
    directory.known(conn, plan.row[1], "as", now)
    presence.seen(conn, req.sender, now)  # once the plan has checked the sender's name
    return _deduplicated(router, plan, req.dedupe_key, now) or persist(
        router, reaches(router, plan, req), now
    )


def direct_pair(a: str, b: str) -> tuple[str, str]:
    """The implicit direct channel of two agents: (channel name, pair key)."""
    x, y = sorted((a, b))
    return f"_dm:{x}:{y}", f"{x}\x00{y}"


def _direct_channel(router: Router, sender: str, recipient: str, now: int) -> str | None:
    """The direct channel of two agents, created on first use; None when the store is a
    federation node and the recipient is routed to another node (or is unroutable): then
    router.remote[recipient] holds the route. Only a pair without a channel yet asks
    whether the store is a node: a plain store's sends run no extra statement."""
    name, pair = direct_pair(sender, recipient)
    if name in router.channels:
        return name
    ch = channels.channel_by_pair(router.conn, pair)
    if ch is None and _routed_away(router, recipient, now):
        return None
    if ch is None:
        cid = channels.insert_channel(
            router.conn,
            name,
            ChannelType.DIRECT.value,
            sender,
            ChannelConfig(),
            now,
            direct_pair=pair,
        )
        channels.insert_participant(router.conn, cid, sender, Role.OWNER.value, now)
        channels.insert_participant(router.conn, cid, recipient, Role.MEMBER.value, now)
        ch = channel_by_id(router.conn, cid)
    router.channels[name] = ch
    return name


def _routed_away(router: Router, recipient: str, now: int) -> bool:
    if router.node == "":
        from acomm_cli.store.federation import node_id

        router.node = node_id(router.conn)
    if router.node is None:
        return False
    from acomm_cli.engine import remote

    rt = remote.route(router.conn, router.node, recipient, now, router.limits.fed_offline_after_ms)
    if rt.decision == "local":
        return False
    router.remote[recipient] = rt
    return True


def send_direct(
    conn: sqlite3.Connection,
    req: SendRequest,
    to: Sequence[str],
    now: int,
    limits: Limits | None = None,
    remote_kind: str = "message",
) -> list[SendResult | CommError]:
    """One direct message per recipient, in order; one failing does not stop the others.
    `remote_kind`: the outbox event for a recipient on another node (`task_create` for a
    task's command message)."""
    if not to:
        raise ValidationFailed("to: name at least one recipient", field="to")
    check_request(req, now)
    if req.group_key is not None:  # a direct channel has one reader: nothing to order
        raise ValidationFailed(
            "group_key: a direct message cannot carry a group key (a work queue or a pubsub "
            "channel with a worker pool can)",
            field="group_key",
            value=req.group_key,
        )
    for i, r in enumerate(to):
        model.agent_id(r, "to")
        if r == req.sender:
            raise ValidationFailed(f"to: {r!r} is the sender", field="to", value=r)
        if r in to[:i]:
            raise ValidationFailed(f"to: {r!r} is named twice", field="to", value=r)
    results: list[SendResult | CommError] = []
    with write(conn):
        router = Router(conn, limits)
        check_capacity(router, len(to))
        directory.direct(conn, req.sender, list(to), now, register_sender=False)
        for recipient in to:
            try:
                with savepoint(conn, "recipient"):
                    name = _direct_channel(router, req.sender, recipient, now)
                    if name is None:  # federation: an agent routed to another node
                        res = send_remote(
                            router,
                            req,
                            recipient,
                            router.remote[recipient],
                            router.node or "",
                            now,
                            router.limits.fed_ack_timeout_ms,
                            kind=remote_kind,
                        )
                        results.append(res)
                        continue
                    plan = plan_message(router, replace(req, channel=name), now)
                    res = _deduplicated(router, plan, req.dedupe_key, now) or persist(
                        router, reaches(router, plan, req), now
                    )
            except CommError as exc:
                router.channels.pop(direct_pair(req.sender, recipient)[0], None)
                results.append(exc)
            else:
                results.append(res)
        if any(not isinstance(r, CommError) for r in results):
            directory.known(conn, req.sender, "as", now)
            presence.seen(conn, req.sender, now)
    return results


def send_remote(
    router: Router,
    req: SendRequest,
    recipient: str,
    rt: Route,
    self_node: str,
    now: int,
    ack_timeout_ms: int = 30_000,
    kind: str = "message",
) -> SendResult | CommError:
    """A direct message to an agent routed to another node (or unroutable: `rt` says
    which): the sender's copy on its `_fed:` channel, and in the same transaction an
    outbox event (a `message`, or `kind`: `task_create` for a task's command; or a
    `dead_letter` with a local dead letter). Errors are returned, not raised, so the dead
    letter commits with the rest of the send. Only a node's sends come here."""
    from acomm_cli.engine import deadletters, remote
    from acomm_cli.errors import NoOwner, OwnerOffline
    from acomm_cli.store import federation as fsql

    conn = router.conn
    name = remote.fed_channel(conn, router.channels, req.sender, recipient, now)
    plan = plan_message(router, replace(req, channel=name), now)
    same = None if plan.event is None else _same_event(router, plan)
    if same is not None:  # the event id was sent to this agent already: nothing goes again
        return replace(same, to_node=rt.to_node, route_decision=rt.decision)
    event_id = remote.uuid7(now)
    if plan.row[2] == MessageType.RESPONSE.value:  # `send --to ASKER --type response`
        res = persist(router, plan, now)  # persist's hook emits the reply
        return replace(
            res,
            status="emitted",
            to_node=rt.to_node,
            route_decision=rt.decision,
            global_id=fsql.global_id_of(conn, res.id),
        )
    if rt.decision in ("no_owner", "owner_offline"):
        plan.recipients = [recipient]
        res = persist(router, plan, now, federated=True)
        fsql.set_message_global_id(conn, res.id, event_id, self_node)
        # the dead letter here and the event to the room give the same reason
        reason = rt.decision
        why = (
            f"{recipient!r} has no owner node"
            if rt.decision == "no_owner"
            else f"{recipient!r}'s owner {rt.owner!r} is offline and no fallback node is online"
        )
        deadletters.dead_letter(conn, [(res.id, recipient, plan.channel.id, 0)], reason, why, now)
        remote.emit(
            conn,
            self_node,
            "dead_letter",
            to_node=rt.to_node,
            now=now,
            event_id=event_id,
            source_agent=req.sender,
            to_agent=recipient,
            corr=plan.correlation_id,
            payload={"reason": reason, "detail": why},
            decision=None,
            trace_id=plan.row[12],
        )
        fsql.insert_sent(
            conn,
            event_id,
            res.id,
            rt.to_node or "",
            recipient,
            rt.decision,
            "dead_letter",
            None,
            now,
        )
        error = NoOwner if rt.decision == "no_owner" else OwnerOffline
        return error(why, field="to", value=recipient, message_id=res.id, global_id=event_id)
    plan.recipients = []
    res = persist(router, plan, now, federated=True)
    assert rt.to_node is not None
    fsql.set_message_global_id(conn, res.id, event_id, self_node)
    remote.emit(
        conn,
        self_node,
        kind,
        to_node=rt.to_node,
        now=now,
        event_id=event_id,
        source_agent=req.sender,
        to_agent=recipient,
        corr=plan.correlation_id,
        payload=remote.message_payload(plan.row, plan.rich, plan.event),
        decision=rt.decision,
        trace_id=plan.row[12],
    )
    fsql.insert_sent(
        conn,
        event_id,
        res.id,
        rt.to_node,
        recipient,
        rt.decision,
        "emitted",
        now + ack_timeout_ms,
        now,
    )
    return replace(
        res,
        recipients=(recipient,),
        status="emitted",
        global_id=event_id,
        to_node=rt.to_node,
        route_decision=rt.decision,
    )


_BATCH_KEYS = {
    "channel",
    "to",
    "from",
    "sender",
    "content",
    "type",
    "priority",
    "topic",
    "correlation_id",
    "dedupe_key",
    "metadata",
    "delay",
    "ttl",
    "format",  # text | markdown, a subject and files: a line's rich parts
    "subject",
    "attach",
    "trace_id",
    "event",
    "group_key",  # a FIFO group (work queues, worker pools)
}


def batch_request(
    item: Any, line: int, limits: Limits | None = None
) -> tuple[SendRequest, str | None, int]:
    """One JSON Lines object -> (request, direct recipient or None, line). Its `attach`
    files are read here, before any transaction, with the checks and limits of
    `send --attach`: a refusal names the line and writes nothing."""
    where = f"line {line}"
    if not isinstance(item, dict):
        raise ValidationFailed(f"{where}: each line must be a JSON object", field="line", line=line)
    unknown = sorted(set(item) - _BATCH_KEYS)
    if unknown:
        raise ValidationFailed(
            f"{where}: unknown field {unknown[0]!r}", field=unknown[0], line=line
        )
    sender = item.get("from", item.get("sender"))
    if sender is None:
        raise ValidationFailed(f"{where}: 'from' is required", field="from", line=line)
    if ("channel" in item) == ("to" in item):
        raise ValidationFailed(
            f"{where}: give exactly one of 'channel' and 'to'", field="channel", line=line
        )
    for key in (
        "channel",
        "to",
        "from",
        "sender",
        "content",
        "topic",
        "correlation_id",
        "dedupe_key",
        "type",
        "format",
        "subject",
        "trace_id",
        "group_key",
    ):
        if key in item and not isinstance(item[key], str):
            raise ValidationFailed(f"{where}: {key} must be a string", field=key, line=line)
    for key, kinds in (
        ("priority", (str, int)),
        ("delay", (str, int)),
        ("ttl", (str, int)),
        ("metadata", (dict,)),
        ("event", (dict,)),
    ):
        value = item.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
            raise ValidationFailed(
                f"{where}: {key} has the wrong type ({type(value).__name__})", field=key, line=line
            )
    if item.get("to") is not None and item.get("to") == sender:
        raise ValidationFailed(f"{where}: to: {sender!r} is the sender", field="to", line=line)
    attach = item.get("attach")
    if attach is not None and (
        not isinstance(attach, list) or not all(isinstance(p, str) for p in attach)
    ):
        raise ValidationFailed(
            f"{where}: attach must be a list of file paths", field="attach", line=line
        )
    delay, ttl = item.get("delay"), item.get("ttl")
    if delay is not None or ttl is not None:
        from acomm_cli.clock import parse_duration

        try:
            delay = parse_duration(delay, "delay") if delay is not None else None
            ttl = parse_duration(ttl, "ttl") if ttl is not None else None
        except ValidationFailed as exc:
            raise _at_line(exc, line) from None
    req = SendRequest(
        sender=sender,
        content=item.get("content", ""),
        channel=item.get("channel"),
        type=item.get("type", "text"),
        priority=item.get("priority", "normal"),
        topic=item.get("topic"),
        correlation_id=item.get("correlation_id"),
        dedupe_key=item.get("dedupe_key"),
        metadata=item.get("metadata"),
        delay_ms=delay,
        ttl_ms=ttl,
        rich=_batch_rich(item, attach, line, limits),
        trace_id=item.get("trace_id"),
        event=item.get("event"),
        group_key=item.get("group_key"),
    )
    return req, item.get("to"), line


def _batch_rich(
    item: dict[str, Any], attach: list[str] | None, line: int, limits: Limits | None
) -> model.RichParts | None:
    if "format" not in item and "subject" not in item and not attach:
        return None
    files: tuple[model.Attachment, ...] = ()
    if attach:
        from acomm_cli.engine import attachments

        try:
            files = attachments.read_files(attach, limits or _LIMITS)
        except CommError as exc:
            raise _at_line(exc, line) from None
    return model.RichParts(
        format=item.get("format"), subject=item.get("subject"), attachments=files
    )


def _at_line(exc: CommError, line: int) -> CommError:
    """Name the batch line an error came from (once)."""
    if "line" not in exc.extra:
        exc.message = f"line {line}: {exc.message}"
        exc.extra["line"] = line
    return exc


def send_batch(
    conn: sqlite3.Connection,
    items: Sequence[tuple[SendRequest, str | None, int]],
    now: int,
    limits: Limits | None = None,
    progress: Callable[[int], Callable[[int], None]] | None = None,
) -> list[SendResult]:
    """Many messages in one transaction: all are sent, or none (the first error is raised,
    naming its line). Items are (request, direct recipient or None, line number).
    `progress(total)` (a bar on a terminal) hears every 500 items planned."""
    results: list[SendResult] = []
    messages: list[tuple[Any, ...]] = []
    deliveries: list[tuple[Any, ...]] = []
    answers: list[_Plan] = []  # responses and acks: they acknowledge once all rows are in
    rich: list[tuple[int, model.RichParts]] = []  # lines with a format or subject
    carried: list[tuple[int, _Plan, SendResult]] = []  # lines that carry an event
    pooled: list[tuple[int, str | None]] = []  # lines with rows in a pool
    with write(conn):
        router = Router(conn, limits)
        check_capacity(router, len(items))
        next_id = sending.last_message_id(conn) + 1
        step = progress(len(items)) if progress is not None and len(items) >= 500 else None
        for n, (req, to, line) in enumerate(items, start=1):
            if step is not None and n % 500 == 0:
                step(500)
            try:
                if to is not None:
                    model.agent_id(req.sender, "sender")
                    model.agent_id(to, "to")
                    if (req.sender, to) not in router.checked:
                        directory.direct(conn, req.sender, [to], now)
                        router.checked.add((req.sender, to))
                    name = _direct_channel(router, req.sender, to, now)
                    if name is None:
                        raise InvalidState(
                            f"to: {to!r} is routed to another node; a batch sends only to "
                            "local agents (use `send --to`)",
                            field="to",
                            value=to,
                        )
                    req = replace(req, channel=name)
                plan = plan_message(router, req, now)
                if to is None and (req.sender, None) not in router.checked:
                    directory.known(conn, req.sender, "as", now)
                    router.checked.add((req.sender, None))
            except CommError as exc:
                raise _at_line(exc, line) from None
            dup = _deduplicated(router, plan, req.dedupe_key, now)
            if dup is not None:
                results.append(dup)
                continue
            try:
                reaches(router, plan, req)
            except CommError as exc:
                raise _at_line(exc, line) from None
            _exactly_once(router, plan, now)
            if plan.rich is not None:
                rich.append((next_id, plan.rich))
            if plan.pooled:
                pooled.append((next_id, plan.group_key))
            messages.append((next_id, *plan.row))
            rows = _delivery_rows(router, plan, next_id, now)
            deliveries.extend(rows)
            result = _result(
                plan, next_id, now, bool(rows) and rows[0][3] == DeliveryState.UNREAD.value
            )
            if req.dedupe_key is not None:
                router.dedupe[(plan.channel.id, req.dedupe_key)] = result
            if plan.event is not None:
                carried.append((next_id, plan, result))
                if plan.event.event_id is not None:
                    router.dedupe[(plan.channel.id, _event_key(plan.event.event_id))] = result
            results.append(result)
            if plan.acks is not None:
                answers.append(plan)
            next_id += 1
        sending.insert_messages(conn, messages)
        sending.insert_deliveries(conn, deliveries)
        for mid, key in pooled:
            _mark_pool(router, mid, key)
        if rich:
            from acomm_cli.engine import attachments

            for mid, parts in rich:
                attachments.store(conn, mid, parts, now)
        for mid, plan, result in carried:
            _store_event(router, plan, mid, result)
        for sender in sorted({req.sender for req, _, _ in items}):
            presence.seen(conn, sender, now)
        for plan in answers:
            _acknowledge_origin(router, plan, now)
        if step is not None:
            step(len(items) % 500)
    return results


def staged_rows(router: Router, plan: _Plan, message_id: int, now: int) -> list[tuple[Any, ...]]:
    """persist's stages for a message whose rows the caller inserts with others, one
    statement each (a pulled page's run of messages): the exactly-once record, then its
    delivery rows. Only for a plan persist would write whole as a message and deliveries:
    no pool, no rich parts, no answer to acknowledge, no carried event."""
    _exactly_once(router, plan, now)
    return _delivery_rows(router, plan, message_id, now)
