"""Running a store: statistics, the health check, compaction, checkpoints.

The rules of what each number means live here; SQL lives in `acomm_cli.store.maintenance`.
Every function takes an open connection (and `now`, in ms, where time matters).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from acomm_cli import model
from acomm_cli.engine import presence, projection
from acomm_cli.engine import queues as work_queues
from acomm_cli.engine.timers import advance
from acomm_cli.errors import InvalidState, StoreUnavailable, ValidationFailed
from acomm_cli.store import attachments as attachment_sql
from acomm_cli.store import bridge as bridge_queries
from acomm_cli.store import capabilities as cap_queries
from acomm_cli.store import counters, maintenance, timers, write
from acomm_cli.store import federation as fed_queries
from acomm_cli.store import queues as store_queues
from acomm_cli.store import search as search_queries
from acomm_cli.store import stats as stat_queries
from acomm_cli.store import tasks as task_queries
from acomm_cli.store.migrations import MIGRATIONS

_T = TypeVar("_T")

# ---------------------------------------------------------------- statistics


@dataclass
class AgentStats:
    agent: str
    total: int = 0  # deliveries to this agent, in any state
    unread: int = 0  # what `receive` would hand over: unread, on channels not closed
    awaiting_ack: int = 0  # ack-tracked deliveries still unread, read or waiting
    oldest_unread_age_sec: int = 0
    dead_letters: int = 0
    in_progress: int = 0  # held work: deliveries acknowledged in_progress, not yet finished
    lease_expired: int = 0  # times a lease on this agent's deliveries ran out
    oldest_unread_at: int | None = field(default=None, repr=False)
    last_seen_at: int | None = None  # when it last acted through acomm (engine/presence.py)


@dataclass
class ChannelStats:
    channel: str
    pending: int = 0  # deliveries unread, or ack-tracked and read or waiting for a retry
    queued: int = 0  # deliveries held back by max_pending
    dead_letters: int = 0
    in_progress: int = 0
    lease_expired: int = 0
    # a work queue's messages ready for a worker to claim (counted in `pending` too); None
    # on other channel types, whose JSON has no such key
    unclaimed: int | None = None


@dataclass(frozen=True)
class StoreStats:
    path: str
    bytes: int
    wal_bytes: int
    messages: int


@dataclass(frozen=True)
class QueueStats:
    """Mailbox bridge inbox files still there for an agent (not picked up yet)."""

    agent: str
    pending_files: int
    oldest_file_age_sec: int


@dataclass(frozen=True)
class PoolStats:
    """A worker pool (`subscribe --group`): its backlog, kept for the pool even when no
    member is left."""

    channel: str
    group: str
    waiting: int  # messages waiting for a member to claim them
    claimed: int  # claimed by a member and not finished (read, held, or in back-off)


@dataclass(frozen=True)
class Stats:
    agents: list[AgentStats]
    channels: list[ChannelStats]
    store: StoreStats
    queues: list[QueueStats] = field(default_factory=list)  # only agents with files pending
    mirror_backlog: int = 0  # mirror writes that failed and wait for a retry
    bad_files: int = 0  # response files left in place because they are not valid
    tasks: dict[str, int] = field(default_factory=dict)  # by state, every state named
    incidents: dict[str, int] = field(default_factory=dict)  # review incidents: open, resolved
    # events read from peers and refused (malformed, or not the peer's to send)
    federation: dict[str, int] = field(default_factory=lambda: {"rejected": 0})
    # named totals of things that leave no row (otlp.spans_dropped), by name
    counters: dict[str, int] = field(default_factory=dict)
    pools: list[PoolStats] = field(default_factory=list)  # worker pools on pubsub channels


_TRACKABLE = ("unread", "read", "waiting")


def _is_pending(state: str, tracked: int) -> bool:
    return state == "unread" or (bool(tracked) and state in ("read", "waiting"))


def stats(conn: sqlite3.Connection, now: int, agent: str | None = None) -> Stats:
    """Per-agent and per-channel counts as the next `receive` or `tick` would leave them:
    the timers due at `now` are counted as applied, without writing anything.

    They are projected (engine/projection.py: each due delivery followed through the tick's
    steps) rather than applied and rolled back, which on a store no tick had run on for hours
    cost a whole tick. A channel with max_pending that holds queued deliveries still has
    them applied in a transaction that is rolled back (releasing depends on the channel's
    counts); on a read-only store that case counts the deliveries as they stand.

    With `agent`: that agent only (a row of zeros if it never received anything), and the
    channels it takes part in."""
    if agent is not None:
        model.agent_id(agent, "as")
    with maintenance.snapshot(conn) as _:  # every count from one moment
        due = timers.has_due(conn, now, None)
        # overdue tasks (and the incidents they open) are applied in a scratch transaction
        tasks_due = task_queries.has_due(conn, now)
        proj = (
            projection.project(conn, now, before=agent is not None)
            if due and not tasks_due
            else None
        )
        if not tasks_due and (not due or proj is not None):
            return _stats(conn, now, agent, proj)
    with maintenance.snapshot(conn, scratch=True) as writable:
        if writable and timers.has_due(conn, now, None):
            advance(conn, now)
        if writable and task_queries.has_due(conn, now):
            from acomm_cli.engine import tasks

            tasks.mark_overdue(conn, now)
        return _stats(conn, now, agent, None)


def _stats(
    conn: sqlite3.Connection, now: int, agent: str | None, proj: projection.Projection | None
) -> Stats:
    every = maintenance.channel_list(conn)
    closed = {cid for cid, _name, state in every if state == model.ChannelState.CLOSED.value}
    shown = every if agent is None else maintenance.channel_list(conn, agent)
    channels = {cid: ChannelStats(name) for cid, name, _state in shown}
    agents: dict[str, AgentStats] = {}
    if agent is not None:
        agents[agent] = AgentStats(agent)
    for recipient, total in maintenance.delivery_totals(conn, agent):
        if recipient[:1] == model.QUEUE_RECIPIENT:  # a queue's or pool's own row
            continue
        agents.setdefault(recipient, AgentStats(recipient)).total = total
    rows = maintenance.active_breakdown(conn, agent, proj.due if proj is not None else None)
    if proj is not None:  # the due deliveries, as the tick leaves them
        for recipient, _cid, _state, _tracked, _at in proj.notifications():
            if agent in (None, recipient):
                agents.setdefault(recipient, AgentStats(recipient)).total += 1
        rows += [
            (r, c, st, t, 1, at)
            for r, c, st, t, at in proj.after + proj.notifications()
            if agent in (None, r)
        ]
    for recipient, cid, state, tracked, n, oldest in rows:
        if recipient[:1] == model.QUEUE_RECIPIENT:  # a queue's or pool's row: nobody's yet
            if agent is None and cid in channels:
                _count_channel(channels[cid], state, tracked, n)
            continue
        a = agents.setdefault(recipient, AgentStats(recipient))
        if state == "unread" and cid not in closed:
            a.unread += n
            if oldest is not None and (a.oldest_unread_at is None or oldest < a.oldest_unread_at):
                a.oldest_unread_at = oldest
        if tracked and state in _TRACKABLE:
            a.awaiting_ack += n
        if agent is None and cid in channels:
            _count_channel(channels[cid], state, tracked, n)
    if agent is not None:
        for cid, state, tracked, n in maintenance.channel_breakdown(conn, agent):
            if cid in channels:
                _count_channel(channels[cid], state, tracked, n)
        if proj is not None:  # every recipient's due deliveries on the agent's channels
            for _r, cid, state, tracked, _at in proj.before:
                if cid in channels:
                    _count_channel(channels[cid], state, tracked, -1)
            for _r, cid, state, tracked, _at in proj.after + proj.notifications():
                if cid in channels:
                    _count_channel(channels[cid], state, tracked, 1)
    shown_queues = [cid for cid in store_queues.queue_ids(conn) if cid in channels]
    depth = store_queues.depth(conn, shown_queues)
    for cid in shown_queues:
        channels[cid].unclaimed = depth.get(cid, 0)
    pools = [
        PoolStats(channels[cid].channel, group, waiting, claimed)
        for (cid, group), (waiting, claimed) in sorted(work_queues.pool_depths(conn).items())
        if cid in channels
    ]
    for recipient, cid, n in maintenance.dead_letter_counts(conn):
        if recipient in agents:
            agents[recipient].dead_letters += n
        if cid in channels:
            channels[cid].dead_letters += n
    for (recipient, cid), n in proj.dead.items() if proj is not None else ():
        if recipient in agents:
            agents[recipient].dead_letters += n
        if cid in channels:
            channels[cid].dead_letters += n
    for recipient, cid, held, lapsed in maintenance.lease_counts(conn, agent):
        a = agents.setdefault(recipient, AgentStats(recipient))
        a.in_progress += held
        a.lease_expired += lapsed
        if cid in channels and (agent is None or recipient == agent):
            channels[cid].in_progress += held
            channels[cid].lease_expired += lapsed
    seen = presence.last_seen(conn, list(agents))
    for a in agents.values():
        if a.oldest_unread_at is not None:
            a.oldest_unread_age_sec = max(0, (now - a.oldest_unread_at) // 1000)
        a.last_seen_at = seen.get(a.agent)
    size, wal = maintenance.file_sizes(conn)
    # Mirror files as the store recorded them: the bridge keeps one exactly while its
    # delivery is unread, so no directory is read here (stats needs no bridge settings).
    queues = [
        QueueStats(a, n, max(0, (now - oldest) // 1000))
        for a, n, oldest in bridge_queries.queues(conn)
        if agent in (None, a)
    ]
    messages = maintenance.message_count(conn) + (proj.deaths if proj is not None else 0)
    return Stats(
        agents=sorted(agents.values(), key=lambda a: a.agent),
        channels=sorted(channels.values(), key=lambda c: c.channel),
        store=StoreStats(
            path=maintenance.db_path(conn), bytes=size, wal_bytes=wal, messages=messages
        ),
        queues=queues,
        mirror_backlog=bridge_queries.failed(conn, 0)[0],
        bad_files=len(bridge_queries.bad_files(conn)),
        tasks={
            **dict.fromkeys(model.TASK_STATES, 0),
            **dict(task_queries.counts_by_state(conn, agent)),
        },
        incidents={"open": 0, "resolved": 0, **dict(cap_queries.incident_counts(conn))},
        federation={"rejected": fed_queries.rejected_count(conn)},
        counters=counters.every(conn),
        pools=sorted(pools, key=lambda p: (p.channel, p.group)),
    )


def _count_channel(ch: ChannelStats, state: str, tracked: int, n: int) -> None:
    if _is_pending(state, tracked):
        ch.pending += n
    elif state == "queued":
        ch.queued += n


# ---------------------------------------------------------------- doctor


@dataclass(frozen=True)
class Finding:
    check: str
    count: int
    detail: str


@dataclass(frozen=True)
class Health:
    schema_version: int
    expected_schema_version: int
    integrity: str  # "ok", or "failed" (the problems are a finding)
    findings: list[Finding]
    # Mailbox bridge trouble (failed mirror writes, bad response files): reported, but not
    # store problems, so they do not make the store unhealthy.
    notices: list[Finding] = field(default_factory=list)
    integrity_check: list[str] = field(default_factory=list)  # SQLite's rows, when not ok

    @property
    def healthy(self) -> bool:
        return not self.findings


_STATE_LIST = ", ".join(maintenance.STATES)
_INVARIANTS = {
    "delivery_state": (
        "deliveries in a state other than " + _STATE_LIST,
        "message {0} to {1}: {2!r}",
    ),
    "tracked_flag": (
        "deliveries whose tracked flag is neither 0 nor 1",
        "message {0} to {1}: {2!r}",
    ),
    "tracked_timer": (
        "ack-tracked unread, read or waiting deliveries without a timer",
        "message {0} to {1} ({2})",
    ),
    "waiting_timer": ("waiting deliveries with no time to wake", "message {0} to {1}"),
    "terminal_timer": (
        "acked or dead deliveries that still have a timer",
        "message {0} to {1} ({2})",
    ),
    "dead_letter_delivery": (
        "dead letters whose delivery is missing or not dead",
        "message {0} to {1} (delivery {2})",
    ),
    "message_channel": ("messages on a channel that does not exist", "message {0} on channel {1}"),
    "delivery_message": (
        "deliveries of a missing message, or on another channel than their message",
        "message {0} to {1} (channel {2})",
    ),
    "message_sequence": (
        "message ids above the AUTOINCREMENT sequence (ids could be reused)",
        "highest id {0}, sequence {1}",
    ),
}


def doctor(conn: sqlite3.Connection, *, quick: bool = False) -> Health:
    """The file's integrity, its schema version, and every delivery invariant, all seen at
    one moment (a read transaction: writers carry on meanwhile)."""
    with maintenance.snapshot(conn):
        return _doctor(conn, quick)


def _doctor(conn: sqlite3.Connection, quick: bool) -> Health:
    findings: list[Finding] = []
    problems = [
        line
        for text in maintenance.integrity_check(conn, quick)
        for line in text.splitlines()
        if line.strip() and not line.startswith("***")
    ]
    if problems:
        findings.append(Finding("integrity", len(problems), "; ".join(problems[:5])))

    def checked(name: str, check: Callable[[], _T], default: _T) -> _T:
        """With a damaged page, a later check may read it: that is one more finding, and the
        integrity rows are still reported (exit 5), not a `malformed` refusal (exit 7)."""
        if not problems:
            return check()
        try:
            return check()
        except sqlite3.DatabaseError as exc:
            findings.append(Finding(name, 1, f"could not run on the damaged store: {exc}"))
            return default

    version = checked("schema_version", lambda: stat_queries.schema_version(conn), len(MIGRATIONS))
    expected = len(MIGRATIONS)
    if version != expected:
        findings.append(
            Finding("schema_version", 1, f"schema version {version}, this acomm writes {expected}")
        )
    wanted = [fn.__name__ for fn in MIGRATIONS[:version]]
    recorded = checked("migrations", lambda: maintenance.recorded_migrations(conn), wanted)
    if recorded != wanted:
        missing = [n for n in wanted if n not in recorded]
        extra = [n for n in recorded if n not in wanted]
        findings.append(
            Finding(
                "migrations",
                len(missing) + len(extra) or 1,
                f"recorded {', '.join(recorded) or 'none'}; missing {', '.join(missing) or 'none'};"
                f" unknown {', '.join(extra) or 'none'}",
            )
        )
    orphans: list[tuple[str, int | None, str]] = checked(
        "foreign_keys", lambda: maintenance.foreign_key_violations(conn), []
    )
    if orphans:
        by_table: dict[tuple[str, str], int] = {}
        for table, _rowid, parent in orphans:
            by_table[(table, parent)] = by_table.get((table, parent), 0) + 1
        findings.append(
            Finding(
                "foreign_keys",
                len(orphans),
                "; ".join(
                    f"{n} {table} rows point at missing {parent}"
                    for (table, parent), n in sorted(by_table.items())
                ),
            )
        )
    none_found: tuple[int, list[tuple[Any, ...]]] = (0, [])
    for check, (what, sample) in _INVARIANTS.items():
        n, rows = checked(check, partial(maintenance.invariant_violations, conn, check), none_found)
        if n:
            shown = ", ".join(sample.format(*r) for r in rows)
            findings.append(
                Finding(check, n, f"{n} {what}: {shown}" + (", ..." if n > len(rows) else ""))
            )
    broken = checked("search", lambda: search_queries.check(conn), None)
    if broken:
        findings.append(
            Finding("search", 1, f"the search index: {broken}; acomm doctor --rebuild-search")
        )
    return Health(
        schema_version=version,
        expected_schema_version=expected,
        integrity="failed" if problems else "ok",
        findings=findings,
        notices=checked("bridge", lambda: _bridge_notices(conn), []),
        integrity_check=problems,
    )


def _bridge_notices(conn: sqlite3.Connection) -> list[Finding]:
    notices: list[Finding] = []
    n, rows = bridge_queries.failed(conn)
    if n:
        shown = "; ".join(f"message {m} to {r} ({k}, {a} attempts): {e}" for m, r, k, a, e in rows)
        notices.append(
            Finding(
                "bridge_mirrors",
                n,
                f"{n} mirror writes failed, retried by "
                f"tick: {shown}" + ("; ..." if n > len(rows) else ""),
            )
        )
    bad = bridge_queries.bad_files(conn)
    if bad:
        notices.append(
            Finding(
                "bridge_bad_files",
                len(bad),
                "; ".join(f"{p}: {reason}" for p, reason in bad[:5])
                + ("; ..." if len(bad) > 5 else ""),
            )
        )
    return notices


def require_healthy(health: Health) -> None:
    """Exit 5 (`invalid_state`) naming the failed checks when there is any finding."""
    if not health.healthy:
        names = ", ".join(f.check for f in health.findings)
        raise InvalidState(
            f"the store has {len(health.findings)} problem(s): {names}",
            field="doctor",
            checks=[f.check for f in health.findings],
        )


# ---------------------------------------------------------------- compaction


@dataclass(frozen=True)
class CompactResult:
    removed_messages: int
    removed_deliveries: int
    removed_dead_letters: int
    removed_exactly_once: int
    bytes_before: int
    bytes_after: int
    free_bytes: int  # pages inside the file that new writes reuse (VACUUM gives them back)
    vacuumed: bool
    dry_run: bool
    removed_attachments: int = 0  # blobs no message names any more

    @property
    def reclaimed_bytes(self) -> int:
        return max(0, self.bytes_before - self.bytes_after)


_ALL_DEAD_LETTERS = -(2**63)  # a cut-off no dead letter is older than: keep every one


COMPACT_CHUNK = 20_000  # message ids per transaction


def compact(
    conn: sqlite3.Connection,
    now: int,
    *,
    older_than_ms: int = 0,
    dead_letters_older_than_ms: int | None = None,
    vacuum: bool = False,
    dry_run: bool = False,
    progress: Callable[[int], Callable[[int], None]] | None = None,
) -> CompactResult:
    """Remove messages whose deliveries are all terminal and that were created before
    `now - older_than_ms`, with their deliveries, in one transaction.

    Terminal: acked; read and not ack-tracked; dead once its dead letter is gone (dead letters
    older than `dead_letters_older_than_ms` are purged first, when given). A message with no
    delivery at all is terminal too. Never removed: a message with an unread, queued or
    waiting delivery, an unacknowledged tracked one, a kept dead letter, or a dedupe key still
    inside its channel's window. Expired exactly-once records go as well, and every
    attachment blob no message names any more. `vacuum` then
    rewrites the file to give the space back; `dry_run` only counts."""
    for name, value in (
        ("older_than", older_than_ms),
        ("dead_letters_older_than", dead_letters_older_than_ms),
    ):
        if value is not None and value < 0:
            raise ValidationFailed(f"{name}: must not be negative", field=name, value=value)
    created_before = now - older_than_ms
    dl_cutoff = (
        _ALL_DEAD_LETTERS
        if dead_letters_older_than_ms is None
        else now - dead_letters_older_than_ms
    )
    size, wal = maintenance.file_sizes(conn)
    before = size + wal
    if dry_run:
        with maintenance.snapshot(conn):
            dead = (
                maintenance.count_dead_letters_before(conn, dl_cutoff)
                if dead_letters_older_than_ms is not None
                else 0
            )
            messages = maintenance.select_compactable(conn, created_before, dl_cutoff, now)
            deliveries = maintenance.selected_deliveries(conn)
            once = maintenance.count_expired_exactly_once(conn, now)
            blobs = attachment_sql.orphaned_by_selection(conn)
    else:
        with write(conn):
            dead = (
                maintenance.delete_dead_letters_before(conn, dl_cutoff)
                if dead_letters_older_than_ms is not None
                else 0
            )
            once = maintenance.delete_expired_exactly_once(conn, now)
            lo, hi = maintenance.message_id_bounds(conn)
        messages = deliveries = 0
        chunks = range(lo, hi + 1, COMPACT_CHUNK)
        step = progress(len(chunks)) if progress is not None and len(chunks) > 1 else None
        # One transaction per chunk of ids: senders wait for a chunk, never for the whole
        # compaction (which on a large store outlasts their busy timeout). Each chunk leaves
        # a consistent store, and running compact again finishes what a killed one started.
        for start in chunks:
            with write(conn):
                maintenance.select_compactable(
                    conn, created_before, dl_cutoff, now, start, start + COMPACT_CHUNK - 1
                )
                m, d = maintenance.delete_selected(conn)
            messages += m
            deliveries += d
            if step is not None:
                step(1)
        with write(conn):  # the files only the removed messages named
            blobs = attachment_sql.delete_orphans(conn)
    vacuumed = vacuum and not dry_run
    if vacuumed:
        try:
            maintenance.vacuum(conn)
        except sqlite3.OperationalError as exc:
            raise StoreUnavailable(
                f"removed {messages} messages and {deliveries} deliveries, but VACUUM could "
                f"not run ({exc}); run `acomm compact --vacuum` again when the store is idle",
                removed_messages=messages,
                removed_deliveries=deliveries,
            ) from None
        maintenance.checkpoint(conn)
    size, wal = maintenance.file_sizes(conn)
    return CompactResult(
        removed_messages=messages,
        removed_deliveries=deliveries,
        removed_dead_letters=dead,
        removed_exactly_once=once,
        bytes_before=before,
        bytes_after=size + wal,
        free_bytes=maintenance.free_bytes(conn),
        vacuumed=vacuumed,
        dry_run=dry_run,
        removed_attachments=blobs,
    )


# ---------------------------------------------------------------- flush


@dataclass(frozen=True)
class FlushResult:
    busy: bool  # a reader kept the WAL from being fully checkpointed
    wal_frames: int
    checkpointed_frames: int  # pages copied into the database file
    wal_bytes_before: int
    wal_bytes_after: int


def flush(conn: sqlite3.Connection) -> FlushResult:
    """Checkpoint the WAL into the database file and truncate it."""
    _, before = maintenance.file_sizes(conn)
    busy, frames, moved = maintenance.checkpoint(conn)
    _, after = maintenance.file_sizes(conn)
    return FlushResult(
        busy=bool(busy),
        wal_frames=frames,
        checkpointed_frames=moved,
        wal_bytes_before=before,
        wal_bytes_after=after,
    )
