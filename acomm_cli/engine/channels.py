"""Channels: creation, membership, states, pubsub subscriptions, who may change them, and the
release of deliveries held back by `max_pending`. One transaction per function. Changing the
settings, admins, and deleting are in `channel_admin.py`."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from acomm_cli import clock, model
from acomm_cli.engine import directory
from acomm_cli.errors import (
    Duplicate,
    Forbidden,
    InvalidState,
    NotFound,
    ValidationFailed,
)
from acomm_cli.model import (
    Channel,
    ChannelChange,
    ChannelConfig,
    ChannelState,
    ChannelType,
    Role,
)
from acomm_cli.store import backlog, channels, write
from acomm_cli.topics import validate_pattern

TYPE_CHECKING = False  # typing's, without importing typing (a send's start-up time)
if TYPE_CHECKING:
    from dataclasses import replace
    from typing import Any
else:  # the same classes, without importing dataclasses (a send's start-up time)
    from acomm_cli.lite.records import replace

# ---------------------------------------------------------------- channels


def channel_config(base: ChannelConfig | None = None, **overrides: Any) -> ChannelConfig:
    """Validate channel settings given on the command line (None = keep the default)."""
    cfg = base or ChannelConfig()
    given = {k: v for k, v in overrides.items() if v is not None}
    if "delivery" in given:
        given["delivery"] = model.delivery_mode(given["delivery"])
    if "ack_clock" in given:
        given["ack_clock"] = model.ack_clock(given["ack_clock"])
    if "ack_notify" in given:
        given["ack_notify"] = model.ack_notify(given["ack_notify"])
    for key in (
        "max_message_size",
        "ack_timeout_ms",
        "max_retries",
        "retry_backoff_ms",
        "max_pending",
        "dedupe_window_ms",
        "retention_count",
        "retention_age_ms",
    ):
        if key in given and given[key] < 0:
            raise ValidationFailed(
                f"{key}: {given[key]} must not be negative", field=key, value=given[key]
            )
    if given.get("max_message_size") == 0:
        raise ValidationFailed(
            "max_message_size: must be at least 1 byte", field="max_message_size", value=0
        )
    size = given.get("max_message_size")
    if size is not None and size > model.MAX_MESSAGE_SIZE_BOUND:
        raise ValidationFailed(
            f"max_message_size: {size} bytes ({size / 1024**2:g} MiB) is above the bound of "
            f"{model.MAX_MESSAGE_SIZE_BOUND} bytes (SQLite stores at most "
            f"{model.SQLITE_MAX_LENGTH} bytes in one row, content and the rest of the message)",
            field="max_message_size",
            value=size,
            bound=model.MAX_MESSAGE_SIZE_BOUND,
        )
    if given.get("ack_timeout_ms") == 0:
        raise ValidationFailed("ack_timeout: must be longer than 0", field="ack_timeout", value=0)
    for key, name in (("lease_ms", "lease"), ("message_ttl_ms", "message_ttl")):
        if key in given and given[key] <= 0:  # omit them for the defaults
            raise ValidationFailed(
                f"{name}: {given[key]} ms must be longer than 0", field=name, value=given[key]
            )
    jitter = given.get("retry_jitter")
    if jitter is not None and not 0 <= jitter <= 1:
        raise ValidationFailed(
            f"retry_jitter: {jitter} must be a fraction from 0 to 1",
            field="retry_jitter",
            value=jitter,
        )
    cfg = replace(cfg, **given)
    if cfg.retry_failed and cfg.delivery == model.DeliveryMode.EXACTLY_ONCE:
        raise ValidationFailed(
            "retry_failed: an exactly-once channel never hands a message "
            "out twice, so it cannot retry failures",
            field="retry_failed",
            value=True,
        )
    return cfg


def _channel(conn: sqlite3.Connection, name: str) -> Channel:
    model.utf8(name, "channel")
    ch = channels.channel_by_name(conn, name)
    if ch is None:
        raise NotFound(f"channel {name!r} does not exist", field="channel", value=name)
    return ch


def channel_by_id(conn: sqlite3.Connection, channel_id: int) -> Channel:
    """A channel the caller knows exists: just written, or named by a row read in the same
    transaction (rows are never deleted: `channel delete` closes and renames them)."""
    ch = channels.channel_by_id(conn, channel_id)
    if ch is None:
        raise NotFound(f"channel {channel_id} does not exist", field="channel", value=channel_id)
    return ch


def create_channel(
    conn: sqlite3.Connection,
    name: str,
    type_: str,
    owner: str,
    cfg: ChannelConfig,
    now: int,
    *,
    if_not_exists: bool = False,
) -> Channel:
    model.channel_name(name)
    ctype = model.channel_type(type_)
    model.agent_id(owner, "owner")
    if ctype == ChannelType.QUEUE:  # imported here: `acomm send` loads no queue module
        from acomm_cli.engine import queues

        queues.check_config(ctype, cfg)
    with write(conn):
        existing = channels.channel_by_name(conn, name)
        if existing is not None:
            if if_not_exists and existing.type == ctype:
                return existing
            raise Duplicate(
                f"channel {name!r} already exists (type {existing.type.value})"
                + ("" if not if_not_exists else f", not {ctype.value}"),
                field="channel",
                value=name,
            )
        cid = channels.insert_channel(conn, name, ctype.value, owner, cfg, now)
        channels.insert_participant(conn, cid, owner, Role.OWNER.value, now)
        directory.enlist(conn, owner, now)  # naming an owner registers it
        return channel_by_id(conn, cid)


def authorize(ch: Channel, actor: str, action: str, *, owner_only: bool = False) -> None:
    """Only the owner (or, unless `owner_only`, an admin the owner made) may change a
    channel's state, settings or membership. `--as` is who the caller says it is:
    this keeps cooperating agents from changing each other's channels by mistake, it does not
    authenticate them (tokens do that on the gateway)."""
    model.agent_id(actor, "as")
    if actor == ch.owner or (not owner_only and ch.is_admin(actor)):
        return
    who = f"its owner {ch.owner!r}" + ("" if owner_only else " or an admin")
    raise Forbidden(
        f"{actor!r} may not {action} channel {ch.name!r}: only {who} may",
        field="as",
        value=actor,
        channel=ch.name,
        owner=ch.owner,
    )


def get_channel(conn: sqlite3.Connection, name: str) -> Channel:
    return _channel(conn, name)


def list_channels(conn: sqlite3.Connection) -> list[Channel]:
    return channels.list_channels(conn)


def join_channel(
    conn: sqlite3.Connection, name: str, agent: str, role: str, now: int, *, by: str
) -> ChannelChange:
    """`by` adds `agent` (itself included): the owner's or an admin's call. Joining twice is
    a no-op (`changed` False, the first role kept)."""
    model.agent_id(agent)
    r = model.role(role)
    if r == Role.OWNER:
        raise ValidationFailed(
            "role: a channel has one owner, set when it is created", field="role", value=role
        )
    with write(conn):
        ch = _channel(conn, name)
        authorize(ch, by, f"add {agent!r} to")
        _check_joinable(ch, agent)
        directory.enlist(conn, agent, now)  # adding an agent to a channel registers it
        if not channels.insert_participant(conn, ch.id, agent, r.value, now):
            return ChannelChange(ch, changed=False)
        return ChannelChange(channel_by_id(conn, ch.id), changed=True)


def _check_joinable(ch: Channel, agent: str) -> None:
    if ch.state == ChannelState.CLOSED:
        raise InvalidState(f"channel {ch.name!r} is closed", field="channel", value=ch.name)
    if ch.type == ChannelType.DIRECT and ch.role_of(agent) is None and len(ch.participants) >= 2:
        raise InvalidState(
            f"channel {ch.name!r} is direct and already has two participants",
            field="channel",
            value=ch.name,
        )


def leave_channel(
    conn: sqlite3.Connection, name: str, agent: str, now: int, *, by: str
) -> ChannelChange:
    """Leave a channel; what was still waiting for the agent there is dead-lettered. An agent
    that is not a participant is out already: a no-op (`changed` False). Any agent may leave
    (`by` itself); the owner or an admin may remove others, but only the owner an admin."""
    model.agent_id(agent)
    model.agent_id(by, "as")
    with write(conn):
        ch = _channel(conn, name)
        if by != agent:
            authorize(
                ch,
                by,
                f"remove {agent!r} from",
                owner_only=ch.is_admin(agent) and agent != ch.owner,
            )
        role = ch.role_of(agent)
        if role is None:
            return ChannelChange(ch, changed=False)
        if role == Role.OWNER:
            raise InvalidState(
                f"{agent!r} owns {name!r} and cannot leave it (close it instead)",
                field="agent",
                value=agent,
            )
        served = channels.pool_patterns(conn, ch.id, agent) if ch.type == ChannelType.PUBSUB else []
        channels.delete_participant(conn, ch.id, agent)
        from acomm_cli.engine import queues  # only on a leave: not on the send path

        if ch.type == ChannelType.QUEUE:
            queues.give_back(conn, ch.id, agent)
        if served:  # a pool member's claims go back to its pool, which outlives it
            queues.left_pools(conn, ch.id, agent, served, now)
        pending = backlog.pending_deliveries_of(conn, ch.id, agent)
        from acomm_cli.engine import deadletters  # only on a leave: not on the send path

        deadletters.dead_letter(
            conn,
            [(mid, agent, ch.id, n) for mid, n in pending],
            "recipient_left",
            f"{agent} left {name}",
            now,
        )
        release(conn, now)
        return ChannelChange(channel_by_id(conn, ch.id), changed=True)


_TRANSITIONS = {
    "pause": ({ChannelState.ACTIVE}, ChannelState.PAUSED),
    "resume": ({ChannelState.PAUSED, ChannelState.DRAINING}, ChannelState.ACTIVE),
    "drain": ({ChannelState.ACTIVE, ChannelState.PAUSED}, ChannelState.DRAINING),
    "close": (
        {ChannelState.ACTIVE, ChannelState.PAUSED, ChannelState.DRAINING},
        ChannelState.CLOSED,
    ),
}


def change_channel_state(
    conn: sqlite3.Connection, name: str, action: str, *, by: str
) -> ChannelChange:
    """pause, resume, drain or close, by the owner or an admin. A channel already in the
    target state is left alone (`changed` False); a transition the states do not allow (e.g.
    resuming a closed channel) is a conflict."""
    allowed, target = _TRANSITIONS[action]
    with write(conn):
        ch = _channel(conn, name)
        if name == model.SYSTEM_CHANNEL:
            raise Forbidden(f"channel {name!r} belongs to acomm", field="channel", value=name)
        authorize(ch, by, action)
        if ch.state == target:
            return ChannelChange(ch, changed=False)
        if ch.state not in allowed:
            raise InvalidState(
                f"cannot {action} channel {name!r}: it is {ch.state.value}",
                field="channel",
                value=name,
                state=ch.state.value,
            )
        channels.set_channel_state(conn, ch.id, target.value)
        return ChannelChange(replace(ch, state=target), changed=True)


# ---------------------------------------------------------------- subscriptions


def subscribe(
    conn: sqlite3.Connection,
    name: str,
    pattern: str,
    agent: str,
    now: int,
    group: str | None = None,
) -> bool:
    """Subscribe (joining as a member if needed); False when the subscription existed.
    With `group`, the agent serves that worker pool: the pool gets one copy of each matching
    message, claimed by one member. An agent's subscriptions on one channel are all its own
    or all for one pool: else one message could reach it twice."""
    model.agent_id(agent)
    validate_pattern(pattern)
    if group is not None:
        model.pool_name(group)
    with write(conn):
        ch = _pubsub(conn, name)
        held = channels.subscription_groups(conn, ch.id, agent)
        if held and held != {group}:
            other = next(iter(held))
            raise InvalidState(
                f"{agent!r} already subscribes to {name!r} "
                + (f"for group {other!r}" if other else "for its own copy")
                + "; unsubscribe those first (an agent's subscriptions on a channel are all "
                "its own or all for one group)",
                field="group",
                value=group,
            )
        if ch.role_of(agent) is None:
            _check_joinable(ch, agent)
            channels.insert_participant(conn, ch.id, agent, Role.MEMBER.value, now)
        directory.enlist(conn, agent, now)  # a subscriber is registered
        if group is not None:  # a member again: the pool's patterns are its members' now
            channels.drop_pool_bindings(conn, ch.id, group)
        return channels.insert_subscription(conn, ch.id, agent, pattern, now, group)


def unsubscribe(
    conn: sqlite3.Connection, name: str, pattern: str, agent: str, now: int | None = None
) -> bool:
    """Remove a subscription; False (a no-op) when there was none. A pool member whose last
    subscription for its pool goes gives back what it claimed and has not finished; the
    pool outlives its last member (queues.left_pools), its kept patterns dated `now` (the
    clock's, when not given)."""
    model.agent_id(agent)
    validate_pattern(pattern)
    with write(conn):
        ch = _pubsub(conn, name)
        served = [(g, p) for g, p in channels.pool_patterns(conn, ch.id, agent) if p == pattern]
        gone = channels.delete_subscription(conn, ch.id, agent, pattern)
        if gone and served:
            from acomm_cli.engine import queues

            at = clock.now_ms() if now is None else now
            queues.left_pools(conn, ch.id, agent, served, at)
        return gone


def delete_pool(conn: sqlite3.Connection, name: str, group: str, by: str, now: int) -> int:
    """`unsubscribe CH --group NAME --delete`: a worker pool without members goes, with
    the patterns it kept; what waited in it becomes `pool_deleted` dead letters (returns
    how many). The channel's owner or an admin only; a pool with members is refused."""
    model.pool_name(group)
    with write(conn):
        ch = _pubsub(conn, name)
        authorize(ch, by, f"delete worker pool {group!r} of")
        from acomm_cli.engine import queues

        return queues.delete_pool(conn, ch, group, now)


def list_subscriptions(conn: sqlite3.Connection, name: str) -> list[tuple[str, str]]:
    return channels.subscriptions(conn, _pubsub(conn, name).id)


def list_grouped_subscriptions(
    conn: sqlite3.Connection, name: str
) -> list[tuple[str, str, str | None]]:
    """(agent, pattern, group or None) of a pubsub channel's subscriptions."""
    return channels.subscriptions_grouped(conn, _pubsub(conn, name).id)


def _pubsub(conn: sqlite3.Connection, name: str) -> Channel:
    ch = _channel(conn, name)
    if ch.type != ChannelType.PUBSUB:
        raise InvalidState(
            f"channel {name!r} is {ch.type.value}, not pubsub", field="channel", value=name
        )
    return ch


def release(conn: sqlite3.Connection, now: int, channel_ids: Sequence[int] | None = None) -> int:
    """Let queued deliveries through, oldest first, where max_pending has room again (only
    on `channel_ids`, when the caller knows which channels it made room on)."""
    released = 0
    for cid, max_pending, ack_timeout in backlog.channels_with_queued(conn, channel_ids):
        pending, _ = backlog.channel_backlog(conn, cid)
        if pending < max_pending:
            released += backlog.release_queued(conn, cid, max_pending - pending, now, ack_timeout)
    return released
