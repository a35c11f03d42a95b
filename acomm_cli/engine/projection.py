"""What a tick at `now` would do to the deliveries, counted without doing it.

`stats` reports the store as the next `receive` or `tick` would leave it. It used to apply the
due timers in a transaction it rolled back: on a store no tick had run on for hours that was
a whole tick's writes (8 s on the 1,000,000-message benchmark store). Here each due delivery
is followed through the same steps as `timers.advance` in Python instead: timers derive
from scheduled times only, so a delivery's end state depends on its own row and its
channel's settings, never on the others'. Two things are not per delivery, and stats
falls back to applying for the first: releasing queued deliveries (max_pending) depends on
a channel's count, and a retry's jitter is random (it is drawn here as a tick would draw it,
so with jitter the counts are one outcome a tick could give, as they were before).
"""

from __future__ import annotations

import json
import random
import sqlite3
from bisect import bisect_right
from dataclasses import dataclass, field

from acomm_cli.engine import deadletters
from acomm_cli.store import acks, backlog, maintenance

# (recipient, channel_id, state, tracked, delivered_at)
Row = tuple[str, int, str, int, int | None]

_EXPIRABLE = ("unread", "waiting", "queued")


@dataclass
class Projection:
    now: int
    expired: list[int]  # messages whose expiry is due: their rows are grouped with the due
    before: list[Row] = field(default_factory=list)  # due deliveries as they stand
    after: list[Row] = field(default_factory=list)  # ... as the tick leaves them (not dead)
    # (recipient, channel) -> deliveries dying there
    dead: dict[tuple[str, int], int] = field(default_factory=dict)
    # the `_system` notification of each death: its channel, the subscribers, the oldest
    system_channel: int = 0
    subscribers: list[str] = field(default_factory=list)
    first_death: int | None = None

    @property
    def deaths(self) -> int:
        return sum(self.dead.values())

    @property
    def due(self) -> tuple[int, str]:
        """What maintenance.active_breakdown needs to set the due rows apart."""
        return self.now, json.dumps(self.expired)

    def notifications(self) -> list[Row]:
        """The unread `_system` deliveries the deaths add (one per death and subscriber)."""
        if not self.dead:
            return []
        return [
            (a, self.system_channel, "unread", 0, self.first_death)
            for a in self.subscribers
            for _ in range(self.deaths)
        ]


def project(conn: sqlite3.Connection, now: int, *, before: bool = True) -> Projection | None:
    """The due deliveries before and after a tick at `now`; None when a channel with
    max_pending holds queued deliveries (releasing them is counted by applying), or when a
    lease is due, or the store has work queues or channels whose ack deadline starts at
    the read (the projection follows neither a lease's end, nor a claim going back to its
    queue, nor a redelivery left without a deadline; applying does). `before=False` leaves
    `Projection.before` empty (only the statistics of one agent need it)."""
    if (
        backlog.channels_with_queued(conn)
        or maintenance.has_queues(conn)
        or acks.read_clock_in_use(conn)
    ):
        return None
    expiring = dict(maintenance.expiring(conn, now))
    proj = Projection(now, sorted(expiring))
    settings = maintenance.timer_settings(conn)
    if settings and (max(settings) >= 1 << 32 or max(c[1] for c in settings.values()) >= 1 << 22):
        return None  # beyond what maintenance._DUE_KEY packs: applied instead
    rng = random.Random()
    # Deaths are counted per (recipient, channel) rather than listed; each row's starting
    # point comes packed in one integer (maintenance._DUE_KEY), unpacked once per key with
    # its settings and, without jitter, its path (_along).
    starts: dict[
        int,
        tuple[
            str,
            int,
            int,
            bool,
            int,
            tuple[int, int, int, float, bool],
            tuple[list[int], list[tuple[str, int | None] | int]] | None,
        ],
    ] = {}
    keep, after, dead = proj.before.append, proj.after.append, proj.dead
    first_death: int | None = None
    for mid, rcpt, key, delivered, timer in maintenance.due_deliveries(conn, now, proj.expired):
        start = starts.get(key)
        if start is None:
            start = starts[key] = _start(key, settings)
        state, tracked, rc, read, cid, cfg, path = start
        if state == "acked":  # a lease is due: seen on the way, not by a second walk
            return None
        if before:
            keep((rcpt, cid, state, tracked, delivered))
        end: tuple[str, int | None] | int
        if path is None or mid in expiring:  # jitter is drawn per retry; expiry: its own time
            end = _follow(
                state, tracked, rc, read, delivered, timer, cfg, expiring.get(mid), now, rng
            )
        else:
            end = _along(path, state, delivered, timer, now)
        if isinstance(end, int):  # dead at that time
            where = (rcpt, cid)
            dead[where] = dead.get(where, 0) + 1
            if first_death is None or end < first_death:
                first_death = end
        else:
            after((rcpt, cid, end[0], tracked, end[1]))
    proj.first_death = first_death
    if dead:
        proj.system_channel, subs = deadletters.system_route(conn)
        proj.subscribers = json.loads(subs)
    return proj


_NEVER = 1 << 62


def _start(
    key: int, settings: dict[int, tuple[int, int, int, float, bool]]
) -> tuple[
    str,
    int,
    int,
    bool,
    int,
    tuple[int, int, int, float, bool],
    tuple[list[int], list[tuple[str, int | None] | int]] | None,
]:
    """A packed starting point (maintenance._DUE_KEY) as (state, tracked, retry count, read,
    channel, its settings, its shared path or None with jitter)."""
    cid = key & 0xFFFFFFFF
    tracked, read = (key >> 32) & 1, bool((key >> 33) & 1)
    code, rc = (key >> 34) & 7, key >> 40
    state = maintenance.DUE_STATES[code] if code < len(maintenance.DUE_STATES) else "?"
    cfg = settings[cid]
    path = None if cfg[3] else _path(state, tracked, rc, read, cfg)
    return state, tracked, rc, read, cid, cfg, path


def _along(
    path: tuple[list[int], list[tuple[str, int | None] | int]],
    state: str,
    delivered: int | None,
    timer: int,
    now: int,
) -> tuple[str, int | None] | int:
    """_follow for the many due deliveries that share a starting point (state, tracked,
    retry count, read, channel) and have no jitter and no expiry: their path depends only on
    where their timer stands, so it is walked once with the timer at 0 (_path: every step
    recorded with its time) and each delivery just finds how far along it `now` is."""
    times, ends = path
    k = bisect_right(times, now - timer)
    if k == 0:
        return state, delivered
    end = ends[k - 1]
    if isinstance(end, int):
        return timer + end
    to, at = end
    return to, delivered if at is None else timer + at


def _path(
    state: str, tracked: int, rc: int, read: bool, cfg: tuple[int, int, int, float, bool]
) -> tuple[list[int], list[tuple[str, int | None] | int]]:
    """The steps _follow takes from a timer at 0 when the clock has run far ahead: the time
    of each, and where it leaves the delivery ((state, delivered_at, None when it keeps the
    one it had) or the time it dies). Step k happens at a later `now` exactly when its time
    is <= now - timer, since every step of _follow is conditioned on its timer alone."""
    ack_timeout, max_retries, backoff, _jitter, exactly_once = cfg
    times: list[int] = []
    ends: list[tuple[str, int | None] | int] = []
    timer, delivered = 0, None
    while len(times) < 10_000:
        times.append(timer)
        if state == "waiting":  # deliver_waiting
            state, delivered = "unread", timer
            ends.append((state, delivered))
            if not tracked:
                break
            timer += ack_timeout
        elif tracked and state in ("unread", "read") and rc < max_retries:
            wait = backoff * (1 << rc)
            if exactly_once and read:  # restart_read_exactly_once
                timer += wait + ack_timeout
            else:  # schedule_retries
                state, timer = "waiting", timer + wait
            rc += 1
            ends.append((state, delivered))
        elif tracked and state in ("unread", "read"):  # stage_exhausted
            ends.append(timer)
            break
        else:  # nothing of a tick's moves this state
            times.pop()
            break
    return times, ends


def _follow(
    state: str,
    tracked: int,
    rc: int,
    read: bool,
    delivered: int | None,
    timer: int | None,
    cfg: tuple[int, int, int, float, bool],
    expires: int | None,
    now: int,
    rng: random.Random,
) -> tuple[str, int | None] | int:
    """One delivery through timers.advance's passes (store/timers.py, statement by
    statement): (state, delivered_at) where it ends, or the time it is dead-lettered."""
    ack_timeout, max_retries, backoff, jitter, exactly_once = cfg
    while True:
        moved = False
        # a message that expires before a timer falls due never sees that timer (due-time
        # order, store/timers._EXPIRED_FIRST); read and held deliveries do not expire
        first = expires is not None and timer is not None and expires < timer
        # deliver_waiting: a scheduled send or a redelivery after its back-off
        if state == "waiting" and timer is not None and timer <= now and not first:
            state, delivered = "unread", timer
            timer = timer + ack_timeout if tracked else None
            moved = True
        deadline = tracked and state in ("unread", "read") and timer is not None and timer <= now
        first = expires is not None and timer is not None and expires < timer
        if deadline and rc < max_retries and not (state == "unread" and first):
            assert timer is not None
            wait = backoff * (1 << rc)
            if exactly_once and read:  # restart_read_exactly_once: only the timer moves
                timer += wait + ack_timeout
            else:  # schedule_retries
                if jitter:
                    wait += int(wait * jitter * (rng.randrange(1_000_000)) / 1_000_000.0)
                state, timer = "waiting", timer + wait
            rc += 1
            moved = True
        # stage_expired, then stage_exhausted (an expired delivery is staged first), unless
        # its timer falls due before the expiry: that timer moves it first (next loop)
        earlier = (
            timer is not None
            and expires is not None
            and timer < expires
            and (state == "waiting" or bool(tracked))
        )
        if expires is not None and expires <= now and state in _EXPIRABLE and not earlier:
            return expires
        if (
            tracked
            and state in ("unread", "read")
            and timer is not None
            and timer <= now
            and rc >= max_retries
        ):
            return timer
        if not moved:
            return state, delivered
