"""Enums, names and the dataclasses that flow between pipeline, store and render."""

from __future__ import annotations

from enum import IntEnum, StrEnum

from acomm_cli.errors import ValidationFailed

TYPE_CHECKING = False  # typing's, without importing typing: it costs the hot commands' start-up
if TYPE_CHECKING:
    from dataclasses import dataclass, field
    from typing import Any, TypeVar
else:  # the same classes, without importing dataclasses (acomm_cli/lite/records.py)
    from acomm_cli.lite.records import dataclass, field


class ChannelType(StrEnum):
    DIRECT = "direct"
    GROUP = "group"
    BROADCAST = "broadcast"
    PUBSUB = "pubsub"
    QUEUE = "queue"  # each message to exactly one member: the first receive that claims it


class ChannelState(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    DRAINING = "draining"
    CLOSED = "closed"


class Role(StrEnum):
    OWNER = "owner"
    MEMBER = "member"
    OBSERVER = "observer"


class MessageType(StrEnum):
    TEXT = "text"
    COMMAND = "command"
    QUERY = "query"
    RESPONSE = "response"
    ACKNOWLEDGMENT = "acknowledgment"
    NOTIFICATION = "notification"
    BROADCAST = "broadcast"
    ERROR = "error"


class Priority(IntEnum):
    LOW = 0
    NORMAL = 1
    HIGH = 2
    URGENT = 3
    CRITICAL = 4


class DeliveryMode(StrEnum):
    AT_MOST_ONCE = "at-most-once"
    AT_LEAST_ONCE = "at-least-once"
    EXACTLY_ONCE = "exactly-once"


class DeliveryState(StrEnum):
    QUEUED = "queued"  # held back by the channel's max_pending
    WAITING = "waiting"  # scheduled send or retry back-off
    UNREAD = "unread"
    READ = "read"
    ACKED = "acked"
    DEAD = "dead"


class AckStatus(StrEnum):
    RECEIVED = "received"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"


class AckClock(StrEnum):
    """When a tracked delivery's ack deadline starts (a channel setting)."""

    SENT = "sent"  # at delivery
    READ = "read"  # at the recipient's first read of the delivery


class AckNotify(StrEnum):
    """Which acks also become an acknowledgment message to the sender (a channel setting)."""

    ALL = "all"
    FAILURES = "failures"  # only `failed`
    NONE = "none"


ACK_ORDER = {
    AckStatus.RECEIVED: 0,
    AckStatus.IN_PROGRESS: 1,
    AckStatus.COMPLETED: 2,
    AckStatus.FAILED: 2,
}
# tasks: their states and kinds; the rules are acomm_cli/engine/tasks.py's
TASK_STATES = ("created", "accepted", "updated", "completed", "failed", "overdue", "incident")
TASK_TYPES = ("task", "skill_distribution")
# `in_progress` is a filter only: messages a recipient holds with an in_progress ack
MESSAGE_STATUSES = ("sent", "delivered", "acknowledged", "dead_letter", "in_progress")
SYSTEM_CHANNEL = "_system"
# The recipient of a queue message nobody has claimed yet: the queue itself. Not a valid agent
# id, so no agent can be it (docs/DECISIONS.md, "Work queues").
QUEUE_RECIPIENT = "*"
SYSTEM_AGENT = "acomm"
DEADLETTER_TOPIC = "_system.message.deadletter"
DEAD_LETTER_REASONS = (
    "max_retries_exceeded",
    "expired",
    "recipient_left",
    "dispatch_failed",
    # federation's three: a message for an agent another node owns
    "no_owner",
    "owner_offline",
    "federation_max_attempts",
    "nacked",  # `acomm nack` without --requeue
    "channel_deleted",  # `channel delete --force`
    "cancelled",  # `acomm cancel`: a scheduled send withdrawn before its time
    "pool_deleted",  # `unsubscribe CH --group NAME --delete`: what waited in the pool
)
# A deleted channel keeps its history under this prefix and its id (`_deleted:7:team`), closed,
# so its name is free again
DELETED_PREFIX = "_deleted:"

# The names' characters as sets, checked without `re` (importing it cost about 2 ms of an
# `acomm send` process); each set is the regex it replaced, as
# a whole-string match. tests/test_lite_names.py checks both agree.
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_WORD = _ALNUM | {"_", "-"}
_CHANNEL_CHARS = _WORD  # [A-Za-z0-9_-]{1,128}
_AGENT_FIRST = _ALNUM | {"_", "@"}  # [A-Za-z0-9_@][A-Za-z0-9._@-]{0,127}
_AGENT_CHARS = _WORD | {".", "@"}
_CORRELATION_CHARS = _WORD | {".", ":"}  # [A-Za-z0-9._:-]{1,128}
_CAPABILITY_FIRST = _ALNUM | {"_"}  # [A-Za-z0-9_][A-Za-z0-9._-]{0,127}
_CAPABILITY_CHARS = _WORD | {"."}
_CONTROL = frozenset(map(chr, range(0x20)))  # a dedupe key: [^\x00-\x1f]{1,256}


def _made_of(value: str, chars: frozenset[str], most: int) -> bool:
    """`value` is 1 to `most` characters, each one of `chars` (TypeError for a non-str, as
    the regex's fullmatch raised)."""
    if not isinstance(value, str):
        raise TypeError(f"expected string, got {type(value).__name__}")
    return 0 < len(value) <= most and chars.issuperset(value)


def _ascii_digits(value: str) -> bool:
    """[0-9]+: ASCII only (int() would also take "１" or "٣")."""
    return value.isascii() and value.isdigit()


if TYPE_CHECKING:
    _T = TypeVar("_T")
    _E = TypeVar("_E", bound=StrEnum)


def utf8(value: _T, field_name: str) -> _T:
    """Refuse text that was not valid UTF-8 where it came from. Undecodable bytes on argv or
    stdin arrive as lone surrogates (surrogateescape), as do `\\udcff` escapes in JSON; SQLite
    cannot store them, so they are bad input (exit 3), never an internal error. Anything else
    passes unchanged (its own validator judges it)."""
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            code = ord(value[exc.start])
            what = (
                f"byte 0x{code - 0xDC00:02x}"
                if 0xDC80 <= code <= 0xDCFF
                else f"lone surrogate U+{code:04X}"
            )
            raise ValidationFailed(
                f"{field_name}: not valid UTF-8 ({what} at character {exc.start})",
                field=field_name,
                value_length=len(value),
            ) from None
    return value


def utf8_json(value: Any, field_name: str) -> None:
    """Every key and string inside a JSON value is valid UTF-8 (a batch line's `metadata`
    may nest objects and lists)."""
    stack = [value]
    while stack:  # a loop, not recursion: json.loads already bounded the depth
        v = stack.pop()
        if isinstance(v, dict):
            for k, item in v.items():
                utf8(k, field_name)
                stack.append(item)
        elif isinstance(v, list):
            stack.extend(v)
        else:
            utf8(v, field_name)


def whole_number(value: Any) -> int | None:
    """`value` as an int when it is one (not a bool) or a string of ASCII digits, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _ascii_digits(value.strip(" \t\r\n")):
        return int(value)
    return None


def _enum_value(enum: type[_E], value: str, field_name: str) -> _E:
    utf8(value, field_name)
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(e.value for e in enum)
        raise ValidationFailed(
            f"{field_name}: {value!r} is not one of {allowed}", field=field_name, value=value
        ) from None


def channel_type(value: str) -> ChannelType:
    return _enum_value(ChannelType, value, "type")


def role(value: str) -> Role:
    return _enum_value(Role, value, "role")


def delivery_mode(value: str) -> DeliveryMode:
    return _enum_value(DeliveryMode, value, "delivery")


def ack_status(value: str) -> AckStatus:
    return _enum_value(AckStatus, value, "status")


def ack_clock(value: str) -> AckClock:
    return _enum_value(AckClock, value, "ack_clock")


def ack_notify(value: str) -> AckNotify:
    return _enum_value(AckNotify, value, "ack_notify")


def message_type(value: str) -> MessageType:
    if value == "ack":
        return MessageType.ACKNOWLEDGMENT
    return _enum_value(MessageType, value, "type")


def priority(value: str | int) -> Priority:
    """A priority by name (`high`) or number (`2`, ASCII digits only)."""
    utf8(value, "priority")
    n = whole_number(value)
    if n is not None:
        if 0 <= n <= 4:
            return Priority(n)
    elif isinstance(value, str) and value.isascii() and value.upper() in Priority.__members__:
        # isascii: "hıgh".upper() is "HIGH" (a dotless i); names are ASCII
        return Priority[value.upper()]
    raise ValidationFailed(
        f"priority: {value!r} is not 0-4 or one of low, normal, high, urgent, critical",
        field="priority",
        value=value,
    )


def channel_name(name: str, *, allow_reserved: bool = False) -> str:
    utf8(name, "channel")
    if not isinstance(name, str) or not _made_of(name, _CHANNEL_CHARS, 128):
        raise ValidationFailed(
            f"channel: {name!r} must be 1-128 characters of A-Z a-z 0-9 _ -",
            field="channel",
            value=name,
        )
    if name.startswith("_") and not allow_reserved:
        raise ValidationFailed(
            f"channel: {name!r} is reserved (names starting with '_' belong to acomm)",
            field="channel",
            value=name,
        )
    return name


NAME_MAX = 128  # characters of a name: a channel's, an agent's, a pool's, a group key


def pool_name(name: str) -> str:
    """A worker pool's name (`subscribe --group`): as a channel's, 1-128 characters of
    A-Z a-z 0-9 _ -."""
    utf8(name, "group")
    if not isinstance(name, str) or not _made_of(name, _CHANNEL_CHARS, NAME_MAX):
        raise ValidationFailed(
            f"group: {name!r} must be 1-{NAME_MAX} characters of A-Z a-z 0-9 _ -",
            field="group",
            value=name,
        )
    return name


def cursor_name(name: str) -> str:
    """A replay cursor's name: as a channel's, 1-128 characters of A-Z a-z 0-9 _ -."""
    utf8(name, "cursor")
    if not isinstance(name, str) or not _made_of(name, _CHANNEL_CHARS, 128):
        raise ValidationFailed(
            f"cursor: {name!r} must be 1-128 characters of A-Z a-z 0-9 _ -",
            field="cursor",
            value=name,
        )
    return name


def agent_id(value: str, field_name: str = "agent") -> str:
    """Validate an agent id: `worker` or `worker@my-team`."""
    utf8(value, field_name)
    ok = (
        isinstance(value, str)
        and _made_of(value, _AGENT_CHARS, 128)
        and value[0] in _AGENT_FIRST
        and ".." not in value
        and value.count("@") <= 1
        and not value.startswith("@")
        and not value.endswith("@")
    )
    if not ok:
        raise ValidationFailed(
            f"{field_name}: {value!r} is not a valid agent id (1-128 characters of A-Z a-z 0-9 "
            ". _ - @, not starting with '.' or '-', no '..', at most one '@')",
            field=field_name,
            value=value,
        )
    # The team of `name@team` names a directory (the bridge's TEAMS_DIR/TEAM/inboxes), so it
    # follows the channel-name rule: `w@.` or `w@t.` would be accepted here and then fail in
    # the bridge on every tick.
    team = value.partition("@")[2]
    if "@" in value and not _made_of(team, _CHANNEL_CHARS, 128):
        raise ValidationFailed(
            f"{field_name}: {value!r} is not a valid agent id: its team {team!r} must be 1-128 "
            "characters of A-Z a-z 0-9 _ - (as a channel name)",
            field=field_name,
            value=value,
        )
    return value


_AGENT_IDS_SEEN: set[str] = set()  # agent ids agent_id accepted (bounded)


def agent_id_once(value: str, field_name: str = "agent") -> None:
    """agent_id(value, field_name), remembered: a long-running process (a reader, an acker,
    a sender) checks a name it has accepted once, not once or twice a message."""
    if type(value) is not str or value not in _AGENT_IDS_SEEN:
        agent_id(value, field_name)
        if len(_AGENT_IDS_SEEN) >= 1024:
            _AGENT_IDS_SEEN.clear()
        _AGENT_IDS_SEEN.add(value)


def correlation_id(value: str) -> str:
    utf8(value, "correlation_id")
    if not _made_of(value, _CORRELATION_CHARS, 128):
        raise ValidationFailed(
            f"correlation_id: {value!r} must be 1-128 characters of A-Z a-z 0-9 . _ : -",
            field="correlation_id",
            value=value,
        )
    return value


def capability_id(value: str) -> str:
    """A capability id, what an agent can do: `code-review`, `deploy.staging`."""
    utf8(value, "capability")
    if (
        not isinstance(value, str)
        or not _made_of(value, _CAPABILITY_CHARS, 128)
        or value[0] not in _CAPABILITY_FIRST
        or ".." in value
    ):
        raise ValidationFailed(
            f"capability: {value!r} must be 1-128 characters of A-Z a-z 0-9 . _ -, not "
            "starting with '.' or '-', no '..'",
            field="capability",
            value=value,
        )
    return value


def dedupe_key(value: str) -> str:
    utf8(value, "dedupe_key")
    if not (isinstance(value, str) and 0 < len(value) <= 256 and _CONTROL.isdisjoint(value)):
        raise ValidationFailed(
            f"dedupe_key: {value!r} must be 1-256 printable characters",
            field="dedupe_key",
            value=value,
        )
    return value


def event_type(value: str) -> str:
    """One of EVENT_TYPES (exit 3 naming `event_type` and the allowed values)."""
    if value not in EVENT_TYPES:
        raise ValidationFailed(
            f"event_type: {value!r} is not one of {', '.join(EVENT_TYPES)}",
            field="event_type",
            value=value,
            allowed=list(EVENT_TYPES),
        )
    return value


class GrepPattern:
    """A compiled `--grep` pattern: `search(text)` is true where the pattern matches."""

    __slots__ = ("_search",)

    def __init__(self, search: Any) -> None:
        self._search = search

    def search(self, text: str) -> bool:
        return self._search(text) is not None


def grep_pattern(pattern: str) -> GrepPattern:
    """Compile a `--grep` pattern with RE2 (google-re2): it matches in time linear in the text,
    so no pattern can hold a reader (Python's `re` backtracks: `^(a+)+$` on 41 characters runs
    for minutes). RE2 has no backreferences or lookaround, and `\\d \\w \\s \\b` are ASCII:
    a pattern it cannot compile is refused. Without google-re2 (a platform with no wheel)
    Python's `re` is used, unbounded (docs/HISTORY.md)."""
    utf8(pattern, "grep")
    try:
        import re2  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        return _python_pattern(pattern)
    options = re2.Options()
    options.log_errors = False  # its own stderr lines; the refusal says it
    try:
        compiled = re2.compile(pattern, options)
    except re2.error as exc:
        _python_pattern(pattern)  # Python's message first, where Python cannot read it either
        why = exc.args[0].decode(errors="replace") if exc.args else str(exc)
        raise ValidationFailed(
            f"grep: {pattern!r} is not a pattern acomm can match in bounded time ({why}; "
            "backreferences and lookaround are not supported)",
            field="grep",
            value=pattern,
        ) from None
    return GrepPattern(compiled.search)


def _python_pattern(pattern: str) -> GrepPattern:
    import re

    try:
        return GrepPattern(re.compile(pattern).search)
    except re.error as exc:
        raise ValidationFailed(
            f"grep: {pattern!r} is not a valid regular expression: {exc}",
            field="grep",
            value=pattern,
        ) from None


def metadata_pairs(pairs: list[str] | None) -> dict[str, str] | None:
    """`--meta k=v` options -> a metadata object."""
    if not pairs:
        return None
    out = {}
    for pair in pairs:
        utf8(pair, "metadata")
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValidationFailed(
                f"metadata: {pair!r} is not key=value", field="metadata", value=pair
            )
        out[key] = value
    return out


# A metadata filter's key becomes part of the SQL (a JSON path written out, so that an
# expression index on it can serve the query): only these characters, and at most
# META_KEY_MAX of them. Values are always bound, never written out.
META_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:/")
META_KEY_MAX = 128
META_VALUE_MAX = 1024
META_FILTERS_MAX = 16
META_OPS = ("eq", "ne", "has", "absent")


@dataclass(frozen=True)
class MetaCondition:
    """One `--meta` filter: `KEY=VALUE` (eq), `KEY!=VALUE` (ne: also true where the key is
    missing), `KEY` (has) or `!KEY` (absent)."""

    key: str
    op: str
    value: str | None = None


def meta_key(key: str, field: str = "meta") -> str:
    """A metadata key a filter or an index may name (checked, returned)."""
    if not key or len(key) > META_KEY_MAX or not META_KEY_CHARS.issuperset(key):
        raise ValidationFailed(
            f"{field}: key {key!r} must be 1-{META_KEY_MAX} characters of letters, digits"
            " and _ - . : /",
            field=field,
            value=key,
        )
    return key


def meta_conditions(specs: list[str] | None, field: str = "meta") -> tuple[MetaCondition, ...]:
    """`--meta` filter options -> conditions, all of which a message must meet."""
    if not specs:
        return ()
    if len(specs) > META_FILTERS_MAX:
        raise ValidationFailed(
            f"{field}: at most {META_FILTERS_MAX} metadata filters, got {len(specs)}",
            field=field,
            value=len(specs),
        )
    out = []
    for spec in specs:
        utf8(spec, field)
        key, sep, value = spec.partition("=")
        if sep and key.endswith("!"):
            key, op = key[:-1], "ne"
        elif sep:
            op = "eq"
        elif key.startswith("!"):
            key, op, value = key[1:], "absent", ""
        else:
            op = "has"
        meta_key(key, field)
        if len(value) > META_VALUE_MAX:
            raise ValidationFailed(
                f"{field}: the value for {key!r} is longer than {META_VALUE_MAX} characters",
                field=field,
                value=spec[:64],
            )
        out.append(MetaCondition(key, op, value if op in ("eq", "ne") else None))
    return tuple(out)


# The largest max_message_size a channel may have: SQLite stores at most SQLITE_MAX_LENGTH
# (1,000,000,000 bytes, compiled in; `sqlite3.Connection.getlimit` cannot raise it) in one
# row, and a message's row holds its content beside the sender, topic, metadata...; 1 MiB of
# that is left for them. A larger setting would accept messages the store then refuses with
# "string or blob too big".
SQLITE_MAX_LENGTH = 1_000_000_000
MAX_MESSAGE_SIZE_BOUND = SQLITE_MAX_LENGTH - 1024**2


@dataclass(frozen=True)
class ChannelConfig:
    """A channel's configuration, as stored with it."""

    delivery: DeliveryMode = DeliveryMode.AT_MOST_ONCE
    max_message_size: int = 1_048_576
    ack_timeout_ms: int = 30_000
    max_retries: int = 3
    retry_backoff_ms: int = 1000
    retry_jitter: float = 0.0
    echo: bool = False
    priority_ordering: bool = False
    max_pending: int = 0
    dedupe_window_ms: int = 86_400_000
    retention_count: int = 0
    retention_age_ms: int = 0
    lease_ms: int = 0  # how long a received/in_progress ack holds a delivery; 0 = ack_timeout
    message_ttl_ms: int = 0  # the default time to live of a message sent here; 0 = none
    retry_failed: bool = False  # a `failed` ack gives the delivery back for a retry
    ack_clock: AckClock = AckClock.SENT
    ack_notify: AckNotify = AckNotify.ALL

    @property
    def effective_lease_ms(self) -> int:
        return self.lease_ms or self.ack_timeout_ms

    def deadline_at(self, delivered_at: int) -> int | None:
        """The ack deadline of a tracked delivery made at `delivered_at` (None: it starts at
        the first read)."""
        return delivered_at + self.ack_timeout_ms if self.ack_clock == AckClock.SENT else None

    def notifies(self, status: AckStatus) -> bool:
        """Does an ack with this status also become a message to the sender?"""
        if self.ack_notify == AckNotify.ALL:
            return True
        return self.ack_notify == AckNotify.FAILURES and status == AckStatus.FAILED


@dataclass(frozen=True)
class Limits:
    """Store-wide backpressure: how much unread or undelivered work a store holds before sends
    are refused or slowed; 0 disables a limit."""

    max_active_messages: int = 100_000
    max_store_bytes: int = 2 * 1024**3
    reserve_bytes: int = 100 * 1024**2  # refuse sends this close to max_store_bytes
    warn_fraction: float = 0.9
    # federation: a node is online while its lastSeenAt is this recent (routing on send)
    fed_offline_after_ms: int = 30_000
    fed_ack_timeout_ms: int = 30_000  # the first retry of an event not yet accepted
    # capabilities: this many routing misses within the window open a review incident
    cap_miss_threshold: int = 3
    cap_miss_window_ms: int = 3_600_000
    # `send --attach`: the largest file, and the most a message's files may add up to
    max_attachment_bytes: int = 10 * 1024**2
    max_message_attachment_bytes: int = 25 * 1024**2
    preview_chars: int = 280  # an event's content_preview: the body's first N characters


@dataclass(frozen=True)
class Participant:
    """An agent on a channel, its role there, and whether the owner made it an admin (it may
    then change the channel's state, settings and membership)."""

    agent: str
    role: Role
    admin: bool = False


@dataclass(frozen=True)
class Channel:
    """A channel as the engine reads it: its config and participants."""

    id: int
    name: str
    type: ChannelType
    owner: str
    state: ChannelState
    config: ChannelConfig
    created_at: int
    participants: tuple[Participant, ...] = ()

    def role_of(self, agent: str) -> Role | None:
        for p in self.participants:
            if p.agent == agent:
                return p.role
        return None

    def is_admin(self, agent: str) -> bool:
        """The owner, or a participant the owner made an admin."""
        return agent == self.owner or any(p.agent == agent and p.admin for p in self.participants)


@dataclass(frozen=True)
class ChannelChange:
    """A join, leave or state change: the channel after it, and whether anything changed
    (False when the channel or agent was already so: a repeat is a no-op scripts may retry)."""

    channel: Channel
    changed: bool


@dataclass(slots=True)  # slots: a receive of 100 builds 200 of these objects
class Delivery:
    """One recipient's copy of a message: its state, timers and ack."""

    recipient: str
    state: DeliveryState
    retry_count: int = 0
    delivered_at: int | None = None
    read_at: int | None = None
    ack_status: str | None = None
    acked_at: int | None = None
    next_timer_at: int | None = None
    first_read_at: int | None = None  # read_at is the latest read; this the first


@dataclass(slots=True)
class Message:
    """A message with its deliveries, as receive, history and show return it."""

    id: int
    channel: str
    channel_id: int
    sender: str
    type: MessageType
    content: str
    topic: str | None
    priority: Priority
    correlation_id: str | None
    dedupe_key: str | None
    metadata: dict[str, Any]
    created_at: int
    deliver_at: int | None
    global_id: str | None = None  # federation: the eventId, on both nodes (None: local only)
    origin_node: str | None = None  # federation: the node the message was first sent on
    deliveries: list[Delivery] = field(default_factory=list)
    delivery: Delivery | None = None  # set in receive results: the receiving agent's own
    federation: dict[str, Any] | None = None  # set by `show` for a federated message
    trace_id: str | None = None  # the trace it belongs to (None: stored before traces)
    rich: RichParts | None = None  # format, subject, files, direction (engine/attachments.py)
    event: Event | None = None  # the notification event it carries (message_events)
    search: SearchHit | None = None  # set by `messages --search`: its rank and snippet
    group_key: str | None = None  # its FIFO group (`send --group-key`), kept on its pool rows

    @property
    def status(self) -> str:
        return message_status(
            [d.state for d in self.deliveries]
            if self.deliveries
            else ([self.delivery.state] if self.delivery else [])
        )


EVENT_TYPES = (
    "comment.created",
    "comment.replied",
    "mention.created",
    "like.created",
    "thread.created",
    "agent.action.feedback",
)
COMMENT_EVENTS = ("comment.created", "comment.replied")  # the only ones with a depth
ACTION_HINTS = ("notify_only", "consider_reply", "must_reply")


@dataclass(frozen=True)
class Event:
    """The notification event a message carries (message_events): who did what to whom,
    where in a thread, and acomm's preview of the body. Times in ms."""

    event_type: str
    event_id: str | None = None
    occurred_at: int | None = None
    actor: str | None = None
    target: str | None = None
    target_kind: str | None = None  # the target's directory kind when it was sent
    thread_id: str | None = None
    comment_id: str | None = None
    parent_comment_id: str | None = None
    depth: int | None = None
    language: str | None = None
    action_hint: str | None = None
    content_preview: str | None = None


def message_status(states: list[DeliveryState]) -> str:
    """Derive a message's status from its deliveries' states."""
    if any(s == DeliveryState.DEAD for s in states):
        return "dead_letter"
    if states and all(s == DeliveryState.ACKED for s in states):
        return "acknowledged"
    if any(s in (DeliveryState.UNREAD, DeliveryState.READ, DeliveryState.ACKED) for s in states):
        return "delivered"
    return "sent"


@dataclass(frozen=True)
class Attachment:
    """A file a message names: its name there, the sha256 of its bytes (the blob's key), its
    size and guessed content type; `data` only while it is being sent or fetched."""

    name: str
    sha256: str
    size: int
    content_type: str | None = None
    data: bytes | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class RichParts:
    """A message's rich parts: `format` (text | markdown; None: text), `subject`, the files
    it names, and on read the kinds at both ends of a direct message (`direction`, e.g.
    A2U: U a human, A an agent or service)."""

    format: str | None = None
    subject: str | None = None
    attachments: tuple[Attachment, ...] = ()
    direction: str | None = None


@dataclass(frozen=True)
class SendRequest:
    """What a caller asks to send; the pipeline validates every field."""

    sender: str
    content: str
    channel: str | None = None
    type: str = "text"
    priority: str | int = "normal"
    topic: str | None = None
    correlation_id: str | None = None
    dedupe_key: str | None = None
    metadata: dict[str, Any] | None = None
    delay_ms: int | None = None
    deliver_at: int | None = None
    expires_at: int | None = None
    # time to live: not read by then (from delivery), dead-lettered `expired`
    ttl_ms: int | None = None
    # the trace it joins (None: inherited from what it answers, else a new one)
    trace_id: str | None = None
    rich: RichParts | None = None  # format, subject and files (engine/attachments.py)
    # the notification event it carries: engine/events.py FIELDS -> value (None: no event)
    event: dict[str, Any] | None = None
    # FIFO group: one in flight at a time per key, in send order (queues and worker pools)
    group_key: str | None = None
    # a publish that no subscription matches is refused instead of stored with a note
    require_recipient: bool = False


@dataclass(frozen=True)
class SendResult:
    """What one send stored: the message id and who it was delivered to."""

    id: int
    channel: str
    channel_id: int
    recipients: tuple[str, ...]
    status: str
    created_at: int
    correlation_id: str | None
    deduplicated: bool = False
    # federation: a message to an agent owned by another node
    global_id: str | None = None
    to_node: str | None = None
    route_decision: str | None = None
    # deduplicated: the recipients this send was not handed to because they had it already
    # (exactly-once: the same correlation id; a dedupe key: the first message's recipients)
    suppressed: tuple[str, ...] = ()
    trace_id: str | None = None  # the trace the message joined (a deduplicated one: unset)


@dataclass
class MessageFilter:
    """The filters `receive` and `messages` share."""

    channel: str | None = None
    since: int | None = None
    until: int | None = None
    types: tuple[MessageType, ...] = ()
    sender: str | None = None
    topic: str | None = None
    status: tuple[str, ...] = ()
    grep: str | None = None
    priority_min: Priority | None = None
    sort: str | None = None  # created | priority | id; None = the command's default
    order: str | None = None  # asc | desc
    limit: int = 100
    offset: int = 0
    after_id: int | None = None  # only messages with a higher id (`messages --follow`)
    # `messages` only: the correlation id; a delivery to `recipient` and/or in
    # one of `state` (both given: that recipient's delivery in one of those states)
    correlation_id: str | None = None
    recipient: str | None = None
    state: tuple[str, ...] = ()
    trace_id: str | None = None  # `messages --trace`: the messages of one trace
    # the notification event a message carries (message_events)
    event_type: str | None = None
    thread_id: str | None = None
    actor: str | None = None
    meta: tuple[MetaCondition, ...] = ()  # `--meta`: every condition holds
    search: str | None = None  # `messages --search`: an FTS5 expression (engine/search.py)


@dataclass
class SearchHit:
    """Where a message stands in a full-text search: its bm25 rank (the lower, the better;
    None when the search is ordered otherwise) and the words around its best match."""

    rank: float | None
    snippet: str


@dataclass
class QueryResult:
    """A page of messages and whether more match."""

    messages: list[Message]
    total_count: int
    offset: int = 0
    # a full-text search counts its matches only so far: True when more than total_count
    # match, False when it is exact; None where every total is exact (no such field)
    total_is_lower_bound: bool | None = None

    @property
    def has_more(self) -> bool:
        return self.total_count > self.offset + len(self.messages)
