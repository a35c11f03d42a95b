"""`acomm tick`'s work: one pass (timers, then the mailbox bridge, then agent dispatch), and
the `--every` loop that repeats it until a signal stops it.

What to print is the caller's: results go to callbacks, so this module knows nothing of the
terminal."""

from __future__ import annotations

import select
import sqlite3
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from acomm_cli import clock
from acomm_cli.bridge import sync as bridge
from acomm_cli.bridge.sync import SyncResult
from acomm_cli.engine import tasks, timers
from acomm_cli.errors import CommError, ValidationFailed
from acomm_cli.lite.records import asdict  # the engine's results are records
from acomm_cli.model import Limits, Message
from acomm_cli.store.connection import lock_waits_in_slices

if TYPE_CHECKING:  # dispatch code loads only when agents are configured
    from acomm_cli.dispatch.agents import AgentSpec
    from acomm_cli.dispatch.dispatcher import DispatchResult

MIN_INTERVAL_S = 0.1  # a tighter loop would mostly compete with the writers it serves


@dataclass(frozen=True)
class TickSetup:
    """What a pass needs beyond the store: the bridge, the agents, and how to report."""

    bridge: bridge.BridgeConfig
    encode: Callable[[Message], str]  # a message -> the JSON an agent's command reads
    agents: dict[str, AgentSpec] = field(default_factory=dict)
    store_path: str = ""
    config_path: str | None = None
    auth: str | None = None  # identity.auth as configured: dispatch's runs get secrets
    max_runs: int = 100  # deliveries dispatched per pass at most
    on_bridge: Callable[[SyncResult], None] = lambda _result: None
    on_dispatch: Callable[[DispatchResult], None] = lambda _result: None
    # a peer skipped by this pass's pull (node, why): down, refusing, or past its deadline
    on_peer_unreachable: Callable[[str, str], None] = lambda _node, _why: None
    # a context manager giving a progress starter, or None
    progress: Callable[[], AbstractContextManager[timers.Progress | None]] = nullcontext
    # settings lookup (key -> value) for federation's timers; used only on a node
    settings: Callable[[str], Any] | None = None
    # why dispatch is off: a bad `agents:` section stops the agents, never the timers
    dispatch_error: CommError | None = None
    limits: Limits | None = None  # the store-wide limits a schedule's sends respect


def tick_once(
    conn: sqlite3.Connection,
    setup: TickSetup,
    now: int,
    stop: Callable[[], bool] | None = None,
    cuttable: Callable[[], AbstractContextManager[None]] = nullcontext,
) -> tuple[dict[str, Any], int]:
    """One pass at `now`: the document `tick --json` prints, and how much it did. `stop`
    (SIGINT/SIGTERM, see acomm_cli.cli.stopping) ends dispatch early: the running command is
    killed and recorded as interrupted, and no further delivery is taken. The timers and the
    bridge run inside `cuttable()`, which may end them by an exception soon after a stop
    (`Stop.cuttable`): a stop waits for no backlog, and a file that blocks cannot hold it."""
    with cuttable():
        with setup.progress() as progress:
            result = timers.tick(conn, now, progress)
        doc: dict[str, Any] = asdict(result)
        total = result.total
        doc["tasks_overdue"] = overdue = tasks.tick(conn, now)
        total += overdue
        doc["schedules_sent"] = 0
        from acomm_cli.engine import schedules

        if schedules.due(conn, now):
            # a refused occurrence is recorded on its schedule (`schedule show`), counted here
            fired = schedules.fire(conn, now, setup.limits)
            doc["schedules_sent"] = fired.count
            total += fired.count
            if fired.failed:
                doc["schedule_errors"] = len(fired.failed)
        if setup.settings is not None:
            total += _federation(conn, setup.settings, now, doc, setup.on_peer_unreachable)
        synced = bridge.sync(conn, setup.bridge, now) if setup.bridge.configured else None
        from acomm_cli.engine import search

        # housekeeping, not counted in `total`: a search after this pass indexes nothing
        doc["search_indexed"] = search.index_new(conn)
    if synced is not None:
        setup.on_bridge(synced)
        doc["bridge"] = synced.doc()
        total += sum(doc["bridge"].values())
    if setup.dispatch_error is not None:
        doc["dispatch_error"] = setup.dispatch_error.to_dict()
    if setup.agents and not (stop and stop()):  # dispatch code: only with agents configured
        from acomm_cli.dispatch import dispatcher as dispatch

        ran = dispatch.dispatch(
            conn,
            setup.agents,
            now,
            store_path=setup.store_path,
            encode=setup.encode,
            config_path=setup.config_path,
            max_runs=setup.max_runs,
            stop=stop,
            auth=setup.auth,
        )
        setup.on_dispatch(ran)
        doc["dispatch"] = ran.counts()
        total += len(ran.receipts) + ran.dead_lettered
    if "fed_pulled" in doc and not (stop and stop()):
        # a node: what this pass appended (retries, replies) goes out now; after a stop,
        # the next pass publishes it (a NATS server that is slow to answer must not hold it)
        from acomm_cli.federation import pull as fed_pull
        from acomm_cli.store.federation import node_id

        with cuttable():
            fed_pull.publish_own(conn, str(node_id(conn)), fed_pull.PullResult())
    if "fed_pulled" in doc and hasattr(conn, "outbox_appended"):
        conn.outbox_appended = False  # published above, or left to the next pass: not the
        # command's publish after its commit (a stopping tick must not wait on NATS)
    return doc, total


def _federation(
    conn: Any,
    settings: Callable[[str], Any],
    now: int,
    doc: dict[str, Any],
    on_unreachable: Callable[[str, str], None],
) -> int:
    """Federation's timers, on a node only: a plain store pays one indexed read and imports
    no federation module."""
    from acomm_cli.store.federation import node_id

    if node_id(conn) is None:
        return 0
    from acomm_cli.federation import timers as fed_timers

    counts = fed_timers.tick(
        conn, now, fed_timers.FedConfig.from_settings(settings), on_unreachable
    )
    doc.update(counts)
    return sum(counts.values())


def load_agents(
    load: Callable[[], dict[str, AgentSpec]],
) -> tuple[dict[str, AgentSpec], CommError | None]:
    """The configured agents, or none and why: a bad `agents:` section (a typo such as
    `types: [comand]`) must not stall every timer of the store (retries, dead letters,
    scheduled sends, the bridge), so `tick` runs them anyway, reports the error and exits
    with its status at the end (DECISIONS.md, "`tick --every` survives a locked store")."""
    try:
        return load(), None
    except ValidationFailed as exc:
        return {}, exc


def refused_kinds(conn: sqlite3.Connection, agents: dict[str, AgentSpec]) -> CommError | None:
    """Why dispatch is off for a `run:` configured for a human (a configuration error, as a
    bad `agents:` section: the timers still run), or None."""
    if not agents:
        return None
    from acomm_cli.dispatch import dispatcher as dispatch

    try:
        dispatch.check_kinds(conn, agents)
    except ValidationFailed as exc:
        return exc
    return None


def max_runs(n: int) -> int:
    """`tick --max`, checked before anything is ticked."""
    if n < 0:
        raise ValidationFailed(f"max: {n} must not be negative", field="max", value=n)
    return n


def interval(every: str) -> float:
    """`--every` in seconds, at least MIN_INTERVAL_S."""
    seconds = clock.parse_duration(every, "every") / 1000
    if seconds < MIN_INTERVAL_S:
        raise ValidationFailed(
            f"every: {every!r} is too short (at least 100ms)", field="every", value=every
        )
    return seconds


class Stoppable(Protocol):
    """What `run_every` waits on: true once a stop was requested, a file descriptor that
    becomes readable then, and the block a stop may cut short (acomm_cli.cli.stopping.Stop)."""

    def __call__(self) -> bool: ...

    def fileno(self) -> int: ...

    def cuttable(self) -> AbstractContextManager[None]: ...

    def end_wait(self, slices: int) -> None: ...


def stop_ends_lock_waits(
    conn: sqlite3.Connection, stop: Stoppable, waiting: Callable[[], None] = lambda: None
) -> None:
    """A stop ends a wait for another process's write lock within a slice (0.1 s), not after
    the busy timeout: SQLite's own wait is one C call, and neither a signal handler nor
    another thread's `interrupt()` cuts it. `waiting()` is called once per wait, when it
    has lasted a slice. A locked store still fails the pass after the busy timeout."""

    def between(slices: int) -> None:
        stop.end_wait(slices)
        if slices == 1:
            waiting()

    lock_waits_in_slices(conn, between)


def wait_for_stop(stop: Stoppable, timeout_s: float) -> bool:
    """Sleep up to `timeout_s` seconds, waking at once when a stop is requested (its pipe
    becomes readable); True if stopped."""
    if stop():
        return True
    readable, _, _ = select.select([stop.fileno()], [], [], max(0.0, timeout_s))
    return bool(readable) or stop()


# a pass that failed with an error a later pass may cure, and the seconds until that pass
OnError = Callable[[CommError, float], None]


def run_every(
    conn: sqlite3.Connection,
    setup: TickSetup,
    every_s: float,
    max_seconds: float | None,
    stop: Stoppable,
    report: Callable[[dict[str, Any], int], None],
    on_error: OnError,
) -> CommError | None:
    """Tick every `every_s` seconds until `stop()` (or `max_seconds` have passed), handing
    each pass's document and amount of work to `report`. A pass that fails with a transient
    error (a lock past the busy timeout, a full store) goes to `on_error` and the loop
    carries on; what the pass had not committed was rolled back with its transaction.
    Returns that error when the last pass failed so, None when it succeeded."""
    return repeat(
        lambda: report(*tick_once(conn, setup, clock.now_ms(), stop, stop.cuttable)),
        every_s,
        max_seconds,
        stop,
        on_error=on_error,
        wait=lambda timeout_s: wait_for_stop(stop, timeout_s),
    )


def repeat(
    one_pass: Callable[[], None],
    every_s: float,
    max_seconds: float | None,
    stop: Callable[[], bool],
    *,
    on_error: OnError,
    wait: Callable[[float], bool],
    monotonic: Callable[[], float] = time.monotonic,
) -> CommError | None:
    """The schedule of `run_every`, with time and waiting passed in. Passes start every
    `every_s` seconds counted from when the previous one started (one that took 0.7 s of
    1 s waits 0.3 s); one that overran starts the next at once, and the schedule goes on
    from there, so the lateness never adds up. `wait(seconds)` returns True when stopped.
    A pass cut short by a stop (an exception) after a failed pass returns that failure."""
    start = monotonic()
    end = start + max_seconds if max_seconds is not None else float("inf")
    last: CommError | None = None
    while not stop() and start < end:
        try:
            one_pass()
            last = None
        except CommError as exc:
            if not exc.transient:
                raise
            last = exc
        except BaseException:
            if last is not None and stop():  # a pass cut short by a stop after a failed one
                return last
            raise
        now = monotonic()
        start = max(start + every_s, now)
        if last is not None:
            on_error(last, start - now)
        if stop() or (min(start, end) > now and wait(min(start, end) - now)):
            break
    return last
