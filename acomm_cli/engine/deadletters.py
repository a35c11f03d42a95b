"""Dead letters: dying (the dead-letter rows, the delivery states and the `_system`
notifications, written together from one staged set, see `acomm_cli.store.timers`: every path
that dead-letters goes through `dead_letter` or `apply` here), listing and discarding them,
and coming back (`replay` of one message, `redrive` of every dead letter a filter matches).
One record, `DeadLetter`: a row of `deadletter list`, and with the message and every attempt
filled in, what `deadletter show` prints."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from acomm_cli import model
from acomm_cli.errors import CommError, InvalidState, NotFound, NotParticipant, ValidationFailed
from acomm_cli.store import channels, deadletters, reads, timers, write
from acomm_cli.topics import SubscriptionIndex

TYPE_CHECKING = False  # typing's, without importing typing (a send's start-up time)
if TYPE_CHECKING:
    from dataclasses import dataclass, field
else:  # the same classes, without importing dataclasses (every send loads this module)
    from acomm_cli.lite.records import dataclass, field


def system_route(conn: sqlite3.Connection) -> tuple[int, str]:
    """The `_system` channel id and, as JSON, who subscribes to dead-letter notifications."""
    ch = channels.channel_by_name(conn, model.SYSTEM_CHANNEL)
    assert ch is not None, "every store has the _system channel (m001)"
    agents = SubscriptionIndex(channels.subscriptions(conn, ch.id)).route(model.DEADLETTER_TOPIC)
    import json  # not at the top: `acomm send` imports this module, and json costs it time

    return ch.id, json.dumps(sorted(agents))


def apply(conn: sqlite3.Connection) -> int:
    """Dead-letter everything staged so far; returns how many deliveries died. A message
    that came from another node tells that node, in the same transaction (its outbox)."""
    cid, subscribers = system_route(conn)
    from acomm_cli.store import federation as fed_sql  # light: sqlite3 and json

    from_peers = fed_sql.dying_inbound(conn)
    if from_peers:  # only a node has inbound messages
        from acomm_cli.engine import outbox

        outbox.dead_lettered(conn, from_peers)
    return timers.apply_staged(conn, cid, subscribers, model.DEADLETTER_TOPIC)


def dead_letter(
    conn: sqlite3.Connection,
    items: Sequence[tuple[int, str, int, int]],
    reason: str,
    last_error: str | None,
    now: int,
) -> int:
    """Dead-letter deliveries given as (message_id, recipient, channel_id, retry_count)."""
    if not items:
        return 0
    timers.stage_clear(conn)
    timers.stage_rows(conn, [(m, r, c, reason, n, last_error, now) for m, r, c, n in items])
    return apply(conn)


# ---------------------------------------------------------------- replay and redrive


def _pooled(conn: sqlite3.Connection, ch: model.Channel, message_id: int, recipient: str) -> bool:
    """Was this dead delivery a worker pool's (pubsub channels only)?"""
    if ch.type != model.ChannelType.PUBSUB:
        return False
    from acomm_cli.store import queues as store_queues

    return store_queues.pool_of(conn, message_id, recipient) is not None


def refusal(
    conn: sqlite3.Connection, channel: str, recipient: str, message_id: int = 0
) -> CommError | None:
    """Why a dead letter on `channel` to `recipient` cannot be delivered again (re-validated
    as a send would be: the channel still open, the recipient still a participant), or None."""
    ch = channels.channel_by_name(conn, channel)
    if ch is None or ch.state == model.ChannelState.CLOSED:
        return InvalidState(
            f"channel {channel!r} is closed; cannot replay", field="channel", value=channel
        )
    # a queue's (or worker pool's) dead letter goes back to the queue, for any member
    if (
        ch.type != model.ChannelType.QUEUE
        and ch.role_of(recipient) is None
        and not (message_id and _pooled(conn, ch, message_id, recipient))
    ):
        return NotParticipant(
            f"{recipient!r} is no longer a participant of {channel!r}",
            field="recipient",
            value=recipient,
        )
    return None


def redeliver(
    conn: sqlite3.Connection, message_id: int, channel: str, recipient: str, now: int
) -> None:
    """The same message id, unread again with a fresh retry budget (and, if it had
    expired, a fresh lifetime: an `expired` dead letter would otherwise die again at the
    next tick); its dead letter goes."""
    ch = channels.channel_by_name(conn, channel)
    assert ch is not None  # checked by `refusal` in the same transaction
    deadletters.renew_expiry(conn, message_id, now)
    deadletters.redeliver(conn, message_id, recipient, now, ch.config.ack_timeout_ms)
    if ch.type == model.ChannelType.QUEUE or _pooled(conn, ch, message_id, recipient):
        from acomm_cli.store import queues as store_queues

        store_queues.back_to_queue(conn, message_id, recipient)
    deadletters.delete_dead_letters(conn, message_id, recipient)


@dataclass(frozen=True)
class Skipped:
    """A dead letter a redrive matched but left dead, and why (an error's code and text)."""

    message_id: int
    recipient: str
    channel: str
    code: str
    message: str


@dataclass(frozen=True)
class Redrive:
    """What `deadletter replay --all` did (or, dry, would do): the dead letters delivered
    again as (message_id, recipient), oldest first, and those it had to leave dead."""

    dry_run: bool
    replayed: list[tuple[int, str]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    @property
    def ids(self) -> list[int]:
        """The distinct message ids replayed (a message may die for several recipients)."""
        return sorted({m for m, _ in self.replayed})


def redrive(
    conn: sqlite3.Connection,
    *,
    channel: str | None = None,
    recipient: str | None = None,
    reason: str | None = None,
    since: int | None = None,
    now: int,
    dry_run: bool = False,
) -> Redrive:
    """Replay every dead letter matching the filters (all given must hold), in ONE
    transaction: all of them are unread again, or (on an error) none. A dead letter that
    cannot be delivered any more (its channel closed, its recipient gone) is skipped and
    reported, not an error: one stale row must not hold up the rest. Nothing matched is a
    count of 0, not an error; a malformed filter is (validation_failed, naming it), and so
    is a channel that does not exist (not_found, as `messages --channel` says)."""
    if reason is not None and reason not in model.DEAD_LETTER_REASONS:
        raise ValidationFailed(
            f"reason: {reason!r} is not one of {', '.join(model.DEAD_LETTER_REASONS)}",
            field="reason",
            value=reason,
        )
    if recipient is not None:
        model.agent_id(recipient, "recipient")
    channel_id = None
    if channel is not None:
        model.channel_name(channel, allow_reserved=True)
        ch = channels.channel_by_name(conn, channel)
        if ch is None:
            raise NotFound(f"channel {channel!r} does not exist", field="channel", value=channel)
        channel_id = ch.id
    result = Redrive(dry_run)
    with write(conn):
        refusals: dict[tuple[str, str], CommError | None] = {}
        for mid, who, ch_name in deadletters.dead_letters_matching(
            conn, channel_id=channel_id, recipient=recipient, reason=reason, since=since
        ):
            if (ch_name, who) not in refusals:
                refusals[ch_name, who] = refusal(conn, ch_name, who)
            err = refusals[ch_name, who]
            if isinstance(err, NotParticipant):  # a worker pool's goes back to the pool
                err = refusal(conn, ch_name, who, mid)
            if err is not None:
                result.skipped.append(Skipped(mid, who, ch_name, err.code, err.message))
                continue
            if not dry_run:
                redeliver(conn, mid, ch_name, who, now)
            result.replayed.append((mid, who))
    return result


# ---------------------------------------------------------------- listing, discarding


@dataclass
class Attempt:
    """One delivery of a message to a recipient: when it was handed out, read, acked."""

    recipient: str
    attempt: int  # 1 = the first delivery; from 1 again after a replay
    delivered_at: int | None
    read_at: int | None
    ack_status: str | None


@dataclass(frozen=True)
class DeadLetter:
    """A dead-lettered delivery: the row `deadletter list` shows; `deadletter show` also has
    the message itself and every attempt (`records`)."""

    message_id: int
    recipient: str
    channel: str
    reason: str
    retry_count: int
    last_error: str | None
    dead_lettered_at: int
    content: str
    message: model.Message | None = None
    attempts: list[Attempt] = field(default_factory=list)


def list_dead_letters(
    conn: sqlite3.Connection,
    *,
    message_id: int | None = None,
    recipient: str | None = None,
    channel: str | None = None,
    reason: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> tuple[list[DeadLetter], int]:
    if limit < 0 or offset < 0:
        raise ValidationFailed("limit: --limit and --offset must not be negative", field="limit")
    if reason is not None and reason not in model.DEAD_LETTER_REASONS:
        raise ValidationFailed(
            f"reason: {reason!r} is not one of {', '.join(model.DEAD_LETTER_REASONS)}",
            field="reason",
            value=reason,
        )
    rows, total = deadletters.dead_letters(
        conn,
        message_id=message_id,
        recipient=recipient,
        channel=channel,
        reason=reason,
        limit=limit,
        offset=offset,
    )
    return [DeadLetter(*r) for r in rows], total


def dead_letters_of(
    conn: sqlite3.Connection, message_id: int, recipient: str | None
) -> list[DeadLetter]:
    """A message's dead letters (one recipient's, if named); NotFound when there are none."""
    found, _ = list_dead_letters(conn, message_id=message_id, recipient=recipient, limit=1_000_000)
    if not found:
        who = f" for {recipient!r}" if recipient else ""
        raise NotFound(
            f"message {message_id} has no dead letter{who}", field="message", value=message_id
        )
    return found


def replay(
    conn: sqlite3.Connection, message_id: int, recipient: str | None, now: int
) -> list[DeadLetter]:
    """Redeliver the same message id with a fresh retry budget, after re-validating."""
    with write(conn):
        replayed = dead_letters_of(conn, message_id, recipient)
        for dl in replayed:
            refused = refusal(conn, dl.channel, dl.recipient, message_id)
            if refused is not None:
                raise refused
            redeliver(conn, message_id, dl.channel, dl.recipient, now)
        return replayed


def discard(conn: sqlite3.Connection, message_id: int, recipient: str | None) -> int:
    with write(conn):
        dead_letters_of(conn, message_id, recipient)
        return deadletters.delete_dead_letters(conn, message_id, recipient)


def purge(conn: sqlite3.Connection, older_than_ms: int, now: int) -> int:
    with write(conn):
        return deadletters.purge_dead_letters(conn, now - older_than_ms)


# ---------------------------------------------------------------- the whole record


def _attempt(
    recipient: str,
    attempt: int,
    delivered_at: int | None,
    read_at: int | None,
    ack_status: str | None,
) -> Attempt:
    """A redelivery keeps the delivery's read_at (the latest read) until it is read again, so
    a read older than the attempt's delivery belongs to an earlier attempt, not this one."""
    if read_at is not None and delivered_at is not None and read_at < delivered_at:
        read_at = None
    return Attempt(recipient, attempt, delivered_at, read_at, ack_status)


def records(conn: sqlite3.Connection, message_id: int, recipient: str | None) -> list[DeadLetter]:
    """A message's dead letters (one recipient's, if named) with the message itself and each
    attempt: those that ended (kept by m012's trigger whenever retry_count changed), then the
    one that died, from the delivery row. On a work queue every worker's claims count."""
    if recipient is not None:
        model.agent_id(recipient, "recipient")
    rows, _ = deadletters.dead_letters(
        conn, message_id=message_id, recipient=recipient, limit=1_000_000
    )
    msg = reads.message_by_id(conn, message_id)
    if not rows or msg is None:
        who = f" for {recipient!r}" if recipient else ""
        raise NotFound(
            f"message {message_id} has no dead letter{who}", field="message", value=message_id
        )
    ended = [_attempt(*r) for r in deadletters.delivery_attempts(conn, message_id)]
    queue = (
        ch := channels.channel_by_name(conn, msg.channel)
    ) is not None and ch.type == model.ChannelType.QUEUE
    out = []
    for mid, who, channel, reason, retries, last_error, at, content in rows:
        mine = [a for a in ended if queue or a.recipient == who]
        mine += [
            _attempt(d.recipient, d.retry_count + 1, d.delivered_at, d.read_at, d.ack_status)
            for d in msg.deliveries
            if d.recipient == who
        ]
        out.append(
            DeadLetter(mid, who, channel, reason, retries, last_error, at, content, msg, mine)
        )
    return out
