"""Administering a channel after its creation: making an agent an admin, changing
its settings, deleting it. Each is one transaction, by the owner (or an admin, for settings);
who may do what is `channels.authorize`.

A deleted channel is not removed: its messages, dead letters and history stay, so it is closed
for good and renamed `_deleted:ID:NAME` (a reserved name nobody can create), which frees its
name. What it still had in flight dies first, as `channel_deleted` dead letters, and only
with `force`: nothing accepted is lost silently."""

from __future__ import annotations

import sqlite3

from acomm_cli import model
from acomm_cli.engine import deadletters
from acomm_cli.engine.channels import authorize, channel_by_id, channel_config, release
from acomm_cli.engine.channels import get_channel as _channel
from acomm_cli.errors import Forbidden, InvalidState, NotParticipant, UsageError
from acomm_cli.model import Channel, ChannelChange
from acomm_cli.store import backlog, channels, metafilter, timers, write

TYPE_CHECKING = False  # typing's, without importing typing (a send's start-up time)
if TYPE_CHECKING:
    from dataclasses import dataclass
    from typing import Any
else:  # the same classes, without importing dataclasses (a send's start-up time)
    from acomm_cli.lite.records import dataclass


def _not_reserved(ch: Channel, action: str) -> None:
    """`_system`, direct (`_dm:`) and federation (`_fed:`) channels are made by acomm, which
    relies on them: they are not deleted or reconfigured by hand."""
    if ch.name.startswith("_"):
        raise Forbidden(
            f"cannot {action} channel {ch.name!r}: acomm made it and relies on it",
            field="channel",
            value=ch.name,
        )


def set_admin(
    conn: sqlite3.Connection, name: str, agent: str, *, by: str, admin: bool = True
) -> ChannelChange:
    """The owner makes a participant an admin (or, `admin` False, no longer one). A repeat is
    a no-op (`changed` False). Only participants: leaving ends the grant."""
    model.agent_id(agent)
    with write(conn):
        ch = _channel(conn, name)
        authorize(
            ch,
            by,
            f"make {agent!r} an admin of" if admin else f"revoke {agent!r}'s admin rights on",
            owner_only=True,
        )
        if agent == ch.owner:
            raise InvalidState(
                f"{agent!r} owns channel {name!r}: an owner is more than an admin already",
                field="agent",
                value=agent,
                channel=name,
            )
        if ch.role_of(agent) is None:
            raise NotParticipant(
                f"{agent!r} is not in channel {name!r}; add it first "
                f"(acomm channel join {name} {agent} --as {by})",
                field="agent",
                value=agent,
                channel=name,
            )
        if not channels.set_admin(conn, ch.id, agent, admin):
            return ChannelChange(ch, changed=False)
        return ChannelChange(channel_by_id(conn, ch.id), changed=True)


@dataclass(frozen=True)
class Update:
    """What `channel update` did: the channel after it, each setting changed as (from, to),
    the deliveries that were in flight (they keep the deadlines and expiry they have: the new
    settings apply to what is sent and delivered from now on) and those a larger
    max_pending let through."""

    channel: Channel
    changes: dict[str, tuple[Any, Any]]
    in_flight: int
    released: int


def update_channel(
    conn: sqlite3.Connection,
    name: str,
    now: int,
    *,
    by: str,
    index_meta: tuple[str, ...] = (),
    drop_index_meta: tuple[str, ...] = (),
    **settings: Any,
) -> Update:
    """Change settings (ChannelConfig fields; None = leave as is), by the owner or an admin.
    Validated as `channel create` validates them, against the channel's other settings (an
    exactly-once channel cannot retry failures). The delivery mode and the type are not among
    them: deliveries in flight were made under their promises. `index_meta` /
    `drop_index_meta`: metadata keys whose expression index over the channel's messages is
    built or dropped (building one reads every message of the channel once)."""
    given = {k: v for k, v in settings.items() if v is not None}
    unknown = set(given) - set(channels.UPDATABLE)
    assert not unknown, f"not updatable: {unknown}"
    adding = tuple(dict.fromkeys(model.meta_key(k, "index_meta") for k in index_meta))
    dropping = tuple(dict.fromkeys(model.meta_key(k, "drop_index_meta") for k in drop_index_meta))
    both = set(adding) & set(dropping)
    if both:
        key = min(both)
        raise UsageError(
            f"index_meta: {key!r} is both indexed and dropped; give it once",
            field="index_meta",
            value=key,
        )
    if not given and not adding and not dropping:
        raise UsageError(
            "channel update: give at least one setting to change (see --help)", field="settings"
        )
    with write(conn):
        ch = _channel(conn, name)
        _not_reserved(ch, "update")
        authorize(ch, by, "update")
        cfg = channel_config(ch.config, **given)
        changes: dict[str, tuple[Any, Any]] = {
            k: (getattr(ch.config, k), getattr(cfg, k))
            for k in given
            if getattr(ch.config, k) != getattr(cfg, k)
        }
        if adding or dropping:
            before = metafilter.indexed_keys(conn, ch.id)
            for key in adding:
                metafilter.create_index(conn, ch.id, key)
            for key in dropping:
                metafilter.drop_index(conn, ch.id, key)
            after = metafilter.indexed_keys(conn, ch.id)
            if after != before:
                changes["indexed_meta"] = (before, after)
        in_flight = len(backlog.in_flight(conn, ch.id))
        config_changes = {k: new for k, (_, new) in changes.items() if k != "indexed_meta"}
        if not config_changes:
            return Update(channel_by_id(conn, ch.id), changes, in_flight, 0)
        channels.update_channel_config(conn, ch.id, config_changes)
        if config_changes.get("ack_clock") == model.AckClock.SENT:
            # unread deliveries made under `read` have no deadline yet: it starts now
            timers.start_unread_deadlines(conn, ch.id, now, cfg.ack_timeout_ms)
        released = 0
        if "max_pending" in changes:  # room for what it held back? (0: no limit any more)
            released = (
                release(conn, now, [ch.id])
                if cfg.max_pending
                else backlog.release_queued(
                    conn, ch.id, backlog.channel_backlog(conn, ch.id)[1], now, cfg.ack_timeout_ms
                )
            )
        return Update(channel_by_id(conn, ch.id), changes, in_flight, released)


def indexed_meta(conn: sqlite3.Connection, channel_id: int) -> list[str]:
    """The metadata keys the channel has an expression index on (`channel update
    --index-meta`), sorted."""
    return metafilter.indexed_keys(conn, channel_id)


@dataclass(frozen=True)
class Deletion:
    """What `channel delete` did: the channel as it was, the name its history keeps, and how
    many deliveries died `channel_deleted`."""

    channel: Channel
    kept_as: str
    dead_lettered: int


def delete_channel(
    conn: sqlite3.Connection, name: str, now: int, *, by: str, force: bool = False
) -> Deletion:
    """Delete a channel, by its owner. With deliveries in flight, a conflict that says how
    many, unless `force`: then each becomes a `channel_deleted` dead letter (kept, listed by
    `deadletter list`), in the same transaction as the deletion."""
    with write(conn):
        ch = _channel(conn, name)
        _not_reserved(ch, "delete")
        authorize(ch, by, "delete", owner_only=True)
        pending = backlog.in_flight(conn, ch.id)
        if pending and not force:
            raise InvalidState(
                f"channel {name!r} has {len(pending)} deliveries in flight; read and ack them,"
                " or give --force to dead-letter them (reason channel_deleted)",
                field="channel",
                value=name,
                in_flight=len(pending),
            )
        died = deadletters.dead_letter(
            conn,
            [(m, r, ch.id, n) for m, r, n in pending],
            "channel_deleted",
            f"{name} deleted by {by}",
            now,
        )
        kept_as = f"{model.DELETED_PREFIX}{ch.id}:{name}"
        channels.retire_channel(conn, ch.id, kept_as)
        # the closed history is read rarely; its metadata indexes would only cost space
        for key in metafilter.indexed_keys(conn, ch.id):
            metafilter.drop_index(conn, ch.id, key)
        return Deletion(ch, kept_as, died)
